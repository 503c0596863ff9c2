// Propagation rules that follow XLA's sharding propagation where it keeps the better sharding:
// grouped (depthwise) convolutions, dynamic slices, pass-through custom-calls, manual operands,
// unspecified dims across manual boundaries, shard barriers, shard_like, constants shared by a
// manual region and its surroundings, and the one reshape where ours is better. Each test is
// HLO text in, the exact sharding out.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "driver_test_util.h"

namespace gspmd {
namespace {

using propagation_test::ExpectCompleteAndAnnotationsKept;
using propagation_test::ExpectPartitionsAndComputesTheSame;
using propagation_test::Propagate;
using propagation_test::Propagated;

// ---- grouped convolutions ----

// A depthwise convolution whose window is as large as the input (a weight-gradient-like
// shape): only the batch split carries over, the other dims' devices replicate the result.
TEST(PropagationXlaSemanticsTest, DepthwiseConvolutionWithALargeWindowKeepsTheBatchSplit) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=8
ENTRY %e {
  %x = f32[16,64,8,12] parameter(0), sharding={devices=[2,2,1,2]<=[8]}
  %k = f32[64,1,6,9] parameter(1), sharding={replicated}
  %conv = f32[16,64,3,4] convolution(%x, %k), window={size=6x9}, dim_labels=bf01_oi01->bf01, feature_group_count=64
  ROOT %out = f32[16,64,3,4] copy(%conv)
})");
  ExpectCompleteAndAnnotationsKept(p);
  EXPECT_EQ(p.Of("conv"), "{devices=[2,1,1,1,4]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(p.Origin("conv"), "from %x (user) via convolution forward");
  ExpectPartitionsAndComputesTheSame(p);
}

// With a small window the input's batch and spatial splits both carry over.
TEST(PropagationXlaSemanticsTest, DepthwiseConvolutionWithASmallWindowKeepsBatchAndSpatialSplits) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=4
ENTRY %e {
  %x = f32[4,12,10,8] parameter(0), sharding={devices=[2,2,1,1]<=[4]}
  %k = f32[3,3,1,8] parameter(1), sharding={replicated}
  %conv = f32[4,12,10,8] convolution(%x, %k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=8
  ROOT %out = f32[4,12,10,8] copy(%conv)
})");
  EXPECT_EQ(p.Of("conv"), "{devices=[2,2,1,1]<=[4]}");
  ExpectPartitionsAndComputesTheSame(p);
}

// ---- dynamic-slice / dynamic-update-slice ----

// A dynamic-slice of dim 1 and a dynamic-update-slice into dim 1 of a [2,2,2]-split value, with
// the split written on `annotated` (one of x, ds, base, update, dus).
std::string DynamicSlices(const std::string& annotated) {
  auto at = [&](const std::string& name) { return name == annotated ? ", sharding={devices=[2,2,2]<=[8]}" : ""; };
  return "HloModule m, num_partitions=8\nENTRY %e {\n"
         "  %a = f32[12,10,6] parameter(0)\n"
         "  %x = f32[12,10,6] copy(%a)" + std::string(at("x")) + "\n"
         "  %i = s32[] parameter(1)\n"
         "  %z = s32[] constant(0)\n"
         "  %ds = f32[12,3,6] dynamic-slice(%x, %z, %i, %z), dynamic_slice_sizes={12,3,6}" + at("ds") + "\n"
         "  %b = f32[12,10,6] parameter(2)\n"
         "  %base = f32[12,10,6] copy(%b)" + at("base") + "\n"
         "  %c = f32[12,1,6] parameter(3)\n"
         "  %update = f32[12,1,6] copy(%c)" + at("update") + "\n"
         "  %dus = f32[12,10,6] dynamic-update-slice(%base, %update, %z, %i, %z)" + at("dus") + "\n"
         "  %nds = f32[12,3,6] negate(%ds)\n"
         "  %ndus = f32[12,10,6] negate(%dus)\n"
         "  ROOT %t = (f32[12,3,6], f32[12,10,6]) tuple(%nds, %ndus)\n}\n";
}

// The indexed dim stays whole (its devices replicate the value); untouched dims keep their split.
constexpr const char* kIndexedDimWhole = "{devices=[2,1,2,2]<=[2,2,2]T(0,2,1) last_tile_dim_replicate}";

struct DynamicSliceCase {
  std::string annotated;
  std::vector<std::pair<std::string, std::string>> expected;  // instruction, sharding
};

TEST(PropagationXlaSemanticsTest, DynamicSlicesKeepUntouchedDimsSplitAndTheIndexedDimWhole) {
  const std::vector<DynamicSliceCase> cases = {
      {"x", {{"ds", kIndexedDimWhole}, {"nds", kIndexedDimWhole}}},       // dynamic-slice forward
      {"ds", {{"x", kIndexedDimWhole}}},                                  // dynamic-slice backward
      {"base", {{"dus", "{devices=[2,2,2]<=[8]}"}, {"update", kIndexedDimWhole}}},
      {"update", {{"dus", kIndexedDimWhole}, {"base", kIndexedDimWhole}}},  // from the update
      {"dus", {{"base", "{devices=[2,2,2]<=[8]}"}, {"update", kIndexedDimWhole}}},  // backward
  };
  for (const DynamicSliceCase& c : cases) {
    SCOPED_TRACE("sharding written on %" + c.annotated);
    Propagated p = Propagate(DynamicSlices(c.annotated));
    for (const auto& [name, sharding] : c.expected) EXPECT_EQ(p.Of(name), sharding) << name;
    ExpectPartitionsAndComputesTheSame(p);
  }
}

// ---- custom-calls that pass their data through ----

TEST(PropagationXlaSemanticsTest, LayoutConstraintPassesTheShardingThrough) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=4
ENTRY %e {
  %x = f32[8,16,4] parameter(0), sharding={devices=[1,2,2]<=[4]}
  %c = f32[8,16,4]{0,1,2} custom-call(%x), custom_call_target="LayoutConstraint"
  ROOT %out = f32[8,16,4] copy(%c), sharding={devices=[1,2,1,2]<=[4] last_tile_dim_replicate}
})");
  EXPECT_EQ(p.Of("c"), "{devices=[1,2,2]<=[4]}");
  EXPECT_EQ(p.Origin("c"), "from %x (user) via pass-through custom-call forward");
  // Only the copy's own all-gather of dim 2 moves data: 8*8*4 floats, half of them received.
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 512);
}

TEST(PropagationXlaSemanticsTest, X64CombineTakesItsFirstOperandsSharding) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=4
ENTRY %e {
  %hi = f32[6,8,8] parameter(0), sharding={devices=[1,2,2]<=[4]}
  %lo = f32[6,8,8] parameter(1), sharding={devices=[1,2,2]<=[4]}
  %c = f64[6,8,8] custom-call(%hi, %lo), custom_call_target="X64Combine"
  ROOT %out = f64[6,8,8] copy(%c), sharding={devices=[1,2,1,2]<=[4] last_tile_dim_replicate}
})");
  EXPECT_EQ(p.Of("c"), "{devices=[1,2,2]<=[4]}");
}

// Host offloading: the value moves to the host, sits in a buffer, comes back through a
// dynamic-slice. The split of its last dim follows it all the way, so nothing is gathered.
TEST(PropagationXlaSemanticsTest, HostOffloadingKeepsTheShardingThroughBothMovesAndTheBuffer) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=4
ENTRY %e {
  %x = f32[1,32,16] parameter(0), sharding={devices=[1,1,4]<=[4]}
  %zero = f32[] constant(0)
  %buffer = f32[8,32,16] broadcast(%zero), dimensions={}
  %i = s32[] parameter(1)
  %z = s32[] constant(0)
  %to_host = f32[1,32,16] custom-call(%x), custom_call_target="MoveToHost"
  %stored = f32[8,32,16] dynamic-update-slice(%buffer, %to_host, %i, %z, %z)
  %loaded = f32[1,32,16] dynamic-slice(%stored, %i, %z, %z), dynamic_slice_sizes={1,32,16}
  %to_device = f32[1,32,16] custom-call(%loaded), custom_call_target="MoveToDevice"
  ROOT %out = f32[1,32,16] copy(%to_device), sharding={devices=[1,4,1]<=[4]}
})");
  EXPECT_EQ(p.Of("to_host"), "{devices=[1,1,4]<=[4]}");
  EXPECT_EQ(p.Of("stored"), "{devices=[1,1,4]<=[4]}");
  EXPECT_EQ(p.Of("loaded"), "{devices=[1,1,4]<=[4]}");
  ExpectPartitionsAndComputesTheSame(p);
}

// ---- manual operands ----

TEST(PropagationXlaSemanticsTest, UnknownCustomCallWithAManualOperandIsManual) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=4
ENTRY %e {
  %x = f32[6,3] parameter(0), sharding={manual}
  %a = f32[6,3] copy(%x)
  %y = f32[6,3] parameter(1)
  %b = f32[6,3] copy(%y)
  %cc = f32[6,3] custom-call(%a, %b), custom_call_target="my_kernel"
  %tc = (f32[], f32[6,3]) custom-call(%a), custom_call_target="my_other_kernel"
  ROOT %t = (f32[6,3], (f32[], f32[6,3])) tuple(%cc, %tc)
})");
  EXPECT_EQ(p.Of("cc"), "{manual}");
  EXPECT_EQ(p.Of("tc"), "{{manual}, {manual}}");
  EXPECT_EQ(p.Origin("cc"), "manual operand %a");
}

// ---- unspecified dims across SPMDFullToShardShape / SPMDShardToFullShape ----

// The annotations before and after a partially manual region leave dims 1 and 2 open. Dim 1
// is split before the region and dim 2 after it; both splits reach every value of the chain,
// the manual ones included.
TEST(PropagationXlaSemanticsTest, UnspecifiedDimsAreRefinedThroughTheManualBoundary) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=8
ENTRY %e {
  %p = f32[4,6,8] parameter(0)
  %x = f32[4,6,8] copy(%p), sharding={devices=[1,2,1,4]<=[8] last_tile_dim_replicate}
  %in = f32[4,6,8] custom-call(%x), custom_call_target="Sharding", backend_config="unspecified_dims=[1,2]", sharding={devices=[2,1,1,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}
  %local = f32[2,6,8] custom-call(%in), custom_call_target="SPMDFullToShardShape", backend_config="unspecified_dims=[1,2]", sharding={devices=[1,1,1,4,2]<=[2,2,2]T(0,2,1) last_tile_dims={replicated,manual}}
  %n = f32[2,6,8] negate(%local)
  %back = f32[2,6,8] custom-call(%n), custom_call_target="Sharding", backend_config="unspecified_dims=[1,2]", sharding={devices=[1,1,1,4,2]<=[2,2,2]T(0,2,1) last_tile_dims={replicated,manual}}
  %global = f32[4,6,8] custom-call(%back), custom_call_target="SPMDShardToFullShape", backend_config="unspecified_dims=[1,2]", sharding={devices=[2,1,1,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}
  %y = f32[4,6,8] copy(%global)
  ROOT %out = f32[4,6,8] copy(%y), sharding={devices=[1,1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}
})");
  EXPECT_EQ(p.Of("in"), "{devices=[2,2,2]<=[2,2,2]T(1,0,2)}");
  EXPECT_EQ(p.Of("local"), "{devices=[1,2,2,2]<=[2,2,2]T(0,2,1) last_tile_dims={manual}}");
  EXPECT_EQ(p.Of("n"), "{devices=[1,2,2,2]<=[2,2,2]T(0,2,1) last_tile_dims={manual}}");
  EXPECT_EQ(p.Of("global"), "{devices=[2,2,2]<=[2,2,2]T(1,0,2)}");
  EXPECT_EQ(p.Of("y"), "{devices=[2,2,2]<=[2,2,2]T(1,0,2)}");
}

// ---- shard barriers ----

TEST(PropagationXlaSemanticsTest, ShardBarrierFromBlocksForwardOnly) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=4
ENTRY %e {
  %x = f32[8,8] parameter(0), sharding={devices=[4,1]<=[4]}
  %b = f32[8,8] custom-call(%x), custom_call_target="ShardBarrierFrom", custom_call_has_side_effect=true
  %n = f32[8,8] negate(%b)
  %y = f32[8,8] parameter(1)
  %c = f32[8,8] copy(%y)
  %b2 = f32[8,8] custom-call(%c), custom_call_target="ShardBarrierFrom", custom_call_has_side_effect=true
  %m = f32[8,8] negate(%b2), sharding={devices=[1,4]<=[4]}
  ROOT %t = (f32[8,8], f32[8,8]) tuple(%n, %m)
})");
  EXPECT_EQ(p.Of("n"), "{replicated}");
  EXPECT_EQ(p.Of("c"), "{devices=[1,4]<=[4]}");  // backward passes
  // The barriers are gone: their users read their operands.
  EXPECT_EQ(p.module->entry()->FindInstruction("b"), nullptr);
  EXPECT_EQ(p.module->entry()->FindInstruction("n")->operand(0)->name(), "x");
}

TEST(PropagationXlaSemanticsTest, ShardBarrierToBlocksBackwardOnly) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=4
ENTRY %e {
  %x = f32[8,8] parameter(0), sharding={devices=[4,1]<=[4]}
  %b = f32[8,8] custom-call(%x), custom_call_target="ShardBarrierTo", custom_call_has_side_effect=true
  %n = f32[8,8] negate(%b)
  %y = f32[8,8] parameter(1)
  %c = f32[8,8] copy(%y)
  %b2 = f32[8,8] custom-call(%c), custom_call_target="ShardBarrierTo", custom_call_has_side_effect=true
  %m = f32[8,8] negate(%b2), sharding={devices=[1,4]<=[4]}
  ROOT %t = (f32[8,8], f32[8,8]) tuple(%n, %m)
})");
  EXPECT_EQ(p.Of("n"), "{devices=[4,1]<=[4]}");  // forward passes
  EXPECT_EQ(p.Of("c"), "{replicated}");
  ExpectPartitionsAndComputesTheSame(p);
}

// A shard_as group with a ShardBarrierFrom member: the group's sharding reaches the member
// and, through it, its operand; the operand's own sharding does not flow into the group.
TEST(PropagationXlaSemanticsTest, ShardAsGroupAcrossABarrierStillRefinesItsMembers) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=4
ENTRY %e {
  %x = f32[8,8] parameter(0)
  %a = f32[8,8] copy(%x), sharding={devices=[1,4]<=[4]}
  %b = f32[8,8] custom-call(%a), custom_call_target="ShardBarrierFrom", custom_call_has_side_effect=true, sharding={unknown shard_as 0}
  %y = f32[8,8] parameter(1), sharding={devices=[4,1]<=[4]}
  %c = f32[8,8] negate(%y)
  %g = f32[8,8] custom-call(%c), custom_call_target="Sharding", sharding={unknown shard_as 0}
  %u = f32[8,8] parameter(2)
  %v = f32[8,8] copy(%u)
  %h = f32[8,8] custom-call(%v), custom_call_target="Sharding", sharding={unknown shard_as 0}
  %s = f32[8,8] add(%b, %g)
  ROOT %t = (f32[8,8], f32[8,8]) tuple(%s, %h)
})");
  EXPECT_EQ(p.Of("g"), "{devices=[4,1]<=[4]}");
  EXPECT_EQ(p.Of("v"), "{devices=[4,1]<=[4]}");  // refined by the group, not by %a
  EXPECT_EQ(p.Of("a"), "{devices=[1,4]<=[4]}");
  EXPECT_EQ(p.module->entry()->FindInstruction("b"), nullptr);
}

// ---- shard_like is a hint ----

TEST(PropagationXlaSemanticsTest, ShardLikeMembersKeepTheirOwnShardingsWhenTheirUsesDisagree) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=8
ENTRY %e {
  %x = s32[16,16] parameter(0), sharding={devices=[4,2]<=[8]}
  %y = s32[16,16] parameter(1), sharding={devices=[2,4]<=[8]}
  %a = s32[16,16] add(%x, %x)
  %la = s32[16,16] custom-call(%a), custom_call_target="Sharding", sharding={unknown shard_like 0}
  %b = s32[16,16] add(%y, %y)
  %lb = s32[16,16] custom-call(%b), custom_call_target="Sharding", sharding={unknown shard_like 0}
  ROOT %m = s32[16,16] multiply(%a, %b)
})");
  EXPECT_EQ(p.Of("a"), "{devices=[4,2]<=[8]}");
  EXPECT_EQ(p.Of("b"), "{devices=[2,4]<=[8]}");
}

TEST(PropagationXlaSemanticsTest, ShardLikeGivesAnUnshardedMemberTheOthersSharding) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=8
%sum {
  %l = s32[] parameter(0)
  %r = s32[] parameter(1)
  ROOT %s = s32[] add(%l, %r)
}
ENTRY %e {
  %x = s32[16,16] parameter(0), sharding={devices=[4,2]<=[8]}
  %y = s32[16,16] parameter(1)
  %a = s32[16,16] add(%x, %x)
  %la = s32[16,16] custom-call(%a), custom_call_target="Sharding", sharding={unknown shard_like 0}
  %b = s32[16,16] add(%y, %y)
  %lb = s32[16,16] custom-call(%b), custom_call_target="Sharding", sharding={unknown shard_like 0}
  %zero = s32[] constant(0)
  %ra = s32[] reduce(%a, %zero), dimensions={0,1}, to_apply=%sum
  %rb = s32[] reduce(%b, %zero), dimensions={0,1}, to_apply=%sum
  ROOT %m = s32[] multiply(%ra, %rb)
})");
  EXPECT_EQ(p.Of("b"), "{devices=[4,2]<=[8]}");
  ExpectPartitionsAndComputesTheSame(p);
}

// ---- constants shared by a manual region and the code around it ----

TEST(PropagationXlaSemanticsTest, ConstantUsedInsideAndOutsideAManualRegionIsSplit) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=2
ENTRY %e {
  %p0 = f32[2,3] parameter(0), sharding={replicated}
  %p1 = f32[2,3] parameter(1), sharding={replicated}
  %k = f32[2,3] constant({{1,2,3},{4,5,6}})
  %in = f32[2,3] custom-call(%p0), custom_call_target="Sharding", sharding={replicated}
  %local = f32[2,3] custom-call(%in), custom_call_target="SPMDFullToShardShape", sharding={manual}
  %inside = f32[2,3] add(%k, %local)
  %global = f32[2,3] custom-call(%inside), custom_call_target="SPMDShardToFullShape", sharding={replicated}
  %outside = f32[2,3] add(%k, %p1)
  ROOT %t = (f32[2,3], f32[2,3]) tuple(%global, %outside)
})");
  const Instruction* inside = p.module->entry()->FindInstruction("inside");
  const Instruction* outside = p.module->entry()->FindInstruction("outside");
  ASSERT_NE(inside->operand(0), outside->operand(0));
  EXPECT_EQ(inside->operand(0)->name(), "k.manual");
  EXPECT_EQ(p.Of("k.manual"), "{manual}");
  EXPECT_EQ(p.Of("k"), "{replicated}");
  EXPECT_EQ(p.Of("outside"), "{replicated}");
  ExpectPartitionsAndComputesTheSame(p);
}

// ---- where ours stays better than XLA's ----

// A reshape adding a trivial dim to a partially replicated value: the operand takes the
// device order that matches its user without a collective-permute (XLA picks an order that
// needs one: {devices=[1,4,2]<=[8] last_tile_dim_replicate}).
TEST(PropagationXlaSemanticsTest, ReshapeAddingATrivialDimKeepsThePermuteFreeDeviceOrder) {
  Propagated p = Propagate(R"(HloModule m, num_partitions=8
ENTRY %e {
  %x = f32[8,128] parameter(0), sharding={replicated}
  %c = f32[8,128] copy(%x)
  %r = f32[8,1,128] reshape(%c), sharding={devices=[1,2,4]<=[8]}
  ROOT %out = f32[8,1,128] copy(%r), sharding={devices=[1,2,4]<=[8]}
})");
  EXPECT_EQ(p.Of("c"), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(ExpectPartitionsAndComputesTheSame(p), 0);
}

}  // namespace
}  // namespace gspmd
