// Tests for the sort and top-k propagation rules.
#include <gtest/gtest.h>

#include "propagation/op_rules.h"
#include "rules_test_util.h"

namespace gspmd::propagation::testing {
namespace {

constexpr const char* kSort = R"(
HloModule m, num_partitions=8
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}
ENTRY main {
  x = f32[8,128] parameter(0), sharding={devices=[8,1]<=[8]}
  i = s32[8,128] parameter(1)
  s = (f32[8,128], s32[8,128]) sort(x, i), dimensions={1}, to_apply=lt
  v = f32[1,128] parameter(2), sharding={devices=[1,8]<=[8]}
  vi = s32[1,128] parameter(3)
  s1 = (f32[1,128], s32[1,128]) sort(v, vi), dimensions={1}, to_apply=lt
  w = f32[6,128] parameter(4), sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}
  wi = s32[6,128] parameter(5)
  s6 = (f32[6,128], s32[6,128]) sort(w, wi), dimensions={1}, to_apply=lt
  tk = (f32[8,2], s32[8,2]) topk(x), k=2, largest=true
  ROOT t = ((f32[8,128], s32[8,128]), (f32[1,128], s32[1,128]), (f32[8,2], s32[8,2]), (f32[6,128], s32[6,128])) tuple(s, s1, tk, s6)
}
)";

TEST(SortRules, OtherDimsPassThrough) {
  RuleHarness h(kSort);
  EXPECT_TRUE(ProposalIs(h.Forward("s"), "{{devices=[8,1]<=[8]}, {devices=[8,1]<=[8]}}"));
  EXPECT_TRUE(ProposalIs(h.Backward("s", 1, "{{devices=[8,1]<=[8]}, {devices=[4,1,2]<=[8] last_tile_dim_replicate}}"),
                         "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"));
}

TEST(SortRules, SplitSortDimNeedsAFreeDim) {
  RuleHarness h(kSort);
  // Only the sort dim is bigger than 1: the split cannot move anywhere.
  EXPECT_TRUE(ProposalIs(h.Forward("s1"), ""));
  h.Set("x", "{devices=[1,8]<=[8]}");
  EXPECT_TRUE(ProposalIs(h.Forward("s"), "{{devices=[1,8]<=[8]}, {devices=[1,8]<=[8]}}"));
  // As in XLA, the free dim must divide into the sort dim's tiles: 6 rows do not take 4
  // (XLA:CPU gathers a [6,4] sort over a 4-way split dim 1 and moves a [8,4] one).
  EXPECT_TRUE(ProposalIs(h.Forward("s6"), ""));
  h.Set("w", "{devices=[1,2,4]<=[8] last_tile_dim_replicate}");
  EXPECT_TRUE(ProposalIs(h.Forward("s6"), "{{devices=[1,2,4]<=[8] last_tile_dim_replicate}, "
                                          "{devices=[1,2,4]<=[8] last_tile_dim_replicate}}"));
}

TEST(TopKRules, LastDimUnsplit) {
  RuleHarness h(kSort);
  EXPECT_TRUE(ProposalIs(h.Forward("tk"), "{{devices=[8,1]<=[8]}, {devices=[8,1]<=[8]}}"));
  h.Set("x", "{devices=[2,4]<=[8]}");
  EXPECT_TRUE(ProposalIs(h.Forward("tk"), "{{devices=[2,1,4]<=[8] last_tile_dim_replicate}, "
                                          "{devices=[2,1,4]<=[8] last_tile_dim_replicate}}"));
  EXPECT_TRUE(ProposalIs(h.Backward("tk", 0, "{{devices=[8,1]<=[8]}, {devices=[8,1]<=[8]}}"),
                         "{devices=[8,1]<=[8]}"));
}

}  // namespace
}  // namespace gspmd::propagation::testing
