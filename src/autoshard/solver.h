// autoshard's strategy solver: reduce, find a feasible assignment, improve it by local search
// under the memory limit, guided by Lagrangian memory prices; report a lower bound.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "autoshard/reduced_problem.h"
#include "autoshard/strategy_problem.h"

namespace gspmd::autoshard {

struct SolveOptions {
  // Wall-clock limit, counted from `start`; the best assignment found by then is returned.
  double time_limit_seconds = 60;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  uint64_t seed = 1;
  // Work budget in inner-loop steps of the moves; <= 0: derived from time_limit_seconds. The
  // answer depends only on the input and this budget, as long as the clock does not stop the
  // search first (then `stopped_by_clock` says so).
  int64_t work_budget = 0;
  // Print one line per Lagrangian round on stderr (prices' step, decoded and repaired costs).
  bool trace = false;
};

struct SolveResult {
  std::vector<int> assignment;  // one strategy per input node
  WideCost cost = 0;            // of `assignment`
  bool feasible = false;        // memory within the limit and nothing forbidden
  WideCost initial_cost = 0;    // of the first feasible (or repaired) assignment
  WideCost lower_bound = 0;     // no assignment costs less (memory ignored)
  bool has_lower_bound = false;
  ReductionStats reduction;
  int rounds = 0;               // Lagrangian rounds done
  int64_t work = 0;             // inner-loop steps done
  int64_t work_budget = 0;
  bool stopped_by_clock = false;
  double seconds = 0;           // since options.start
};

// Work per second assumed when the budget is derived from the time limit (this machine, one
// thread: the search does about this many inner-loop steps per second).
inline constexpr double kNominalWorkPerSecond = 4e8;

SolveResult SolveStrategyProblem(const StrategyProblem& problem, const SolveOptions& options);

}  // namespace gspmd::autoshard
