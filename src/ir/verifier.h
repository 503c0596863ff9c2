// The verifier: checks every instruction against its operands, attributes and called
// computations, every sharding against its shape, and the module's structure, so that no
// invalid program reaches propagation, partitioning or the interpreter. The parser runs the
// per-instruction checks as it reads (FILE:LINE:COL errors); VerifyModule runs all of them on
// a module from anywhere (a builder, a pass).
#pragma once

#include <cstdint>
#include <string>

#include "ir/module.h"
#include "ir/shape_inference.h"

namespace gspmd {

// Limits that keep sizes sane and recursion bounded everywhere downstream.
inline constexpr int64_t kMaxRank = 256;              // dimensions of one array shape
inline constexpr int64_t kMaxShapeNesting = 256;      // tuple shapes inside tuple shapes
inline constexpr int64_t kMaxCallDepth = 256;         // computations calling computations
inline constexpr int64_t kMaxModuleDevices = int64_t{1} << 22;  // devices of a module (num_partitions)

// Each check returns "" when the instruction is fine, else what was found and what was
// expected, e.g. "add expects 2 operands, got 1".
std::string CheckOperandCount(const Instruction& instruction);
// Called computations present for the opcode (to_apply, condition/body, ...), each with a root.
std::string CheckCalledComputations(const Instruction& instruction);
// Result shape (inferred from the operands and compared, or checked against the opcode's
// rules), attribute ranges, and sizes that fit 64 bits. Needs operand counts and called
// computations checked first.
std::string CheckInstruction(const Instruction& instruction, const DeviceCounts& devices = {});

// A sharding for a value of `shape`, in the IR's nested form (ir/tuple_sharding.h): a tuple
// sharding has one element per tuple element, recursively; tiled shardings tile as many
// dimensions as the array has; device ids stay below num_partitions (when > 0).
std::string CheckSharding(const Sharding& sharding, const Shape& shape, int64_t num_partitions);

// Everything above over a module, plus its structure: roots, the depth of computation calls.
// Throws a UserError located at the offending instruction (FILE:LINE:COL when it was parsed).
void VerifyModule(const Module& module);

// The module-level checks alone (used by the parser once every computation is read).
void VerifyModuleStructure(const Module& module);

}  // namespace gspmd
