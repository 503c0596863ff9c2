// An estimate of the rematerialization XLA applies when a program does not fit in device
// memory (GShard, section 5.1: the compiler recomputes part of the activations in the backward
// pass): which values to drop and recompute, the memory that leaves, and what it costs.
//
// Greedy, like XLA's HloRematerialization but on whole values: while the live bytes at the
// peak position exceed the budget, take the values live across the peak that have no use
// there (a gap between two of their uses, or their definition and first use, spans it) and
// drop the best of them — most bytes freed per second of recomputation — over that gap,
// recomputing the value just before the use that ends it. Its operands must then be live at
// that use (parameters always are), or be recomputed there too (a chain, up to 16 deep), or,
// when neither works and they are at most a quarter of its size, be kept live until then. An
// all-gather may be done again (as fully sharded weights are gathered again for the backward
// pass); with a RecomputeCounts (which prices whole loops), a while loop may be run again for
// a result read out of its state (as a recomputed forward pass would run a windowed einsum's
// loop again); other collectives, control flow, gathers, sorts, custom-calls and parameters
// are never recomputed. Operands a recomputation reads are pinned there: a pin counts as a use,
// so a later drop of the operand recomputes it by then. Values recomputed only to rebuild another one are live just at that use.
// A later recomputation that needs such a value reads that copy instead of computing it again
// (XLA's rematerialization rewires every later use to its one clone), kept live until then
// where that raises no position above the peak being cut.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "analysis/comm_report.h"
#include "simulate/op_counts.h"

namespace gspmd::simulate {

struct RematPlan {
  // Per value of the entry (program order), the positions it is live at: inclusive segments.
  std::vector<std::vector<std::pair<size_t, size_t>>> segments;
  std::vector<int64_t> transient_bytes;  // per position: recomputed-chain values live only there
  int64_t recomputations = 0;            // values dropped over a gap and recomputed
  double flops = 0;                      // matrix + vector FLOPs of the recomputations
  double matrix_flops = 0;
  double seconds = 0;                    // their time, by the cost function
};

// Seconds to recompute one instruction once.
using RecomputeSeconds = std::function<double(const Instruction&)>;
// Its FLOPs (CountOp when not given; given, while loops may be recomputed too).
using RecomputeCounts = std::function<OpCounts(const Instruction&)>;

// `ranges` as LiveRangesOfEntry gives them (bytes set to 0 for values that own no buffer).
// Stops when the peak fits `budget` or nothing more can be dropped.
RematPlan PlanRematerialization(const EntryLiveRanges& ranges, int64_t budget, const RecomputeSeconds& cost,
                                const RecomputeCounts& counts = {});

// The live bytes at each position of the entry under `plan` (callee peaks included).
std::vector<int64_t> LiveBytesByPosition(const EntryLiveRanges& ranges, const RematPlan& plan);

// A plan that drops nothing.
RematPlan NoRematerialization(const EntryLiveRanges& ranges);

}  // namespace gspmd::simulate
