// The pieces of the program-level autoshard: parameters grouped by role, candidate
// PartitionSpecs per mesh, and the coordinate descent over a known cost.
#include <gtest/gtest.h>

#include <map>

#include "autoshard/program/parameter_groups.h"
#include "autoshard/program/plan_search.h"
#include "ir/computation.h"
#include "text/parser.h"

namespace gspmd::autoshard {
namespace {

const char kTwoLayers[] = R"(HloModule m

ENTRY %main (x: f32[8,16], l0.w: f32[16,16], l1.w: f32[16,16], m.l0.w: f32[16,16], m.l1.w: f32[16,16], b: f32[16]) -> (f32[8,16], f32[16,16], f32[16,16]) {
  %x = f32[8,16]{1,0} parameter(0), frontend_attributes={gspmd.role="batch"}
  %l0.w = f32[16,16]{1,0} parameter(1)
  %l1.w = f32[16,16]{1,0} parameter(2)
  %m.l0.w = f32[16,16]{1,0} parameter(3), frontend_attributes={gspmd.role="opt_state"}
  %m.l1.w = f32[16,16]{1,0} parameter(4), frontend_attributes={gspmd.role="opt_state"}
  %b = f32[16]{0} parameter(5)
  %d0 = f32[8,16]{1,0} dot(%x, %l0.w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %a0 = f32[8,16]{1,0} tanh(%d0)
  %d1 = f32[8,16]{1,0} dot(%a0, %l1.w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %a1 = f32[8,16]{1,0} tanh(%d1)
  %u0 = f32[16,16]{1,0} add(%l0.w, %m.l0.w)
  %u1 = f32[16,16]{1,0} add(%l1.w, %m.l1.w)
  ROOT %t = (f32[8,16]{1,0}, f32[16,16]{1,0}, f32[16,16]{1,0}) tuple(%a1, %u0, %u1)
}
)";

TEST(GroupParameters, IdenticalLayersShareAGroupAndStateFollowsItsWeight) {
  std::unique_ptr<Module> module = ParseModule(kTwoLayers);
  const std::vector<ParameterGroup> groups = GroupParameters(*module, {0, 1, 2, 3, 4, 5});
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].label, "x");
  EXPECT_EQ(groups[0].role, "batch");
  EXPECT_EQ(groups[1].label, "l0.w x2");
  EXPECT_EQ(groups[1].parameters, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(groups[1].bytes, 2 * 16 * 16 * 4);
  EXPECT_EQ(groups[2].label, "m.l0.w x2");
  EXPECT_EQ(groups[2].leader, 1);
  EXPECT_EQ(groups[2].role, "opt_state");
  EXPECT_EQ(groups[3].label, "b");  // unused: alone
  EXPECT_EQ(groups[3].leader, -1);
  // Only the parameters asked for.
  EXPECT_EQ(GroupParameters(*module, {2, 5}).size(), 2u);
}

TEST(CandidateSpecs, EveryEvenPlacementOfEveryAxisReplicatedFirst) {
  Mesh mesh{{{"x", 2}, {"y", 4}}, {}};
  const std::vector<PartitionSpec> specs = CandidateSpecs({8, 6}, mesh);
  std::vector<std::string> texts;
  for (const PartitionSpec& spec : specs) texts.push_back(SpecText(spec));
  EXPECT_EQ(texts, (std::vector<std::string>{"P()", "P('y')", "P('x')", "P(('x', 'y'))", "P(None, 'x')", "P('y', 'x')"}))
      << ::testing::PrintToString(texts);
  EXPECT_EQ(CandidateSpecs({}, mesh).size(), 1u);  // a scalar: replicated only
  EXPECT_EQ(CandidateSpecs({3}, mesh).size(), 1u);
  // Axes of size 1 split nothing.
  EXPECT_EQ(CandidateSpecs({8, 6}, Mesh{{{"data", 1}, {"y", 4}}, {}}).size(), 2u);
  EXPECT_EQ(SpecText({{}, {"x", "y"}}), "P(None, ('x', 'y'))");
}

// A cost with a known optimum: group g prefers candidate g+1, and group 0's choice doubles the
// cost of the others unless it is right (so the order of visits matters and is followed).
PlanCost KnownCost(const std::vector<int>& choice) {
  PlanCost cost;
  cost.valid = true;
  cost.fits = true;
  double time = 0;
  for (size_t g = 0; g < choice.size(); ++g) time += choice[g] == static_cast<int>(g) + 1 ? 1 : 3;
  if (choice[0] != 1) time *= 2;
  cost.step_time_s = time;
  return cost;
}

TEST(SearchPlan, FindsTheOptimumOfASeparableCostAndRecordsItsAlternatives) {
  const PlanSearchResult result = SearchPlan({4, 4, 4}, {30, 20, 10}, KnownCost, {});
  EXPECT_EQ(result.choice, (std::vector<int>{1, 2, 3}));
  EXPECT_DOUBLE_EQ(result.cost.step_time_s, 3);
  EXPECT_FALSE(result.stopped_early);
  ASSERT_EQ(result.decisions.size(), 3u);
  EXPECT_EQ(result.decisions[1].chosen, 2);
  EXPECT_EQ(result.decisions[1].alternatives.size(), 4u);
  // Deterministic: the same search twice gives the same plan and count.
  const PlanSearchResult again = SearchPlan({4, 4, 4}, {30, 20, 10}, KnownCost, {});
  EXPECT_EQ(again.choice, result.choice);
  EXPECT_EQ(again.evaluations, result.evaluations);
}

TEST(SearchPlan, StopsAtTheEvaluationLimitWithTheBestSoFar) {
  PlanSearchOptions options;
  options.max_evaluations = 3;
  const PlanSearchResult result = SearchPlan({4, 4, 4}, {30, 20, 10}, KnownCost, options);
  EXPECT_TRUE(result.stopped_early);
  EXPECT_LE(result.evaluations, 3);
  EXPECT_EQ(result.choice[0], 1);
}

TEST(SearchPlan, InactiveGroupsKeepTheirStart) {
  PlanSearchOptions options;
  options.start = {0, 0, 0};
  options.active = {false, true, true};
  const PlanSearchResult result = SearchPlan({4, 4, 4}, {30, 20, 10}, KnownCost, options);
  EXPECT_EQ(result.choice, (std::vector<int>{0, 2, 3}));
}

TEST(SearchPlan, AShortlistLimitsWhatIsEvaluated) {
  PlanSearchOptions options;
  int asked = 0;
  options.shortlist = [&](const std::vector<int>&, int group) {
    ++asked;
    return std::vector<int>{group + 1};  // a screen that knows the answer
  };
  const PlanSearchResult result = SearchPlan({4, 4, 4}, {30, 20, 10}, KnownCost, options);
  EXPECT_EQ(result.choice, (std::vector<int>{1, 2, 3}));
  EXPECT_GE(asked, 3);
  // The start, then one candidate per group (the current one is remembered): 4 plans, not 10.
  EXPECT_EQ(result.evaluations, 4);
  // The last visit of each group weighed its current candidate, which is also the shortlist's.
  for (const GroupDecision& decision : result.decisions) EXPECT_EQ(decision.alternatives.size(), 1u);
}

TEST(BetterPlan, FittingBeatsFastAndMemoryBreaksTies) {
  PlanCost fast{true, "", 1.0, 0, 100, false, 0};
  PlanCost slow{true, "", 2.0, 0, 10, true, 0};
  EXPECT_TRUE(BetterPlan(slow, fast));
  PlanCost same{true, "", 2.0, 0, 5, true, 0};
  EXPECT_TRUE(BetterPlan(same, slow));
  PlanCost invalid;
  EXPECT_TRUE(BetterPlan(fast, invalid));
  EXPECT_FALSE(BetterPlan(invalid, fast));
}

}  // namespace
}  // namespace gspmd::autoshard
