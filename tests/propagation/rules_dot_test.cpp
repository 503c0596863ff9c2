// Tests for the dot propagation rules: forward merging of the two operands' implications,
// contracting-dim replication, look-ahead tie breaks, and backward to each operand.
#include <gtest/gtest.h>

#include "propagation/op_rules.h"
#include "rules_test_util.h"

namespace gspmd::propagation::testing {
namespace {

// From the megatron_mlp corpus case (XLA's propagated shardings).
constexpr const char* kMlp = R"(
HloModule m, num_partitions=8

ENTRY main {
  x = f32[8,16,32] parameter(0), sharding={devices=[2,1,1,4]<=[8] last_tile_dim_replicate}
  w1 = f32[32,128] parameter(1), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  h = f32[8,16,128] dot(x, w1), lhs_contracting_dims={2}, rhs_contracting_dims={0}, sharding={devices=[2,1,4]<=[8]}
  w2 = f32[128,32] parameter(2), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  y = f32[8,16,32] dot(h, w2), lhs_contracting_dims={2}, rhs_contracting_dims={0}, sharding={devices=[2,1,1,4]<=[8] last_tile_dim_replicate}
  ROOT r = f32[8,16,32] negate(y)
}
)";

TEST(DotRules, ForwardMergesDataAndModelSplits) {
  RuleHarness h(kMlp);
  EXPECT_TRUE(ProposalIs(h.Forward("h"), "{devices=[2,1,4]<=[8]}"));
  EXPECT_EQ(h.Forward("h")->rule.ToString(), "dot forward");
}

TEST(DotRules, ForwardDropsContractingSplits) {
  RuleHarness h(kMlp);
  // w2 splits the contracting dim only: the result keeps just the batch split of h.
  EXPECT_TRUE(ProposalIs(h.Forward("y"), "{devices=[2,1,1,4]<=[8] last_tile_dim_replicate}"));
  h.Set("h", "{replicated}");
  EXPECT_TRUE(ProposalIs(h.Forward("y"), "{replicated}"));
}

TEST(DotRules, ForwardFromOneOperand) {
  RuleHarness h(kMlp);
  h.Set("x", "{unknown}");
  EXPECT_TRUE(ProposalIs(h.Forward("h"), "{devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"));
}

TEST(DotRules, BackwardTakesContractingSplitFromTheOtherOperand) {
  RuleHarness h(kMlp);
  // h's lhs gets batch from the result and its contracting dim from w2's.
  EXPECT_TRUE(ProposalIs(h.Backward("y", 0), "{devices=[2,1,4]<=[8]}"));
  // w2 gets its contracting split from h and nothing from the result (dim 1 unsplit there).
  EXPECT_TRUE(ProposalIs(h.Backward("y", 1), "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"));
  // Without the other operand's sharding, only the result's dims carry back.
  h.Set("w2", "{unknown}");
  EXPECT_TRUE(ProposalIs(h.Backward("y", 0), "{devices=[2,1,1,4]<=[8] last_tile_dim_replicate}"));
}

TEST(DotRules, BackwardFromModelSplitResult) {
  RuleHarness h(kMlp);
  EXPECT_TRUE(ProposalIs(h.Backward("h", 1), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"));
  EXPECT_TRUE(ProposalIs(h.Backward("h", 0), "{devices=[2,1,1,4]<=[8] last_tile_dim_replicate}"));
}

TEST(DotRules, BatchDims) {
  RuleHarness h(R"(
HloModule m, num_partitions=4
ENTRY main {
  a = f32[4,8,16] parameter(0), sharding={devices=[4,1,1]<=[4]}
  b = f32[4,16,32] parameter(1)
  d = f32[4,8,32] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT n = f32[4,8,32] negate(d)
}
)");
  EXPECT_TRUE(ProposalIs(h.Forward("d"), "{devices=[4,1,1]<=[4]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("d", 1, "{devices=[4,1,1]<=[4]}"), "{devices=[4,1,1]<=[4]}"));
  // Non-batch dims of the result that belong to the lhs do not reach the rhs; the lhs's own
  // batch split does.
  EXPECT_TRUE(ProposalIs(h.Backward("d", 1, "{devices=[1,4,1]<=[4]}"), "{devices=[4,1,1]<=[4]}"));
  h.Set("a", "{unknown}");
  EXPECT_TRUE(ProposalIs(h.Backward("d", 1, "{devices=[1,4,1]<=[4]}"), "{replicated}"));
}

TEST(DotRules, TieBrokenByLookaheadThenBySize) {
  constexpr const char* kTie = R"(
HloModule m, num_partitions=4
ENTRY main {
  a = f32[8,16] parameter(0), sharding={devices=[4,1]<=[4]}
  b = f32[16,64] parameter(1), sharding={devices=[1,4]<=[4]}
  d = f32[8,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = f32[8,64] exponential(d)
  ROOT n = f32[8,64] negate(e), sharding={devices=[4,1]<=[4]}
}
)";
  RuleHarness h(kTie);
  // The user chain (exponential -> negate) wants dim 0 split: the lhs's proposal wins.
  EXPECT_TRUE(ProposalIs(h.Forward("d"), "{devices=[4,1]<=[4]}"));
  // Without a sharded user the larger operand (rhs) wins.
  h.Set("n", "{unknown}");
  EXPECT_TRUE(ProposalIs(h.Forward("d"), "{devices=[1,4]<=[4]}"));
}

TEST(DotRules, ReplicatedOperandAddsNothing) {
  RuleHarness h(R"(
HloModule m, num_partitions=8
ENTRY main {
  a = f32[8,16] parameter(0), sharding={replicated}
  b = f32[16,64] parameter(1), sharding={devices=[1,8]<=[8]}
  ROOT d = f32[8,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  EXPECT_TRUE(ProposalIs(h.Forward("d"), "{devices=[1,8]<=[8]}"));
}

TEST(DotRules, ExplicitDeviceOrderSurvives) {
  RuleHarness h(R"(
HloModule m, num_partitions=4
ENTRY main {
  a = f32[8,16] parameter(0), sharding={devices=[2,1,2]0,3,1,2 last_tile_dim_replicate}
  b = f32[16,64] parameter(1), sharding={devices=[1,2,2]0,1,3,2 last_tile_dim_replicate}
  ROOT d = f32[8,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  // Device 0: row 0 (a), col 0 (b); 3: row 0, col 1; 1: row 1, col 0; 2: row 1, col 1.
  EXPECT_TRUE(ProposalIs(h.Forward("d"), "{devices=[2,2]0,3,1,2}"));
}

}  // namespace
}  // namespace gspmd::propagation::testing
