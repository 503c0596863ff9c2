// InstructionNames: counters per opcode and per parameter base.
#include "frontend/stablehlo/instruction_names.h"

#include "support/diagnostic.h"

namespace gspmd::stablehlo {

std::string InstructionNames::WithCount(std::string base, int64_t count) {
  if (count == 0) return base;
  base += '.';
  base += std::to_string(count);
  return base;
}

std::string InstructionNames::ForOpcode(Opcode opcode) {
  const size_t index = static_cast<size_t>(opcode);
  GSPMD_CHECK(index < opcode_counts_.size(), "opcode index ", index, " beyond the name counters");
  return WithCount(std::string(OpcodeName(opcode)), opcode_counts_[index]++);
}

std::string InstructionNames::ForParameter(int64_t number, bool tuple) {
  int64_t& count = parameter_counts_[tuple ? -1 : number];
  return WithCount(tuple ? std::string("arg_tuple") : "Arg_" + std::to_string(number), count++);
}

}  // namespace gspmd::stablehlo
