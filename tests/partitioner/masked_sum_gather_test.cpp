// Tests of gathering by a masked sum: a dim mostly made of padding (a row or two split over
// many devices) is made whole by one all-reduce of each device's piece placed among zeros,
// in the reshard planner and in the slice handler. The sums must be exact bit for bit
// (-0.0, NaN and integers survive), and use XLA's bytes or fewer (oracle seeds 40049, 20273).
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "partitioner/partition_test_harness.h"
#include "partitioner/reshard_plan.h"

namespace gspmd::partition_test {
namespace {

TEST(MaskedSumGather, PaysOnlyOnDimsMostlyPadding) {
  EXPECT_TRUE(GatherByMaskedSum(1, 4));   // 2 elements summed against 4 gathered
  EXPECT_TRUE(GatherByMaskedSum(3, 8));   // 6 against 8
  EXPECT_FALSE(GatherByMaskedSum(1, 2));  // 2 against 2: the gather, as before
  EXPECT_FALSE(GatherByMaskedSum(5, 4));  // 10 against 8
  EXPECT_FALSE(GatherByMaskedSum(16, 8));
}

const std::vector<PartitionCase> kCases = {
    // Oracle seed 40049: the first element of a 4-way split vector, broadcast to all. XLA
    // all-reduces one element (6 B) where an all-gather moves four (12 B).
    {.name = "OneElementOfAFourWaySplitIsSummed",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = s32[16]{0} parameter(0), sharding={devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %s = s32[1]{0} slice(%a), slice={[0:1]}, sharding={devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %r = s32[] reshape(%s), sharding={replicated}
  ROOT %b = s32[16]{0} broadcast(%r), dimensions={}, sharding={devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
})",
     .expect = {.only = Opcode::kAllReduce, .comm_bytes = 6.0}},
    // Three rows split eight ways: five devices hold padding only.
    {.name = "ThreeRowsOverEightDevices",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[3,5]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT %c = f32[3,5]{1,0} copy(%a), sharding={replicated}
})",
     .expect = {.only = Opcode::kAllReduce, .comm_bytes = 2.0 * 7.0 / 8.0 * 60.0}},
    {.name = "PredicatesAreOred",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = pred[2,3]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  ROOT %c = pred[2,3]{1,0} copy(%a), sharding={replicated}
})",
     .expect = {.only = Opcode::kAllReduce}},
    // Two split dims of a 2-D mesh: the planner moves one axis to the long dim by an
    // all-to-all and sums over the other, 42 B, what one sum over all eight devices moves.
    {.name = "BothDimsOfATwoDimMesh",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = s32[1,1,6]{2,1,0} parameter(0), sharding={devices=[2,4,1]<=[8]}
  ROOT %c = s32[1,1,6]{2,1,0} copy(%a), sharding={replicated}
})",
     .expect = {.counts = {{Opcode::kAllReduce, 1}}, .max_comm_bytes = 42.0}},
    // Half the dim is real: gathering moves no more, so the all-gather stays.
    {.name = "EvenDimStaysAnAllGather",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[8,4]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT %c = f32[8,4]{1,0} copy(%a), sharding={replicated}
})",
     .expect = {.only = Opcode::kAllGather}},
    // Oracle seed 20273: a slice of a few rows of a split dim, wanted whole. Each device takes
    // the rows inside its piece and one all-reduce of the 2x8 result assembles them (2 x 7/8 x
    // 64 B), where a window exchange and then a gather move 144 B.
    {.name = "StridedSliceOfASplitDimToAReplicatedResult",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[32,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT %s = f32[2,8]{1,0} slice(%a), slice={[3:12:8], [0:8]}, sharding={replicated}
})",
     .expect = {.only = Opcode::kAllReduce, .comm_bytes = 2.0 * 7.0 / 8.0 * 64.0}},
    // Three rows: the window exchange, an all-to-all and a gather (144 B) beat the sum (168 B).
    {.name = "ThreeStridedRowsStayAnExchange",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[32,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT %s = f32[3,8]{1,0} slice(%a), slice={[2:27:10], [0:8]}, sharding={replicated}
})",
     .expect = {.counts = {{Opcode::kAllReduce, 0}}, .comm_bytes = 144.0}},
    {.name = "SliceOfTwoSplitDimsToAReplicatedResult",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = s32[16,12]{1,0} parameter(0), sharding={devices=[4,2]<=[8]}
  ROOT %s = s32[2,1]{1,0} slice(%a), slice={[5:7], [7:8]}, sharding={replicated}
})",
     .expect = {.only = Opcode::kAllReduce}},
};

PARTITION_CASE_TESTS(MaskedSumGatherTest, kCases, kDistinctNumbers);

// Bits of every element of an f32 literal.
std::vector<uint32_t> BitsOf(const Literal& literal) {
  std::vector<uint32_t> bits;
  for (int64_t e = 0; e < literal.element_count(); ++e)
    bits.push_back(std::bit_cast<uint32_t>(static_cast<float>(literal.GetAsDouble(e))));
  return bits;
}

// -0.0, NaN and infinities come through the sum unchanged: the zeros added are -0.0.
void ExpectBitExact(const std::string& hlo, const Shape& shape) {
  Partitioned p = Partition(hlo);
  ASSERT_EQ(CountOf(p, Opcode::kAllReduce), 1) << p.text;
  Literal input(shape);
  const double specials[] = {-0.0, 0.0, std::numeric_limits<double>::quiet_NaN(),
                             -std::numeric_limits<double>::infinity(), 1.5, -2.25};
  for (int64_t e = 0; e < input.element_count(); ++e) input.SetFromDouble(e, specials[e % 6]);
  std::vector<Literal> inputs;
  inputs.push_back(input);
  std::vector<Literal> expected = FlattenTuple(EvaluateModule(*p.original, inputs));
  std::optional<std::vector<Literal>> outputs = RunPartitioned(p, inputs);
  ASSERT_TRUE(outputs.has_value());
  ASSERT_EQ(outputs->size(), 1u);
  EXPECT_EQ(BitsOf((*outputs)[0]), BitsOf(expected[0])) << p.text;
  EXPECT_TRUE(std::signbit((*outputs)[0].GetAsDouble(0))) << "-0.0 became +0.0\n" << p.text;
}

TEST(MaskedSumGather, ReshardKeepsNegativeZeroAndNaN) {
  ExpectBitExact(R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[3,2]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT %c = f32[3,2]{1,0} copy(%a), sharding={replicated}
})",
                 Shape(ElementType::kF32, {3, 2}));
}

TEST(MaskedSumGather, SliceKeepsNegativeZeroAndNaN) {
  ExpectBitExact(R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[24,3]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT %s = f32[3,3]{1,0} slice(%a), slice={[0:13:6], [0:3]}, sharding={replicated}
})",
                 Shape(ElementType::kF32, {24, 3}));
}

}  // namespace
}  // namespace gspmd::partition_test
