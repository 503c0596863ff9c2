// Custom-calls that pass their data through (MoveToHost/MoveToDevice, LayoutConstraint,
// X64Combine) run on each device's pieces, and shard barriers left in a module sharded by hand
// are the identity: neither reaches the per-device program as a gather or as a barrier.
#include <gtest/gtest.h>

#include "partition_test_harness.h"

namespace gspmd {
namespace {

using namespace partition_test;

bool HasCustomCall(const Partitioned& p, const std::string& target) {
  for (const Instruction* call : InstructionsWith(*p.module, Opcode::kCustomCall))
    if (call->custom_call_target == target) return true;
  return false;
}

TEST(PartitionPassThroughCustomCallTest, HostMovesRunOnEachDevicesPiece) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY %e {
  %x = f32[2,16,8] parameter(0), sharding={devices=[1,4,1]<=[4]}
  %h = f32[2,16,8] custom-call(%x), custom_call_target="MoveToHost", sharding={devices=[1,4,1]<=[4]}
  %d = f32[2,16,8] custom-call(%h), custom_call_target="MoveToDevice", sharding={devices=[1,4,1]<=[4]}
  ROOT %n = f32[2,16,8] negate(%d), sharding={devices=[1,4,1]<=[4]}
})");
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ASSERT_TRUE(HasCustomCall(p, "MoveToHost"));
  for (const Instruction* call : InstructionsWith(*p.module, Opcode::kCustomCall))
    EXPECT_EQ(call->shape().dims(), Dims({2, 4, 8})) << p.text;
  ExpectSameNumbers(p);
}

TEST(PartitionPassThroughCustomCallTest, OperandsAreReshardedToTheCustomCallsSharding) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY %e {
  %x = f32[8,8] parameter(0), sharding={devices=[4,1]<=[4]}
  %c = f32[8,8]{0,1} custom-call(%x), custom_call_target="LayoutConstraint", sharding={devices=[1,4]<=[4]}
  ROOT %n = f32[8,8] negate(%c), sharding={devices=[1,4]<=[4]}
})");
  EXPECT_EQ(CountOf(p, Opcode::kAllToAll), 1) << p.text;
  EXPECT_EQ(DimsOfOnly(p, Opcode::kCustomCall), Dims({8, 2}));
  ExpectSameNumbers(p);
}

TEST(PartitionPassThroughCustomCallTest, X64CombineTakesBothHalvesInItsLayout) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY %e {
  %hi = f32[8,8] parameter(0), sharding={devices=[2,2]<=[4]}
  %lo = f32[8,8] parameter(1), sharding={devices=[2,2]<=[4]}
  ROOT %c = f64[8,8] custom-call(%hi, %lo), custom_call_target="X64Combine", sharding={devices=[2,2]<=[4]}
})");
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  EXPECT_EQ(DimsOfOnly(p, Opcode::kCustomCall), Dims({4, 4}));
}

// A barrier in a module that needs no propagation (every value sharded by hand) is the identity.
TEST(PartitionPassThroughCustomCallTest, ShardBarriersDoNotReachThePerDeviceProgram) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY %e {
  %x = f32[8,8] parameter(0), sharding={devices=[4,1]<=[4]}
  %b = f32[8,8] custom-call(%x), custom_call_target="ShardBarrierFrom", custom_call_has_side_effect=true, sharding={devices=[4,1]<=[4]}
  %c = f32[8,8] custom-call(%b), custom_call_target="ShardBarrierTo", custom_call_has_side_effect=true, sharding={devices=[4,1]<=[4]}
  ROOT %n = f32[8,8] negate(%c), sharding={devices=[4,1]<=[4]}
})");
  EXPECT_EQ(CountOf(p, Opcode::kCustomCall), 0) << p.text;
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p);
}

}  // namespace
}  // namespace gspmd
