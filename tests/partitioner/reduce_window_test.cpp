// Tests of the reduce-window and select-and-scatter handlers: local windows, halo exchanges
// along sharded dims, cumulative windows as a local scan plus an all-gather of shard totals,
// and that the partitioned program computes the same numbers as the unpartitioned one.
#include <string>
#include <vector>

#include "partitioner/partition_test_harness.h"

namespace gspmd::partition_test {
namespace {

const std::string kRegions = std::string("\n") + kAddF32 + R"(%add_s32 (a: s32[], b: s32[]) -> s32[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %r = s32[] add(%a, %b)
}
)" + kMaxF32 + kArgmaxF32S32 + R"(%ge (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = pred[] compare(%a, %b), direction=GE
}
)";

std::string Module(const std::string& entry) {
  return std::string("HloModule m, num_partitions=8\n") + kRegions + entry;
}

const std::vector<PartitionCase> kCases = {
    // A replicated operand and a split result: each device computes the whole window op and
    // slices its piece, where splitting the operand first needs its halo (oracle seed 20135).
    {.name = "ReplicatedOperandToASplitResultMovesNothing",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[16,4]{1,0} parameter(0), sharding={replicated}
  %z = f32[] constant(0)
  ROOT %r = f32[16,4]{1,0} reduce-window(%x, %z), window={size=16x1 pad=15_0x0_0}, to_apply=%add, sharding={devices=[8,1]<=[8]}
})"),
     .expect = {.collectives = 0}},
    // From moe_top2_alltoall: cumsum over the token dim, groups sharded.
    {.name = "MoeCumsumAlongAnUnshardedDimIsLocal",
     .hlo = Module(R"(
ENTRY e {
  %x = s32[8,16,8]{2,1,0} parameter(0), sharding={devices=[8,1,1]<=[8]}
  %c = s32[] constant(0)
  ROOT %r = s32[8,16,8]{2,1,0} reduce-window(%x, %c), window={size=1x16x1 pad=0_0x15_0x0_0}, to_apply=%add_s32, sharding={devices=[8,1,1]<=[8]}
})"),
     .expect = {.collectives = 0},
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kReduceWindow), (Dims{1, 16, 8})); }},
    {.name = "CumsumAlongAShardedDimGathersOnlyShardTotals",
     .hlo = Module(R"(
ENTRY e {
  %x = s32[4,32]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %c = s32[] constant(0)
  ROOT %r = s32[4,32]{1,0} reduce-window(%x, %c), window={size=1x32 pad=0_0x31_0}, to_apply=%add_s32, sharding={devices=[1,8]<=[8]}
})"),
     .expect = {.collectives = 1},
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kAllGather), (Dims{4, 8})); }},
    {.name = "SuffixCumsumOverAnUnevenTwoDimensionalSharding",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[6,10]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  %c = f32[] constant(0)
  ROOT %r = f32[6,10]{1,0} reduce-window(%x, %c), window={size=1x10 pad=0_0x0_9}, to_apply=%add, sharding={devices=[2,4]<=[8]}
})"),
     .expect = {.collectives = 1}},
    {.name = "CumulativeMaxWithPartialReplication",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[16,4]{1,0} parameter(0), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
  %c = f32[] constant(-inf)
  ROOT %r = f32[16,4]{1,0} reduce-window(%x, %c), window={size=16x1 pad=15_0x0_0}, to_apply=%max, sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
})"),
     .expect = {.collectives = 1}},
    {.name = "SmallWindowOnAShardedDimExchangesHalos",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[4,64]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %c = f32[] constant(-inf)
  ROOT %r = f32[4,64]{1,0} reduce-window(%x, %c), window={size=1x3 pad=0_0x1_1}, to_apply=%max, sharding={devices=[1,8]<=[8]}
})"),
     // One element from each neighbour: far less than gathering the dim.
     .expect = {.counts = {{Opcode::kAllGather, 0}},
                .at_least = {{Opcode::kCollectivePermute, 1}},
                .max_comm_bytes = 2 * 4 * 4}},
    {.name = "UnevenHaloExchange",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[3,22]{1,0} parameter(0), sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}
  %c = f32[] constant(0)
  ROOT %r = f32[3,22]{1,0} reduce-window(%x, %c), window={size=1x3 pad=0_0x1_1}, to_apply=%add, sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}
})"),
     .expect = {.counts = {{Opcode::kAllGather, 0}}}},
    {.name = "StridedPoolingOnATwoDimensionalMesh",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[2,16,16,3]{3,2,1,0} parameter(0), sharding={devices=[1,2,4,1]<=[8]}
  %c = f32[] constant(-inf)
  ROOT %r = f32[2,8,8,3]{3,2,1,0} reduce-window(%x, %c), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=%max, sharding={devices=[1,2,4,1]<=[8]}
})"),
     .expect = {.counts = {{Opcode::kAllGather, 0}}}},
    {.name = "AlignedNonOverlappingWindowsNeedNoCommunication",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[4,32]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %c = f32[] constant(0)
  ROOT %r = f32[4,16]{1,0} reduce-window(%x, %c), window={size=1x2 stride=1x2}, to_apply=%add, sharding={devices=[1,8]<=[8]}
})"),
     .expect = {.collectives = 0}},
    {.name = "BaseDilationGathersTheDim",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[4,8]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %c = f32[] constant(0)
  ROOT %r = f32[4,14]{1,0} reduce-window(%x, %c), window={size=1x2 lhs_dilate=1x2}, to_apply=%add, sharding={devices=[1,8]<=[8]}
})")},
    {.name = "ReplicatedOperandSlicesTheResultOnly",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[4,32]{1,0} parameter(0), sharding={replicated}
  %c = f32[] constant(0)
  ROOT %r = f32[4,32]{1,0} reduce-window(%x, %c), window={size=1x5 pad=0_0x2_2}, to_apply=%add, sharding={devices=[1,8]<=[8]}
})"),
     .expect = {.collectives = 0}},
    {.name = "CumsumOfAReplicatedOperandIsComputedWhole",
     .hlo = Module(R"(
ENTRY e {
  %x = s32[4,32]{1,0} parameter(0), sharding={replicated}
  %c = s32[] constant(0)
  ROOT %r = s32[4,32]{1,0} reduce-window(%x, %c), window={size=1x32 pad=0_0x31_0}, to_apply=%add_s32, sharding={devices=[1,8]<=[8]}
})"),
     .expect = {.collectives = 0}},
    {.name = "VariadicArgmaxPoolingExchangesHalosForBothInputs",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[2,24]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  %iota = s32[2,24]{1,0} iota(), iota_dimension=1, sharding={devices=[2,4]<=[8]}
  %ninf = f32[] constant(-inf)
  %zero = s32[] constant(0)
  ROOT %r = (f32[2,12]{1,0}, s32[2,12]{1,0}) reduce-window(%x, %iota, %ninf, %zero), window={size=1x3 stride=1x2 pad=0_0x1_0}, to_apply=%argmax, sharding={{devices=[2,4]<=[8]}, {devices=[2,4]<=[8]}}
})"),
     .expect = {.counts = {{Opcode::kAllGather, 0}}}},
    {.name = "DilatedWindowOnAShardedDim",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[3,40]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %c = f32[] constant(0)
  ROOT %r = f32[3,36]{1,0} reduce-window(%x, %c), window={size=1x3 rhs_dilate=1x2}, to_apply=%add, sharding={devices=[1,8]<=[8]}
})")},
    {.name = "SelectAndScatterOnAShardedBatchDimIsLocal",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[8,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %s = f32[8,4]{1,0} parameter(1), sharding={devices=[8,1]<=[8]}
  %c = f32[] constant(0)
  ROOT %r = f32[8,8]{1,0} select-and-scatter(%x, %s, %c), window={size=1x2 stride=1x2}, select=%ge, scatter=%add, sharding={devices=[8,1]<=[8]}
})"),
     .expect = {.collectives = 0}},
    {.name = "SelectAndScatterOnAShardedWindowDimExchangesHalos",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[2,16]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  %s = f32[2,8]{1,0} parameter(1), sharding={devices=[2,4]<=[8]}
  %c = f32[] constant(0)
  ROOT %r = f32[2,16]{1,0} select-and-scatter(%x, %s, %c), window={size=1x3 stride=1x2 pad=0_0x1_0}, select=%ge, scatter=%add, sharding={devices=[2,4]<=[8]}
})"),
     .expect = {.counts = {{Opcode::kAllGather, 0}}}},
    // The backward pass of a 3x3 stride-2 max pool, rows over 2 devices and columns over 4.
    {.name = "MaxPoolGradientOnSpatiallyShardedImages",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[2,16,16,3]{3,2,1,0} parameter(0), sharding={devices=[1,2,4,1]<=[8]}
  %s = f32[2,8,8,3]{3,2,1,0} parameter(1), sharding={devices=[1,2,4,1]<=[8]}
  %c = f32[] constant(0)
  ROOT %r = f32[2,16,16,3]{3,2,1,0} select-and-scatter(%x, %s, %c), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, select=%ge, scatter=%add, sharding={devices=[1,2,4,1]<=[8]}
})"),
     .expect = {.counts = {{Opcode::kAllGather, 0}}}},
    {.name = "SelectAndScatterOnAnUnevenShardedDim",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[3,10]{1,0} parameter(0), sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}
  %s = f32[3,5]{1,0} parameter(1), sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}
  %c = f32[] constant(0)
  ROOT %r = f32[3,10]{1,0} select-and-scatter(%x, %s, %c), window={size=1x2 stride=1x2}, select=%ge, scatter=%add, sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}
})")},
    {.name = "SelectAndScatterWithOverlappingWindowsAndUnevenShards",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[2,13]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %s = f32[2,13]{1,0} parameter(1), sharding={devices=[1,8]<=[8]}
  %c = f32[] constant(0)
  ROOT %r = f32[2,13]{1,0} select-and-scatter(%x, %s, %c), window={size=1x3 pad=0_0x1_1}, select=%ge, scatter=%add, sharding={devices=[1,8]<=[8]}
})")},
    // Found by the randomized test (seed 2026338 of a soak run): the pads a device writes for
    // windows overhanging the array's start tie with real -inf elements, and a select that keeps
    // the first of equal elements (>=) then keeps the pad, dropping the source value.
    {.name = "SelectAndScatterTiesWithMinusInfinityAtTheStart",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[14]{0} parameter(0), sharding={replicated}
  %ninf = f32[] constant(-inf)
  %a = f32[16]{0} pad(%x, %ninf), padding=2_0, sharding={devices=[8]<=[8]}
  %s = f32[8]{0} parameter(1), sharding={devices=[8]<=[8]}
  %c = f32[] constant(0)
  ROOT %r = f32[16]{0} select-and-scatter(%a, %s, %c), window={size=3 stride=2 pad=1_0}, select=%ge, scatter=%add, sharding={devices=[8]<=[8]}
})"),
     .expect = {.counts = {{Opcode::kAllGather, 0}}}},

    // The same at the end for a select that keeps the last of equal elements (>).
    {.name = "SelectAndScatterTiesWithMinusInfinityAtTheEnd",
     .hlo = Module(R"(
%gt (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = pred[] compare(%a, %b), direction=GT
}
ENTRY e {
  %x = f32[3,14]{1,0} parameter(0), sharding={replicated}
  %ninf = f32[] constant(-inf)
  %a = f32[3,16]{1,0} pad(%x, %ninf), padding=0_0x0_2, sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}
  %s = f32[3,8]{1,0} parameter(1), sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}
  %c = f32[] constant(0)
  ROOT %r = f32[3,16]{1,0} select-and-scatter(%a, %s, %c), window={size=1x3 stride=1x2 pad=0_0x0_1}, select=%gt, scatter=%add, sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}
})"),
     .expect = {.counts = {{Opcode::kAllGather, 0}}}},

    // XLA's uneven case: a 7-row value split 8 ways by a constraint after a replicated input,
    // a max over the rows and a cumulative sum along them, both results replicated. The scan
    // would send shard totals and then gather the result again; gathering the rows once and
    // keeping that form for the replicated result costs what XLA pays (252 + 63 bytes).
    {.name = "UnevenCumsumWithAReplicatedResultGathersOnce",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[7,9]{1,0} parameter(0), sharding={replicated}
  %c = f32[7,9]{1,0} copy(%x), sharding={devices=[8,1]<=[8]}
  %ninf = f32[] constant(-inf), sharding={replicated}
  %m = f32[9]{0} reduce(%c, %ninf), dimensions={0}, to_apply=%max, sharding={replicated}
  %zero = f32[] constant(0), sharding={replicated}
  %cs = f32[7,9]{1,0} reduce-window(%c, %zero), window={size=7x1 pad=6_0x0_0}, to_apply=%add, sharding={devices=[8,1]<=[8]}
  ROOT %t = (f32[9]{0}, f32[7,9]{1,0}) tuple(%m, %cs), sharding={{replicated}, {replicated}}
})"),
     .expect = {.max_comm_bytes = 315}},
    // The same on a 2x4 mesh: the rows are gathered over 2 devices for the window, and the
    // replicated result gathers the columns from that form (not the rows a second time).
    {.name = "UnevenCumsumOnTwoAxesGathersEachAxisOnce",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[5,9]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  %c = f32[5,9]{1,0} copy(%x), sharding={devices=[2,4]<=[8]}
  %zero = f32[] constant(0), sharding={replicated}
  %cs = f32[5,9]{1,0} reduce-window(%c, %zero), window={size=5x1 pad=4_0x0_0}, to_apply=%add, sharding={devices=[2,4]<=[8]}
  ROOT %t = (f32[5,9]{1,0}) tuple(%cs), sharding={{replicated}}
})"),
     .expect = {.counts = {{Opcode::kAllGather, 2}}, .max_comm_bytes = 216}},
};

PARTITION_CASE_TESTS(ReduceWindowPartitionTest, kCases);

}  // namespace
}  // namespace gspmd::partition_test
