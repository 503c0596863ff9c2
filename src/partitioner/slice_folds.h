// Slices written the long way, folded into slices before sharding propagation, as XLA's simplifier folds them.
#pragma once

#include <cstdint>
#include <optional>

#include "ir/instruction.h"
#include "ir/module.h"

namespace gspmd {

// Whether the folds before propagation may rewrite `instruction`: an array value with no
// sharding and no frontend attributes (the user's annotations stay as written).
bool FoldableBeforePropagation(const Instruction& instruction);

// The value of an integer or pred scalar computed from constants alone (constants, converts,
// copies, arithmetic, min/max/clamp, compares, logic and selects of them); nullopt when any
// input is not constant, an op is of another kind, or a value would not fit its type. Preds
// are 0 or 1.
std::optional<int64_t> ConstantScalarValue(const Instruction& value);

// Replaces each dynamic-slice of the global program whose start indices are constants (as
// ConstantScalarValue reads them) by a slice at the clamped starts, before sharding
// propagation, as XLA's simplifier does before its partitioner. Exact: a dynamic-slice clamps
// its starts so that the window fits, and so does this. Propagation then reads it as a slice,
// whose split dims stay split where the window keeps them (oracle seed 114644: JAX's
// x[2:6, 0:2, 1:5] of an array split along its third dim, sliced inside each shard by XLA
// for 0 B, gathered whole by us for 384 B). Dynamic-slices carrying a sharding or frontend
// attributes stay, and so does a computation's root. Returns how many were folded.
int64_t FoldConstantDynamicSlicesBeforePropagation(Module& module);

// Gives each dynamic-update-slice of the global program a constant 0 start along every dim its
// update covers whole, before sharding propagation. Exact: the start is clamped to 0 there
// whatever it computes, so the value it was computed from (a sum of a split input, all-reduced)
// is no longer needed (oracle seed 141898: 4 B, XLA's simplifier none). The old start stays
// for other users, or is dead. A dynamic-slice's whole dims count as start 0 in
// FoldConstantDynamicSlicesBeforePropagation. Returns how many starts were replaced.
int64_t ZeroWholeDimUpdateStartsBeforePropagation(Module& module);

// Replaces each reshape(slice(reshape(x))) of the global program that flattens x, a
// concatenate along its first dim, cuts the rows of one of its operands and shapes them as
// they were, by that operand, before sharding propagation. Exact: the same elements in the
// same order. Through the flat middle shape propagation cannot keep the concatenate's other
// dims split (oracle seed 114951: the first half of a concatenate of a whole and a split
// array, taken back through a flatten, made the concatenate whole and cost a 320 B gather,
// XLA none). Other row ranges stay (see the .cpp). Reshapes and slices carrying a sharding or
// frontend attributes stay, and so does a computation's root. Returns how many were folded.
int64_t FoldFlatSlicesBeforePropagation(Module& module);

// Before sharding propagation, as XLA's simplifier does: replaces each slice of the global
// program that takes all of its operand by the operand, and each that takes its elements
// from one operand of a concatenate (along the concatenate's dim every index it selects falls
// in that operand) by a slice of that operand (or the operand, when it takes all of it).
// Exact: the same elements. The slice no longer stands between a value and its readers, nor
// do the concatenate's other operands steer its sharding and get gathered for it (oracle
// seeds 117233: x[0:4] of a replicated x[4], split for one result, was gathered back for a
// gather that reads x, 2 B where XLA moves nothing; 117491: the first 3 elements of
// concatenate(y, x, y) are y's, and x, split, was gathered for 288 B where XLA moves
// nothing). Slices carrying a sharding or frontend attributes stay, and so does a
// computation's root. Returns how many were folded.
int64_t FoldPlainSlicesBeforePropagation(Module& module);

}  // namespace gspmd
