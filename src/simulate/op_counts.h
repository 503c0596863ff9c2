// What one instruction of a per-device program computes: FLOPs on the matrix units (dot,
// convolution), FLOPs and transcendentals on the vector unit, and the bytes it reads and
// writes when it runs alone (unfused).
#pragma once

#include <cstdint>
#include <string>

#include "ir/instruction.h"

namespace gspmd::simulate {

// How an instruction is costed and fused, from its opcode (a table in op_counts.cpp).
enum class OpClass {
  kFree,         // parameter, tuple, get-tuple-element, partition-id, sharding annotations: no kernel
  kView,         // reshape, bitcast: the same bytes seen with other dims (row-major layouts), no kernel
  kDuplicable,   // broadcast, iota, constant: copied into every consumer's kernel, never stored
  kLoop,         // elementwise and data movement: fuses into its consumer's kernel
  kReduce,       // reduce, reduce-window: ends a kernel that its producers fuse into
  kMatrix,       // dot, convolution: a matrix-unit kernel that its producers fuse into
  kInPlace,      // dynamic-update-slice: writes its update into its operand's buffer
  kOpaque,       // gather, scatter, sort, custom-call, rng, ...: a kernel of its own
  kCollective,   // all-reduce, all-gather, ...: the network, not the core
  kControl,      // while, conditional, call: run other computations
};

OpClass ClassifyOp(const Instruction& instruction);

// kFree and kView: instructions that run no kernel.
inline bool RunsNoKernel(OpClass op_class) { return op_class == OpClass::kFree || op_class == OpClass::kView; }

// Counts, per execution of the instruction. FLOP conventions (the tests count by hand):
//   dot          2 x |result| x product of the contracting dims
//   convolution  2 x batch x output features x kernel input features x (for each spatial dim,
//                the (output position, kernel tap) pairs that land on a real input element:
//                padding and base-dilation holes are not counted)
//   elementwise  1 per result element (add, multiply, compare, select, clamp, ...); exp, log,
//                tanh, logistic, sqrt, rsqrt, power, sin, cos, tan, erf, ... count 1
//                transcendental instead
//   reduce       (input elements - result elements) x operations in the reducer, per operand
//   reduce-window result elements x (window elements - 1) x operations in the reducer
//   sort         n log2 n comparisons per sorted row x operations in the comparator
//   data movement (broadcast, reshape, transpose, slice, pad, concatenate, convert, copy,
//                gather, collectives, ...) 0
struct OpCounts {
  double matrix_flops = 0;
  double vector_flops = 0;
  double transcendentals = 0;
  double unfused_bytes = 0;  // every operand read and the result written
};

OpCounts CountOp(const Instruction& instruction);

// Operations one application of a reducer/comparator computation performs (its arithmetic
// instructions; at least 1).
double ComputationOps(const Computation& computation);

// The matrix-unit settings of a dot or convolution: the operand element type (lowercase, e.g.
// "f32", "bf16") and the precision its operand_precision attribute asks for ("DEFAULT",
// "HIGH" or "HIGHEST"; the higher of the two operands).
struct MatrixOperands {
  std::string element_type;
  std::string precision;
};
MatrixOperands MatrixOperandsOf(const Instruction& matrix_op);

// The matrix unit's three dims for a dot or convolution: rows streamed (m), the contraction
// (k) and the output columns (n); a k x n tile is held in the unit. Used to charge tiles that
// small dims leave partly empty.
struct MatrixDims {
  double m = 1, k = 1, n = 1;
};
MatrixDims MatrixDimsOf(const Instruction& matrix_op);

}  // namespace gspmd::simulate
