// Tests for the shape-op propagation rules: broadcast, reshape, transpose, reverse, slice, pad,
// concatenate, dynamic-slice, dynamic-update-slice and iota, in both directions.
#include <gtest/gtest.h>

#include "propagation/op_rules.h"
#include "rules_test_util.h"

namespace gspmd::propagation::testing {
namespace {

TEST(BroadcastRules, ForwardMapsOperandDimsAndLeavesNewDimsUnsplit) {
  RuleHarness h(R"(
HloModule m, num_partitions=8
ENTRY main {
  b = f32[128] parameter(0), sharding={devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  s = f32[] parameter(1), sharding={replicated}
  bb = f32[8,16,128] broadcast(b), dimensions={2}
  bs = f32[8,16,128] broadcast(s), dimensions={}
  ROOT t = (f32[8,16,128], f32[8,16,128]) tuple(bb, bs)
}
)");
  EXPECT_TRUE(ProposalIs(h.Forward("bb"), "{devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"));
  // A replicated operand proposes nothing: the broadcast follows its users.
  EXPECT_TRUE(ProposalIs(h.Forward("bs"), ""));
}

TEST(BroadcastRules, BackwardDropsNewDims) {
  RuleHarness h(R"(
HloModule m, num_partitions=8
ENTRY main {
  b = f32[128] parameter(0)
  bb = f32[8,16,128] broadcast(b), dimensions={2}, sharding={devices=[2,1,4]<=[8]}
  ROOT n = f32[8,16,128] negate(bb)
}
)");
  // The batch split (new dim) becomes partial replication.
  EXPECT_TRUE(ProposalIs(h.Backward("bb", 0), "{devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"));
  EXPECT_TRUE(ProposalIs(h.Backward("bb", 0, "{devices=[8,1,1]<=[8]}"), "{replicated}"));
}

TEST(BroadcastRules, TransposingBroadcast) {
  RuleHarness h(R"(
HloModule m, num_partitions=8
ENTRY main {
  a = f32[4,16] parameter(0), sharding={devices=[2,4]<=[8]}
  ROOT bb = f32[16,3,4] broadcast(a), dimensions={2,0}
}
)");
  EXPECT_TRUE(ProposalIs(h.Forward("bb"), "{devices=[4,1,2]<=[2,4]T(1,0)}"));
  EXPECT_TRUE(ProposalIs(h.Backward("bb", 0, "{devices=[4,1,2]<=[2,4]T(1,0)}"), "{devices=[2,4]<=[8]}"));
}

constexpr const char* kReshapes = R"(
HloModule m, num_partitions=8
ENTRY main {
  x = f32[8,16,128] parameter(0), sharding={devices=[2,1,4]<=[8]}
  heads = f32[8,16,4,32] reshape(x)
  flat = f32[128,128] reshape(x)
  b = f32[128] parameter(1), sharding={devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  b3 = f32[1,1,128] reshape(b)
  odd = f32[10,6] parameter(2), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
  odd3 = f32[10,2,3] reshape(odd)
  ROOT t = (f32[8,16,4,32], f32[128,128], f32[1,1,128], f32[10,2,3]) tuple(heads, flat, b3, odd3)
}
)";

TEST(ReshapeRules, SplitAndMergeBothWays) {
  RuleHarness h(kReshapes);
  EXPECT_TRUE(ProposalIs(h.Forward("heads"), "{devices=[2,1,4,1]<=[8]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("heads", 0, "{devices=[2,1,4,1]<=[8]}"), "{devices=[2,1,4]<=[8]}"));
  EXPECT_TRUE(ProposalIs(h.Forward("b3"), "{devices=[1,1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"));
  EXPECT_EQ(h.Forward("heads")->rule.ToString(), "reshape forward");
}

TEST(ReshapeRules, MergeKeepsOnlyTheCompatiblePart) {
  RuleHarness h(kReshapes);
  // [8,16,128] -> [128,128]: dim 0 merges with the unsplit 16 (the batch split survives as
  // the major part); the minor dim 128 maps whole.
  EXPECT_TRUE(ProposalIs(h.Forward("flat"), "{devices=[2,4]<=[8]}"));
  h.Set("x", "{devices=[1,2,4]<=[8]}");
  // The 16-dim split cannot reach the top of the merged dim: it becomes replicated.
  EXPECT_TRUE(ProposalIs(h.Forward("flat"), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"));
}

TEST(ReshapeRules, UnevenDimKeptWhenItSurvives) {
  RuleHarness h(kReshapes);
  EXPECT_TRUE(ProposalIs(h.Forward("odd3"), "{devices=[4,1,1,2]<=[8] last_tile_dim_replicate}"));
}

TEST(TransposeRules, PermutesBothWays) {
  RuleHarness h(R"(
HloModule m, num_partitions=8
ENTRY main {
  x = f32[8,16,4,32] parameter(0), sharding={devices=[2,1,4,1]<=[8]}
  ROOT t = f32[8,4,16,32] transpose(x), dimensions={0,2,1,3}
}
)");
  EXPECT_TRUE(ProposalIs(h.Forward("t"), "{devices=[2,4,1,1]<=[8]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("t", 0, "{devices=[1,4,2,1]<=[8]}"), "{devices=[1,2,4,1]<=[4,2]T(1,0)}"));
}

TEST(ReverseRules, MirrorsTilesOnReversedDims) {
  RuleHarness h(R"(
HloModule m, num_partitions=4
ENTRY main {
  x = f32[16,8] parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT r = f32[16,8] reverse(x), dimensions={0}
}
)");
  EXPECT_TRUE(ProposalIs(h.Forward("r"), "{devices=[4,1]3,2,1,0}"));
  EXPECT_TRUE(ProposalIs(h.Backward("r", 0, "{devices=[4,1]3,2,1,0}"), "{devices=[4,1]<=[4]}"));
}

constexpr const char* kSlices = R"(
HloModule m, num_partitions=8
ENTRY main {
  x = f32[16,32] parameter(0), sharding={devices=[2,4]<=[8]}
  zero = f32[] constant(0)
  sl = f32[8,32] slice(x), slice={[0:8], [0:32]}
  pd = f32[18,32] pad(x, zero), padding=1_1x0_0
  y = f32[16,32] parameter(1)
  cc = f32[32,32] concatenate(x, y), dimensions={0}
  i = s32[] parameter(2)
  ds = f32[16,8] dynamic-slice(x, i, i), dynamic_slice_sizes={16,8}
  dr = f32[4,32] dynamic-slice(x, i, i), dynamic_slice_sizes={4,32}
  up = f32[4,32] parameter(3), sharding={devices=[1,8]<=[8]}
  dus = f32[16,32] dynamic-update-slice(y, up, i, i)
  io = s32[16,32] iota(), iota_dimension=0
  ROOT t = (f32[8,32], f32[18,32], f32[32,32], f32[16,8], f32[4,32], f32[16,32], s32[16,32]) tuple(sl, pd, cc, ds, dr, dus, io)
}
)";

TEST(SlicePadRules, ShardingPassesThrough) {
  RuleHarness h(kSlices);
  EXPECT_TRUE(ProposalIs(h.Forward("sl"), "{devices=[2,4]<=[8]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("sl", 0, "{devices=[8,1]<=[8]}"), "{devices=[8,1]<=[8]}"));
  EXPECT_TRUE(ProposalIs(h.Forward("pd"), "{devices=[2,4]<=[8]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("pd", 0, "{devices=[2,4]<=[8]}"), "{devices=[2,4]<=[8]}"));
  // The padding value is a scalar: nothing.
  EXPECT_TRUE(ProposalIs(h.Backward("pd", 1, "{devices=[2,4]<=[8]}"), ""));
}

TEST(ConcatenateRules, MostSpecificOperandBothWays) {
  RuleHarness h(kSlices);
  EXPECT_TRUE(ProposalIs(h.Forward("cc"), "{devices=[2,4]<=[8]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("cc", 1, "{devices=[1,8]<=[8]}"), "{devices=[1,8]<=[8]}"));
  EXPECT_EQ(RulePriority(h.Get("cc"), true), 1);
}

TEST(DynamicSliceRules, TheIndexedDimIsWholeAndTheOthersKeepTheirSplit) {
  RuleHarness h(kSlices);
  // Dim 1 is indexed (32 -> 8): its 4 devices replicate the slice; dim 0 stays split.
  EXPECT_TRUE(ProposalIs(h.Forward("ds"), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"));
  h.Set("x", "{devices=[8,1]<=[8]}");
  EXPECT_TRUE(ProposalIs(h.Forward("ds"), "{devices=[8,1]<=[8]}"));
  EXPECT_TRUE(ProposalIs(h.Forward("dr"), "{replicated}"));
  EXPECT_TRUE(ProposalIs(h.Backward("ds", 0, "{devices=[8,1]<=[8]}"), "{devices=[8,1]<=[8]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("ds", 1, "{devices=[8,1]<=[8]}"), ""));
  EXPECT_EQ(RulePriority(h.Get("ds"), true), 0);
  EXPECT_EQ(RulePriority(h.Get("ds"), false), 1);
}

TEST(DynamicUpdateSliceRules, UpdateAndBase) {
  RuleHarness h(kSlices);
  // The update's split dim 1 is whole (32 = 32): it passes.
  EXPECT_TRUE(ProposalIs(h.Forward("dus"), "{devices=[1,8]<=[8]}"));
  h.Set("y", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  h.Set("up", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  // The update splits the indexed dim 0 (4 of 16): that split is dropped, the base's merges.
  EXPECT_TRUE(ProposalIs(h.Forward("dus"), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"));
  EXPECT_TRUE(ProposalIs(h.Backward("dus", 0, "{devices=[2,4]<=[8]}"), "{devices=[2,4]<=[8]}"));
  // The update's indexed dim 0 (4 of 16) is whole.
  EXPECT_TRUE(ProposalIs(h.Backward("dus", 1, "{devices=[2,4]<=[8]}"),
                         "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"));
  EXPECT_TRUE(ProposalIs(h.Backward("dus", 2, "{devices=[2,4]<=[8]}"), ""));
}

TEST(IotaRules, OnlyUsersDecide) {
  RuleHarness h(kSlices);
  EXPECT_TRUE(ProposalIs(h.Forward("io"), ""));
}

}  // namespace
}  // namespace gspmd::propagation::testing
