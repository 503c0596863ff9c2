// Partial sums: which values are kept unreduced, and where they are reduced.
//
// A dot or convolution whose contracting dims are split over device axes P that its result is
// replicated over, a reduce over dims split over such axes, or a scatter-add whose updates are
// split over them (the gradient of a gather), computes on each device a piece of the value;
// the pieces of the devices along P sum (max, ...) to it. Instead of reducing them at once (an
// all-reduce over P), the value may stay partial, as Shardy's `unreduced` axes, through ops
// that are linear in it (partitioner/partial_sums.h: add, subtract, negate, scaling by a whole
// value, float converts, data movement, a dot with a whole other operand, tuple / while / call
// plumbing) and be reduced where a consumer needs the whole value: a non-linear op, a compare,
// the result, a user annotation, a consumer split over P (there a reduce-scatter). Where to
// reduce is chosen by cost: a minimum cut over those values, each costing the all-reduce of its
// shard, so a value used by several consumers is reduced once, at the smallest tensor on the
// way, and never later than the first op that needs it whole.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
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
  // Dots among `shardings` that the dot handler, free to choose, would compute whole by
  // gathering their operands: the partitioner asks it for the partial layout itself.
  std::unordered_set<const Instruction*> instead_of_gathering;

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

// The dot handler's choice for a dot: the device axes it leaves the sum pending over (empty
// when it gathers the contracting dims instead) and the bytes it estimates for that.
struct DotChoice {
  std::vector<DeviceAxis> pending;
  double cost_bytes = 0;
};
// Asks the partitioner's dot handler about `dot` with whole operands and its result wanted as
// `out` (nullptr: as its own sharding, whole; else a layout with unreduced axes). nullopt: not
// known, and the planner takes the axes that split a contracting dim alike on both operands.
// Where the handler gathers a dot that could stay partial (cheaper than its all-reduce), the
// planner still offers it the partial sum, at the cost of gathering, so that dots summed
// afterwards (a layer's q, k and v input gradients) are reduced once.
using DotChoiceOracle = std::function<std::optional<DotChoice>(const Instruction& dot, const Sharding* out)>;

// Plans the partial sums of `module`, whose instructions carry their (whole) shardings: the
// entry computation and what it runs as control flow. A sharding already unreduced (a user's,
// or an earlier plan's) is kept partial. `num_devices` is the partition count.
PartialSumPlan PlanPartialSums(const Module& module, int64_t num_devices, const DotChoiceOracle& oracle = {});

// The --explain text of a partial value: "partial sum since %dot.1; whole at %gelu.2, %r"
// ("" when `instruction` is not partial in `plan`).
std::string DescribePartialSum(const PartialSumPlan& plan, const Instruction& instruction);

}  // namespace gspmd
