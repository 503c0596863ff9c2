// Result shapes of HLO instructions, inferred from their operands, attributes and called
// computations as XLA's shape inference does; and the check that a written result shape is
// the one the operands give.
//
//   %c = concatenate(f32[8,4] %a, f32[8,4] %b), dimensions={0}   ->  f32[16,4]
//   %d = f32[17,4] concatenate(%a, %b), dimensions={0}
//        -> "result f32[17,4] does not match f32[16,4], the shape its operands give"
//
// Operand counts and the presence of called computations are checked before (verifier.h);
// these rules may assume them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/instruction.h"

namespace gspmd {

// What the module says about its devices; 0 when it does not say (replica groups that list no
// devices then have an unknown size).
struct DeviceCounts {
  int64_t partitions = 0;
  int64_t replicas = 0;
};

struct InferredShape {
  std::optional<Shape> shape;  // the result the operands determine (nullopt: they do not)
  std::string error;           // non-empty: operands or attributes are inconsistent; says
                               // what was found and what was expected
};

// The result shape of `instruction` from its operands, attributes and called computations,
// ignoring its own shape. nullopt without error for opcodes whose result must be written
// (parameter, constant, reshape, convert, iota, rng, custom-call, fusion, ...).
InferredShape InferShape(const Instruction& instruction, const DeviceCounts& devices = {});

// Whether the instruction's written result shape is right: equal (ignoring layout) to the
// inferred one where there is one (dot and convolution may choose their element type), or
// satisfying the opcode's rules where the result must be written (a reshape keeps the
// element count, ...). "" when it is; else what was found and what was expected.
std::string CheckResultShape(const Instruction& instruction, const DeviceCounts& devices = {});

// The size of the device groups of a collective (all-gather, reduce-scatter, all-to-all), or
// nullopt when the groups are empty and the module does not say how many devices there are.
// Explicit groups of unequal sizes are an error the collective rules report.
std::optional<int64_t> CollectiveGroupSize(const Instruction& instruction, const DeviceCounts& devices);

}  // namespace gspmd
