// Moves the all-reduce of a loop-accumulated sum out of the loop (as XLA's
// WhileLoopAllReduceCodeMotion does): summing partial sums every iteration and reducing once
// after the loop moves the same values with one collective instead of one per iteration.
#pragma once

#include <cstdint>

#include "ir/module.h"

namespace gspmd {

// In a while body whose root tuple element k is
//   add(get-tuple-element(param, k), y)
// where y is built from sum all-reduces (with the same groups) by ops every device applies
// alike and that commute with the sum (add, transpose, reshape, copy, broadcast, pad with
// zeros), each used once, where element k starts at zero (a zero constant or a broadcast of one), nothing else in
// the body or the condition reads element k and the all-reduce has no other user, element k
// accumulates add(acc, y of the all-reduces' operands) instead and every get-tuple-element k of the loop's result is
// replaced by that all-reduce of it:
//   body:  %g = all-reduce(%dw)   %acc' = add(%acc, %g)     ->   %acc' = add(%acc, %dw)
//   after: %r = gte(%while), index=k                         ->   %r' = all-reduce(gte(%while))
// Returns the number of accumulators moved.
int64_t SinkLoopAllReduces(Module& module);

}  // namespace gspmd
