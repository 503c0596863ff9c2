// Tests for the convolution propagation rules: dot-like convolutions, spatial convolutions
// with small kernels, and weight-gradient convolutions with large kernels.
#include <gtest/gtest.h>

#include "propagation/op_rules.h"
#include "rules_test_util.h"

namespace gspmd::propagation::testing {
namespace {

constexpr const char* kConv = R"(
HloModule m, num_partitions=8
ENTRY main {
  x = f32[8,32,32,16] parameter(0), sharding={devices=[2,4,1,1]<=[8]}
  k = f32[3,3,16,64] parameter(1), sharding={replicated}
  c = f32[8,32,32,64] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  k1 = f32[1,1,16,64] parameter(2), sharding={devices=[1,1,1,8]<=[8]}
  c1 = f32[8,32,32,64] convolution(x, k1), window={size=1x1}, dim_labels=b01f_01io->b01f
  dy = f32[8,32,32,64] parameter(3)
  gw = f32[3,3,16,64] convolution(x, dy), window={size=32x32 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf
  ROOT t = (f32[8,32,32,64], f32[8,32,32,64], f32[3,3,16,64]) tuple(c, c1, gw)
}
)";

TEST(ConvolutionRules, SpatialSplitPassesThroughWithSmallKernel) {
  RuleHarness h(kConv);
  EXPECT_TRUE(ProposalIs(h.Forward("c"), "{devices=[2,4,1,1]<=[8]}"));
  EXPECT_EQ(h.Forward("c")->rule.ToString(), "convolution forward");
  // Split input features cannot become output features.
  h.Set("x", "{devices=[2,1,1,4]<=[8]}");
  EXPECT_TRUE(ProposalIs(h.Forward("c"), "{devices=[2,1,1,1,4]<=[8] last_tile_dim_replicate}"));
}

TEST(ConvolutionRules, OneByOneConvolutionIsADot) {
  RuleHarness h(kConv);
  // Spatial dims of a 1x1 kernel are lhs non-contracting: x's split stays; k1's output
  // feature split merges in... but x uses every device, so x (the larger operand) wins.
  EXPECT_TRUE(ProposalIs(h.Forward("c1"), "{devices=[2,4,1,1]<=[8]}"));
  h.Set("x", "{devices=[2,1,1,1,4]<=[8] last_tile_dim_replicate}");
  h.Set("k1", "{devices=[1,1,1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  EXPECT_TRUE(ProposalIs(h.Forward("c1"), "{devices=[2,1,1,4]<=[8]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("c1", 1, "{devices=[2,1,1,4]<=[8]}"),
                         "{devices=[1,1,1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"));
}

TEST(ConvolutionRules, LargeKernelGivesReplicatedResult) {
  RuleHarness h(kConv);
  EXPECT_TRUE(ProposalIs(h.Forward("gw"), "{replicated}"));
  // No backward through real spatial windows.
  EXPECT_TRUE(ProposalIs(h.Backward("c", 0, "{devices=[2,4,1,1]<=[8]}"), ""));
}

}  // namespace
}  // namespace gspmd::propagation::testing
