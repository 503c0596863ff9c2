// Partitioning tests for dynamic-slice and dynamic-update-slice: dims sliced at run time are
// replicated on the operand only when they must be; dynamic-update-slice writes each device's
// part of the update under a mask; results match the interpreter, including clamped starts.
#include "partitioner/shape_ops_test_util.h"

namespace gspmd::shape_ops_test {
namespace {

TEST(ShapeOpsDynamicSliceTest, UnshardedSlicedDimIsLocal) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[8,16]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %i = s32[] parameter(1), sharding={replicated}
  %z = s32[] constant(0)
  ROOT %d = f32[8,5]{1,0} dynamic-slice(%a, %z, %i), dynamic_slice_sizes={8,5}, sharding={devices=[4,1]<=[4]}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  for (int64_t start : {0, 3, 11, 14}) {
    std::vector<Literal> inputs;
    inputs.push_back(Values(Shape(ElementType::kF32, {8, 16}), 0));
    inputs.push_back(S32Scalar(start));
    ExpectSameNumbers(p, std::move(inputs));
  }
}

TEST(ShapeOpsDynamicSliceTest, ShardedSlicedDimEvenResult) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[16,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %i = s32[] parameter(1), sharding={replicated}
  %z = s32[] constant(0)
  ROOT %d = f32[8,3]{1,0} dynamic-slice(%a, %i, %z), dynamic_slice_sizes={8,3}, sharding={devices=[4,1]<=[4]}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CollectiveCount(p), CountOf(p, Opcode::kAllGather)) << p.text;
  for (int64_t start : {0, 5, 8, 20, -3}) {
    std::vector<Literal> inputs;
    inputs.push_back(Values(Shape(ElementType::kF32, {16, 3}), 0));
    inputs.push_back(S32Scalar(start));
    ExpectSameNumbers(p, std::move(inputs));
  }
}

TEST(ShapeOpsDynamicSliceTest, ShardedSlicedDimUnevenResult) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[16,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %i = s32[] parameter(1), sharding={replicated}
  %z = s32[] constant(0)
  ROOT %d = f32[7,3]{1,0} dynamic-slice(%a, %i, %z), dynamic_slice_sizes={7,3}, sharding={devices=[4,1]<=[4]}
})");
  EXPECT_TRUE(p.warnings.empty());
  for (int64_t start : {0, 6, 9, 15}) {
    std::vector<Literal> inputs;
    inputs.push_back(Values(Shape(ElementType::kF32, {16, 3}), 0));
    inputs.push_back(S32Scalar(start));
    ExpectSameNumbers(p, std::move(inputs));
  }
}

TEST(ShapeOpsDynamicSliceTest, SmallSliceOfShardedDimSumsMaskedParts) {
  // Gathering the operand would send 7/8 of 1 KiB; summing the one-row parts sends 28 bytes.
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[64,4]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %i = s32[] parameter(1), sharding={replicated}
  %z = s32[] constant(0)
  ROOT %d = f32[1,4]{1,0} dynamic-slice(%a, %i, %z), dynamic_slice_sizes={1,4}, sharding={replicated}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 0) << p.text;
  EXPECT_EQ(CountOf(p, Opcode::kAllReduce), 1) << p.text;
  EXPECT_LE(CommBytes(p), 28.0) << p.text;
  for (int64_t start : {0, 7, 8, 63, 100, -2}) {
    std::vector<Literal> inputs;
    inputs.push_back(Values(Shape(ElementType::kF32, {64, 4}), 0));
    inputs.push_back(S32Scalar(start));
    ExpectSameNumbers(p, std::move(inputs));
  }
}

TEST(ShapeOpsDynamicSliceTest, MaskedSliceAcrossTwoShardsOfUnevenDim) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %a = s32[30,2]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %i = s32[] parameter(1), sharding={replicated}
  %z = s32[] constant(0)
  ROOT %d = s32[3,2]{1,0} dynamic-slice(%a, %i, %z), dynamic_slice_sizes={3,2}, sharding={devices=[4,1]<=[4]}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 0) << p.text;
  for (int64_t start : {0, 6, 7, 23, 27, 29}) {
    std::vector<Literal> inputs;
    inputs.push_back(Values(Shape(ElementType::kS32, {30, 2}), 0));
    inputs.push_back(S32Scalar(start));
    ExpectSameNumbers(p, std::move(inputs));
  }
}

TEST(ShapeOpsDynamicSliceTest, ConstantStartSlicesLikeAStaticSlice) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[16,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %i = s32[] constant(3)
  %z = s32[] constant(0)
  ROOT %d = f32[10,8]{1,0} dynamic-slice(%a, %i, %z), dynamic_slice_sizes={10,8}, sharding={devices=[8,1]<=[8]}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CollectiveCount(p), CountOf(p, Opcode::kCollectivePermute)) << p.text;
  ExpectSameNumbers(p);
}

TEST(ShapeOpsDynamicUpdateSliceTest, UpdateOnShardedDimIsMaskedLocally) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[16,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %u = f32[5,3]{1,0} parameter(1), sharding={replicated}
  %i = s32[] parameter(2), sharding={replicated}
  %z = s32[] constant(0)
  ROOT %d = f32[16,3]{1,0} dynamic-update-slice(%a, %u, %i, %z), sharding={devices=[4,1]<=[4]}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  for (int64_t start : {0, 2, 6, 11, 14, -1}) {
    std::vector<Literal> inputs;
    inputs.push_back(Values(Shape(ElementType::kF32, {16, 3}), 0));
    inputs.push_back(Values(Shape(ElementType::kF32, {5, 3}), 7));
    inputs.push_back(S32Scalar(start));
    ExpectSameNumbers(p, std::move(inputs));
  }
}

TEST(ShapeOpsDynamicUpdateSliceTest, UnevenOperandTwoDimMesh) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[10,6]{1,0} parameter(0), sharding={devices=[4,2]<=[8]}
  %u = f32[3,6]{1,0} parameter(1), sharding={devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}
  %i = s32[] parameter(2), sharding={replicated}
  %z = s32[] constant(0)
  ROOT %d = f32[10,6]{1,0} dynamic-update-slice(%a, %u, %i, %z), sharding={devices=[4,2]<=[8]}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  for (int64_t start : {0, 2, 7, 9}) {
    std::vector<Literal> inputs;
    inputs.push_back(Values(Shape(ElementType::kF32, {10, 6}), 0));
    inputs.push_back(Values(Shape(ElementType::kF32, {3, 6}), 7));
    inputs.push_back(S32Scalar(start));
    ExpectSameNumbers(p, std::move(inputs));
  }
}

TEST(ShapeOpsDynamicUpdateSliceTest, TwoUpdatedDimsOneSharded) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[8,12]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %u = f32[2,5]{1,0} parameter(1), sharding={replicated}
  %i = s32[] parameter(2), sharding={replicated}
  %j = s32[] parameter(3), sharding={replicated}
  ROOT %d = f32[8,12]{1,0} dynamic-update-slice(%a, %u, %i, %j), sharding={devices=[1,4]<=[4]}
})");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  for (auto [i, j] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {3, 4}, {6, 7}, {7, 10}}) {
    std::vector<Literal> inputs;
    inputs.push_back(Values(Shape(ElementType::kF32, {8, 12}), 0));
    inputs.push_back(Values(Shape(ElementType::kF32, {2, 5}), 7));
    inputs.push_back(S32Scalar(i));
    inputs.push_back(S32Scalar(j));
    ExpectSameNumbers(p, std::move(inputs));
  }
}

}  // namespace
}  // namespace gspmd::shape_ops_test
