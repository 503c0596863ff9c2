// Helpers for the HLO text tests: canonical printing with a round-trip check, lookups.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "text/parser.h"
#include "text/printer.h"

namespace gspmd::testing {

inline int64_t CountInstructions(const Module& module) {
  int64_t count = 0;
  for (const auto& computation : module.computations()) count += computation->instruction_count();
  return count;
}

// Parses `text` and prints it; checks that parsing the printed text and printing again gives
// the same text and keeps every instruction. Returns the printed text.
inline std::string Canonical(std::string_view text) {
  std::unique_ptr<Module> first = ParseModule(text);
  std::string printed = PrintModule(*first);
  std::unique_ptr<Module> second = ParseModule(printed, "<printed>");
  EXPECT_EQ(PrintModule(*second), printed) << "printing is not stable for:\n" << text;
  EXPECT_EQ(CountInstructions(*second), CountInstructions(*first));
  return printed;
}

// The instruction called `name` in any computation (fails the test when absent).
inline const Instruction& Find(const Module& module, const std::string& name) {
  for (const auto& computation : module.computations())
    if (const Instruction* instruction = computation->FindInstruction(name)) return *instruction;
  ADD_FAILURE() << "no instruction " << name;
  static const Instruction missing(Opcode::kTuple, Shape::Tuple({}), "missing");
  return missing;
}

// The message of the UserError that parsing `text` raises ("" when it parses).
inline std::string ParseError(std::string_view text) {
  try {
    ParseModule(text, "t.hlo");
  } catch (const UserError& error) {
    return error.what();
  }
  return "";
}

}  // namespace gspmd::testing
