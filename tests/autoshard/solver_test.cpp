// The solver: the contest example's optimum, the brute-force optimum on small random
// problems, answers within the memory limit, the same answer on every run, and contest
// instance G in about half a second to within 2% of the best cost submitted.
#include <gtest/gtest.h>

#include "autoshard/iopddl_reader.h"
#include "autoshard/solver.h"
#include "autoshard_test_util.h"

namespace gspmd::autoshard {
namespace {

SolveOptions Budget(int64_t work) {
  SolveOptions options;
  options.time_limit_seconds = 60;  // the budget, not the clock, ends these runs
  options.work_budget = work;
  return options;
}

TEST(SolverTest, FindsTheContestExampleOptimum) {
  const StrategyProblem problem = ReadIopddlFile((test::kIopddlData / "example.json").string());
  const SolveResult result = SolveStrategyProblem(problem, Budget(200'000));
  EXPECT_TRUE(result.feasible);
  EXPECT_EQ(result.cost, 445);
  EXPECT_EQ(result.assignment, (std::vector<int>{0, 0, 2, 1, 0}));
  EXPECT_LE(result.lower_bound, 445);
}

TEST(SolverTest, MatchesBruteForceOnSmallProblems) {
  int optimal = 0, solvable = 0;
  for (uint64_t seed = 100; seed < 140; ++seed) {
    const StrategyProblem problem = test::RandomProblem(seed, 7, 3, 10);
    const WideCost expected = test::BruteForceOptimum(problem);
    const SolveResult result = SolveStrategyProblem(problem, Budget(300'000));
    EXPECT_LE(result.lower_bound, expected < 0 ? result.lower_bound : expected) << "seed " << seed;
    if (expected < 0) continue;
    ++solvable;
    // Whatever it returns must be what it says, and never better than the optimum.
    const AssignmentCheck check = CheckAssignment(problem, result.assignment);
    EXPECT_EQ(check.cost, result.cost);
    EXPECT_EQ(check.valid(), result.feasible);
    if (result.feasible) EXPECT_GE(result.cost, expected) << "seed " << seed;
    if (result.feasible && result.cost == expected) ++optimal;
  }
  EXPECT_GT(solvable, 10);
  EXPECT_GE(optimal, solvable * 9 / 10);
}

TEST(SolverTest, AnswersFitTheMemoryLimit) {
  for (uint64_t seed = 200; seed < 210; ++seed) {
    const StrategyProblem problem = test::RandomProblem(seed, 40, 4, 60);
    const SolveResult result = SolveStrategyProblem(problem, Budget(2'000'000));
    const AssignmentCheck check = CheckAssignment(problem, result.assignment);
    EXPECT_EQ(check.valid(), result.feasible);
    if (result.feasible) EXPECT_LE(check.peak_usage, problem.usage_limit);
  }
}

TEST(SolverTest, SameAnswerEveryRun) {
  const StrategyProblem problem = test::RandomProblem(7, 60, 5, 90);
  const SolveResult first = SolveStrategyProblem(problem, Budget(3'000'000));
  const SolveResult second = SolveStrategyProblem(problem, Budget(3'000'000));
  EXPECT_EQ(first.assignment, second.assignment);
  EXPECT_EQ(first.cost, second.cost);
  EXPECT_EQ(first.rounds, second.rounds);
  const StrategyProblem b = ReadIopddlFile((test::kIopddlData / "asplos-2025-iopddl-G.json.gz").string());
  const SolveResult b_first = SolveStrategyProblem(b, Budget(60'000'000));
  const SolveResult b_second = SolveStrategyProblem(b, Budget(60'000'000));
  EXPECT_GT(b_first.rounds, 1);
  EXPECT_EQ(b_first.assignment, b_second.assignment);
}

TEST(SolverTest, ContestInstanceGWithinTwoPercentOfTheBest) {
  const StrategyProblem problem = ReadIopddlFile((test::kIopddlData / "asplos-2025-iopddl-G.json.gz").string());
  EXPECT_EQ(problem.nodes.size(), 816u);
  const SolveResult result = SolveStrategyProblem(problem, Budget(400'000'000));  // ~0.5 s here
  ASSERT_TRUE(result.feasible);
  const double ratio = static_cast<double>(result.cost) / 217039.0;  // best submitted in the contest
  EXPECT_LE(ratio, 1.02) << WideToString(result.cost);
  EXPECT_LE(result.lower_bound, result.cost);
}

}  // namespace
}  // namespace gspmd::autoshard
