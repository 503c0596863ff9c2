// Asynchronous collective-permutes: a collective-permute becomes XLA's collective-permute-start
// / collective-permute-done pair, the start placed as early as its operand allows and the done
// just before its first user, so that the instructions between them (a windowed einsum loop's
// partial dot) run while the permute is in flight:
//
//   %w = f32[8,64] ...                           %w = f32[8,64] ...
//   %next = f32[8,64] collective-permute(%w)  -> %s = (f32[8,64], f32[8,64], u32[], u32[])
//   %d = f32[16,8] dot(%x, %w)                       collective-permute-start(%w), channel_id=..
//   ROOT %t = tuple(..., %next, %d)               %d = f32[16,8] dot(%x, %w)
//                                                 %next = f32[8,64] collective-permute-done(%s)
//                                                 ROOT %t = tuple(..., %next, %d)
//
// The runtime (runtime/interp/evaluator.cpp, the communicators) runs the pair; the simulator
// prices it as one collective-permute, `gspmd report` counts the start.
#pragma once

#include <cstdint>

#include "ir/module.h"

namespace gspmd {

enum class AsyncPermuteScope {
  // The permutes of while bodies that also hold a dot: the windowed einsum loops
  // (handlers/dot_windowed.h), where there is a dot to overlap; and, in the computations that
  // run such a loop, the permutes with a dot between their operand and their first use (a
  // bidirectional loop's first windows, leaving while the peeled first dot runs). What
  // PartitionModule runs: programs without such loops are left as they are.
  kWindowedLoops,
  // Every collective-permute of one array operand.
  kEverywhere,
};

// Returns how many permutes became start/done pairs.
int64_t ConvertPermutesToAsync(Module& module, AsyncPermuteScope scope = AsyncPermuteScope::kEverywhere);

}  // namespace gspmd
