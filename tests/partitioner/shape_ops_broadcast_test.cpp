// Partitioning tests for broadcast, transpose, iota and reverse: which collectives appear
// (usually none) and that the per-device program computes the unpartitioned numbers.
#include "partitioner/shape_ops_test_util.h"

namespace gspmd::shape_ops_test {
namespace {

TEST(ShapeOpsBroadcastTest, MappedDimKeepsItsShardingLocally) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16]{0} parameter(0), sharding={devices=[8]<=[8]}
  ROOT %b = f32[16,4]{1,0} broadcast(%x), dimensions={0}, sharding={devices=[8,1]<=[8]}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p);
}

TEST(ShapeOpsBroadcastTest, OperandDimMovesToMinorResultDim) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16]{0} parameter(0), sharding={devices=[8]<=[8]}
  ROOT %b = f32[4,16]{1,0} broadcast(%x), dimensions={1}, sharding={devices=[1,8]<=[8]}
})");
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p);
}

TEST(ShapeOpsBroadcastTest, ReplicatedOperandToTwoDimMeshIsLocal) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16]{0} parameter(0), sharding={replicated}
  ROOT %b = f32[8,16]{1,0} broadcast(%x), dimensions={1}, sharding={devices=[2,4]<=[8]}
})");
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p);
}

TEST(ShapeOpsBroadcastTest, NewDimShardedGathersOnlyTheOperand) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16]{0} parameter(0), sharding={devices=[8]<=[8]}
  ROOT %b = f32[8,16]{1,0} broadcast(%x), dimensions={1}, sharding={devices=[2,4]<=[8]}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 1) << p.text;
  EXPECT_LE(CommBytes(p), 24.0) << p.text;  // all-gather + reorder of a 16-byte piece
  ExpectSameNumbers(p);
}

TEST(ShapeOpsBroadcastTest, PartiallyReplicatedAndUneven) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[10]{0} parameter(0), sharding={devices=[4,2]<=[8] last_tile_dim_replicate}
  %b = f32[10,6]{1,0} broadcast(%x), dimensions={0}, sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
  ROOT %n = f32[10,6]{1,0} negate(%b), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p);
}

TEST(ShapeOpsBroadcastTest, ScalarBroadcastIsLocal) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[] parameter(0), sharding={replicated}
  ROOT %b = f32[6,8]{1,0} broadcast(%x), dimensions={}, sharding={devices=[2,2]<=[4]}
})");
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p);
}

TEST(ShapeOpsTransposeTest, PermutesTheShardingLocally) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[8,16]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  ROOT %t = f32[16,8]{1,0} transpose(%x), dimensions={1,0}, sharding={devices=[4,2]<=[2,4]T(1,0)}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p);
}

TEST(ShapeOpsTransposeTest, ThreeDimsPartiallyReplicated) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[4,6,10]{2,1,0} parameter(0), sharding={devices=[2,1,2,2]<=[8] last_tile_dim_replicate}
  ROOT %t = f32[10,4,6]{2,1,0} transpose(%x), dimensions={2,0,1}, sharding={devices=[2,2,1,2]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p);
}

TEST(ShapeOpsIotaTest, ShardedDimAddsThePartitionOffset) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  ROOT %i = s32[16]{0} iota(), iota_dimension=0, sharding={devices=[8]<=[8]}
})");
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  EXPECT_EQ(CountOf(p, Opcode::kPartitionId), 1) << p.text;
  ExpectSameNumbers(p);
}

TEST(ShapeOpsIotaTest, UnevenFloatIotaOnTwoDimMesh) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  ROOT %i = f32[6,10]{1,0} iota(), iota_dimension=1, sharding={devices=[2,4]<=[8]}
})");
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p);
}

TEST(ShapeOpsIotaTest, UnshardedIotaDimNeedsNoOffset) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  ROOT %i = s32[8,6]{1,0} iota(), iota_dimension=1, sharding={devices=[4,1]<=[4]}
})");
  EXPECT_EQ(CountOf(p, Opcode::kPartitionId), 0) << p.text;
  ExpectSameNumbers(p);
}

TEST(ShapeOpsReverseTest, MirroredDeviceOrderIsFree) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[16,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT %r = f32[16,8]{1,0} reverse(%a), dimensions={0}, sharding={devices=[8,1]7,6,5,4,3,2,1,0}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p);
}

TEST(ShapeOpsReverseTest, SameDeviceOrderNeedsOneCollectivePermute) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[16,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT %r = f32[16,8]{1,0} reverse(%a), dimensions={0}, sharding={devices=[8,1]<=[8]}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CountOf(p, Opcode::kCollectivePermute), 1) << p.text;
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  EXPECT_DOUBLE_EQ(CommBytes(p), 64.0) << p.text;  // one [2,8] f32 shard
  ExpectSameNumbers(p);
}

TEST(ShapeOpsReverseTest, UnevenDimShiftsThePadding) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[10,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT %r = f32[10,3]{1,0} reverse(%a), dimensions={0,1}, sharding={devices=[4,1]<=[4]}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CollectiveCount(p), CountOf(p, Opcode::kCollectivePermute)) << p.text;
  ExpectSameNumbers(p);
}

TEST(ShapeOpsReverseTest, UnevenMirroredOrderShiftsByThePadding) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[10]{0} parameter(0), sharding={devices=[4]<=[4]}
  ROOT %r = f32[10]{0} reverse(%a), dimensions={0}, sharding={devices=[4]3,2,1,0}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CollectiveCount(p), CountOf(p, Opcode::kCollectivePermute)) << p.text;
  ExpectSameNumbers(p);
}

TEST(ShapeOpsReverseTest, TwoDimMeshBothDimsReversed) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[8,6]{1,0} parameter(0), sharding={devices=[2,2,2]<=[8] last_tile_dim_replicate}
  ROOT %r = f32[8,6]{1,0} reverse(%a), dimensions={0,1}, sharding={devices=[2,2,2]<=[8] last_tile_dim_replicate}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CollectiveCount(p), CountOf(p, Opcode::kCollectivePermute)) << p.text;
  ExpectSameNumbers(p);
}

}  // namespace
}  // namespace gspmd::shape_ops_test
