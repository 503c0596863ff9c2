// Tests of the reduce handler: which collectives partial results are resolved with (all-reduce,
// reduce-scatter, gathered partials for argmax), and that the partitioned program computes
// the same numbers as the unpartitioned one (uneven dims, 2-D meshes, partial replication).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/comm_report.h"
#include "analysis/literal_compare.h"
#include "partitioner/partitioner.h"
#include "runtime/interp/evaluator.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"
#include "text/parser.h"
#include "text/printer.h"
#include "partitioner/partition_test_harness.h"

namespace gspmd {
namespace {

using namespace partition_test;  // NOLINT: the shared test harness

const char* kRegions = R"(
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}
%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] maximum(%a, %b)
}
%and (a: pred[], b: pred[]) -> pred[] {
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

TEST(ReducePartitionTest, SoftmaxMaxOverShardedDimIsOneSmallAllReduce) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[16,64]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %c = f32[] constant(-inf)
  ROOT %m = f32[16]{0} reduce(%x, %c), dimensions={1}, to_apply=%max, sharding={replicated}
})"));
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  auto reduces = InstructionsWith(*p.module, Opcode::kAllReduce);
  ASSERT_EQ(reduces.size(), 1u);
  EXPECT_EQ(reduces[0]->shape().dims(), (std::vector<int64_t>{16}));
  EXPECT_EQ(reduces[0]->to_apply()->root()->opcode(), Opcode::kMaximum);
  EXPECT_DOUBLE_EQ(CommBytes(p), 112);  // XLA: 2 * 7/8 * 64 bytes
  ExpectSameNumbers(p);
}

TEST(ReducePartitionTest, ShardedOutputOfTheReducedAxisGivesReduceScatter) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[16,64]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %c = f32[] constant(0)
  ROOT %s = f32[16]{0} reduce(%x, %c), dimensions={1}, to_apply=%add, sharding={devices=[8]<=[8]}
})"));
  // Reduce-scatter (the planner may split it over sub-axes at the same cost), no all-reduce.
  EXPECT_EQ(CountOf(p, Opcode::kAllReduce), 0) << p.text;
  EXPECT_GE(CountOf(p, Opcode::kReduceScatter), 1) << p.text;
  EXPECT_DOUBLE_EQ(CommBytes(p), 56);  // 7/8 * 64 bytes
  ExpectSameNumbers(p);
}

TEST(ReducePartitionTest, KeptShardedDimNeedsNoCommunication) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[16,64]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %c = f32[] constant(0)
  ROOT %s = f32[16]{0} reduce(%x, %c), dimensions={1}, to_apply=%add, sharding={devices=[8]<=[8]}
})"));
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  EXPECT_EQ(InstructionsWith(*p.module, Opcode::kReduce)[0]->shape().dims(), (std::vector<int64_t>{2}));
  ExpectSameNumbers(p);
}

TEST(ReducePartitionTest, TwoDimensionalMeshReducesOverTheModelAxisOnly) {
  // Like the layer norms of transformer_block: batch on the 2-way axis, features on the 4-way.
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[4,16,32]{2,1,0} parameter(0), sharding={devices=[2,1,4]<=[8]}
  %c = f32[] constant(0)
  ROOT %s = f32[4,16]{1,0} reduce(%x, %c), dimensions={2}, to_apply=%add, sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
})"));
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  auto reduces = InstructionsWith(*p.module, Opcode::kAllReduce);
  ASSERT_EQ(reduces.size(), 1u) << p.text;
  EXPECT_EQ(reduces[0]->shape().dims(), (std::vector<int64_t>{2, 16}));
  EXPECT_EQ(reduces[0]->replica_groups().Groups(8),
            (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  ExpectSameNumbers(p);
}

TEST(ReducePartitionTest, PartiallyReplicatedOperandReducesOverItsTileAxis) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[16,32]{1,0} parameter(0), sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}
  %c = f32[] constant(0)
  ROOT %s = f32[16]{0} reduce(%x, %c), dimensions={1}, to_apply=%add, sharding={replicated}
})"));
  // At most an all-reduce of the partial sums over the 4-way axis (96 bytes); the planner may
  // find a cheaper reduce-scatter + all-gather that also uses the replicated axis.
  EXPECT_EQ(CountOf(p, Opcode::kAllGather) > 0 || CountOf(p, Opcode::kAllReduce) > 0, true) << p.text;
  EXPECT_LE(CommBytes(p), 96) << p.text;
  ExpectSameNumbers(p);
}

TEST(ReducePartitionTest, UnevenReducedDimIsMaskedWithTheInitValue) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[6,10]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %c = f32[] constant(-inf)
  %m = f32[6]{0} reduce(%x, %c), dimensions={1}, to_apply=%max, sharding={replicated}
  %z = f32[] constant(0)
  %s = f32[6]{0} reduce(%x, %z), dimensions={1}, to_apply=%add, sharding={replicated}
  ROOT %t = (f32[6]{0}, f32[6]{0}) tuple(%m, %s), sharding={{replicated}, {replicated}}
})"));
  EXPECT_EQ(CountOf(p, Opcode::kAllReduce), 2) << p.text;
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 0) << p.text;
  ExpectSameNumbers(p);
}

TEST(ReducePartitionTest, UnevenDimsOnATwoDimensionalMesh) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[5,7]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  %z = f32[] constant(0)
  ROOT %s = f32[5]{0} reduce(%x, %z), dimensions={1}, to_apply=%add, sharding={devices=[2,4]<=[8] last_tile_dim_replicate}
})"));
  EXPECT_EQ(CountOf(p, Opcode::kAllReduce), 1) << p.text;
  ExpectSameNumbers(p);
}

TEST(ReducePartitionTest, FullReductionToAScalar) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[8,16]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  %z = f32[] constant(0)
  ROOT %s = f32[] reduce(%x, %z), dimensions={0,1}, to_apply=%add, sharding={replicated}
})"));
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  auto reduces = InstructionsWith(*p.module, Opcode::kAllReduce);
  ASSERT_EQ(reduces.size(), 1u) << p.text;
  EXPECT_EQ(reduces[0]->replica_groups().Groups(8).size(), 1u);
  ExpectSameNumbers(p);
}

TEST(ReducePartitionTest, NonIdentityInitIsAppliedOnce) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[4,16]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %c = f32[] constant(1.5)
  ROOT %s = f32[4]{0} reduce(%x, %c), dimensions={1}, to_apply=%add, sharding={replicated}
})"));
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  ExpectSameNumbers(p);
}

TEST(ReducePartitionTest, IntegerProductWithParameterInit) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = s32[4,6]{1,0} parameter(0), sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}
  %c = s32[] parameter(1), sharding={replicated}
  ROOT %s = s32[4]{0} reduce(%x, %c), dimensions={1}, to_apply=%mul_s32, sharding={replicated}
})"));
  EXPECT_EQ(CountOf(p, Opcode::kAllReduce), 1) << p.text;
  ExpectSameNumbers(p);
}

TEST(ReducePartitionTest, PredAndOverAShardedDim) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = pred[8,16,12]{2,1,0} parameter(0), sharding={devices=[1,1,8]<=[8]}
  %c = pred[] constant(true)
  ROOT %s = pred[8,16]{1,0} reduce(%x, %c), dimensions={2}, to_apply=%and, sharding={replicated}
})"));
  EXPECT_EQ(CountOf(p, Opcode::kAllReduce), 1) << p.text;
  ExpectSameNumbers(p);
}

TEST(ReducePartitionTest, ReplicatedOperandWithShardedOutputReducesOnlyTheLocalTile) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[16,64]{1,0} parameter(0), sharding={replicated}
  %c = f32[] constant(0)
  ROOT %s = f32[16]{0} reduce(%x, %c), dimensions={1}, to_apply=%add, sharding={devices=[8]<=[8]}
})"));
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  EXPECT_EQ(InstructionsWith(*p.module, Opcode::kReduce)[0]->shape().dims(), (std::vector<int64_t>{2}));
  ExpectSameNumbers(p);
}

TEST(ReducePartitionTest, ManualReduceStaysLocal) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[2,32]{1,0} parameter(0), sharding={manual}
  %c = f32[] constant(0)
  ROOT %s = f32[32]{0} reduce(%x, %c), dimensions={0}, to_apply=%add, sharding={manual}
})"));
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
}

const char* kArgmax = R"(HloModule m, num_partitions=8
%argmax (v0: f32[], i0: s32[], v1: f32[], i1: s32[]) -> (f32[], s32[]) {
  %v0 = f32[] parameter(0)
  %i0 = s32[] parameter(1)
  %v1 = f32[] parameter(2)
  %i1 = s32[] parameter(3)
  %gt = pred[] compare(%v0, %v1), direction=GT
  %eq = pred[] compare(%v0, %v1), direction=EQ
  %lt = pred[] compare(%i0, %i1), direction=LT
  %tie = pred[] and(%eq, %lt)
  %pick = pred[] or(%gt, %tie)
  %v = f32[] select(%pick, %v0, %v1)
  %i = s32[] select(%pick, %i0, %i1)
  ROOT %r = (f32[], s32[]) tuple(%v, %i)
}
)";

TEST(ReducePartitionTest, VariadicArgmaxGathersOnlyThePartialResults) {
  Partitioned p = Partition(std::string(kArgmax) + R"(
ENTRY e {
  %x = f32[8,64]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %iota = s32[8,64]{1,0} iota(), iota_dimension=1, sharding={devices=[1,8]<=[8]}
  %ninf = f32[] constant(-inf)
  %zero = s32[] constant(0)
  ROOT %r = (f32[8]{0}, s32[8]{0}) reduce(%x, %iota, %ninf, %zero), dimensions={1}, to_apply=%argmax, sharding={{replicated}, {replicated}}
})");
  // One all-gather per element, of one partial result per device (not of the operand).
  auto gathers = InstructionsWith(*p.module, Opcode::kAllGather);
  ASSERT_EQ(gathers.size(), 2u) << p.text;
  for (const Instruction* gather : gathers) EXPECT_EQ(gather->shape().dims(), (std::vector<int64_t>{8, 8}));
  ExpectSameNumbers(p);
}

TEST(ReducePartitionTest, VariadicArgmaxWithUnevenDimAndShardedKeptDim) {
  Partitioned p = Partition(std::string(kArgmax) + R"(
ENTRY e {
  %x = f32[6,13]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  %iota = s32[6,13]{1,0} iota(), iota_dimension=1, sharding={devices=[2,4]<=[8]}
  %ninf = f32[] constant(-inf)
  %zero = s32[] constant(0)
  ROOT %r = (f32[6]{0}, s32[6]{0}) reduce(%x, %iota, %ninf, %zero), dimensions={1}, to_apply=%argmax, sharding={{devices=[2,4]<=[8] last_tile_dim_replicate}, {devices=[2,4]<=[8] last_tile_dim_replicate}}
})");
  ExpectSameNumbers(p);
}

TEST(ReducePartitionTest, VariadicReducerOfIndependentOpsUsesAllReduces) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
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
})");
  EXPECT_EQ(CountOf(p, Opcode::kAllReduce), 2) << p.text;
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 0) << p.text;
  ExpectSameNumbers(p);
}

}  // namespace
}  // namespace gspmd
