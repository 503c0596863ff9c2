// Tests of the gather and scatter handlers: pass-through dims, vocabulary-sharded lookups
// (offset indices, masked rows, one all-reduce), scatter into a sharded operand, scatter from
// split indices (partial results reduced with the combiner), uneven dims and 2-D meshes; each
// partitioned program is run against the unpartitioned one.
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

namespace gspmd {
namespace {

struct Partitioned {
  std::unique_ptr<Module> original;
  std::unique_ptr<Module> module;  // the printed per-device program, parsed again
  std::string text;
};

Partitioned Partition(const std::string& hlo) {
  Partitioned out;
  out.original = ParseModule(hlo);
  PartitionResult result = PartitionModule(*out.original);
  for (const std::string& warning : result.warnings) ADD_FAILURE() << warning;
  out.text = PrintModule(*result.module);
  out.module = ParseModule(out.text, "partitioned.hlo");
  return out;
}

std::vector<const Instruction*> InstructionsWith(const Module& module, Opcode opcode) {
  std::vector<const Instruction*> found;
  for (const auto& computation : module.computations())
    for (const auto& instruction : computation->instructions())
      if (instruction->opcode() == opcode) found.push_back(instruction.get());
  return found;
}

int64_t CountOf(const Partitioned& p, Opcode opcode) {
  return static_cast<int64_t>(InstructionsWith(*p.module, opcode).size());
}

int64_t CollectiveCount(const Partitioned& p) {
  int64_t count = 0;
  for (Opcode opcode : {Opcode::kAllGather, Opcode::kAllReduce, Opcode::kReduceScatter, Opcode::kAllToAll,
                        Opcode::kCollectivePermute})
    count += CountOf(p, opcode);
  return count;
}

double CommBytes(const Partitioned& p) { return AnalyzeCommunication(*p.module).comm_bytes_per_device; }

// Floats in [-1, 1]; integers in [-3, index_limit + 3) so that some indices are out of bounds.
Literal Values(const Shape& shape, int64_t seed, int64_t index_limit) {
  Literal literal(shape);
  bool integer = IsInteger(shape.element_type());
  for (int64_t e = 0; e < literal.element_count(); ++e) {
    double value = integer ? static_cast<double>((e * 37 + seed * 11) % (index_limit + 6) - 3)
                           : std::sin(0.37 * static_cast<double>(e + 1) + 1.3 * static_cast<double>(seed));
    literal.SetFromDouble(e, value);
  }
  return literal;
}

void ExpectSameNumbers(const Partitioned& p, int64_t index_limit) {
  std::vector<Literal> inputs;
  const Computation* entry = p.original->entry();
  for (int64_t i = 0; i < entry->num_parameters(); ++i)
    inputs.push_back(Values(entry->parameter(i)->shape(), i, index_limit));
  Literal expected = EvaluateModule(*p.original, inputs);
  std::vector<Literal> outputs = RunSpmd(*p.module, inputs, OptionsFromLikeModule(*p.module, p.original.get()));
  ASSERT_EQ(outputs.size(), 1u);
  LiteralComparison comparison = CompareLiterals(outputs[0], expected, 1e-5);
  EXPECT_TRUE(comparison.matches) << comparison.message << "\n" << p.text;
}

// ---- gather ----

TEST(GatherPartitionTest, VocabularyShardedLookupMasksForeignRowsAndAllReduces) {
  // A large table and few ids: gathering from the own rows and summing the results beats
  // gathering the table.
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %t = f32[512,16]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %ids = s32[4,2,1]{2,1,0} parameter(1), sharding={replicated}
  ROOT %g = f32[4,2,16]{2,1,0} gather(%t, %ids), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,16}, sharding={replicated}
})");
  EXPECT_EQ(CountOf(p, Opcode::kAllReduce), 1) << p.text;
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  auto gathers = InstructionsWith(*p.module, Opcode::kGather);
  ASSERT_EQ(gathers.size(), 1u);
  EXPECT_EQ(gathers[0]->operand(0)->shape().dims(), (std::vector<int64_t>{64, 16}));
  EXPECT_DOUBLE_EQ(CommBytes(p), 2.0 * 7 / 8 * 4 * 2 * 16 * 4);
  ExpectSameNumbers(p, 512);
}

TEST(GatherPartitionTest, CorpusEmbeddingCommunicatesNoMoreThanXla) {
  // tests/data/corpus/gspmd/embed_vocab_sharded: XLA all-reduces 28672 bytes.
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %t = f32[64,32]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %ids = s32[8,16,1]{2,1,0} parameter(1), sharding={replicated}
  ROOT %g = f32[8,16,32]{2,1,0} gather(%t, %ids), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,32}, sharding={replicated}
})");
  EXPECT_LE(CommBytes(p), 28672) << p.text;
  ExpectSameNumbers(p, 64);
}

TEST(GatherPartitionTest, UnevenVocabularyShards) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %t = f32[30,8]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %ids = s32[3]{0} parameter(1), sharding={replicated}
  ROOT %g = f32[3,8]{1,0} gather(%t, %ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}, sharding={replicated}
})");
  EXPECT_EQ(CountOf(p, Opcode::kAllReduce), 1) << p.text;
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  ExpectSameNumbers(p, 30);
}

TEST(GatherPartitionTest, IndexPassThroughIsLocal) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %t = f32[20,8]{1,0} parameter(0), sharding={replicated}
  %ids = s32[16]{0} parameter(1), sharding={devices=[4]<=[4]}
  ROOT %g = f32[16,8]{1,0} gather(%t, %ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}, sharding={devices=[4,1]<=[4]}
})");
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  EXPECT_EQ(InstructionsWith(*p.module, Opcode::kGather)[0]->shape().dims(), (std::vector<int64_t>{4, 8}));
  ExpectSameNumbers(p, 20);
}

TEST(GatherPartitionTest, OperandPassThroughIsLocal) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %t = f32[20,32]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %ids = s32[6]{0} parameter(1), sharding={replicated}
  ROOT %g = f32[6,32]{1,0} gather(%t, %ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,32}, sharding={devices=[1,4]<=[4]}
})");
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  auto gathers = InstructionsWith(*p.module, Opcode::kGather);
  ASSERT_EQ(gathers.size(), 1u);
  EXPECT_EQ(gathers[0]->gather_slice_sizes(), (std::vector<int64_t>{1, 8}));
  ExpectSameNumbers(p, 20);
}

TEST(GatherPartitionTest, UnevenOperandPassThrough) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %t = f32[20,30]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %ids = s32[6]{0} parameter(1), sharding={replicated}
  ROOT %g = f32[6,30]{1,0} gather(%t, %ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,30}, sharding={devices=[1,4]<=[4]}
})");
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p, 20);
}

TEST(GatherPartitionTest, VocabularyAndBatchOnATwoDimensionalMesh) {
  // ids split over the 2-way data axis, the table's rows over the 4-way model axis: the
  // partial results are reduced within groups of 4.
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %t = f32[256,16]{1,0} parameter(0), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %ids = s32[8,3]{1,0} parameter(1), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  ROOT %g = f32[8,3,16]{2,1,0} gather(%t, %ids), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=2, slice_sizes={1,16}, sharding={devices=[2,1,1,4]<=[8] last_tile_dim_replicate}
})");
  auto reduces = InstructionsWith(*p.module, Opcode::kAllReduce);
  ASSERT_EQ(reduces.size(), 1u) << p.text;
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  EXPECT_EQ(reduces[0]->shape().dims(), (std::vector<int64_t>{4, 3, 16}));
  EXPECT_EQ(reduces[0]->replica_groups().Groups(8), (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  ExpectSameNumbers(p, 256);
}

TEST(GatherPartitionTest, TwoComponentIndicesWithOneIndexedDimSharded) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %t = f32[64,6,4]{2,1,0} parameter(0), sharding={devices=[4,1,1]<=[4]}
  %ids = s32[5,2]{1,0} parameter(1), sharding={replicated}
  ROOT %g = f32[5,4]{1,0} gather(%t, %ids), offset_dims={1}, collapsed_slice_dims={0,1}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1,4}, sharding={replicated}
})");
  EXPECT_EQ(CountOf(p, Opcode::kAllReduce), 1) << p.text;
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  ExpectSameNumbers(p, 64);
}

TEST(GatherPartitionTest, BatchingDimsPassThrough) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[8,10,3]{2,1,0} parameter(0), sharding={devices=[4,1,1]<=[4]}
  %ids = s32[8,5]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  ROOT %g = f32[8,5,3]{2,1,0} gather(%x, %ids), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,3}, sharding={devices=[4,1,1]<=[4]}
})");
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p, 10);
}

TEST(GatherPartitionTest, PartlySlicedShardedDimIsGathered) {
  // A window of 3 rows can straddle shards: the operand's rows are gathered first.
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[16,4]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %ids = s32[5,1]{1,0} parameter(1), sharding={replicated}
  ROOT %g = f32[5,3,4]{2,1,0} gather(%x, %ids), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={3,4}, sharding={replicated}
})");
  ExpectSameNumbers(p, 16);
}

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

TEST(ScatterPartitionTest, ShardedOperandAppliesOwnUpdatesLocally) {
  Partitioned p = Partition(ScatterModule(8, kAddComputation, R"(
  %x = f32[64,16]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %i = s32[10,1]{1,0} parameter(1), sharding={replicated}
  %u = f32[10,16]{1,0} parameter(2), sharding={replicated}
  ROOT %s = f32[64,16]{1,0} scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add, sharding={devices=[8,1]<=[8]})"));
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  EXPECT_EQ(InstructionsWith(*p.module, Opcode::kScatter)[0]->shape().dims(), (std::vector<int64_t>{8, 16}));
  ExpectSameNumbers(p, 64);
}

TEST(ScatterPartitionTest, UnevenShardedOperand) {
  Partitioned p = Partition(ScatterModule(4, kAssignComputation, R"(
  %x = f32[30,4]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %i = s32[7]{0} parameter(1), sharding={replicated}
  %u = f32[7,4]{1,0} parameter(2), sharding={replicated}
  ROOT %s = f32[30,4]{1,0} scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%assign, sharding={devices=[4,1]<=[4]})"));
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p, 30);
}

TEST(ScatterPartitionTest, ShardedUpdatesAddIntoIdentityAndAllReduce) {
  Partitioned p = Partition(ScatterModule(4, kAddComputation, R"(
  %x = f32[16,8]{1,0} parameter(0), sharding={replicated}
  %i = s32[32,1]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %u = f32[32,8]{1,0} parameter(2), sharding={devices=[4,1]<=[4]}
  ROOT %s = f32[16,8]{1,0} scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add, sharding={replicated})"));
  EXPECT_EQ(CountOf(p, Opcode::kAllReduce), 1) << p.text;
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  ExpectSameNumbers(p, 16);
}

TEST(ScatterPartitionTest, UnevenShardedUpdatesMaskTheirPadding) {
  Partitioned p = Partition(ScatterModule(4, kAddComputation, R"(
  %x = f32[16,8]{1,0} parameter(0), sharding={replicated}
  %i = s32[30,1]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %u = f32[30,8]{1,0} parameter(2), sharding={devices=[4,1]<=[4]}
  ROOT %s = f32[16,8]{1,0} scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add, sharding={replicated})"));
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  ExpectSameNumbers(p, 16);
}

TEST(ScatterPartitionTest, ScatterMaxReducesWithMaximum) {
  Partitioned p = Partition(ScatterModule(4, kMaxComputation, R"(
  %x = f32[16,8]{1,0} parameter(0), sharding={replicated}
  %i = s32[32,1]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %u = f32[32,8]{1,0} parameter(2), sharding={devices=[4,1]<=[4]}
  ROOT %s = f32[16,8]{1,0} scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%max, sharding={replicated})"));
  auto reduces = InstructionsWith(*p.module, Opcode::kAllReduce);
  ASSERT_EQ(reduces.size(), 1u) << p.text;
  EXPECT_EQ(reduces[0]->to_apply()->root()->opcode(), Opcode::kMaximum);
  ExpectSameNumbers(p, 16);
}

TEST(ScatterPartitionTest, AssignmentWithShardedIndicesGathersThem) {
  // A replacing combiner cannot be split over the updates: they are gathered instead.
  Partitioned p = Partition(ScatterModule(4, kAssignComputation, R"(
  %x = f32[16,8]{1,0} parameter(0), sharding={replicated}
  %i = s32[8,1]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %u = f32[8,8]{1,0} parameter(2), sharding={devices=[4,1]<=[4]}
  ROOT %s = f32[16,8]{1,0} scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%assign, sharding={replicated})"));
  EXPECT_EQ(CountOf(p, Opcode::kAllReduce), 0) << p.text;
  ExpectSameNumbers(p, 16);
}

TEST(ScatterPartitionTest, OperandPassThroughIsLocal) {
  Partitioned p = Partition(ScatterModule(4, kAddComputation, R"(
  %x = f32[16,32]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %i = s32[5,1]{1,0} parameter(1), sharding={replicated}
  %u = f32[5,32]{1,0} parameter(2), sharding={devices=[1,4]<=[4]}
  ROOT %s = f32[16,32]{1,0} scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add, sharding={devices=[1,4]<=[4]})"));
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p, 16);
}

TEST(ScatterPartitionTest, ShardedOperandAndUpdatesOnATwoDimensionalMesh) {
  // Operand rows over the 2-way axis, updates over the 4-way axis (more updates than
  // operand rows, so reducing partial results beats gathering the updates).
  Partitioned p = Partition(ScatterModule(8, kAddComputation, R"(
  %x = f32[32,8]{1,0} parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  %i = s32[64,1]{1,0} parameter(1), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %u = f32[64,8]{1,0} parameter(2), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  ROOT %s = f32[32,8]{1,0} scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add, sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate})"));
  auto reduces = InstructionsWith(*p.module, Opcode::kAllReduce);
  ASSERT_EQ(reduces.size(), 1u) << p.text;
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  EXPECT_EQ(reduces[0]->shape().dims(), (std::vector<int64_t>{16, 8}));
  ExpectSameNumbers(p, 32);
}

TEST(ScatterPartitionTest, BatchingDimsPassThrough) {
  Partitioned p = Partition(ScatterModule(4, kAddComputation, R"(
  %x = f32[8,10,3]{2,1,0} parameter(0), sharding={devices=[4,1,1]<=[4]}
  %i = s32[8,5]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %u = f32[8,5,3]{2,1,0} parameter(2), sharding={devices=[4,1,1]<=[4]}
  ROOT %s = f32[8,10,3]{2,1,0} scatter(%x, %i, %u), update_window_dims={2}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, to_apply=%add, sharding={devices=[4,1,1]<=[4]})"));
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p, 10);
}

}  // namespace
}  // namespace gspmd
