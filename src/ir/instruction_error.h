// Errors about one instruction: located at where the user wrote it and naming it as written.
#pragma once

#include <string>

#include "ir/instruction.h"
#include "support/diagnostic.h"

namespace gspmd {

// "FILE:LINE:COL: error: %name: MESSAGE" for an instruction read from text (the location and
// name are the user's, also for clones and instructions a pass made for it);
// "%name: error: MESSAGE" for one built in code.
[[noreturn]] void ThrowInstructionError(const Instruction& instruction, const std::string& message);

// Runs fn(); a UserError that says nowhere is rethrown as about `instruction`, so an error a
// pass finds deep inside a helper still points at the user's instruction.
template <typename Fn>
decltype(auto) WithInstructionContext(const Instruction& instruction, Fn&& fn) {
  try {
    return fn();
  } catch (const UserError& error) {
    if (error.HasLocation()) throw;
    ThrowInstructionError(instruction, error.what());
  }
}

}  // namespace gspmd
