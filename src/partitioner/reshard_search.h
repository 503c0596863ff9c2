// Internal to the reshard planner (reshard_plan.cpp): the search for the cheapest sequence of
// collectives between two axis states.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "partitioner/reshard_plan.h"

namespace gspmd::reshard_search {

struct SearchLimits {
  // States the forward search (from the source) may expand before giving up.
  int64_t forward_states = 20000;
  // States the backward search (from the target) expands: the cheapest ways to finish after
  // a collective-permute.
  int64_t backward_states = 160;
  // Only plans cheaper than this are of interest (a plan known already costs this much).
  double cost_bound = 1e300;
};

// The cheapest plan from `source` (over `source_axes`, possibly with partial axes) to `target`
// (over `target_axes`, no partial axes). The forward search from the source may at any state
// collective-permute into a state of the same tile counts found by a bounded backward search
// from the target. `same_axes`: the two axis lists are the same, so the searches may also meet
// at a common state, and the forward search may reach the target by itself. nullopt when no
// plan is found within the limits.
std::optional<ReshardPlan> SearchPlan(const ReshardProblem& problem, std::vector<DeviceAxis> source_axes,
                                      AxisState source, std::vector<DeviceAxis> target_axes, AxisState target,
                                      bool same_axes, const SearchLimits& limits);

}  // namespace gspmd::reshard_search
