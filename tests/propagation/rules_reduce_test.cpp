// Tests for the reduce, reduce-window and select-and-scatter propagation rules.
#include <gtest/gtest.h>

#include "propagation/op_rules.h"
#include "rules_test_util.h"

namespace gspmd::propagation::testing {
namespace {

constexpr const char* kReduce = R"(
HloModule m, num_partitions=8

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

argmax {
  va = f32[] parameter(0)
  ia = s32[] parameter(1)
  vb = f32[] parameter(2)
  ib = s32[] parameter(3)
  gt = pred[] compare(va, vb), direction=GT
  v = f32[] select(gt, va, vb)
  i = s32[] select(gt, ia, ib)
  ROOT vi = (f32[], s32[]) tuple(v, i)
}

ENTRY main {
  x = f32[8,16,128] parameter(0), sharding={devices=[2,1,4]<=[8]}
  zero = f32[] constant(0)
  r = f32[8,16] reduce(x, zero), dimensions={2}, to_apply=sum
  r0 = f32[16,128] reduce(x, zero), dimensions={0}, to_apply=sum
  idx = s32[8,16,128] parameter(1)
  izero = s32[] constant(0)
  am = (f32[8,16], s32[8,16]) reduce(x, idx, zero, izero), dimensions={2}, to_apply=argmax
  w = f32[8,16,128] reduce-window(x, zero), window={size=1x3x1 stride=1x1x1 pad=0_0x1_1x0_0}, to_apply=sum
  ROOT t = (f32[8,16], f32[16,128], (f32[8,16], s32[8,16]), f32[8,16,128]) tuple(r, r0, am, w)
}
)";

TEST(ReduceRules, ForwardDropsReducedDimsAsPartialReplication) {
  RuleHarness h(kReduce);
  EXPECT_TRUE(ProposalIs(h.Forward("r"), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"));
  EXPECT_TRUE(ProposalIs(h.Forward("r0"), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"));
  EXPECT_EQ(h.Forward("r")->rule.ToString(), "reduce forward");
}

TEST(ReduceRules, BackwardInsertsReducedDimsUnsplit) {
  RuleHarness h(kReduce);
  EXPECT_TRUE(ProposalIs(h.Backward("r", 0, "{devices=[2,4]<=[8]}"), "{devices=[2,4,1]<=[8]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("r", 1, "{devices=[2,4]<=[8]}"), ""));  // init value
}

TEST(ReduceRules, VariadicReduceSharesOneSharding) {
  RuleHarness h(kReduce);
  EXPECT_TRUE(ProposalIs(h.Forward("am"), "{{devices=[2,1,4]<=[8] last_tile_dim_replicate}, "
                                          "{devices=[2,1,4]<=[8] last_tile_dim_replicate}}"));
  EXPECT_TRUE(ProposalIs(h.Backward("am", 1, "{{devices=[8,1]<=[8]}, {devices=[8,1]<=[8]}}"),
                         "{devices=[8,1,1]<=[8]}"));
  // The other input's sharding refines a partial one.
  EXPECT_TRUE(ProposalIs(
      h.Backward("am", 1, "{{devices=[1,2,4]<=[8] last_tile_dim_replicate}, "
                          "{devices=[1,2,4]<=[8] last_tile_dim_replicate}}"),
      "{devices=[1,2,1,4]<=[8] last_tile_dim_replicate}"));
}

TEST(ReduceWindowRules, KeepsTheInputSharding) {
  RuleHarness h(kReduce);
  EXPECT_TRUE(ProposalIs(h.Forward("w"), "{devices=[2,1,4]<=[8]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("w", 0, "{devices=[1,8,1]<=[8]}"), "{devices=[1,8,1]<=[8]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("w", 1, "{devices=[1,8,1]<=[8]}"), ""));
}

TEST(SelectAndScatterRules, OperandSharding) {
  RuleHarness h(R"(
HloModule m, num_partitions=4
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[8,16] parameter(0), sharding={devices=[4,1]<=[4]}
  src = f32[8,8] parameter(1)
  zero = f32[] constant(0)
  ROOT ss = f32[8,16] select-and-scatter(x, src, zero), window={size=1x2 stride=1x2}, select=ge, scatter=sum
}
)");
  EXPECT_TRUE(ProposalIs(h.Forward("ss"), "{devices=[4,1]<=[4]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("ss", 0, "{devices=[4,1]<=[4]}"), "{devices=[4,1]<=[4]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("ss", 1, "{devices=[4,1]<=[4]}"), ""));
}

}  // namespace
}  // namespace gspmd::propagation::testing
