// Naming the file an error is about: WithFileContext prefixes "FILE: error: " to a UserError
// that does not say where it happened.
#pragma once

#include <string>
#include <utility>

#include "support/diagnostic.h"

namespace gspmd::api {

// Runs fn; a UserError whose message names no location ("...: error: ...") is rethrown as
// "file: error: message" (of the same kind), so every error says which file it is about. An
// empty `file` (a program with no name) leaves errors as they are.
template <typename Fn>
decltype(auto) WithFileContext(const std::string& file, Fn&& fn) {
  try {
    return std::forward<Fn>(fn)();
  } catch (const UserError& error) {
    if (error.HasLocation() || file.empty()) throw;
    throw error.Reworded(file + ": error: " + error.what());
  }
}

}  // namespace gspmd::api
