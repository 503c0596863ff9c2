// Tests of the dot handler: which collectives each strategy emits (kind, count, shapes) and
// that the partitioned program computes the same numbers as the unpartitioned one.
#include <string>
#include <vector>

#include "partitioner/partition_test_harness.h"
#include "support/diagnostic.h"

namespace gspmd::partition_test {
namespace {

const std::vector<PartitionCase> kCases = {
    {.name = "DataParallelMatmulNeedsNoCommunication",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16,32]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %w = f32[32,64]{1,0} parameter(1), sharding={replicated}
  ROOT %d = f32[16,64]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[8,1]<=[8]}
})",
     .expect = {.collectives = 0},
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kDot), (Dims{2, 64})); }},
    {.name = "BatchParallelBatchedDot",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[8,6,10]{2,1,0} parameter(0), sharding={devices=[8,1,1]<=[8]}
  %b = f32[8,10,4]{2,1,0} parameter(1), sharding={devices=[8,1,1]<=[8]}
  ROOT %d = f32[8,6,4]{2,1,0} dot(%a, %b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, sharding={devices=[8,1,1]<=[8]}
})",
     .expect = {.collectives = 0},
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kDot), (Dims{1, 6, 4})); }},
    {.name = "ContractingShardedGivesOneAllReduce",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16,64]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %w = f32[64,32]{1,0} parameter(1), sharding={devices=[8,1]<=[8]}
  ROOT %d = f32[16,32]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
})",
     .expect = {.collectives = 1, .comm_bytes = 3584},  // XLA's figure for the same program
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kAllReduce), (Dims{16, 32})); }},
    {.name = "ContractingShardedWithShardedOutputGivesReduceScatter",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16,64]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %w = f32[64,32]{1,0} parameter(1), sharding={devices=[8,1]<=[8]}
  ROOT %d = f32[16,32]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[8,1]<=[8]}
})",
     .expect = {.collectives = 1},
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kReduceScatter), (Dims{2, 32})); }},
    // M on the major axis of a 4x2 mesh, N on the minor one.
    {.name = "MatchingNonContractingDimsNeedNoCommunication",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16,32]{1,0} parameter(0), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
  %w = f32[32,64]{1,0} parameter(1), sharding={devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}
  ROOT %d = f32[16,64]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[4,2]<=[8]}
})",
     .expect = {.collectives = 0},
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kDot), (Dims{4, 32})); }},
    // The local dot computes only the device's tile, not the whole product.
    {.name = "ReplicatedOperandsAreSlicedForAShardedOutput",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16,32]{1,0} parameter(0), sharding={replicated}
  %w = f32[32,64]{1,0} parameter(1), sharding={replicated}
  ROOT %d = f32[16,64]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,4]<=[8]}
})",
     .expect = {.collectives = 0},
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kDot), (Dims{8, 16})); }},
    // K is split over the major 4-way axis; the output splits M over the minor 2-way axis.
    {.name = "PartiallyReplicatedOperandsReduceOverTheContractingAxisOnly",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16,64]{1,0} parameter(0), sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}
  %w = f32[64,32]{1,0} parameter(1), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
  ROOT %d = f32[16,32]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}
})",
     .expect = {.collectives = 1},
     .check =
         [](const Partitioned& p) {
           ExpectTheOnlyAllReduce(p, Dims{8, 32}, 2u);  // groups of 4 over the K axis
         }},
    // Batch on the 2-way axis, model on the 4-way axis: column- then row-parallel.
    {.name = "MegatronMlpOnTwoDimensionalMesh",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[8,16,32]{2,1,0} parameter(0), sharding={devices=[2,1,1,4]<=[8] last_tile_dim_replicate}
  %w1 = f32[32,128]{1,0} parameter(1), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %w2 = f32[128,32]{1,0} parameter(2), sharding={devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  %h = f32[8,16,128]{2,1,0} dot(%x, %w1), lhs_contracting_dims={2}, rhs_contracting_dims={0}, sharding={devices=[2,1,4]<=[8]}
  %t = f32[8,16,128]{2,1,0} tanh(%h), sharding={devices=[2,1,4]<=[8]}
  ROOT %y = f32[8,16,32]{2,1,0} dot(%t, %w2), lhs_contracting_dims={2}, rhs_contracting_dims={0}, sharding={devices=[2,1,1,4]<=[8] last_tile_dim_replicate}
})",
     .expect = {.collectives = 1},
     .check =
         [](const Partitioned& p) {
           ExpectTheOnlyAllReduce(p, Dims{4, 16, 32}, std::vector<Dims>{{0, 1, 2, 3}, {4, 5, 6, 7}});
         }},
    {.name = "AttentionScoresWithTwoBatchDims",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %q = f32[4,16,4,8]{3,2,1,0} parameter(0), sharding={devices=[2,1,4,1]<=[8]}
  %k = f32[4,16,4,8]{3,2,1,0} parameter(1), sharding={devices=[2,1,4,1]<=[8]}
  ROOT %s = f32[4,4,16,16]{3,2,1,0} dot(%q, %k), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, rhs_contracting_dims={3}, sharding={devices=[2,4,1,1]<=[8]}
})",
     .expect = {.collectives = 0}},
    // dW = x^T dy with x, dy batch-split: partial sums over the batch axis only.
    {.name = "WeightGradientReducesOverTheBatchAxis",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[4,16,32]{2,1,0} parameter(0), sharding={devices=[2,1,1,4]<=[8] last_tile_dim_replicate}
  %dy = f32[4,16,128]{2,1,0} parameter(1), sharding={devices=[2,1,4]<=[8]}
  ROOT %dw = f32[32,128]{1,0} dot(%x, %dy), lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}, sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}
})",
     .expect = {.collectives = 1, .comm_bytes = 4096},
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kAllReduce), (Dims{32, 32})); }},
    // lhs split on K, rhs split on N, output split on N: moving rhs to K (all-to-all) and
    // reduce-scattering is cheaper than gathering lhs, and neither operand is all-gathered.
    {.name = "ReshardsOneOperandInsteadOfGatheringBoth",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[32,64]{1,0} parameter(0), sharding={devices=[1,8]<=[8]}
  %w = f32[64,16]{1,0} parameter(1), sharding={devices=[1,8]<=[8]}
  ROOT %d = f32[32,16]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[1,8]<=[8]}
})",
     // Gathering lhs alone would send 7168 bytes.
     .expect = {.counts = {{Opcode::kAllGather, 0}}, .comm_bytes_below = 7168}},
    // Gathering x would send 3584 bytes; the local dot's result is 8x smaller.
    {.name = "KeepsTheShardedOperandWhenGatheringTheResultIsCheaper",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16,64]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %w = f32[64,8]{1,0} parameter(1), sharding={replicated}
  ROOT %d = f32[16,8]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
})",
     .expect = {.collectives = 1},
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kAllGather), (Dims{16, 8})); }},
    // Axes a (devices 4 apart), b (2 apart), c (adjacent): x = [B/a, S, K/b], w = [K/b, N/c],
    // y = [B/a, S, N/c]: partial sums over b only.
    {.name = "ThreeDimensionalMesh",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[4,6,16]{2,1,0} parameter(0), sharding={devices=[2,1,2,2]<=[8] last_tile_dim_replicate}
  %w = f32[16,10]{1,0} parameter(1), sharding={devices=[2,2,2]<=[2,2,2]T(1,2,0) last_tile_dim_replicate}
  ROOT %y = f32[4,6,10]{2,1,0} dot(%x, %w), lhs_contracting_dims={2}, rhs_contracting_dims={0}, sharding={devices=[2,1,2,2]<=[2,2,2]T(0,2,1) last_tile_dim_replicate}
})",
     .expect = {.collectives = 1},
     .check =
         [](const Partitioned& p) {
           ExpectTheOnlyAllReduce(p, Dims{2, 6, 5}, 4u);  // pairs over b
         }},
    // K = 10 over 4 devices: shards of 3, the last one with 2 padding elements. exp() turns the
    // padding into non-zero values, which must not reach the sum.
    {.name = "UnevenContractingDimIsMaskedBeforeTheLocalDot",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[6,10]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %w = f32[10,8]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %ex = f32[6,10]{1,0} exponential(%x), sharding={devices=[1,4]<=[4]}
  %ew = f32[10,8]{1,0} exponential(%w), sharding={devices=[4,1]<=[4]}
  ROOT %d = f32[6,8]{1,0} dot(%ex, %ew), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
})",
     .expect = {.collectives = 1, .at_least = {{Opcode::kSelect, 1}}},
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kAllReduce), (Dims{6, 8})); }},
    {.name = "UnevenFreeDims",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[7,12]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %w = f32[12,5]{1,0} parameter(1), sharding={replicated}
  ROOT %d = f32[7,5]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[4,1]<=[4]}
})",
     .expect = {.collectives = 0}},
    // The output is replicated over all 8 devices, but only the 2-way axis holds partial sums.
    {.name = "ContractingOverPartOfAReplicatedGroup",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[8,16]{1,0} parameter(0), sharding={devices=[1,2,4]<=[8] last_tile_dim_replicate}
  %w = f32[16,4]{1,0} parameter(1), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  ROOT %d = f32[8,4]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
})",
     .expect = {.collectives = 1},
     .check =
         [](const Partitioned& p) {
           const Instruction* reduce = TheOnly(p, Opcode::kAllReduce);
           if (reduce != nullptr) EXPECT_EQ(reduce->replica_groups().Groups(8).size(), 4u);
         }},
    // Experts split 8 ways; the result is wanted split on its group dim instead: one all-to-all
    // over all 8 devices (not one per factor of 8 plus a permute).
    {.name = "ExpertParallelResultMovesToAnotherDimWithOneAllToAll",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %h = f32[8,8,4,32]{3,2,1,0} parameter(0), sharding={devices=[8,1,1,1]<=[8]}
  %w = f32[8,32,16]{2,1,0} parameter(1), sharding={devices=[8,1,1]<=[8]}
  ROOT %y = f32[8,8,4,16]{3,2,1,0} dot(%h, %w), lhs_batch_dims={0}, lhs_contracting_dims={3}, rhs_batch_dims={0}, rhs_contracting_dims={1}, sharding={devices=[1,8,1,1]<=[8]}
})",
     .expect = {.collectives = 1, .counts = {{Opcode::kAllToAll, 1}}, .comm_bytes = 1792}},
    {.name = "ReplicatedOperandsUnevenShardedOutput",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[10,12]{1,0} parameter(0), sharding={replicated}
  %w = f32[12,6]{1,0} parameter(1), sharding={replicated}
  ROOT %d = f32[10,6]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[4,1]<=[4]}
})",
     .expect = {.collectives = 0},
     .check = [](const Partitioned& p) { EXPECT_EQ(DimsOfOnly(p, Opcode::kDot), (Dims{3, 6})); }},
    // Partial sums over 4 devices, result split 2 ways: reduce-scatter over the major pair
    // (128 bytes) then all-reduce over the minor pair (128 bytes), cheaper than one all-reduce.
    {.name = "BfloatOperandsWithFloatResult",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %x = bf16[8,16]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %w = bf16[16,8]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  ROOT %d = f32[8,8]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
})",
     .expect = {.counts = {{Opcode::kReduceScatter, 1}, {Opcode::kAllReduce, 1}, {Opcode::kAllGather, 0}},
                .comm_bytes = 256}},
    // A weight gradient on a 16 x 2 mesh: partial over the whole 16-way axis x (cut into four
    // prime pieces by the planner), wanted split over x. One reduce-scatter over x, as XLA
    // emits, not one over the major pair of x followed by one over the other 8.
    {.name = "PartialOverAWholeSixteenWayAxisIsReduceScatteredOnce",
     .hlo = R"(HloModule m, num_partitions=32
ENTRY e {
  %a = f32[32,6]{1,0} parameter(0), sharding={devices=[16,2]<=[32]}
  %b = f32[32,16]{1,0} parameter(1), sharding={devices=[16,1,2]<=[32] last_tile_dim_replicate}
  ROOT %d = f32[6,16]{1,0} dot(%a, %b), lhs_contracting_dims={0}, rhs_contracting_dims={0}, sharding={devices=[2,16]<=[16,2]T(1,0)}
})",
     .expect = {.collectives = 1, .counts = {{Opcode::kReduceScatter, 1}}},
     .check =
         [](const Partitioned& p) {
           EXPECT_EQ(DimsOfOnly(p, Opcode::kReduceScatter), (Dims{3, 1}));
           const Instruction* scatter = TheOnly(p, Opcode::kReduceScatter);
           ASSERT_NE(scatter, nullptr);
           const std::vector<Dims> groups = scatter->replica_groups().Groups(32);
           ASSERT_EQ(groups.size(), 2u);  // {0,2,...,30} and {1,3,...,31}: the devices along x
           EXPECT_EQ(groups[0], (Dims{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30}));
         }},
    // A broadcast of a replicated value is made in any layout for free: the dot gathers the
    // small split operand (4 B) instead of summing partial products over the split dim (144 B
    // of all-reduce, the broadcast's split followed). Oracle seed 121504.
    {.name = "BroadcastOfAReplicatedValueIsLaidOutAsTheDotChooses",
     .hlo = R"(HloModule m, num_partitions=2
ENTRY %main (i: s32[2,1], v: s32[6]) -> s32[1,6,6] {
  %i = s32[2,1]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}
  %v = s32[6]{0} parameter(1), sharding={replicated}
  %b = s32[2,6,6]{2,1,0} broadcast(%v), dimensions={2}, sharding={devices=[2,1,1]<=[2]}
  ROOT %d = s32[1,6,6]{2,1,0} dot(%i, %b), lhs_contracting_dims={0}, rhs_contracting_dims={0}, sharding={replicated}
})",
     .expect = {.only = Opcode::kAllGather, .comm_bytes = 4}},
};

PARTITION_CASE_TESTS(DotPartitionTest, kCases);

void ReplaceAll(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// Partitions `program` with LHS, RHS and OUT standing for every combination of `layouts`: the
// numbers must match (and no warning may say that something was fully rematerialized).
void SweepLayouts(const std::vector<std::string>& layouts, const std::string& program) {
  for (const std::string& lhs : layouts) {
    for (const std::string& rhs : layouts) {
      for (const std::string& out : layouts) {
        SCOPED_TRACE(lhs + " x " + rhs + " -> " + out);
        std::string text = program;
        ReplaceAll(text, "LHS", lhs);
        ReplaceAll(text, "RHS", rhs);
        ReplaceAll(text, "OUT", out);
        ExpectSameNumbers(Partition(text));
      }
    }
  }
}

// Every combination of a few layouts of lhs, rhs and result, on dims that do not divide evenly.
TEST(DotPartitionTest, LayoutSweepOnUnevenDims) {
  SweepLayouts(
      {
          "{replicated}",
          "{devices=[8,1]<=[8]}",
          "{devices=[1,8]<=[8]}",
          "{devices=[2,4]<=[8]}",
          "{devices=[4,2]<=[2,4]T(1,0)}",
          "{devices=[1,2,4]<=[8] last_tile_dim_replicate}",
          "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
      },
      R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[6,10]{1,0} parameter(0), sharding=LHS
  %w = f32[10,5]{1,0} parameter(1), sharding=RHS
  %ex = f32[6,10]{1,0} exponential(%x), sharding=LHS
  %ew = f32[10,5]{1,0} exponential(%w), sharding=RHS
  ROOT %d = f32[6,5]{1,0} dot(%ex, %ew), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding=OUT
})");
}

// The same for a batched dot on a 2x2x2 mesh.
TEST(DotPartitionTest, BatchedLayoutSweepOnThreeDimensionalMesh) {
  SweepLayouts(
      {
          "{replicated}",
          "{devices=[2,1,2,2]<=[8] last_tile_dim_replicate}",
          "{devices=[1,2,2,2]<=[2,2,2]T(2,1,0) last_tile_dim_replicate}",
          "{devices=[2,2,2]<=[8]}",
          "{devices=[1,1,8]<=[8]}",
      },
      R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[4,6,10]{2,1,0} parameter(0), sharding=LHS
  %w = f32[4,10,5]{2,1,0} parameter(1), sharding=RHS
  %ex = f32[4,6,10]{2,1,0} exponential(%x), sharding=LHS
  %ew = f32[4,10,5]{2,1,0} exponential(%w), sharding=RHS
  ROOT %d = f32[4,6,5]{2,1,0} dot(%ex, %ew), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, sharding=OUT
})");
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
}  // namespace gspmd::partition_test
