// The program-level autoshard search: one PartitionSpec per parameter group, chosen by
// coordinate descent over what the caller's evaluator (partition + simulate) says each plan
// costs. The search never guesses a cost: every plan it compares was compiled and simulated.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gspmd::autoshard {

// What one plan costs, as the simulator estimates the partitioned program.
struct PlanCost {
  bool valid = false;        // false: the plan could not be compiled (`error` says why)
  std::string error;
  double step_time_s = 0;
  double mfu = 0;
  int64_t peak_bytes = 0;    // per device, after rematerialization
  bool fits = false;         // peak within the memory budget
  double comm_bytes = 0;     // per device and step
};

// a is a better plan than b: valid before invalid, fitting before not fitting; among fitting
// plans the faster (ties: less memory, then fewer bytes); among plans that do not fit, the
// smaller peak.
bool BetterPlan(const PlanCost& a, const PlanCost& b);

// One alternative weighed for a group: the candidate and what the plan cost with it.
struct Alternative {
  int candidate = 0;
  PlanCost cost;
};

// The last time the search weighed a group: every candidate tried, and the one kept.
struct GroupDecision {
  int group = 0;
  int chosen = 0;
  std::vector<Alternative> alternatives;
};

struct PlanSearchOptions {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  int64_t max_evaluations = 0;  // 0: no limit (the deadline still holds)
  int max_passes = 4;
  std::vector<int> start;       // one candidate per group; empty: candidate 0 of every group
  std::vector<bool> active;     // the groups to decide; empty: all (the others keep `start`)
  // The candidates worth evaluating for group `group` given the others' `choice` (e.g. the best
  // few on a cheaper copy of the program); unset: all of them. The current one is always kept.
  std::function<std::vector<int>(const std::vector<int>& choice, int group)> shortlist;
};

struct PlanSearchResult {
  std::vector<int> choice;  // candidate per group
  PlanCost cost;
  int64_t evaluations = 0;  // distinct plans compiled and simulated
  int passes = 0;
  bool stopped_early = false;  // by the deadline or the evaluation limit
  std::vector<GroupDecision> decisions;  // in group order, for the groups weighed
};

// Coordinate descent: groups in order of `weight` (largest first); for each, every candidate
// in turn with the others fixed, keeping the best; repeated until a pass changes nothing.
// `candidates[g]` is how many candidates group g has (candidate 0 first). Plans are evaluated
// once (memoized). Deterministic when neither the deadline nor the limit stops it.
PlanSearchResult SearchPlan(const std::vector<int>& candidates, const std::vector<int64_t>& weight,
                            const std::function<PlanCost(const std::vector<int>&)>& evaluate,
                            const PlanSearchOptions& options);

}  // namespace gspmd::autoshard
