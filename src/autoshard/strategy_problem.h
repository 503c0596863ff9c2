// The strategy-assignment problem autoshard solves: one strategy per node, node and edge costs,
// memory bounded at every time point (the IOPDDL contest's form); and the checker of an answer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gspmd::autoshard {

// Costs are non-negative integers. A cost of kForbiddenCost or more marks a choice that must
// not be made; stored costs are clamped to kForbiddenCost so that sums of a few stay in 64 bits.
using Cost = int64_t;
inline constexpr Cost kForbiddenCost = 1'000'000'000'000'000'000;  // 1e18
// Totals of many costs (a whole assignment's) are summed in 128 bits.
using WideCost = __int128;

// Sums of costs saturate here: 4e18, so that one forbidden choice (1e18) still looks cheaper
// than two or three, and a + b of two capped values does not overflow 64 bits.
inline constexpr Cost kCostCap = 4 * kForbiddenCost;

// a + b for costs in [0, kCostCap]: saturates at kCostCap.
inline Cost AddCost(Cost a, Cost b) {
  const Cost sum = a + b;
  return sum >= kCostCap ? kCostCap : sum;
}

// "12345678901234567890" (a 128-bit integer has no std::to_string).
std::string WideToString(WideCost value);

// Example (the contest's worked example, 5 nodes):
//   node 2: live on [50, 120), strategies {cost 25, usage 15}, {45, 20}, {35, 15}
//   edge (0, 2): cost matrix 1 x 3 = [50, 10, 40]
// An edge's cost of (s_u, s_v) is costs[s_u * |S_v| + s_v]; several edges may join one pair.
struct StrategyProblem {
  struct Node {
    int64_t start = 0;  // live on the half-open range [start, end); empty when start == end
    int64_t end = 0;
    std::vector<Cost> costs;      // per strategy, clamped to kForbiddenCost
    std::vector<int64_t> usages;  // per strategy, memory while live
    int strategy_count() const { return static_cast<int>(costs.size()); }
  };
  struct Edge {
    int from = 0;
    int to = 0;
    std::vector<Cost> costs;  // |S_from| x |S_to|, row-major, clamped to kForbiddenCost
  };

  std::string name;
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  int64_t usage_limit = 0;

  // One past the last time point any node is live at (0 when none is).
  int64_t TimeHorizon() const;
};

// What an assignment (one strategy per node) costs and whether it is a valid answer.
struct AssignmentCheck {
  bool well_formed = false;  // one strategy per node, each within its node's range
  WideCost cost = 0;         // node costs + edge costs (forbidden entries included as clamped)
  bool forbidden = false;    // some chosen node or edge cost is >= kForbiddenCost
  int64_t peak_usage = 0;    // max over time of the summed usages of live nodes
  int64_t peak_time = -1;    // the first time point where the peak is reached
  bool fits_memory = false;  // peak_usage <= usage_limit
  std::string problem;       // the first thing wrong, empty when valid

  bool valid() const { return well_formed && !forbidden && fits_memory; }
};

AssignmentCheck CheckAssignment(const StrategyProblem& problem, const std::vector<int>& assignment);

// "[s0, s1, ...]", the contest's answer line.
std::string FormatAssignment(const std::vector<int>& assignment);

}  // namespace gspmd::autoshard
