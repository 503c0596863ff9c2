// Exact algebraic simplification of a partitioned module, so that dead code (and the collectives feeding it) can go.
#pragma once

#include <cstdint>
#include <optional>

#include "ir/hlo_builder.h"
#include "ir/literal.h"
#include "ir/module.h"

namespace gspmd {

// The one value every element of `literal` has (bitwise equal), as a scalar literal of its
// element type; nullopt when two differ or it has no elements.
std::optional<Literal> SplatOf(const Literal& literal);

// A scalar constant of `value` placed right after `like`, broadcast to `like`'s shape when it
// has dims: the form every splat fold makes.
Instruction* AddSplatAfter(Computation& computation, const Instruction& like, Literal value, NameUniquer& names);

// The value op(x, x) is, bit for bit, when `instruction` is max, min, and or or of one value x
// with itself (a NaN stays that NaN); nullptr otherwise.
Instruction* IdempotentOperand(const Instruction& instruction);

// Rewrites that keep every result bit-identical, applied until none applies:
//   select(p, x, x)                          -> x
//   select(splat constant p, a, b)           -> a or b
//   compare(x, x) of integers or pred        -> a splat constant (true for EQ/GE/LE)
//   dynamic-update-slice(a, u, ...) where u has a's shape -> u (the start clamps to 0)
//   call of a computation whose root is its parameter k -> operand k; whose root is
//     select(p, param j, param k) with operands j and k the same value -> that value
//   a splat (a constant whose elements are all equal, or a broadcast of one) through
//     reshape, transpose, broadcast, copy, slice, reverse, dynamic-slice, convert, pad and
//     concatenate of equal splats, all-gather, all-to-all; all-reduce / reduce-scatter /
//     reduce with an and, or, max or min reducer, or summing zeros (of the init's sign);
//     compare of integer splats
//     -> a broadcast of one scalar constant
//   x - x and x ^ x of integers, an integer dot with a zero operand, an integer x % 1 -> zeros
//   max(x, x), min(x, x), x & x, x | x       -> x
//   sort along a dim of one element (or an element of its result) -> its operand(s)
//   all-gather or dynamic-slice of an iota that keeps its iota dim whole, or a slice of
//     it from 0 with stride 1 along that dim -> an iota of the result's shape
// A replaced root that carries the output's sharding passes it to its replacement, or to a
// copy of it when the replacement is a parameter or has a sharding of its own.
// A partitioned program's constants are the same on every device, so a collective of a
// splat with an idempotent reducer or one that only moves data returns the splat. The
// instructions left unused are not removed here: CleanupPartitionedModule's dead-code
// removal does that. Returns how many instructions were replaced.
int64_t SimplifyPartitionedModule(Module& module);

// Replaces every call (but those with frontend attributes, such as a manual region's body) by
// a copy of its computation, as XLA inlines calls before partitioning: a value a called
// computation gathers and its caller gathers too is then one collective for CSE to merge.
// Collectives copied get fresh channel ids. Returns how many calls were inlined.
int64_t InlinePartitionedCalls(Module& module);

// Replaces each call of a pure helper (JAX's `_take`, `cumsum`, `remainder`, `_where`: a
// computation with no custom-call, collective, partition or replica id, or sharding inside, the
// call itself carrying none, feeding or fed by no custom-call) in the global program by a copy of
// its computation, as XLA inlines calls before sharding propagation: shardings then flow
// through the helper instead of each call's arrays being resharded at its boundary. Manual
// regions (shard_map bodies) and annotated calls stay calls. Returns how many were inlined.
int64_t InlineCallsBeforePropagation(Module& module);

// Folds each sort along a dim of one element in the global program before sharding
// propagation, as XLA's simplifier does: its results are its operands (a tuple sort's elements,
// when get-tuple-elements are all that use it). JAX's argsort over such a dim is then its iota
// (zeros), which needs no communication however the sliced input lay (oracle seed 20115: 56 B
// of gathers of the rows sorted, against XLA's 0). A top-k of k = 1 over rows of one element
// folds likewise: its values are its operand, its indices zeros (40288). A variadic sort's
// operands that its comparator never reads and whose sorted values nobody uses are dropped
// (112363). Returns how many sorts and top-ks were folded.
int64_t FoldTrivialSortsBeforePropagation(Module& module);

// Removes the global program's dead instructions (and computations nothing calls) before
// sharding propagation, so that a value nothing uses cannot steer the shardings of live ones
// (an unused jnp.take made a live add on replicated inputs sharded, then gathered, in oracle
// seed 20019). Returns how many instructions were removed.
int64_t RemoveDeadCodeBeforePropagation(Module& module);

// Folds reshape round trips in the global program before sharding propagation, as XLA's
// algebraic simplifier does before its partitioner: reshape(reshape(x)) shaped as x is x, and a
// reshape to its operand's shape is the operand. Reshapes carrying a sharding or frontend
// attributes stay, and so do other chains.
// JAX writes such round trips (jnp.ravel then reshape back); propagated through, the flat
// middle shape forces another sharding and a gather and slice (oracle seed 40005: 192 B
// against XLA's 0). Exact: the values are the same. The folded reshapes are left dead, for
// RemoveDeadCodeBeforePropagation. Returns how many reshapes were folded.
int64_t FoldReshapesBeforePropagation(Module& module);

}  // namespace gspmd
