// Tests for the elementwise propagation rules and the rule dispatch (priorities, manual).
#include <gtest/gtest.h>

#include "propagation/op_rules.h"
#include "rules_test_util.h"

namespace gspmd::propagation::testing {
namespace {

constexpr const char* kModule = R"(
HloModule m, num_partitions=8

ENTRY main {
  a = f32[16,32] parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  b = f32[16,32] parameter(1), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  c = f32[16,32] parameter(2)
  p = pred[16,32] parameter(3), sharding={devices=[4,2]<=[8]}
  lo = f32[] parameter(4), sharding={replicated}
  add = f32[16,32] add(a, b), sharding={devices=[2,4]<=[8]}
  neg = f32[16,32] negate(c)
  sel = f32[16,32] select(p, add, c)
  clamp = f32[16,32] clamp(lo, add, lo)
  cmp = pred[16,32] compare(a, c), direction=LT
  cvt = bf16[16,32] convert(a)
  ROOT t = (f32[16,32], f32[16,32], f32[16,32], pred[16,32], bf16[16,32]) tuple(neg, sel, clamp, cmp, cvt)
}
)";

TEST(ElementwiseRules, ForwardMergesCompatiblePartialShardings) {
  RuleHarness h(kModule);
  EXPECT_TRUE(ProposalIs(h.Forward("add"), "{devices=[2,4]<=[8]}"));
  EXPECT_EQ(h.Forward("add")->rule.ToString(), "elementwise forward");
}

TEST(ElementwiseRules, ForwardWithUnknownOperandsUsesTheKnownOnes) {
  RuleHarness h(kModule);
  EXPECT_TRUE(ProposalIs(h.Forward("neg"), ""));
  EXPECT_TRUE(ProposalIs(h.Forward("cmp"), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"));
  EXPECT_TRUE(ProposalIs(h.Forward("cvt"), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"));
}

TEST(ElementwiseRules, ForwardConflictKeepsTheMostSpecific) {
  RuleHarness h(kModule);
  // p is [4,2]; add is [2,4]: they conflict; both have 8 tiles, the first operand wins.
  EXPECT_TRUE(ProposalIs(h.Forward("sel"), "{devices=[4,2]<=[8]}"));
  h.Set("p", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  EXPECT_TRUE(ProposalIs(h.Forward("sel"), "{devices=[2,4]<=[8]}"));
}

TEST(ElementwiseRules, ClampIgnoresScalarBounds) {
  RuleHarness h(kModule);
  EXPECT_TRUE(ProposalIs(h.Forward("clamp"), "{devices=[2,4]<=[8]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("clamp", 0, "{devices=[2,4]<=[8]}"), ""));
  EXPECT_TRUE(ProposalIs(h.Backward("clamp", 1, "{devices=[2,4]<=[8]}"), "{devices=[2,4]<=[8]}"));
}

TEST(ElementwiseRules, BackwardGivesTheUserSharding) {
  RuleHarness h(kModule);
  EXPECT_TRUE(ProposalIs(h.Backward("add", 0), "{devices=[2,4]<=[8]}"));
  EXPECT_EQ(h.Backward("add", 1)->rule.ToString(), "elementwise backward");
  EXPECT_TRUE(ProposalIs(h.Backward("sel", 0, "{devices=[8,1]<=[8]}"), "{devices=[8,1]<=[8]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("cvt", 0, "{devices=[8,1]<=[8]}"), "{devices=[8,1]<=[8]}"));
}

TEST(ElementwiseRules, ManualStaysManual) {
  RuleHarness h(kModule);
  h.Set("a", "{manual}");
  EXPECT_TRUE(ProposalIs(h.Forward("add"), "{manual}"));
  EXPECT_TRUE(ProposalIs(h.Backward("neg", 0, "{manual}"), "{manual}"));
}

TEST(ElementwiseRules, PartialManualSubgroupsFlowThrough) {
  RuleHarness h(kModule);
  h.Set("a", "{devices=[2,1,2,2]<=[8] last_tile_dims={manual, replicated}}");
  h.Set("b", "{devices=[1,1,2,4]<=[8] last_tile_dims={manual, replicated}}");
  EXPECT_TRUE(ProposalIs(h.Forward("add"),
                         "{devices=[2,1,2,2]<=[8] last_tile_dims={manual, replicated}}"));
}

TEST(RulePriorities, FollowXlaAggressiveness) {
  RuleHarness h(R"(
HloModule m
ENTRY main {
  a = f32[4,8] parameter(0)
  w = f32[8,2] parameter(1)
  s = f32[] parameter(2)
  n = f32[4,8] negate(a)
  t = f32[8,4] transpose(a), dimensions={1,0}
  r = f32[32] reshape(a)
  d = f32[4,2] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  b = f32[4,8] broadcast(s), dimensions={}
  ROOT tuple = (f32[4,8], f32[8,4], f32[32], f32[4,2], f32[4,8]) tuple(n, t, r, d, b)
}
)");
  EXPECT_EQ(RulePriority(h.Get("n"), true), 0);
  EXPECT_EQ(RulePriority(h.Get("t"), true), 0);
  EXPECT_EQ(RulePriority(h.Get("r"), false), 0);
  EXPECT_EQ(RulePriority(h.Get("d"), true), 1);
  EXPECT_EQ(RulePriority(h.Get("b"), false), 2);
  EXPECT_EQ(RulePriority(h.Get("b"), true), kMaxPriorityLevel);
}

}  // namespace
}  // namespace gspmd::propagation::testing

namespace gspmd::propagation::testing {
namespace {

TEST(ElementwiseRules, BitcastConvertAcrossWidths) {
  RuleHarness h(R"(
HloModule m, num_partitions=4
ENTRY main {
  a = f32[8,16] parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT b = bf16[8,16,2] bitcast-convert(a)
}
)");
  EXPECT_TRUE(ProposalIs(h.Forward("b"), "{devices=[4,1,1]<=[4]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("b", 0, "{devices=[2,1,2]<=[4]}"),
                         "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"));
}

TEST(RuleDispatch, ShardingsOfTheWrongRankAreIgnored) {
  RuleHarness h(R"(
HloModule m, num_partitions=4
ENTRY main {
  a = f32[8,16] parameter(0)
  ROOT n = f32[8,16] negate(a)
}
)");
  h.Set("a", "{devices=[4,1,1]<=[4]}");
  EXPECT_TRUE(ProposalIs(h.Forward("n"), ""));
  EXPECT_TRUE(ProposalIs(h.Backward("n", 0, "{devices=[4]<=[4]}"), ""));
  EXPECT_TRUE(ProposalIs(h.Backward("n", 3, "{devices=[4,1]<=[4]}"), ""));
}

}  // namespace
}  // namespace gspmd::propagation::testing
