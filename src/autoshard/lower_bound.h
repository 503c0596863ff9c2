// A lower bound on the cost of any assignment (memory ignored): exact DP over a spanning
// forest of the reduced problem, every other edge replaced by its row minima.
#pragma once

#include <vector>

#include "autoshard/reduced_problem.h"

namespace gspmd::autoshard {

// A cost no assignment of `problem` goes below, its constant included; `work` grows by the
// DP's inner-loop steps.
// When `decoded` is given, it receives the forest DP's minimizing assignment (a good start for
// the search when memory is loose).
WideCost SpanningForestLowerBound(const ReducedProblem& problem, int64_t& work, std::vector<int>* decoded = nullptr);

}  // namespace gspmd::autoshard
