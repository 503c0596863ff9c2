// Tests of the reduce handler: which collectives partial results are resolved with (all-reduce,
// reduce-scatter, gathered partials for argmax), and that the partitioned program computes
// the same numbers as the unpartitioned one (uneven dims, 2-D meshes, partial replication).
#include <string>
#include <vector>

#include "partitioner/partition_test_harness.h"

namespace gspmd::partition_test {
namespace {

const std::string kRegions = std::string("\n") + kAddF32 + kMaxF32 + R"(%and (a: pred[], b: pred[]) -> pred[] {
  %a = pred[] parameter(0)
  %b = pred[] parameter(1)
  ROOT %r = pred[] and(%a, %b)
}
%mul_s32 (a: s32[], b: s32[]) -> s32[] {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %r = s32[] multiply(%a, %b)
}
)";

std::string Module(const std::string& entry) {
  return std::string("HloModule m, num_partitions=8\n") + kRegions + entry;
}

const std::string kArgmax = std::string("HloModule m, num_partitions=8\n") + kArgmaxF32S32;

const std::vector<PartitionCase> kCases = {
    {.name = "SoftmaxMaxOverShardedDimIsOneSmallAllReduce",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[16,64]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %c = f32[] constant(-inf)
  ROOT %m = f32[16]{0} reduce(%x, %c), dimensions={1}, to_apply=%max, sharding={replicated}
})"),
     .expect = {.collectives = 1, .comm_bytes = 112},  // XLA: 2 * 7/8 * 64 bytes
     .check =
         [](const Partitioned& p) {
           const Instruction* reduce = TheOnly(p, Opcode::kAllReduce);
           if (reduce == nullptr) return;
           EXPECT_EQ(reduce->shape().dims(), (Dims{16}));
           EXPECT_EQ(reduce->to_apply()->root()->opcode(), Opcode::kMaximum);
         }},
    // Reduce-scatter (the planner may split it over sub-axes at the same cost), no all-reduce.
    {.name = "ShardedOutputOfTheReducedAxisGivesReduceScatter",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[16,64]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %c = f32[] constant(0)
  ROOT %s = f32[16]{0} reduce(%x, %c), dimensions={1}, to_apply=%add, sharding={devices=[8]<=[8]}
})"),
     .expect = {.counts = {{Opcode::kAllReduce, 0}},
                .at_least = {{Opcode::kReduceScatter, 1}},
                .comm_bytes = 56}},  // 7/8 * 64 bytes
    {.name = "KeptShardedDimNeedsNoCommunication",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[16,64]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %c = f32[] constant(0)
  ROOT %s = f32[16]{0} reduce(%x, %c), dimensions={1}, to_apply=%add, sharding={devices=[8]<=[8]}
})"),
     .expect = {.collectives = 0},
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kReduce), (Dims{2})); }},
    // Like the layer norms of transformer_block: batch on the 2-way axis, features on the 4-way.
    {.name = "TwoDimensionalMeshReducesOverTheModelAxisOnly",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[4,16,32]{2,1,0} parameter(0), sharding={devices=[2,1,4]<=[8]}
  %c = f32[] constant(0)
  ROOT %s = f32[4,16]{1,0} reduce(%x, %c), dimensions={2}, to_apply=%add, sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
})"),
     .expect = {.collectives = 1},
     .check =
         [](const Partitioned& p) {
           const Instruction* reduce = TheOnly(p, Opcode::kAllReduce);
           if (reduce == nullptr) return;
           EXPECT_EQ(reduce->shape().dims(), (Dims{2, 16}));
           EXPECT_EQ(reduce->replica_groups().Groups(8), (std::vector<Dims>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
         }},
    // At most an all-reduce of the partial sums over the 4-way axis (96 bytes); the planner may
    // find a cheaper reduce-scatter + all-gather that also uses the replicated axis.
    {.name = "PartiallyReplicatedOperandReducesOverItsTileAxis",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[16,32]{1,0} parameter(0), sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}
  %c = f32[] constant(0)
  ROOT %s = f32[16]{0} reduce(%x, %c), dimensions={1}, to_apply=%add, sharding={replicated}
})"),
     .expect = {.max_comm_bytes = 96},
     .check =
         [](const Partitioned& p) {
           EXPECT_TRUE(CountOf(p, Opcode::kAllGather) > 0 || CountOf(p, Opcode::kAllReduce) > 0) << p.text;
         }},
    {.name = "UnevenReducedDimIsMaskedWithTheInitValue",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[6,10]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %c = f32[] constant(-inf)
  %m = f32[6]{0} reduce(%x, %c), dimensions={1}, to_apply=%max, sharding={replicated}
  %z = f32[] constant(0)
  %s = f32[6]{0} reduce(%x, %z), dimensions={1}, to_apply=%add, sharding={replicated}
  ROOT %t = (f32[6]{0}, f32[6]{0}) tuple(%m, %s), sharding={{replicated}, {replicated}}
})"),
     .expect = {.counts = {{Opcode::kAllReduce, 2}, {Opcode::kAllGather, 0}}}},
    {.name = "UnevenDimsOnATwoDimensionalMesh",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[5,7]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  %z = f32[] constant(0)
  ROOT %s = f32[5]{0} reduce(%x, %z), dimensions={1}, to_apply=%add, sharding={devices=[2,4]<=[8] last_tile_dim_replicate}
})"),
     .expect = {.counts = {{Opcode::kAllReduce, 1}}}},
    {.name = "FullReductionToAScalar",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[8,16]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  %z = f32[] constant(0)
  ROOT %s = f32[] reduce(%x, %z), dimensions={0,1}, to_apply=%add, sharding={replicated}
})"),
     .expect = {.collectives = 1},
     .check =
         [](const Partitioned& p) {
           const Instruction* reduce = TheOnly(p, Opcode::kAllReduce);
           if (reduce != nullptr) EXPECT_EQ(reduce->replica_groups().Groups(8).size(), 1u);
         }},
    {.name = "NonIdentityInitIsAppliedOnce",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[4,16]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %c = f32[] constant(1.5)
  ROOT %s = f32[4]{0} reduce(%x, %c), dimensions={1}, to_apply=%add, sharding={replicated}
})"),
     .expect = {.collectives = 1}},
    {.name = "IntegerProductWithParameterInit",
     .hlo = Module(R"(
ENTRY e {
  %x = s32[4,6]{1,0} parameter(0), sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}
  %c = s32[] parameter(1), sharding={replicated}
  ROOT %s = s32[4]{0} reduce(%x, %c), dimensions={1}, to_apply=%mul_s32, sharding={replicated}
})"),
     .expect = {.counts = {{Opcode::kAllReduce, 1}}}},
    {.name = "PredAndOverAShardedDim",
     .hlo = Module(R"(
ENTRY e {
  %x = pred[8,16,12]{2,1,0} parameter(0), sharding={devices=[1,1,8]<=[8]}
  %c = pred[] constant(true)
  ROOT %s = pred[8,16]{1,0} reduce(%x, %c), dimensions={2}, to_apply=%and, sharding={replicated}
})"),
     .expect = {.counts = {{Opcode::kAllReduce, 1}}}},
    {.name = "ReplicatedOperandWithShardedOutputReducesOnlyTheLocalTile",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[16,64]{1,0} parameter(0), sharding={replicated}
  %c = f32[] constant(0)
  ROOT %s = f32[16]{0} reduce(%x, %c), dimensions={1}, to_apply=%add, sharding={devices=[8]<=[8]}
})"),
     .expect = {.collectives = 0},
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kReduce), (Dims{2})); }},
    // The interpreter cannot run a manual program on one device.
    {.name = "ManualReduceStaysLocal",
     .hlo = Module(R"(
ENTRY e {
  %x = f32[2,32]{1,0} parameter(0), sharding={manual}
  %c = f32[] constant(0)
  ROOT %s = f32[32]{0} reduce(%x, %c), dimensions={0}, to_apply=%add, sharding={manual}
})"),
     .expect = {.collectives = 0},
     .run = false},
    // One all-gather per element, of one partial result per device (not of the operand).
    {.name = "VariadicArgmaxGathersOnlyThePartialResults",
     .hlo = kArgmax + R"(
ENTRY e {
  %x = f32[8,64]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %iota = s32[8,64]{1,0} iota(), iota_dimension=1, sharding={devices=[1,8]<=[8]}
  %ninf = f32[] constant(-inf)
  %zero = s32[] constant(0)
  ROOT %r = (f32[8]{0}, s32[8]{0}) reduce(%x, %iota, %ninf, %zero), dimensions={1}, to_apply=%argmax, sharding={{replicated}, {replicated}}
})",
     .check = [](const Partitioned& p) { ExpectEachOf(p, Opcode::kAllGather, 2, Dims{8, 8}); }},
    {.name = "VariadicArgmaxWithUnevenDimAndShardedKeptDim",
     .hlo = kArgmax + R"(
ENTRY e {
  %x = f32[6,13]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  %iota = s32[6,13]{1,0} iota(), iota_dimension=1, sharding={devices=[2,4]<=[8]}
  %ninf = f32[] constant(-inf)
  %zero = s32[] constant(0)
  ROOT %r = (f32[6]{0}, s32[6]{0}) reduce(%x, %iota, %ninf, %zero), dimensions={1}, to_apply=%argmax, sharding={{devices=[2,4]<=[8] last_tile_dim_replicate}, {devices=[2,4]<=[8] last_tile_dim_replicate}}
})"},
    {.name = "VariadicReducerOfIndependentOpsUsesAllReduces",
     .hlo = R"(HloModule m, num_partitions=8
%sum_max (a0: f32[], b0: f32[], a1: f32[], b1: f32[]) -> (f32[], f32[]) {
  %a0 = f32[] parameter(0)
  %b0 = f32[] parameter(1)
  %a1 = f32[] parameter(2)
  %b1 = f32[] parameter(3)
  %s = f32[] add(%a0, %a1)
  %m = f32[] maximum(%b0, %b1)
  ROOT %r = (f32[], f32[]) tuple(%s, %m)
}
ENTRY e {
  %x = f32[8,32]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %y = f32[8,32]{1,0} parameter(1), sharding={devices=[1,8]<=[8]}
  %zero = f32[] constant(0)
  %ninf = f32[] constant(-inf)
  ROOT %r = (f32[8]{0}, f32[8]{0}) reduce(%x, %y, %zero, %ninf), dimensions={1}, to_apply=%sum_max, sharding={{replicated}, {replicated}}
})",
     .expect = {.counts = {{Opcode::kAllReduce, 2}, {Opcode::kAllGather, 0}}}},
};

PARTITION_CASE_TESTS(ReducePartitionTest, kCases);

}  // namespace
}  // namespace gspmd::partition_test
