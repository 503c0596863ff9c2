// Cleanup of the partitioner's output: identity collectives, common subexpressions, dead code.
#pragma once

#include <cstdint>

#include "ir/module.h"

namespace gspmd {

struct CleanupStats {
  int64_t collectives_removed = 0;   // identity collectives replaced by their operand
  int64_t instructions_merged = 0;   // duplicates replaced by an earlier equal instruction
  int64_t all_reduces_sunk = 0;      // loop accumulators reduced once after their loop
};

// Replaces collectives that move no data by their operand: all-reduce, all-gather,
// reduce-scatter, all-to-all and collective-broadcast whose replica groups all have one
// member, and collective-permutes whose pairs send every device's value to itself. A
// collective-permute without pairs (zeros) is kept. Modes where a one-member group still
// spans several devices (cross-replica-and-partition with more than one partition) are kept.
int64_t RemoveIdentityCollectives(Module& module);

// Common-subexpression elimination within each computation: an instruction equal to an
// earlier one (opcode, shape, operands, every attribute, called computations, sharding) is
// replaced by it. Never merged: parameters, side-effecting or opaque ops (custom-call, rng,
// after-all, add-dependency, opt-barrier, domain), control flow (while, conditional, call,
// fusion). Collectives that differ only in channel_id are merged (the survivor keeps its id,
// so ids stay unique).
int64_t EliminateCommonSubexpressions(Module& module);

// Removes instructions nothing live uses, then computations nothing calls.
void RemoveDeadCode(Module& module);

// The three above, after SinkLoopAllReduces (loop_all_reduce_motion.h); run by
// PartitionModule on its result.
CleanupStats CleanupPartitionedModule(Module& module);

}  // namespace gspmd
