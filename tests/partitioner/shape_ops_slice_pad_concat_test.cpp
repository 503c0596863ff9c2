// Partitioning tests for slice, pad and concatenate along sharded dims: halo exchanges with
// collective-permutes (never a full replication), communication no more than XLA's on the
// same programs, and the unpartitioned numbers.
#include <string>
#include <vector>

#include "partitioner/partition_test_harness.h"

namespace gspmd::partition_test {
namespace {

const std::vector<PartitionCase> kSliceCases = {
    // XLA sends one row from each of the next two devices (64 bytes).
    {.name = "ShiftedSliceExchangesBoundaryRows",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[16,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT %s = f32[10,8]{1,0} slice(%a), slice={[3:13], [0:8]}, sharding={devices=[8,1]<=[8]}
})",
     .expect = {.only = Opcode::kCollectivePermute, .max_comm_bytes = 64.0}},
    {.name = "StridedSliceInsideEachShardIsLocal",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[16,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT %s = f32[8,8]{1,0} slice(%a), slice={[0:16:2], [0:8:1]}, sharding={devices=[8,1]<=[8]}
})",
     .expect = {.collectives = 0}},
    {.name = "StridedSliceAcrossShards",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[24,2]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT %s = f32[7,2]{1,0} slice(%a), slice={[1:22:3], [0:2]}, sharding={devices=[4,1]<=[4]}
})",
     .expect = {.only = Opcode::kCollectivePermute}},
    {.name = "UnevenOperandAndResult",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[10]{0} parameter(0), sharding={devices=[4]<=[4]}
  ROOT %s = f32[7]{0} slice(%a), slice={[2:9]}, sharding={devices=[4]<=[4]}
})",
     .expect = {.only = Opcode::kCollectivePermute}},
    // An empty strided slice of a sharded dim (the gradient of cummax, oracle seed 392): every
    // piece is empty, where the window was -1 elements long.
    {.name = "EmptyStridedSliceOfShardedDim",
     .hlo = R"(HloModule m, num_partitions=2
ENTRY e {
  %a = f32[2,2]{1,0} parameter(0), sharding={devices=[1,2]<=[2]}
  ROOT %s = f32[2,0]{1,0} slice(%a), slice={[0:2], [2:2:2]}, sharding={devices=[1,2]<=[2]}
})",
     .expect = {.collectives = 0}},
    {.name = "UnshardedDimIsSlicedLocally",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[16,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT %s = f32[16,3]{1,0} slice(%a), slice={[0:16], [2:5]}, sharding={devices=[8,1]<=[8]}
})",
     .expect = {.collectives = 0}},
    {.name = "BothDimsShardedOnTwoDimMesh",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[16,12]{1,0} parameter(0), sharding={devices=[4,2]<=[8]}
  ROOT %s = f32[11,7]{1,0} slice(%a), slice={[3:14], [1:8]}, sharding={devices=[4,2]<=[8]}
})",
     .expect = {.only = Opcode::kCollectivePermute}},
    {.name = "PartiallyReplicatedOperand",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[16,4]{1,0} parameter(0), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
  ROOT %s = f32[12,4]{1,0} slice(%a), slice={[1:13], [0:4]}, sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
})",
     .expect = {.only = Opcode::kCollectivePermute}},
    {.name = "SingleRowFromTheLastDevice",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[16,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT %s = f32[1,8]{1,0} slice(%a), slice={[15:16], [0:8]}, sharding={devices=[8,1]<=[8]}
})",
     .expect = {.only = Opcode::kCollectivePermute, .max_comm_bytes = 32.0}},
    // A replicated result is sliced where the operand lies and then moved: one row (28 B to its
    // neighbour, 28 B gathered), not the whole matrix all-gathered (112 B). Oracle seed 40063
    // (XLA: 56 B, a permute and an all-reduce).
    {.name = "OneRowToAReplicatedResultMovesTheRow",
     .hlo = R"(HloModule m, num_partitions=2
ENTRY e {
  %a = f32[8,7]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}
  ROOT %s = f32[1,7]{1,0} slice(%a), slice={[4:5], [0:7]}, sharding={replicated}
})",
     .expect = {.max_comm_bytes = 56.0}},
};

PARTITION_CASE_TESTS(ShapeOpsSliceTest, kSliceCases, kDistinctNumbers);

const std::vector<PartitionCase> kPadCases = {
    // XLA exchanges 192 bytes for this pad.
    {.name = "PadAlongShardedDimUsesHaloExchange",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[16,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %z = f32[] constant(0)
  ROOT %p = f32[21,8]{1,0} pad(%a, %z), padding=2_3x0_0, sharding={devices=[8,1]<=[8]}
})",
     .expect = {.only = Opcode::kCollectivePermute, .max_comm_bytes = 192.0}},
    {.name = "InteriorAndNegativePadding",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[10,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %v = f32[] parameter(1), sharding={replicated}
  ROOT %p = f32[20,5]{1,0} pad(%a, %v), padding=-2_3_1x1_1, sharding={devices=[4,1]<=[4]}
})",
     .expect = {.only = Opcode::kCollectivePermute}},
    {.name = "TwoShardedDimsOnTwoDimMesh",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[8,6]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  %z = f32[] constant(-1)
  ROOT %p = f32[11,9]{1,0} pad(%a, %z), padding=1_2x2_1, sharding={devices=[2,4]<=[8]}
})",
     .expect = {.only = Opcode::kCollectivePermute}},
    {.name = "UnshardedDimPadsLocally",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[8,6]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %z = f32[] constant(0)
  ROOT %p = f32[8,9]{1,0} pad(%a, %z), padding=0_0x1_2, sharding={devices=[4,1]<=[4]}
})",
     .expect = {.collectives = 0}},
    // Padding of an unsharded dim (interior and high) comes after the sharded dim's halo
    // exchange, which then sends the operand's columns (16 B), not the padded ones (48 B), as
    // XLA does. Oracle seed 40180.
    {.name = "UnshardedDimPaddedAfterTheHaloExchange",
     .hlo = R"(HloModule m, num_partitions=2
ENTRY e {
  %a = f32[2,4]{1,0} parameter(0), sharding={devices=[1,2]<=[2]}
  %v = f32[] constant(1.5)
  ROOT %p = f32[6,7]{1,0} pad(%a, %v), padding=0_3_1x0_3, sharding={devices=[1,2]<=[2]}
})",
     .expect = {.only = Opcode::kCollectivePermute, .max_comm_bytes = 16.0}},
    // Per unsharded dim: the cropped one (4 -> 3) before the exchange, the one that grows
    // (3 -> 7, interior 1) after it: the halo rows move as 3 x 3 (72 B), not 3 x 7 (168 B).
    // Oracle seed 40116 (6468 B -> 3584 B; XLA 4356).
    {.name = "CroppedDimsBeforeTheHaloExchangeGrownDimsAfter",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[8,4,3]{2,1,0} parameter(0), sharding={devices=[4,1,1]<=[4]}
  %v = f32[] constant(2)
  ROOT %p = f32[10,3,7]{2,1,0} pad(%a, %v), padding=1_1x-1_0x1_1_1, sharding={devices=[4,1,1]<=[4]}
})",
     .expect = {.only = Opcode::kCollectivePermute, .max_comm_bytes = 72.0}},
    // A replicated operand is padded whole and cut to the split result: nothing moves (oracle
    // seed 120891: a 64 B halo permute; XLA none). Uneven too: 8 rows over 3 devices.
    {.name = "ReplicatedOperandPadsWholeAndIsCut",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[4,2,4]{2,1,0} parameter(0), sharding={replicated}
  %v = f32[] constant(1.5)
  ROOT %p = f32[6,8,6]{2,1,0} pad(%a, %v), padding=1_1x3_3x0_2, sharding={devices=[1,8,1]<=[8]}
})",
     .expect = {.collectives = 0}},
    {.name = "ReplicatedOperandPadsWholeAndIsCutUnevenly",
     .hlo = R"(HloModule m, num_partitions=3
ENTRY e {
  %a = f32[5,2]{1,0} parameter(0), sharding={replicated}
  %v = f32[] constant(-1)
  ROOT %p = f32[8,4]{1,0} pad(%a, %v), padding=2_1x-1_2_1, sharding={devices=[3,1]<=[3]}
})",
     .expect = {.collectives = 0}},
};

PARTITION_CASE_TESTS(ShapeOpsPadTest, kPadCases, kDistinctNumbers);

const std::vector<PartitionCase> kConcatCases = {
    // XLA: three all-to-alls, 224 bytes.
    {.name = "ShardedConcatMovesLessThanXla",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[16,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %b = f32[16,8]{1,0} parameter(1), sharding={devices=[8,1]<=[8]}
  ROOT %c = f32[32,8]{1,0} concatenate(%a, %b), dimensions={0}, sharding={devices=[8,1]<=[8]}
})",
     .expect = {.only = Opcode::kCollectivePermute, .max_comm_bytes = 224.0}},
    {.name = "UnevenOperandsAndResult",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[5,2]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %b = f32[11,2]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  %c = f32[3,2]{1,0} parameter(2), sharding={replicated}
  ROOT %r = f32[19,2]{1,0} concatenate(%a, %b, %c), dimensions={0}, sharding={devices=[4,1]<=[4]}
})"},
    {.name = "UnshardedConcatDimIsLocal",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[8,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %b = f32[8,5]{1,0} parameter(1), sharding={devices=[4,1]<=[4]}
  ROOT %r = f32[8,8]{1,0} concatenate(%a, %b), dimensions={1}, sharding={devices=[4,1]<=[4]}
})",
     .expect = {.collectives = 0}},
    // jnp.roll by one: XLA sends one row per device (32 bytes).
    {.name = "RollPatternFromSlices",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[16,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %s0 = f32[1,8]{1,0} slice(%a), slice={[15:16], [0:8]}, sharding={devices=[8,1]<=[8]}
  %s1 = f32[15,8]{1,0} slice(%a), slice={[0:15], [0:8]}, sharding={devices=[8,1]<=[8]}
  ROOT %c = f32[16,8]{1,0} concatenate(%s0, %s1), dimensions={0}, sharding={devices=[8,1]<=[8]}
})",
     .expect = {.only = Opcode::kCollectivePermute}},
    {.name = "PartiallyReplicatedTwoDimMesh",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[6,4]{1,0} parameter(0), sharding={devices=[2,2,2]<=[8] last_tile_dim_replicate}
  %b = f32[10,4]{1,0} parameter(1), sharding={devices=[2,2,2]<=[8] last_tile_dim_replicate}
  ROOT %r = f32[16,4]{1,0} concatenate(%a, %b), dimensions={0}, sharding={devices=[2,2,2]<=[8] last_tile_dim_replicate}
})",
     .expect = {.only = Opcode::kCollectivePermute}},
    // state = concat([input], state[:-1]) along the stage dim: every stage passes its piece on.
    {.name = "PipelineShiftIsOneCollectivePermute",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %state = f32[4,8]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %input = f32[1,8]{1,0} parameter(1), sharding={replicated}
  %head = f32[3,8]{1,0} slice(%state), slice={[0:3], [0:8]}, sharding={devices=[4,1]<=[4]}
  ROOT %next = f32[4,8]{1,0} concatenate(%input, %head), dimensions={0}, sharding={devices=[4,1]<=[4]}
})",
     .expect = {.counts = {{Opcode::kCollectivePermute, 1}}, .only = Opcode::kCollectivePermute, .comm_bytes = 32.0}},
    {.name = "RotateOnTwoDimMesh",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[8,6]{1,0} parameter(0), sharding={devices=[4,2]<=[8]}
  %s0 = f32[2,6]{1,0} slice(%a), slice={[6:8], [0:6]}, sharding={devices=[4,2]<=[8]}
  %s1 = f32[6,6]{1,0} slice(%a), slice={[0:6], [0:6]}, sharding={devices=[4,2]<=[8]}
  ROOT %c = f32[8,6]{1,0} concatenate(%s0, %s1), dimensions={0}, sharding={devices=[4,2]<=[8]}
})",
     .expect = {.counts = {{Opcode::kCollectivePermute, 1}}, .only = Opcode::kCollectivePermute}},
    // Operands split along another dim, the result along the concatenated one (oracle seed
    // 20200): concatenated where the operands are, then one all-to-all of the result, as XLA
    // does (192 bytes; bringing each operand to the result's split and exchanging windows sent
    // 704).
    {.name = "ConcatSplitAlongItsDimFromOperandsSplitAlongAnother",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %a = s32[8,4,4]{2,1,0} parameter(0), sharding={devices=[2,1,1,2]<=[4] last_tile_dim_replicate}
  %b = s32[8,3,4]{2,1,0} parameter(1), sharding={devices=[2,1,1,2]<=[4] last_tile_dim_replicate}
  %c = s32[8,1,4]{2,1,0} parameter(2), sharding={devices=[2,1,1,2]<=[4] last_tile_dim_replicate}
  ROOT %r = s32[8,8,4]{2,1,0} concatenate(%a, %b, %c), dimensions={1}, sharding={devices=[1,4,1]<=[4]}
})",
     .expect = {.only = Opcode::kAllToAll, .max_comm_bytes = 192.0}},
};

PARTITION_CASE_TESTS(ShapeOpsConcatTest, kConcatCases, kDistinctNumbers);

}  // namespace
}  // namespace gspmd::partition_test
