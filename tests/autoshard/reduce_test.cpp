// The reductions are exact: on small random problems every assignment of the reduced problem
// expands to one of the input with the same cost (constant included) and the same memory,
// and the reduced problem's optimum (by enumeration) is the input's optimum.
#include <gtest/gtest.h>

#include "autoshard/reduce.h"
#include "autoshard/search_state.h"
#include "autoshard_test_util.h"

namespace gspmd::autoshard {
namespace {

// Enumerates the reduced problem: the best valid expansion's cost (-1 when none), checking
// on the way that each expansion costs what the reduced problem says.
WideCost ReducedOptimum(const StrategyProblem& input, const Reduction& reduction) {
  const ReducedProblem& problem = reduction.problem;
  const int n = static_cast<int>(problem.nodes.size());
  std::vector<int> x(n, 0);
  WideCost optimum = -1;
  while (true) {
    const std::vector<int> expanded = reduction.expansion.Expand(x);
    const AssignmentCheck check = CheckAssignment(input, expanded);
    SearchState state(problem, x);
    EXPECT_TRUE(check.well_formed) << check.problem;
    if (!check.forbidden) {
      EXPECT_EQ(check.cost, state.cost() + problem.constant);
      EXPECT_EQ(check.peak_usage, std::max<int64_t>(state.PeakUsage(), 0));
    }
    if (check.valid() && (optimum < 0 || check.cost < optimum)) optimum = check.cost;
    int i = 0;
    while (i < n && ++x[i] == problem.nodes[i].strategy_count()) x[i++] = 0;
    if (i == n) break;
  }
  return optimum;
}

TEST(StrategyReduceTest, RandomProblemsKeepTheirOptimum) {
  int reduced_something = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const StrategyProblem problem = test::RandomProblem(seed, 6 + static_cast<int>(seed % 3), 3, 9);
    const Reduction reduction = Reduce(problem);
    const WideCost expected = test::BruteForceOptimum(problem);
    EXPECT_EQ(ReducedOptimum(problem, reduction), expected) << "seed " << seed;
    if (reduction.stats.merged + reduction.stats.folded + reduction.stats.pruned_strategies > 0) ++reduced_something;
  }
  EXPECT_GT(reduced_something, 40);
}

TEST(StrategyReduceTest, FunctionalChainMergesIntoOneNode) {
  // 0 - 1 - 2, each edge a one-to-one map: one node left, memory of all three kept.
  StrategyProblem problem;
  problem.nodes = {{0, 4, {1, 2}, {5, 1}}, {1, 3, {10, 20}, {1, 5}}, {2, 6, {3, 3}, {2, 7}}};
  problem.edges = {{0, 1, {0, kForbiddenCost, kForbiddenCost, 4}}, {1, 2, {kForbiddenCost, 1, 2, kForbiddenCost}}};
  problem.usage_limit = 100;
  const Reduction reduction = Reduce(problem);
  EXPECT_EQ(reduction.problem.nodes.size(), 1u);
  EXPECT_EQ(reduction.problem.edges.size(), 0u);
  EXPECT_EQ(reduction.stats.merged, 2);
  EXPECT_EQ(reduction.expansion.Expand({0}), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(reduction.expansion.Expand({1}), (std::vector<int>{1, 1, 0}));
  EXPECT_EQ(ReducedOptimum(problem, reduction), test::BruteForceOptimum(problem));
}

}  // namespace
}  // namespace gspmd::autoshard
