// Structural checks of HLO instructions, shardings and modules (operand counts, cheap shape
// rules, sharding ranks and device ids). The parser uses the per-instruction checks to
// report FILE:LINE:COL errors; passes can run VerifyModule on their output.
#pragma once

#include <cstdint>
#include <string>

#include "ir/module.h"

namespace gspmd {

// Each check returns "" when the instruction is fine, else what was expected, e.g.
// "add expects 2 operands, got 1".
std::string CheckOperandCount(const Instruction& instruction);
// Cheap shape rules: elementwise operands match the result, get-tuple-element indexes a
// tuple, broadcast/transpose dimensions fit, dot contracting sizes agree, etc.
std::string CheckInstructionShapes(const Instruction& instruction);
// Called computations present for the opcode (to_apply, condition/body, ...).
std::string CheckCalledComputations(const Instruction& instruction);

// A sharding for a value of `shape`: tuple shardings have one element per leaf, tiled
// shardings have as many data dims as the shape has dims, and (when num_partitions > 0) no
// device id reaches num_partitions.
std::string CheckSharding(const Sharding& sharding, const Shape& shape, int64_t num_partitions);

// All of the above over a module (num_partitions from its attribute when present); throws a
// UserError naming the computation and instruction.
void VerifyModule(const Module& module);

}  // namespace gspmd
