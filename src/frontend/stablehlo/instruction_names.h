// InstructionNames: module-wide unique instruction names for the StableHLO reader, XLA style
// ("add", "add.1", ..., "Arg_0", "Arg_0.1") without a set of every name made: a name is its
// opcode's or its parameter base's and a counter, so two names never coincide. Reading a big
// program names every instruction; a hash set of all names was a tenth of the reading time.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "ir/opcode.h"

namespace gspmd::stablehlo {

class InstructionNames {
 public:
  // "add", then "add.1", "add.2", ...
  std::string ForOpcode(Opcode opcode);
  // Parameters: "Arg_<number>" then "Arg_<number>.1", ...; `tuple` for a tuple parameter
  // ("arg_tuple", ...). Opcode names never start with "Arg_" or "arg_".
  std::string ForParameter(int64_t number, bool tuple = false);

 private:
  static std::string WithCount(std::string base, int64_t count);
// One counter per opcode of GSPMD_OPCODE_LIST.
#define GSPMD_COUNT_OPCODE(name, text) +1
  static constexpr size_t kOpcodeCount = 0 GSPMD_OPCODE_LIST(GSPMD_COUNT_OPCODE);
#undef GSPMD_COUNT_OPCODE
  std::array<int64_t, kOpcodeCount> opcode_counts_{};
  std::unordered_map<int64_t, int64_t> parameter_counts_;  // number (-1: tuple) -> count
};

}  // namespace gspmd::stablehlo
