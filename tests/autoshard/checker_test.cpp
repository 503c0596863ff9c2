// CheckAssignment: cost, forbidden choices, peak memory over half-open intervals, bad sizes.
#include <gtest/gtest.h>

#include "autoshard/iopddl_reader.h"
#include "autoshard/strategy_problem.h"
#include "autoshard_test_util.h"

namespace gspmd::autoshard {
namespace {

StrategyProblem Example() { return ReadIopddlFile((test::kIopddlData / "example.json").string()); }

TEST(CheckAssignmentTest, TheContestExampleCosts) {
  const StrategyProblem problem = Example();
  const AssignmentCheck best = CheckAssignment(problem, {0, 0, 2, 1, 0});
  EXPECT_TRUE(best.valid()) << best.problem;
  EXPECT_EQ(best.cost, 445);
  EXPECT_EQ(best.peak_usage, 50);  // nodes 0, 1 and 2 at [50, 70): 10 + 25 + 15
  const AssignmentCheck other = CheckAssignment(problem, {0, 0, 2, 0, 0});
  EXPECT_TRUE(other.valid());
  EXPECT_EQ(other.cost, 545);
}

TEST(CheckAssignmentTest, MemoryOverTheLimit) {
  const AssignmentCheck check = CheckAssignment(Example(), {0, 0, 1, 1, 0});  // node 2 uses 20
  EXPECT_FALSE(check.valid());
  EXPECT_FALSE(check.fits_memory);
  EXPECT_EQ(check.peak_usage, 55);
  EXPECT_EQ(check.peak_time, 50);
  EXPECT_EQ(check.problem, "memory 55 at time 50 exceeds the limit 50");
}

TEST(CheckAssignmentTest, IntervalsAreHalfOpen) {
  StrategyProblem problem;
  problem.nodes = {{0, 5, {1}, {10}}, {5, 9, {1}, {10}}, {3, 3, {1}, {100}}};  // empty range: no memory
  problem.usage_limit = 10;
  const AssignmentCheck check = CheckAssignment(problem, {0, 0, 0});
  EXPECT_TRUE(check.valid()) << check.problem;
  EXPECT_EQ(check.peak_usage, 10);
}

TEST(CheckAssignmentTest, ForbiddenChoicesAndSums) {
  StrategyProblem problem;
  problem.nodes = {{0, 1, {kForbiddenCost, 7}, {0, 0}}, {0, 1, {kForbiddenCost, kForbiddenCost}, {0, 0}}};
  problem.edges = {{0, 1, {kForbiddenCost, 1, 2, 3}}};
  problem.usage_limit = 0;
  const AssignmentCheck check = CheckAssignment(problem, {0, 0});
  EXPECT_TRUE(check.forbidden);
  EXPECT_FALSE(check.valid());
  EXPECT_EQ(check.cost, static_cast<WideCost>(3) * kForbiddenCost);  // 128 bits: no overflow
  EXPECT_EQ(WideToString(check.cost), "3000000000000000000");
  EXPECT_EQ(check.problem, "node 0 strategy 0 is forbidden");
}

TEST(CheckAssignmentTest, MalformedAssignments) {
  const StrategyProblem problem = Example();
  EXPECT_EQ(CheckAssignment(problem, {0, 0}).problem, "the assignment has 2 strategies, expected one per node (5)");
  EXPECT_EQ(CheckAssignment(problem, {0, 0, 3, 1, 0}).problem, "node 2 is given strategy 3, expected 0..2");
  EXPECT_EQ(FormatAssignment({0, 0, 2, 1, 0}), "[0, 0, 2, 1, 0]");
}

}  // namespace
}  // namespace gspmd::autoshard
