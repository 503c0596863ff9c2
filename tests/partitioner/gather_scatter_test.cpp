// Tests of the gather and scatter handlers: pass-through dims, vocabulary-sharded lookups
// (offset indices, masked rows, one all-reduce), scatter into a sharded operand, scatter from
// split indices (partial results reduced with the combiner), uneven dims and 2-D meshes; each
// partitioned program is run against the unpartitioned one, with some indices out of bounds.
#include <string>
#include <vector>

#include "partitioner/partition_test_harness.h"

namespace gspmd::partition_test {
namespace {

// ---- gather ----

const std::vector<PartitionCase> kGatherCases = {
    // A large table and few ids: gathering from the own rows and summing the results beats
    // gathering the table.
    {.name = "VocabularyShardedLookupMasksForeignRowsAndAllReduces",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %t = f32[512,16]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %ids = s32[4,2,1]{2,1,0} parameter(1), sharding={replicated}
  ROOT %g = f32[4,2,16]{2,1,0} gather(%t, %ids), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,16}, sharding={replicated}
})",
     .expect = {.collectives = 1, .counts = {{Opcode::kAllReduce, 1}}, .comm_bytes = 2.0 * 7 / 8 * 4 * 2 * 16 * 4},
     .check =
         [](const Partitioned& p) {
           const Instruction* gather = TheOnly(p, Opcode::kGather);
           if (gather != nullptr) EXPECT_EQ(gather->operand(0)->shape().dims(), (Dims{64, 16}));
         },
     .index_limit = 512},
    // tests/data/corpus/gspmd/embed_vocab_sharded: XLA all-reduces 28672 bytes.
    {.name = "CorpusEmbeddingCommunicatesNoMoreThanXla",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %t = f32[64,32]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %ids = s32[8,16,1]{2,1,0} parameter(1), sharding={replicated}
  ROOT %g = f32[8,16,32]{2,1,0} gather(%t, %ids), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,32}, sharding={replicated}
})",
     .expect = {.max_comm_bytes = 28672},
     .index_limit = 64},
    {.name = "UnevenVocabularyShards",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %t = f32[30,8]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %ids = s32[3]{0} parameter(1), sharding={replicated}
  ROOT %g = f32[3,8]{1,0} gather(%t, %ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}, sharding={replicated}
})",
     .expect = {.collectives = 1, .counts = {{Opcode::kAllReduce, 1}}},
     .index_limit = 30},
    {.name = "IndexPassThroughIsLocal",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %t = f32[20,8]{1,0} parameter(0), sharding={replicated}
  %ids = s32[16]{0} parameter(1), sharding={devices=[4]<=[4]}
  ROOT %g = f32[16,8]{1,0} gather(%t, %ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}, sharding={devices=[4,1]<=[4]}
})",
     .expect = {.collectives = 0},
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kGather), (Dims{4, 8})); },
     .index_limit = 20},
    {.name = "OperandPassThroughIsLocal",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %t = f32[20,32]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %ids = s32[6]{0} parameter(1), sharding={replicated}
  ROOT %g = f32[6,32]{1,0} gather(%t, %ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,32}, sharding={devices=[1,4]<=[4]}
})",
     .expect = {.collectives = 0},
     .check =
         [](const Partitioned& p) {
           const Instruction* gather = TheOnly(p, Opcode::kGather);
           if (gather != nullptr) EXPECT_EQ(gather->gather_slice_sizes(), (Dims{1, 8}));
         },
     .index_limit = 20},
    {.name = "UnevenOperandPassThrough",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %t = f32[20,30]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %ids = s32[6]{0} parameter(1), sharding={replicated}
  ROOT %g = f32[6,30]{1,0} gather(%t, %ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,30}, sharding={devices=[1,4]<=[4]}
})",
     .expect = {.collectives = 0},
     .index_limit = 20},
    // ids split over the 2-way data axis, the table's rows over the 4-way model axis: the
    // partial results are reduced within groups of 4.
    {.name = "VocabularyAndBatchOnATwoDimensionalMesh",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %t = f32[256,16]{1,0} parameter(0), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %ids = s32[8,3]{1,0} parameter(1), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  ROOT %g = f32[8,3,16]{2,1,0} gather(%t, %ids), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,16}, sharding={devices=[2,1,1,4]<=[8] last_tile_dim_replicate}
})",
     .expect = {.collectives = 1},
     .check =
         [](const Partitioned& p) {
           ExpectTheOnlyAllReduce(p, Dims{4, 3, 16}, std::vector<Dims>{{0, 1, 2, 3}, {4, 5, 6, 7}});
         },
     .index_limit = 256},
    {.name = "TwoComponentIndicesWithOneIndexedDimSharded",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %t = f32[64,6,4]{2,1,0} parameter(0), sharding={devices=[4,1,1]<=[4]}
  %ids = s32[5,2]{1,0} parameter(1), sharding={replicated}
  ROOT %g = f32[5,4]{1,0} gather(%t, %ids), offset_dims={1}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1,4}, sharding={replicated}
})",
     .expect = {.collectives = 1, .counts = {{Opcode::kAllReduce, 1}}},
     .index_limit = 64},
    {.name = "BatchingDimsPassThrough",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[8,10,3]{2,1,0} parameter(0), sharding={devices=[4,1,1]<=[4]}
  %ids = s32[8,5]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  ROOT %g = f32[8,5,3]{2,1,0} gather(%x, %ids), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,3}, sharding={devices=[4,1,1]<=[4]}
})",
     .expect = {.collectives = 0},
     .index_limit = 10},
    // A window of 3 rows can straddle shards: the operand's rows are gathered first.
    {.name = "PartlySlicedShardedDimIsGathered",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[16,4]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %ids = s32[5,1]{1,0} parameter(1), sharding={replicated}
  ROOT %g = f32[5,3,4]{2,1,0} gather(%x, %ids), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={3,4}, sharding={replicated}
})",
     .index_limit = 16},
};

PARTITION_CASE_TESTS(GatherPartitionTest, kGatherCases);

// ---- scatter ----

constexpr const char* kAddComputation = R"(
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
)";

constexpr const char* kMaxComputation = R"(
%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}
)";

constexpr const char* kAssignComputation = R"(
%assign (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  ROOT %b = f32[] parameter(1)
}
)";

std::string ScatterModule(int64_t partitions, const char* combiner, const std::string& body) {
  return "HloModule m, num_partitions=" + std::to_string(partitions) + "\n" + combiner + "\nENTRY e {\n" + body + "\n}\n";
}

const std::vector<PartitionCase> kScatterCases = {
    {.name = "ShardedOperandAppliesOwnUpdatesLocally",
     .hlo = ScatterModule(8, kAddComputation, R"(
  %x = f32[64,16]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %i = s32[10,1]{1,0} parameter(1), sharding={replicated}
  %u = f32[10,16]{1,0} parameter(2), sharding={replicated}
  ROOT %s = f32[64,16]{1,0} scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add, sharding={devices=[8,1]<=[8]})"),
     .expect = {.collectives = 0},
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kScatter), (Dims{8, 16})); },
     .index_limit = 64},
    {.name = "UnevenShardedOperand",
     .hlo = ScatterModule(4, kAssignComputation, R"(
  %x = f32[30,4]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %i = s32[7]{0} parameter(1), sharding={replicated}
  %u = f32[7,4]{1,0} parameter(2), sharding={replicated}
  ROOT %s = f32[30,4]{1,0} scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%assign, sharding={devices=[4,1]<=[4]})"),
     .expect = {.collectives = 0},
     .index_limit = 30},
    {.name = "ShardedUpdatesAddIntoIdentityAndAllReduce",
     .hlo = ScatterModule(4, kAddComputation, R"(
  %x = f32[16,8]{1,0} parameter(0), sharding={replicated}
  %i = s32[32,1]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %u = f32[32,8]{1,0} parameter(2), sharding={devices=[4,1]<=[4]}
  ROOT %s = f32[16,8]{1,0} scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add, sharding={replicated})"),
     .expect = {.collectives = 1, .counts = {{Opcode::kAllReduce, 1}}},
     .index_limit = 16},
    {.name = "UnevenShardedUpdatesMaskTheirPadding",
     .hlo = ScatterModule(4, kAddComputation, R"(
  %x = f32[16,8]{1,0} parameter(0), sharding={replicated}
  %i = s32[30,1]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %u = f32[30,8]{1,0} parameter(2), sharding={devices=[4,1]<=[4]}
  ROOT %s = f32[16,8]{1,0} scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add, sharding={replicated})"),
     .expect = {.collectives = 1},
     .index_limit = 16},
    {.name = "ScatterMaxReducesWithMaximum",
     .hlo = ScatterModule(4, kMaxComputation, R"(
  %x = f32[16,8]{1,0} parameter(0), sharding={replicated}
  %i = s32[32,1]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %u = f32[32,8]{1,0} parameter(2), sharding={devices=[4,1]<=[4]}
  ROOT %s = f32[16,8]{1,0} scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%max, sharding={replicated})"),
     .check =
         [](const Partitioned& p) {
           const Instruction* reduce = TheOnly(p, Opcode::kAllReduce);
           if (reduce != nullptr) EXPECT_EQ(reduce->to_apply()->root()->opcode(), Opcode::kMaximum);
         },
     .index_limit = 16},
    // A replacing combiner cannot be split over the updates: they are gathered instead.
    {.name = "AssignmentWithShardedIndicesGathersThem",
     .hlo = ScatterModule(4, kAssignComputation, R"(
  %x = f32[16,8]{1,0} parameter(0), sharding={replicated}
  %i = s32[8,1]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %u = f32[8,8]{1,0} parameter(2), sharding={devices=[4,1]<=[4]}
  ROOT %s = f32[16,8]{1,0} scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%assign, sharding={replicated})"),
     .expect = {.counts = {{Opcode::kAllReduce, 0}}},
     .index_limit = 16},
    {.name = "OperandPassThroughIsLocal",
     .hlo = ScatterModule(4, kAddComputation, R"(
  %x = f32[16,32]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %i = s32[5,1]{1,0} parameter(1), sharding={replicated}
  %u = f32[5,32]{1,0} parameter(2), sharding={devices=[1,4]<=[4]}
  ROOT %s = f32[16,32]{1,0} scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add, sharding={devices=[1,4]<=[4]})"),
     .expect = {.collectives = 0},
     .index_limit = 16},
    // Operand rows over the 2-way axis, updates over the 4-way axis (more updates than
    // operand rows, so reducing partial results beats gathering the updates).
    {.name = "ShardedOperandAndUpdatesOnATwoDimensionalMesh",
     .hlo = ScatterModule(8, kAddComputation, R"(
  %x = f32[32,8]{1,0} parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  %i = s32[64,1]{1,0} parameter(1), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %u = f32[64,8]{1,0} parameter(2), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  ROOT %s = f32[32,8]{1,0} scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add, sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate})"),
     .expect = {.collectives = 1},
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kAllReduce), (Dims{16, 8})); },
     .index_limit = 32},
    {.name = "BatchingDimsPassThrough",
     .hlo = ScatterModule(4, kAddComputation, R"(
  %x = f32[8,10,3]{2,1,0} parameter(0), sharding={devices=[4,1,1]<=[4]}
  %i = s32[8,5]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %u = f32[8,5,3]{2,1,0} parameter(2), sharding={devices=[4,1,1]<=[4]}
  ROOT %s = f32[8,10,3]{2,1,0} scatter(%x, %i, %u), update_window_dims={2}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, to_apply=%add, sharding={devices=[4,1,1]<=[4]})"),
     .expect = {.collectives = 0},
     .index_limit = 10},
};

PARTITION_CASE_TESTS(ScatterPartitionTest, kScatterCases);

}  // namespace
}  // namespace gspmd::partition_test
