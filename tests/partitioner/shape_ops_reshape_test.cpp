// Partitioning tests for reshape: splits and merges of sharded dims stay local, degenerate
// dims are free, incompatible layouts are resharded (never fully replicated when a better
// layout exists), and the numbers match the unpartitioned program.
#include "partitioner/shape_ops_test_util.h"

namespace gspmd::shape_ops_test {
namespace {

void ExpectLocal(const Partitioned& p) {
  EXPECT_TRUE(p.warnings.empty()) << p.warnings.front();
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p);
}

TEST(ShapeOpsReshapeTest, SplitKeepsAxesOnTheMajorPart) {
  ExpectLocal(Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[16]{0} parameter(0), sharding={devices=[4]<=[4]}
  ROOT %r = f32[4,4]{1,0} reshape(%x), sharding={devices=[4,1]<=[4]}
})"));
}

TEST(ShapeOpsReshapeTest, SplitSpreadsAnAxisOverBothParts) {
  ExpectLocal(Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16]{0} parameter(0), sharding={devices=[8]<=[8]}
  ROOT %r = f32[4,4]{1,0} reshape(%x), sharding={devices=[4,2]<=[8]}
})"));
}

TEST(ShapeOpsReshapeTest, MergeKeepsTheMajorDimsAxes) {
  ExpectLocal(Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[4,4]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT %r = f32[16]{0} reshape(%x), sharding={devices=[4]<=[4]}
})"));
}

TEST(ShapeOpsReshapeTest, MergeOfFullySplitMajorAndSplitMinor) {
  ExpectLocal(Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[4,8]{1,0} parameter(0), sharding={devices=[4,2]<=[8]}
  ROOT %r = f32[32]{0} reshape(%x), sharding={devices=[8]<=[8]}
})"));
}

TEST(ShapeOpsReshapeTest, DegenerateDimsAreFree) {
  ExpectLocal(Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[8]{0} parameter(0), sharding={devices=[8]<=[8]}
  %a = f32[1,8]{1,0} reshape(%x), sharding={devices=[1,8]<=[8]}
  %b = f32[1,1,8]{2,1,0} reshape(%a), sharding={devices=[1,1,8]<=[8]}
  %c = f32[8,1]{1,0} reshape(%b), sharding={devices=[8,1]<=[8]}
  ROOT %d = f32[8]{0} reshape(%c), sharding={devices=[8]<=[8]}
})"));
}

TEST(ShapeOpsReshapeTest, UnevenDegenerateDimsAreFree) {
  ExpectLocal(Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[10,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %a = f32[1,10,3,1]{3,2,1,0} reshape(%x), sharding={devices=[1,4,1,1]<=[4]}
  ROOT %b = f32[10,3]{1,0} reshape(%a), sharding={devices=[4,1]<=[4]}
})"));
}

TEST(ShapeOpsReshapeTest, PartiallyReplicatedSplit) {
  ExpectLocal(Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16,6]{1,0} parameter(0), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
  ROOT %r = f32[4,4,6]{2,1,0} reshape(%x), sharding={devices=[4,1,1,2]<=[8] last_tile_dim_replicate}
})"));
}

TEST(ShapeOpsReshapeTest, TwoDimMeshMergeOfFullySplitDim) {
  ExpectLocal(Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[8,4,6]{2,1,0} parameter(0), sharding={devices=[2,4,1]<=[8]}
  ROOT %r = f32[8,24]{1,0} reshape(%x), sharding={devices=[2,4]<=[8]}
})"));
}

TEST(ShapeOpsReshapeTest, MinorShardedMergeUsesAllToAllNotReplication) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[16,4]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  ROOT %r = f32[64]{0} reshape(%x), sharding={devices=[4]<=[4]}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 0) << p.text;
  EXPECT_GE(CountOf(p, Opcode::kAllToAll), 1) << p.text;
  // Less than gathering the operand (3/4 of 256 bytes); one all-to-all would be 48.
  EXPECT_LT(CommBytes(p), 192.0) << p.text;
  ExpectSameNumbers(p);
}

TEST(ShapeOpsReshapeTest, IncompatibleTargetMovesTheRemainderOfAnAxis) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[32]{0} parameter(0), sharding={devices=[8]<=[8]}
  ROOT %r = f32[4,8]{1,0} reshape(%x), sharding={devices=[1,8]<=[8]}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_LT(CommBytes(p), 112.0) << p.text;  // cheaper than gathering the operand
  ExpectSameNumbers(p);
}

TEST(ShapeOpsReshapeTest, UnevenMergeUsesAHaloExchange) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[6,4]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT %r = f32[24]{0} reshape(%x), sharding={devices=[4]<=[4]}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CollectiveCount(p), CountOf(p, Opcode::kCollectivePermute)) << p.text;
  EXPECT_LT(CommBytes(p), 72.0) << p.text;  // gathering the operand: 3/4 of 96 bytes
  ExpectSameNumbers(p);
}

TEST(ShapeOpsReshapeTest, UnevenSplitsAndMergesMatchNumbers) {
  const char* cases[] = {
      "%x = f32[12]{0} parameter(0), sharding={devices=[4]<=[4]}\n"
      "  ROOT %r = f32[3,4]{1,0} reshape(%x), sharding={devices=[4,1]<=[4]}",
      "%x = f32[10,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}\n"
      "  ROOT %r = f32[30]{0} reshape(%x), sharding={devices=[4]<=[4]}",
      "%x = f32[30]{0} parameter(0), sharding={devices=[4]<=[4]}\n"
      "  ROOT %r = f32[10,3]{1,0} reshape(%x), sharding={devices=[4,1]<=[4]}",
      "%x = f32[2,15]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}\n"
      "  ROOT %r = f32[2,5,3]{2,1,0} reshape(%x), sharding={devices=[1,4,1]<=[4]}",
      "%x = f32[7,2,3]{2,1,0} parameter(0), sharding={devices=[4,1,1]<=[4]}\n"
      "  ROOT %r = f32[14,3]{1,0} reshape(%x), sharding={devices=[4,1]<=[4]}",
  };
  for (const char* body : cases) {
    SCOPED_TRACE(body);
    Partitioned p = Partition(std::string("HloModule m, num_partitions=4\nENTRY e {\n  ") + body + "\n}\n");
    EXPECT_TRUE(p.warnings.empty());
    EXPECT_EQ(CollectiveCount(p), CountOf(p, Opcode::kCollectivePermute)) << p.text;
    ExpectSameNumbers(p);
  }
}

TEST(ShapeOpsReshapeTest, ThreeToTwoDimsOnTwoDimMesh) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[4,6,8]{2,1,0} parameter(0), sharding={devices=[2,1,4]<=[8]}
  ROOT %r = f32[24,8]{1,0} reshape(%x), sharding={devices=[2,4]<=[8]}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p);
}

TEST(ShapeOpsReshapeTest, ReplicatedResultFromShardedOperand) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[4,6]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT %r = f32[24]{0} reshape(%x), sharding={replicated}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 1) << p.text;
  ExpectSameNumbers(p);
}

TEST(ShapeOpsReshapeTest, MirroredDeviceOrderStaysLocal) {
  ExpectLocal(Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[16,4]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %r = f32[16,4]{1,0} reverse(%a), dimensions={0}, sharding={devices=[8,1]7,6,5,4,3,2,1,0}
  ROOT %s = f32[64]{0} reshape(%r), sharding={devices=[8]7,6,5,4,3,2,1,0}
})"));
}

}  // namespace
}  // namespace gspmd::shape_ops_test
