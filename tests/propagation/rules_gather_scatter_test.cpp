// Tests for the gather and scatter propagation rules: operand pass-through, index
// pass-through, explicit batching dims and the embedding pattern.
#include <gtest/gtest.h>

#include "propagation/op_rules.h"
#include "rules_test_util.h"

namespace gspmd::propagation::testing {
namespace {

constexpr const char* kEmbedding = R"(
HloModule m, num_partitions=8
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  t = f32[64,32] parameter(0), sharding={devices=[8,1]<=[8]}
  ids = s32[8,16] parameter(1), sharding={replicated}
  g = f32[8,16,32] gather(t, ids), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,32}
  zeros = f32[64,32] parameter(2)
  upd = f32[8,16,32] parameter(3), sharding={devices=[2,1,4]<=[8]}
  sc = f32[64,32] scatter(zeros, ids, upd), update_window_dims={2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=2, to_apply=add
  ROOT r = (f32[8,16,32], f32[64,32]) tuple(g, sc)
}
)";

TEST(GatherRules, EmbeddingTableSplitOnVocabGivesReplicatedResult) {
  RuleHarness h(kEmbedding);
  EXPECT_TRUE(ProposalIs(h.Forward("g"), "{replicated}"));
}

TEST(GatherRules, OperandAndIndexPassThrough) {
  RuleHarness h(kEmbedding);
  h.Set("t", "{devices=[1,8]<=[8]}");
  EXPECT_TRUE(ProposalIs(h.Forward("g"), "{devices=[1,1,8]<=[8]}"));
  h.Set("t", "{devices=[2,4]<=[8]}");
  h.Set("ids", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  // Index batch dims from ids (d/4), offset dim from the table's dim 1 (d%4): they merge.
  EXPECT_TRUE(ProposalIs(h.Forward("g"), "{devices=[2,1,4]<=[8]}"));
}

TEST(GatherRules, Backward) {
  RuleHarness h(kEmbedding);
  EXPECT_TRUE(ProposalIs(h.Backward("g", 0, "{devices=[2,1,4]<=[8]}"),
                         "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"));
  EXPECT_TRUE(ProposalIs(h.Backward("g", 1, "{devices=[2,1,4]<=[8]}"),
                         "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"));
}

TEST(GatherRules, ExplicitBatchingDims) {
  RuleHarness h(R"(
HloModule m, num_partitions=4
ENTRY main {
  op = f32[4,64,32] parameter(0), sharding={devices=[4,1,1]<=[4]}
  idx = s32[4,16,1] parameter(1)
  ROOT g = f32[4,16,32] gather(op, idx), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,32}
}
)");
  EXPECT_TRUE(ProposalIs(h.Forward("g"), "{devices=[4,1,1]<=[4]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("g", 0, "{devices=[4,1,1]<=[4]}"), "{devices=[4,1,1]<=[4]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("g", 1, "{devices=[4,1,1]<=[4]}"), "{devices=[4,1,1]<=[4]}"));
}

TEST(GatherRules, IotaIndicesMakeParallelDims) {
  RuleHarness h(R"(
HloModule m, num_partitions=4
ENTRY main {
  op = f32[4,64] parameter(0), sharding={devices=[4,1]<=[4]}
  ids = s32[4,8,1] parameter(1)
  io = s32[4,8,1] iota(), iota_dimension=0
  idx = s32[4,8,2] concatenate(io, ids), dimensions={2}
  ROOT g = f32[4,8] gather(op, idx), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=2, slice_sizes={1,1}
}
)");
  EXPECT_TRUE(ProposalIs(h.Forward("g"), "{devices=[4,1]<=[4]}"));
  EXPECT_TRUE(ProposalIs(h.Backward("g", 0, "{devices=[4,1]<=[4]}"), "{devices=[4,1]<=[4]}"));
  // Without the iota the operand's split dim is indexed: nothing reaches the result.
  RuleHarness plain(R"(
HloModule m, num_partitions=4
ENTRY main {
  op = f32[4,64] parameter(0), sharding={devices=[4,1]<=[4]}
  idx = s32[4,8,2] parameter(1)
  ROOT g = f32[4,8] gather(op, idx), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=2, slice_sizes={1,1}
}
)");
  EXPECT_TRUE(ProposalIs(plain.Forward("g"), "{replicated}"));
}

TEST(ScatterRules, ForwardFromOperandAndUpdates) {
  RuleHarness h(kEmbedding);
  // Updates' window dim 2 (whole 32) reaches operand dim 1; the batch split does not.
  EXPECT_TRUE(ProposalIs(h.Forward("sc"), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"));
  h.Set("zeros", "{devices=[8,1]<=[8]}");
  h.Set("upd", "{unknown}");
  EXPECT_TRUE(ProposalIs(h.Forward("sc"), "{devices=[8,1]<=[8]}"));
}

TEST(ScatterRules, Backward) {
  RuleHarness h(kEmbedding);
  EXPECT_TRUE(ProposalIs(h.Backward("sc", 0, "{devices=[8,1]<=[8]}"), "{devices=[8,1]<=[8]}"));
  // Indices follow the updates' index batch dims.
  EXPECT_TRUE(ProposalIs(h.Backward("sc", 1, "{devices=[8,1]<=[8]}"),
                         "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"));
  // Updates take the operand's window dims from the result and batch dims from the indices.
  h.Set("ids", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  EXPECT_TRUE(ProposalIs(h.Backward("sc", 2, "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"),
                         "{devices=[2,1,4]<=[8]}"));
}

}  // namespace
}  // namespace gspmd::propagation::testing
