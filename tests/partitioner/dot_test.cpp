// Tests of the dot handler: which collectives each strategy emits (kind, count, shapes) and
// that the partitioned program computes the same numbers as the unpartitioned one.
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
#include "support/diagnostic.h"
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

std::vector<int64_t> DimsOfOnly(const Partitioned& p, Opcode opcode) {
  auto found = InstructionsWith(*p.module, opcode);
  EXPECT_EQ(found.size(), 1u) << p.text;
  if (found.size() != 1) return {};
  return found[0]->shape().dims();
}

// Deterministic values in [-1, 1] that differ between parameters.
Literal Values(const Shape& shape, int64_t seed) {
  Literal literal(shape);
  for (int64_t e = 0; e < literal.element_count(); ++e)
    literal.SetFromDouble(e, std::sin(0.37 * static_cast<double>(e + 1) + 1.3 * static_cast<double>(seed)));
  return literal;
}

void ExpectSameNumbers(const Partitioned& p) {
  std::vector<Literal> inputs;
  const Computation* entry = p.original->entry();
  for (int64_t i = 0; i < entry->num_parameters(); ++i) inputs.push_back(Values(entry->parameter(i)->shape(), i));
  Literal expected = EvaluateModule(*p.original, inputs);
  std::vector<Literal> outputs = RunSpmd(*p.module, inputs, OptionsFromLikeModule(*p.module, p.original.get()));
  ASSERT_EQ(outputs.size(), 1u);
  LiteralComparison comparison = CompareLiterals(outputs[0], expected, 1e-5);
  EXPECT_TRUE(comparison.matches) << comparison.message << "\n" << p.text;
}

double CommBytes(const Partitioned& p) { return AnalyzeCommunication(*p.module).comm_bytes_per_device; }

TEST(DotPartitionTest, DataParallelMatmulNeedsNoCommunication) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16,32]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %w = f32[32,64]{1,0} parameter(1), sharding={replicated}
  ROOT %d = f32[16,64]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[8,1]<=[8]}
})");
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ASSERT_EQ(CountOf(p, Opcode::kDot), 1);
  EXPECT_EQ(InstructionsWith(*p.module, Opcode::kDot)[0]->shape().dims(), (std::vector<int64_t>{2, 64}));
  ExpectSameNumbers(p);
}

TEST(DotPartitionTest, BatchParallelBatchedDot) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[8,6,10]{2,1,0} parameter(0), sharding={devices=[8,1,1]<=[8]}
  %b = f32[8,10,4]{2,1,0} parameter(1), sharding={devices=[8,1,1]<=[8]}
  ROOT %d = f32[8,6,4]{2,1,0} dot(%a, %b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, sharding={devices=[8,1,1]<=[8]}
})");
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  EXPECT_EQ(InstructionsWith(*p.module, Opcode::kDot)[0]->shape().dims(), (std::vector<int64_t>{1, 6, 4}));
  ExpectSameNumbers(p);
}

TEST(DotPartitionTest, ContractingShardedGivesOneAllReduce) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16,64]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %w = f32[64,32]{1,0} parameter(1), sharding={devices=[8,1]<=[8]}
  ROOT %d = f32[16,32]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
})");
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  EXPECT_EQ(DimsOfOnly(p, Opcode::kAllReduce), (std::vector<int64_t>{16, 32}));
  EXPECT_DOUBLE_EQ(CommBytes(p), 3584);  // XLA's figure for the same program
  ExpectSameNumbers(p);
}

TEST(DotPartitionTest, ContractingShardedWithShardedOutputGivesReduceScatter) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16,64]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %w = f32[64,32]{1,0} parameter(1), sharding={devices=[8,1]<=[8]}
  ROOT %d = f32[16,32]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[8,1]<=[8]}
})");
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  EXPECT_EQ(DimsOfOnly(p, Opcode::kReduceScatter), (std::vector<int64_t>{2, 32}));
  ExpectSameNumbers(p);
}

TEST(DotPartitionTest, MatchingNonContractingDimsNeedNoCommunication) {
  // M on the major axis of a 4x2 mesh, N on the minor one.
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16,32]{1,0} parameter(0), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
  %w = f32[32,64]{1,0} parameter(1), sharding={devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}
  ROOT %d = f32[16,64]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[4,2]<=[8]}
})");
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  EXPECT_EQ(InstructionsWith(*p.module, Opcode::kDot)[0]->shape().dims(), (std::vector<int64_t>{4, 32}));
  ExpectSameNumbers(p);
}

TEST(DotPartitionTest, ReplicatedOperandsAreSlicedForAShardedOutput) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16,32]{1,0} parameter(0), sharding={replicated}
  %w = f32[32,64]{1,0} parameter(1), sharding={replicated}
  ROOT %d = f32[16,64]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,4]<=[8]}
})");
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  // The local dot computes only the device's tile, not the whole product.
  EXPECT_EQ(InstructionsWith(*p.module, Opcode::kDot)[0]->shape().dims(), (std::vector<int64_t>{8, 16}));
  ExpectSameNumbers(p);
}

TEST(DotPartitionTest, PartiallyReplicatedOperandsReduceOverTheContractingAxisOnly) {
  // K is split over the major 4-way axis; the output splits M over the minor 2-way axis.
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16,64]{1,0} parameter(0), sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}
  %w = f32[64,32]{1,0} parameter(1), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
  ROOT %d = f32[16,32]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}
})");
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  auto reduces = InstructionsWith(*p.module, Opcode::kAllReduce);
  ASSERT_EQ(reduces.size(), 1u) << p.text;
  EXPECT_EQ(reduces[0]->shape().dims(), (std::vector<int64_t>{8, 32}));
  EXPECT_EQ(reduces[0]->replica_groups().Groups(8).size(), 2u);  // groups of 4 over the K axis
  ExpectSameNumbers(p);
}

TEST(DotPartitionTest, MegatronMlpOnTwoDimensionalMesh) {
  // Batch on the 2-way axis, model on the 4-way axis: column- then row-parallel.
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[8,16,32]{2,1,0} parameter(0), sharding={devices=[2,1,1,4]<=[8] last_tile_dim_replicate}
  %w1 = f32[32,128]{1,0} parameter(1), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %w2 = f32[128,32]{1,0} parameter(2), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %h = f32[8,16,128]{2,1,0} dot(%x, %w1), lhs_contracting_dims={2}, rhs_contracting_dims={0}, sharding={devices=[2,1,4]<=[8]}
  %t = f32[8,16,128]{2,1,0} tanh(%h), sharding={devices=[2,1,4]<=[8]}
  ROOT %y = f32[8,16,32]{2,1,0} dot(%t, %w2), lhs_contracting_dims={2}, rhs_contracting_dims={0}, sharding={devices=[2,1,1,4]<=[8] last_tile_dim_replicate}
})");
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  auto reduces = InstructionsWith(*p.module, Opcode::kAllReduce);
  ASSERT_EQ(reduces.size(), 1u) << p.text;
  EXPECT_EQ(reduces[0]->shape().dims(), (std::vector<int64_t>{4, 16, 32}));
  EXPECT_EQ(reduces[0]->replica_groups().Groups(8),
            (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  ExpectSameNumbers(p);
}

TEST(DotPartitionTest, AttentionScoresWithTwoBatchDims) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %q = f32[4,16,4,8]{3,2,1,0} parameter(0), sharding={devices=[2,1,4,1]<=[8]}
  %k = f32[4,16,4,8]{3,2,1,0} parameter(1), sharding={devices=[2,1,4,1]<=[8]}
  ROOT %s = f32[4,4,16,16]{3,2,1,0} dot(%q, %k), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}, sharding={devices=[2,4,1,1]<=[8]}
})");
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p);
}

TEST(DotPartitionTest, WeightGradientReducesOverTheBatchAxis) {
  // dW = x^T dy with x, dy batch-split: partial sums over the batch axis only.
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[4,16,32]{2,1,0} parameter(0), sharding={devices=[2,1,1,4]<=[8] last_tile_dim_replicate}
  %dy = f32[4,16,128]{2,1,0} parameter(1), sharding={devices=[2,1,4]<=[8]}
  ROOT %dw = f32[32,128]{1,0} dot(%x, %dy), lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}, sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
})");
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  EXPECT_EQ(DimsOfOnly(p, Opcode::kAllReduce), (std::vector<int64_t>{32, 32}));
  EXPECT_DOUBLE_EQ(CommBytes(p), 4096);
  ExpectSameNumbers(p);
}

TEST(DotPartitionTest, ReshardsOneOperandInsteadOfGatheringBoth) {
  // lhs split on K, rhs split on N, output split on N: moving rhs to K (all-to-all) and
  // reduce-scattering is cheaper than gathering lhs, and neither operand is all-gathered.
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[32,64]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %w = f32[64,16]{1,0} parameter(1), sharding={devices=[1,8]<=[8]}
  ROOT %d = f32[32,16]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[1,8]<=[8]}
})");
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 0) << p.text;
  EXPECT_LT(CommBytes(p), 7168);  // gathering lhs alone would send 7168 bytes
  ExpectSameNumbers(p);
}

TEST(DotPartitionTest, KeepsTheShardedOperandWhenGatheringTheResultIsCheaper) {
  // Gathering x would send 3584 bytes; the local dot's result is 8x smaller.
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16,64]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %w = f32[64,8]{1,0} parameter(1), sharding={replicated}
  ROOT %d = f32[16,8]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
})");
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  EXPECT_EQ(DimsOfOnly(p, Opcode::kAllGather), (std::vector<int64_t>{16, 8}));
  ExpectSameNumbers(p);
}

TEST(DotPartitionTest, ThreeDimensionalMesh) {
  // Axes a (devices 4 apart), b (2 apart), c (adjacent): x = [B/a, S, K/b], w = [K/b, N/c],
  // y = [B/a, S, N/c]: partial sums over b only.
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[4,6,16]{2,1,0} parameter(0), sharding={devices=[2,1,2,2]<=[8] last_tile_dim_replicate}
  %w = f32[16,10]{1,0} parameter(1), sharding={devices=[2,2,2]<=[2,2,2]T(1,2,0) last_tile_dim_replicate}
  ROOT %y = f32[4,6,10]{2,1,0} dot(%x, %w), lhs_contracting_dims={2}, rhs_contracting_dims={0}, sharding={devices=[2,1,2,2]<=[2,2,2]T(0,2,1) last_tile_dim_replicate}
})");
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  auto reduces = InstructionsWith(*p.module, Opcode::kAllReduce);
  ASSERT_EQ(reduces.size(), 1u) << p.text;
  EXPECT_EQ(reduces[0]->shape().dims(), (std::vector<int64_t>{2, 6, 5}));
  EXPECT_EQ(reduces[0]->replica_groups().Groups(8).size(), 4u);  // pairs over b
  ExpectSameNumbers(p);
}

TEST(DotPartitionTest, UnevenContractingDimIsMaskedBeforeTheLocalDot) {
  // K = 10 over 4 devices: shards of 3, the last one with 2 padding elements. exp() turns the
  // padding into non-zero values, which must not reach the sum.
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[6,10]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %w = f32[10,8]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %ex = f32[6,10]{1,0} exponential(%x), sharding={devices=[1,4]<=[4]}
  %ew = f32[10,8]{1,0} exponential(%w), sharding={devices=[4,1]<=[4]}
  ROOT %d = f32[6,8]{1,0} dot(%ex, %ew), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
})");
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  EXPECT_EQ(DimsOfOnly(p, Opcode::kAllReduce), (std::vector<int64_t>{6, 8}));
  EXPECT_GE(CountOf(p, Opcode::kSelect), 1) << p.text;
  ExpectSameNumbers(p);
}

TEST(DotPartitionTest, UnevenFreeDims) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[7,12]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %w = f32[12,5]{1,0} parameter(1), sharding={replicated}
  ROOT %d = f32[7,5]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[4,1]<=[4]}
})");
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  ExpectSameNumbers(p);
}

TEST(DotPartitionTest, ContractingOverPartOfAReplicatedGroup) {
  // The output is replicated over all 8 devices, but only the 2-way axis holds partial sums.
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[8,16]{1,0} parameter(0), sharding={devices=[1,2,4]<=[8] last_tile_dim_replicate}
  %w = f32[16,4]{1,0} parameter(1), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  ROOT %d = f32[8,4]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
})");
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  auto reduces = InstructionsWith(*p.module, Opcode::kAllReduce);
  ASSERT_EQ(reduces.size(), 1u) << p.text;
  EXPECT_EQ(reduces[0]->replica_groups().Groups(8).size(), 4u);
  ExpectSameNumbers(p);
}

TEST(DotPartitionTest, ExpertParallelResultMovesToAnotherDimWithOneAllToAll) {
  // Experts split 8 ways; the result is wanted split on its group dim instead: one all-to-all
  // over all 8 devices (not one per factor of 8 plus a permute).
  Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %h = f32[8,8,4,32]{3,2,1,0} parameter(0), sharding={devices=[8,1,1,1]<=[8]}
  %w = f32[8,32,16]{2,1,0} parameter(1), sharding={devices=[8,1,1]<=[8]}
  ROOT %y = f32[8,8,4,16]{3,2,1,0} dot(%h, %w), lhs_batch_dims={0}, lhs_contracting_dims={3}, rhs_batch_dims={0}, rhs_contracting_dims={1}, sharding={devices=[1,8,1,1]<=[8]}
})");
  EXPECT_EQ(CollectiveCount(p), 1) << p.text;
  EXPECT_EQ(CountOf(p, Opcode::kAllToAll), 1) << p.text;
  EXPECT_DOUBLE_EQ(CommBytes(p), 1792);
  ExpectSameNumbers(p);
}

TEST(DotPartitionTest, ReplicatedOperandsUnevenShardedOutput) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[10,12]{1,0} parameter(0), sharding={replicated}
  %w = f32[12,6]{1,0} parameter(1), sharding={replicated}
  ROOT %d = f32[10,6]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[4,1]<=[4]}
})");
  EXPECT_EQ(CollectiveCount(p), 0) << p.text;
  EXPECT_EQ(InstructionsWith(*p.module, Opcode::kDot)[0]->shape().dims(), (std::vector<int64_t>{3, 6}));
  ExpectSameNumbers(p);
}

TEST(DotPartitionTest, BfloatOperandsWithFloatResult) {
  Partitioned p = Partition(R"(HloModule m, num_partitions=4
ENTRY e {
  %x = bf16[8,16]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %w = bf16[16,8]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  ROOT %d = f32[8,8]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
})");
  // Partial sums over 4 devices, result split 2 ways: reduce-scatter over the major pair
  // (128 bytes) then all-reduce over the minor pair (128 bytes), cheaper than one all-reduce.
  EXPECT_EQ(CountOf(p, Opcode::kReduceScatter), 1) << p.text;
  EXPECT_EQ(CountOf(p, Opcode::kAllReduce), 1) << p.text;
  EXPECT_EQ(CountOf(p, Opcode::kAllGather), 0) << p.text;
  EXPECT_DOUBLE_EQ(CommBytes(p), 256);
  ExpectSameNumbers(p);
}

// Every combination of a few layouts of lhs, rhs and result, on dims that do not divide
// evenly: the numbers must match and nothing may be fully rematerialized.
TEST(DotPartitionTest, LayoutSweepOnUnevenDims) {
  const std::vector<std::string> layouts = {
      "{replicated}",
      "{devices=[8,1]<=[8]}",
      "{devices=[1,8]<=[8]}",
      "{devices=[2,4]<=[8]}",
      "{devices=[4,2]<=[2,4]T(1,0)}",
      "{devices=[1,2,4]<=[8] last_tile_dim_replicate}",
      "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
  };
  for (const std::string& lhs : layouts) {
    for (const std::string& rhs : layouts) {
      for (const std::string& out : layouts) {
        SCOPED_TRACE(lhs + " x " + rhs + " -> " + out);
        Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[6,10]{1,0} parameter(0), sharding=)" + lhs + R"(
  %w = f32[10,5]{1,0} parameter(1), sharding=)" + rhs + R"(
  %ex = f32[6,10]{1,0} exponential(%x), sharding=)" + lhs + R"(
  %ew = f32[10,5]{1,0} exponential(%w), sharding=)" + rhs + R"(
  ROOT %d = f32[6,5]{1,0} dot(%ex, %ew), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding=)" + out + R"(
})");
        ExpectSameNumbers(p);
      }
    }
  }
}

// The same for a batched dot on a 2x2x2 mesh.
TEST(DotPartitionTest, BatchedLayoutSweepOnThreeDimensionalMesh) {
  const std::vector<std::string> layouts = {
      "{replicated}",
      "{devices=[2,1,2,2]<=[8] last_tile_dim_replicate}",
      "{devices=[1,2,2,2]<=[2,2,2]T(2,1,0) last_tile_dim_replicate}",
      "{devices=[2,2,2]<=[8]}",
      "{devices=[1,1,8]<=[8]}",
  };
  for (const std::string& lhs : layouts) {
    for (const std::string& rhs : layouts) {
      for (const std::string& out : layouts) {
        SCOPED_TRACE(lhs + " x " + rhs + " -> " + out);
        Partitioned p = Partition(R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[4,6,10]{2,1,0} parameter(0), sharding=)" + lhs + R"(
  %w = f32[4,10,5]{2,1,0} parameter(1), sharding=)" + rhs + R"(
  %ex = f32[4,6,10]{2,1,0} exponential(%x), sharding=)" + lhs + R"(
  %ew = f32[4,10,5]{2,1,0} exponential(%w), sharding=)" + rhs + R"(
  ROOT %d = f32[4,6,5]{2,1,0} dot(%ex, %ew), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, sharding=)" + out + R"(
})");
        ExpectSameNumbers(p);
      }
    }
  }
}

TEST(DotPartitionTest, MismatchedContractingSizesAreAUserError) {
  const std::string text = R"(HloModule m, num_partitions=2
ENTRY e {
  %x = f32[4,6]{1,0} parameter(0), sharding={devices=[1,2]<=[2]}
  %w = f32[5,3]{1,0} parameter(1), sharding={devices=[2,1]<=[2]}
  ROOT %d = f32[4,3]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
})";
  EXPECT_THROW(PartitionModule(*ParseModule(text)), UserError);
}

}  // namespace
}  // namespace gspmd
