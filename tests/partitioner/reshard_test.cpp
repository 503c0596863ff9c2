// Tests of resharding between shardings whose device orders the planner cannot relate (found
// by the randomized test): a shuffled device order, or 2x3 against 3x2 digits. One
// collective-permute into a matching order and a planned reshard replace full rematerialization.
#include <string>

#include <gtest/gtest.h>

#include "partitioner/partition_test_harness.h"

namespace gspmd {
namespace {

using namespace partition_test;  // NOLINT: the shared test harness

TEST(ReshardTest, ShuffledSourceOrderIsPermutedIntoIotaOrderThenPlanned) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[8,6] parameter(0), sharding={devices=[4,1]3,1,0,2}
  ROOT %n = f32[8,6] negate(%a), sharding={devices=[1,4]<=[4]}
})");
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 0) << p.text;
  EXPECT_GE(CountOf(p, Opcode::kCollectivePermute), 1) << p.text;
  EXPECT_EQ(CountOf(p, Opcode::kAllToAll), 1) << p.text;
  ExpectSameNumbers(p);
}

TEST(ReshardTest, ShuffledTargetOrderWithPartialReplicationAndUnevenDim) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[10,6] parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  ROOT %n = f32[10,6] negate(%a), sharding={devices=[4,1,2]0,5,2,7,1,4,3,6 last_tile_dim_replicate}
})");  // Partition() fails the test on a rematerialization warning
  EXPECT_GE(CountOf(p, Opcode::kCollectivePermute), 1) << p.text;
  ExpectSameNumbers(p);
}

TEST(ReshardTest, ShuffledOrdersOnBothSides) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %a = s32[6,9] parameter(0), sharding={devices=[2,4]7,2,5,0,3,6,1,4}
  ROOT %n = s32[6,9] negate(%a), sharding={devices=[1,8]6,1,3,0,7,2,4,5}
})");
  EXPECT_GE(CountOf(p, Opcode::kCollectivePermute), 2) << p.text;
  ExpectSameNumbers(p);
}

// 3x2 tiles in iota order against 2x3 ones: digit boundaries 2 and 3 do not refine, so the
// source is first permuted into the order whose axes match the target's.
TEST(ReshardTest, IncompatibleFactorizationsOnSixDevicesArePermutedFirst) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=6
ENTRY e {
  %a = f32[6,7] parameter(0), sharding={devices=[3,2]<=[6]}
  ROOT %n = f32[6,7] negate(%a), sharding={devices=[2,3]<=[6]}
})");  // Partition() fails the test on a rematerialization warning
  EXPECT_EQ(CountOf(p, Opcode::kCollectivePermute), 1) << p.text;
  ExpectSameNumbers(p);
}

}  // namespace
}  // namespace gspmd
