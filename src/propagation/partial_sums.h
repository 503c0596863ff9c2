// Partial sums: which values are kept unreduced, and where they are reduced.
//
// A dot or convolution whose contracting dims are split over device axes P that its result is
// replicated over, or a reduce over dims split over such axes, computes on each device a piece
// of the value; the pieces of the devices along P sum (max, ...) to it. Instead of reducing
// them at once (an all-reduce over P), the value may stay partial, as Shardy's `unreduced`
// axes, through ops that are linear in it (partitioner/partial_sums.h: add, subtract, negate,
// scaling by a whole value, float converts, data movement, a dot with a whole other operand,
// tuple / while / call plumbing) and be reduced where a consumer needs the whole value: a
// non-linear op, a compare, the result, a user annotation, a consumer split over P (there a
// reduce-scatter). Where to reduce is chosen by cost: a minimum cut over those values, each
// costing the all-reduce of its shard, so a value used by several consumers is reduced once,
// at the smallest tensor on the way, and never later than the first op that needs it whole.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/module.h"
#include "partitioner/device_axes.h"
#include "sharding/sharding.h"

namespace gspmd {

struct PartialSumPlan {
  // The sharding each partial value is computed in: its sharding with the axes P as an
  // unreduced subgroup (tuples: per leaf, the other leaves as they were). Values not listed
  // are whole.
  std::unordered_map<const Instruction*, Sharding> shardings;
  // Ops split over the axes of the sum they compute: computed partial in this layout (their
  // sharding with those axes gathered and unreduced), then reduce-scattered into their own
  // sharding at once.
  std::unordered_map<const Instruction*, Sharding> computed_as;

  // For --explain, per partial value: the producers its partial sum comes from, and the
  // consumers that take it whole (where it is reduced; empty when it only flows on partial).
  struct Note {
    std::vector<const Instruction*> sources;
    std::vector<const Instruction*> reduced_at;
    bool scattered = false;  // computed partial and reduce-scattered at once (computed_as)
  };
  std::unordered_map<const Instruction*, Note> notes;

  // The all-reduce bytes per device the plan saves against reducing every producer at once
  // (the minimum cut against the sum of the producers' costs).
  double saved_bytes = 0;

  bool empty() const { return shardings.empty() && computed_as.empty(); }
};

// For a dot with whole operands: the device axes the partitioner leaves its sum pending over
// (the dot handler's choice; empty when it gathers instead). nullopt: not known, and the
// planner takes the axes that split a contracting dim alike on both operands.
using PendingAxesOracle = std::function<std::optional<std::vector<DeviceAxis>>(const Instruction&)>;

// Plans the partial sums of `module`, whose instructions carry their (whole) shardings: the
// entry computation and what it runs as control flow. A sharding already unreduced (a user's,
// or an earlier plan's) is kept partial. `num_devices` is the partition count.
PartialSumPlan PlanPartialSums(const Module& module, int64_t num_devices, const PendingAxesOracle& oracle = {});

// The --explain text of a partial value: "partial sum since %dot.1; whole at %gelu.2, %r"
// ("" when `instruction` is not partial in `plan`).
std::string DescribePartialSum(const PartialSumPlan& plan, const Instruction& instruction);

}  // namespace gspmd
