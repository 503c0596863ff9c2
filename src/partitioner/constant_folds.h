// Values computed from constants alone: folded into constants before sharding propagation (as JAX's StableHLO folder does before XLA sees the program), and found for the partitioner to compute again whole.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ir/module.h"

namespace gspmd {

// Replaces each element-wise op (unary, binary, compare, select, clamp, convert) and each
// reshape, transpose, slice, concatenate, pad, reverse or broadcast of a non-scalar, whose
// operands are all constants or broadcasts of scalar constants, by the constant it computes
// (a broadcast of a scalar constant when every element is one value), before sharding
// propagation. XLA never sees such ops: the StableHLO that JAX hands it is folded first, so a
// chain of constants stays one replicated constant that any layout slices for free, where
// propagation would otherwise split the chain from a user and gather it back for another
// (oracle seed 123278: a scatter's indices, select(c < 0, c + 8, c) of a constant c, split by
// the updates and all-gathered for the operand's split, 28 B more than XLA). Exact: the
// interpreter's kernels compute the value. Iotas stay (handlers read them as index patterns),
// and so do values of more than 65,536 elements, values carrying a sharding or frontend
// attributes, and a computation's root. A pad whose result keeps none of its operand's
// elements becomes a broadcast of its pad value, as XLA's simplifier folds it, and max(x, x),
// min(x, x), x & x and x | x become x. Returns how many were folded.
int64_t FoldConstantExpressionsBeforePropagation(Module& module);

// The instructions that compute `value` from constants, iotas and the values `leaf` accepts
// (read as given: not collected, not looked through), operands first and `value` last:
// element-wise ops, data movement, gathers, scatters, dynamic slices and reduces, each an
// array of at most 65,536 elements, at most 64 of them. Empty when `value` reads anything
// else (a parameter, a random number, the device's id, a loop, a call).
std::vector<const Instruction*> ExpressionOf(const Instruction& value,
                                             const std::function<bool(const Instruction&)>& leaf);

}  // namespace gspmd
