// Exact reductions of a StrategyProblem: forbidden strategies and those no neighbour can pair
// with, parallel edges, nodes whose strategy follows from a neighbour's, memory-free chains.
#pragma once

#include <memory>
#include <vector>

#include "autoshard/reduced_problem.h"
#include "autoshard/strategy_problem.h"

namespace gspmd::autoshard {

// Turns assignments of the reduced problem back into assignments of the input.
class Expansion {
 public:
  std::vector<int> Expand(const std::vector<int>& reduced_assignment) const;

 private:
  friend class Reducer;
  struct Event {
    int node = 0;            // the input node decided by this event
    int by1 = -1, by2 = -1;  // the input nodes (group roots) it depends on; -1: none
    int columns = 0;         // by2's strategy count (original indexing)
    std::vector<int> table;  // by1 only: table[s1]; both: table[s1 * columns + s2]; none: table[0]
  };
  int input_nodes_ = 0;
  std::vector<int> root_of_reduced_;                 // reduced node -> its input root node
  std::vector<std::vector<int>> original_strategy_;  // reduced node -> local s -> root's strategy
  std::vector<Event> events_;                        // in the order they happened
};

struct Reduction {
  ReducedProblem problem;
  Expansion expansion;
  ReductionStats stats;
};

// Every optimal assignment of the result expands to an optimal assignment of `problem`, with
// the same cost (plus `constant`) and the same memory at every time point.
Reduction Reduce(const StrategyProblem& problem);

}  // namespace gspmd::autoshard
