// Tests of two kinds of partial-sum producers the planner offers beside the dots that reduce:
// dots the dot handler would rather gather (small contracting operands), which stay partial
// when they are summed before anything needs them whole (a layer's q, k and v input
// gradients), and scatter-adds over split updates (the gradient of an embedding lookup),
// whose sum with another partial gradient of the same table (a tied output projection) is
// reduced once.
#include <string>
#include <vector>

#include "partitioner/partition_test_harness.h"

namespace gspmd::partition_test {
namespace {

// 4 devices in one axis; each dot contracts 8 elements split 4 ways, and gathering its two
// small operands (3/4 of 128 + 256 floats) costs less than all-reducing its [16,32] result
// (2 * 3/4 of 512 floats).
constexpr const char* kSplitCols = "{devices=[1,4]<=[4]}";
constexpr const char* kSplitRows = "{devices=[4,1]<=[4]}";
constexpr double kGatherBytes = 0.75 * (16 * 8 + 8 * 32) * 4;  // 1152
constexpr double kAllReduceBytes = 1.5 * 16 * 32 * 4;         // 3072

std::string SmallDot(const std::string& name, int64_t first_parameter) {
  const std::string a = std::to_string(first_parameter), w = std::to_string(first_parameter + 1);
  return "  %" + name + "_a = f32[16,8]{1,0} parameter(" + a + "), sharding=" + kSplitCols + "\n" + "  %" + name +
         "_w = f32[8,32]{1,0} parameter(" + w + "), sharding=" + kSplitRows + "\n" + "  %" + name +
         " = f32[16,32]{1,0} dot(%" + name + "_a, %" + name +
         "_w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}\n";
}

// One such dot feeding a non-linear op: gathering stays the cheaper way.
TEST(PartialSumProducersTest, ALoneSmallDotStillGathers) {
  const std::string hlo = "HloModule m, num_partitions=4\n\nENTRY e {\n" + SmallDot("q", 0) +
                          "  ROOT %t = f32[16,32]{1,0} tanh(%q), sharding={replicated}\n}\n";
  Partitioned p = Partition(hlo);
  EXPECT_EQ(CountOf(p, Opcode::kAllReduce), 0) << p.text;
  EXPECT_DOUBLE_EQ(CommBytes(p), kGatherBytes) << p.text;
  ExpectSameNumbers(p);
}

// Three such dots summed, then a non-linear op: the sum is reduced once instead of three
// dots gathered (3 x 1152 > 3072 bytes).
TEST(PartialSumProducersTest, SummedSmallDotsAreReducedOnce) {
  const std::string hlo = "HloModule m, num_partitions=4\n\nENTRY e {\n" + SmallDot("q", 0) + SmallDot("k", 2) +
                          SmallDot("v", 4) +
                          "  %qk = f32[16,32]{1,0} add(%q, %k), sharding={replicated}\n"
                          "  %qkv = f32[16,32]{1,0} add(%qk, %v), sharding={replicated}\n"
                          "  ROOT %t = f32[16,32]{1,0} tanh(%qkv), sharding={replicated}\n}\n";
  Partitioned p = Partition(hlo);
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 0) << p.text;
  ExpectTheOnlyAllReduce(p, {16, 32}, std::vector<Dims>{{0, 1, 2, 3}});
  EXPECT_DOUBLE_EQ(CommBytes(p), kAllReduceBytes) << p.text;
  ExpectSameNumbers(p);
}

// Two of them summed: 2 x 1152 < 3072, so both still gather.
TEST(PartialSumProducersTest, TwoSummedSmallDotsStillGather) {
  const std::string hlo = "HloModule m, num_partitions=4\n\nENTRY e {\n" + SmallDot("q", 0) + SmallDot("k", 2) +
                          "  %qk = f32[16,32]{1,0} add(%q, %k), sharding={replicated}\n"
                          "  ROOT %t = f32[16,32]{1,0} tanh(%qk), sharding={replicated}\n}\n";
  Partitioned p = Partition(hlo);
  EXPECT_EQ(CountOf(p, Opcode::kAllReduce), 0) << p.text;
  EXPECT_DOUBLE_EQ(CommBytes(p), 2 * kGatherBytes) << p.text;
  ExpectSameNumbers(p);
}

// A 2 (data) x 4 (model) mesh; a [16,8] table split over model on its rows. Its gradient has
// two parts, both summed over data: the scatter-add of the lookup's gradient (updates split
// over data by their batch dim) and the output projection's dot (contracting the batch).
constexpr const char* kTiedEmbedding = R"(HloModule m, num_partitions=8

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}

ENTRY e {
  %table = f32[16,8]{1,0} parameter(0), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %ids = s32[4,2]{1,0} parameter(1), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  %d_lookup = f32[4,2,8]{2,1,0} parameter(2), sharding={devices=[2,1,1,4]<=[8] last_tile_dim_replicate}
  %d_logits = f32[4,2,16]{2,1,0} parameter(3), sharding={devices=[2,1,4]<=[8]}
  %h = f32[4,2,8]{2,1,0} parameter(4), sharding={devices=[2,1,1,4]<=[8] last_tile_dim_replicate}
  %zero = f32[] constant(0), sharding={replicated}
  %zeros = f32[16,8]{1,0} broadcast(%zero), dimensions={}, sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %g_lookup = f32[16,8]{1,0} scatter(%zeros, %ids, %d_lookup), update_window_dims={2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=2, to_apply=%add, sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %g_logits = f32[16,8]{1,0} dot(%d_logits, %h), lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}, sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %g = f32[16,8]{1,0} add(%g_logits, %g_lookup), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %lr = f32[] constant(0.1), sharding={replicated}
  %lrs = f32[16,8]{1,0} broadcast(%lr), dimensions={}, sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %step = f32[16,8]{1,0} multiply(%lrs, %g), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  ROOT %new = f32[16,8]{1,0} subtract(%table, %step), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
}
)";

// The two parts are added before one all-reduce over data of the [4,8] shard.
TEST(PartialSumProducersTest, TiedEmbeddingGradientIsReducedOnce) {
  Partitioned p = Partition(kTiedEmbedding);
  ExpectTheOnlyAllReduce(p, {4, 8}, std::vector<Dims>{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  ExpectSameNumbers(p, {}, NumberCheck{.index_limit = 16});
}

}  // namespace
}  // namespace gspmd::partition_test
