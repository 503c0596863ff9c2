// Tests of the sort and top-k handlers: the sort dim made whole (by all-to-all or gather),
// top-k along a sharded dim through local candidates, and that the partitioned program
// computes the same numbers as the unpartitioned one.
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
%less (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = pred[] compare(%a, %b), direction=LT
}
%greater_kv (a: f32[], b: f32[], i: s32[], j: s32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %i = s32[] parameter(2)
  %j = s32[] parameter(3)
  ROOT %r = pred[] compare(%a, %b), direction=GT
}
%less_kv (a: f32[], b: f32[], i: s32[], j: s32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %i = s32[] parameter(2)
  %j = s32[] parameter(3)
  ROOT %r = pred[] compare(%a, %b), direction=LT
}
)";

std::string Module(const std::string& entry) {
  return std::string("HloModule m, num_partitions=8\n") + kRegions + entry;
}

TEST(SortPartitionTest, UnshardedSortDimIsLocal) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[16,32]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT %s = f32[16,32]{1,0} sort(%x), dimensions={1}, to_apply=%less, sharding={devices=[8,1]<=[8]}
})"));
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p);
}

TEST(SortPartitionTest, ShardedSortDimMovesToAnotherDim) {
  // The sort dim's axis moves to dim 0 and back with all-to-alls, cheaper than a gather.
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[16,32]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  ROOT %s = f32[16,32]{1,0} sort(%x), dimensions={1}, to_apply=%less, sharding={devices=[1,8]<=[8]}
})"));
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 0) << p.text;
  EXPECT_GE(CountOf(p, Opcode::kAllToAll), 2) << p.text;
  EXPECT_LE(CommBytes(p), 2 * 7.0 / 8 * 256) << p.text;  // one 8-way all-to-all each way
  ExpectSameNumbers(p);
}

TEST(SortPartitionTest, ShardedSortDimWithReplicatedResultGathers) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[4,24]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  ROOT %s = f32[4,24]{1,0} sort(%x), dimensions={1}, to_apply=%less, sharding={replicated}
})"));
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  ExpectSameNumbers(p);
}

TEST(SortPartitionTest, KeyValueSortOnATwoDimensionalMesh) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %k = f32[8,12]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  %v = s32[8,12]{1,0} parameter(1), sharding={devices=[2,4]<=[8]}
  ROOT %s = (f32[8,12]{1,0}, s32[8,12]{1,0}) sort(%k, %v), dimensions={1}, is_stable=true, to_apply=%less_kv, sharding={{devices=[2,1,4]<=[8] last_tile_dim_replicate}, {devices=[2,1,4]<=[8] last_tile_dim_replicate}}
})"));
  ExpectSameNumbers(p);
}

TEST(SortPartitionTest, UnevenSortDim) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[3,10]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  ROOT %s = f32[3,10]{1,0} sort(%x), dimensions={1}, to_apply=%less, sharding={devices=[1,8]<=[8]}
})"));
  ExpectSameNumbers(p);
}

TEST(SortPartitionTest, TopKWrittenAsSortAndSliceGathersOnlyCandidates) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[4,64]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %iota = s32[4,64]{1,0} iota(), iota_dimension=1, sharding={devices=[1,8]<=[8]}
  %s = (f32[4,64]{1,0}, s32[4,64]{1,0}) sort(%x, %iota), dimensions={1}, is_stable=true, to_apply=%greater_kv, sharding={{replicated}, {replicated}}
  %v = f32[4,64]{1,0} get-tuple-element(%s), index=0, sharding={replicated}
  %i = s32[4,64]{1,0} get-tuple-element(%s), index=1, sharding={replicated}
  %tv = f32[4,3]{1,0} slice(%v), slice={[0:4], [0:3]}, sharding={replicated}
  %ti = s32[4,3]{1,0} slice(%i), slice={[0:4], [0:3]}, sharding={replicated}
  %c = f32[4,3]{1,0} convert(%ti), sharding={replicated}
  ROOT %r = f32[4,3]{1,0} add(%tv, %c), sharding={replicated}
})"));
  auto gathers = InstructionsWith(*p.module, Opcode::kAllGather);
  ASSERT_EQ(gathers.size(), 2u) << p.text;
  for (const Instruction* gather : gathers) EXPECT_EQ(gather->shape().dims(), (std::vector<int64_t>{4, 24}));
  EXPECT_EQ(CountOf(p, Opcode::kAllToAll), 0) << p.text;
  ExpectSameNumbers(p);
}

TEST(SortPartitionTest, SortPrefixOverAnUnevenDim) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[3,30]{1,0} parameter(0), sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}
  %iota = s32[3,30]{1,0} iota(), iota_dimension=1, sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}
  %s = (f32[3,30]{1,0}, s32[3,30]{1,0}) sort(%x, %iota), dimensions={1}, is_stable=true, to_apply=%greater_kv, sharding={{replicated}, {replicated}}
  %i = s32[3,30]{1,0} get-tuple-element(%s), index=1, sharding={replicated}
  ROOT %ti = s32[3,2]{1,0} slice(%i), slice={[0:3], [0:2]}, sharding={replicated}
})"));
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 2) << p.text;
  ExpectSameNumbers(p);
}

TEST(TopKPartitionTest, ShardedBatchDimIsLocal) {
  // As in moe_top2_alltoall: routing probabilities sharded over groups; the result is wanted
  // replicated, so only the (small) results are gathered.
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[8,16,8]{2,1,0} parameter(0), sharding={devices=[8,1,1]<=[8]}
  %t = (f32[8,16,2]{2,1,0}, s32[8,16,2]{2,1,0}) topk(%x), k=2, largest=true, is_stable=true
  %v = f32[8,16,2]{2,1,0} get-tuple-element(%t), index=0, sharding={replicated}
  %i = s32[8,16,2]{2,1,0} get-tuple-element(%t), index=1, sharding={replicated}
  %c = f32[8,16,2]{2,1,0} convert(%i), sharding={replicated}
  ROOT %a = f32[8,16,2]{2,1,0} add(%v, %c), sharding={replicated}
})"));
  EXPECT_EQ(InstructionsWith(*p.module, Opcode::kTopK)[0]->operand(0)->shape().dims(),
            (std::vector<int64_t>{1, 16, 8}));
  // XLA gathers the operand (3584 bytes); the results are half of that.
  EXPECT_LE(CommBytes(p), 1792) << p.text;
  ExpectSameNumbers(p);
}

TEST(TopKPartitionTest, ShardedLastDimUsesLocalCandidates) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[4,256]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  ROOT %t = (f32[4,2]{1,0}, s32[4,2]{1,0}) topk(%x), k=2, largest=true, sharding={{replicated}, {replicated}}
})"));
  auto gathers = InstructionsWith(*p.module, Opcode::kAllGather);
  ASSERT_EQ(gathers.size(), 2u) << p.text;
  for (const Instruction* gather : gathers) EXPECT_EQ(gather->shape().dims(), (std::vector<int64_t>{4, 16}));
  ExpectSameNumbers(p);
}

TEST(TopKPartitionTest, TiesKeepTheLowestGlobalIndex) {
  // Integer-valued data with many ties across shards.
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = s32[4,64]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  ROOT %t = (s32[4,3]{1,0}, s32[4,3]{1,0}) topk(%x), k=3, largest=true, sharding={{replicated}, {replicated}}
})"));
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 2) << p.text;
  ExpectSameNumbers(p);
}

TEST(TopKPartitionTest, SmallestKOverAnUnevenTwoDimensionalSharding) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[6,50]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  ROOT %t = (f32[6,3]{1,0}, s32[6,3]{1,0}) topk(%x), k=3, largest=false, sharding={{devices=[2,1,4]<=[8] last_tile_dim_replicate}, {devices=[2,1,4]<=[8] last_tile_dim_replicate}}
})"));
  ExpectSameNumbers(p);
}

TEST(TopKPartitionTest, TopKCustomCallOnAShardedLastDim) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[2,128]{1,0} parameter(0), sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}
  ROOT %t = (f32[2,4]{1,0}, s32[2,4]{1,0}) custom-call(%x), custom_call_target="TopK", sharding={{replicated}, {replicated}}
})"));
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 2) << p.text;
  ExpectSameNumbers(p);
}

TEST(TopKPartitionTest, LargeKGathersTheDim) {
  Partitioned p = Partition(Module(R"(
ENTRY e {
  %x = f32[4,16]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  ROOT %t = (f32[4,12]{1,0}, s32[4,12]{1,0}) topk(%x), k=12, largest=true, sharding={{replicated}, {replicated}}
})"));
  ExpectSameNumbers(p);
}

}  // namespace
}  // namespace gspmd
