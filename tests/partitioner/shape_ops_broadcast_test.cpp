// Partitioning tests for broadcast, transpose, iota and reverse: which collectives appear
// (usually none) and that the per-device program computes the unpartitioned numbers.
#include <string>
#include <vector>

#include "partitioner/partition_test_harness.h"

namespace gspmd::partition_test {
namespace {

const std::vector<PartitionCase> kBroadcastCases = {
    // A broadcast of a scalar under a sharding constraint, returned in another layout (the
    // gradient of a sum is ones): made again in the result's layout, not moved (oracle seed
    // 20213: an all-gather and a permute, 64 B).
    {.name = "ScalarBroadcastIsMadeAgainInTheLayoutAUserWants",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %s = f32[] parameter(0), sharding={replicated}
  %b = f32[16,2]{1,0} broadcast(%s), dimensions={}, sharding={devices=[2,2]<=[2,2]T(1,0)}
  %c = f32[16,2]{1,0} custom-call(%b), custom_call_target="Sharding", sharding={devices=[2,2]<=[2,2]T(1,0)}
  ROOT %n = f32[16,2]{1,0} negate(%c), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}
})",
     .expect = {.collectives = 0}},
    // Transposed and reshaped, a broadcast scalar is still one: made again, not gathered
    // (oracle seed 114892: a gradient's splat, transposed twice, gathered for 240 B).
    {.name = "TransposedAndReshapedScalarBroadcastIsMadeAgain",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %s = f32[] parameter(0), sharding={replicated}
  %b = f32[2,12,5]{2,1,0} broadcast(%s), dimensions={}, sharding={devices=[1,4,1]<=[4]}
  %t = f32[12,5,2]{2,1,0} transpose(%b), dimensions={1,2,0}, sharding={devices=[4,1,1]<=[4]}
  %r = f32[12,10]{1,0} reshape(%t), sharding={devices=[4,1]<=[4]}
  ROOT %n = f32[12,10]{1,0} negate(%r), sharding={replicated}
})",
     .expect = {.collectives = 0}},
    {.name = "MappedDimKeepsItsShardingLocally",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16]{0} parameter(0), sharding={devices=[8]<=[8]}
  ROOT %b = f32[16,4]{1,0} broadcast(%x), dimensions={0}, sharding={devices=[8,1]<=[8]}
})",
     .expect = {.collectives = 0}},
    {.name = "OperandDimMovesToMinorResultDim",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16]{0} parameter(0), sharding={devices=[8]<=[8]}
  ROOT %b = f32[4,16]{1,0} broadcast(%x), dimensions={1}, sharding={devices=[1,8]<=[8]}
})",
     .expect = {.collectives = 0}},
    {.name = "ReplicatedOperandToTwoDimMeshIsLocal",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16]{0} parameter(0), sharding={replicated}
  ROOT %b = f32[8,16]{1,0} broadcast(%x), dimensions={1}, sharding={devices=[2,4]<=[8]}
})",
     .expect = {.collectives = 0}},
    {.name = "NewDimShardedGathersOnlyTheOperand",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16]{0} parameter(0), sharding={devices=[8]<=[8]}
  ROOT %b = f32[8,16]{1,0} broadcast(%x), dimensions={1}, sharding={devices=[2,4]<=[8]}
})",
     // An all-gather and a reorder of a 16-byte piece.
     .expect = {.counts = {{Opcode::kAllGather, 1}}, .max_comm_bytes = 24.0}},
    {.name = "PartiallyReplicatedAndUneven",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[10]{0} parameter(0), sharding={devices=[4,2]<=[8] last_tile_dim_replicate}
  %b = f32[10,6]{1,0} broadcast(%x), dimensions={0}, sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
  ROOT %n = f32[10,6]{1,0} negate(%b), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
})",
     .expect = {.collectives = 0}},
    {.name = "ScalarBroadcastIsLocal",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[] parameter(0), sharding={replicated}
  ROOT %b = f32[6,8]{1,0} broadcast(%x), dimensions={}, sharding={devices=[2,2]<=[4]}
})",
     .expect = {.collectives = 0}},
};

PARTITION_CASE_TESTS(ShapeOpsBroadcastTest, kBroadcastCases, kDistinctNumbers);

const std::vector<PartitionCase> kTransposeCases = {
    {.name = "PermutesTheShardingLocally",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[8,16]{1,0} parameter(0), sharding={devices=[2,4]<=[8]}
  ROOT %t = f32[16,8]{1,0} transpose(%x), dimensions={1,0}, sharding={devices=[4,2]<=[2,4]T(1,0)}
})",
     .expect = {.collectives = 0}},
    {.name = "ThreeDimsPartiallyReplicated",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[4,6,10]{2,1,0} parameter(0), sharding={devices=[2,1,2,2]<=[8] last_tile_dim_replicate}
  ROOT %t = f32[10,4,6]{2,1,0} transpose(%x), dimensions={2,0,1}, sharding={devices=[2,2,1,2]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}
})",
     .expect = {.collectives = 0}},
};

PARTITION_CASE_TESTS(ShapeOpsTransposeTest, kTransposeCases, kDistinctNumbers);

const std::vector<PartitionCase> kIotaCases = {
    {.name = "ShardedDimAddsThePartitionOffset",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  ROOT %i = s32[16]{0} iota(), iota_dimension=0, sharding={devices=[8]<=[8]}
})",
     .expect = {.collectives = 0, .counts = {{Opcode::kPartitionId, 1}}}},
    {.name = "UnevenFloatIotaOnTwoDimMesh",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  ROOT %i = f32[6,10]{1,0} iota(), iota_dimension=1, sharding={devices=[2,4]<=[8]}
})",
     .expect = {.collectives = 0}},
    {.name = "UnshardedIotaDimNeedsNoOffset",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  ROOT %i = s32[8,6]{1,0} iota(), iota_dimension=1, sharding={devices=[4,1]<=[4]}
})",
     .expect = {.counts = {{Opcode::kPartitionId, 0}}}},
    // An iota reshaped, transposed and converted is still one along some dim: a user wanting
    // it in another layout gets it made again there, not moved (oracle seed 114445: an
    // argmax's index iota, a 1024 B all-to-all; XLA none).
    {.name = "IotaThroughReshapeTransposeAndConvertIsMadeAgainNotMoved",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %i = s32[16,8,4]{2,1,0} iota(), iota_dimension=0, sharding={devices=[1,1,4]<=[4]}
  %r = s32[16,32]{1,0} reshape(%i), sharding={devices=[1,4]<=[4]}
  %t = s32[32,16]{1,0} transpose(%r), dimensions={1,0}, sharding={devices=[4,1]<=[4]}
  %c = f32[32,16]{1,0} convert(%t), sharding={devices=[4,1]<=[4]}
  ROOT %n = f32[32,16]{1,0} negate(%c), sharding={devices=[1,4]<=[4]}
})",
     .expect = {.collectives = 0}},
    {.name = "UnevenIotaMadeAgainAlongItsSplitDim",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %i = s32[10,6]{1,0} iota(), iota_dimension=1, sharding={devices=[4,1]<=[4]}
  %b = s32[3,10,6]{2,1,0} broadcast(%i), dimensions={1,2}, sharding={devices=[1,4,1]<=[4]}
  ROOT %n = s32[3,10,6]{2,1,0} negate(%b), sharding={devices=[1,1,4]<=[4]}
})",
     .expect = {.collectives = 0}},
    // A reshape that merges the counting dim with another is no iota of its shape: moved.
    {.name = "IotaMergedWithAnotherDimIsMoved",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %i = s32[4,4]{1,0} iota(), iota_dimension=1, sharding={devices=[4,1]<=[4]}
  %r = s32[16]{0} reshape(%i), sharding={devices=[4]<=[4]}
  ROOT %n = s32[16]{0} negate(%r), sharding={devices=[4]3,2,1,0}
})",
     .expect = {.only = Opcode::kCollectivePermute}},
};

PARTITION_CASE_TESTS(ShapeOpsIotaTest, kIotaCases, kDistinctNumbers);

const std::vector<PartitionCase> kReverseCases = {
    {.name = "MirroredDeviceOrderIsFree",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[16,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT %r = f32[16,8]{1,0} reverse(%a), dimensions={0}, sharding={devices=[8,1]7,6,5,4,3,2,1,0}
})",
     .expect = {.collectives = 0}},
    {.name = "SameDeviceOrderNeedsOneCollectivePermute",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[16,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT %r = f32[16,8]{1,0} reverse(%a), dimensions={0}, sharding={devices=[8,1]<=[8]}
})",
     // One [2,8] f32 shard moves.
     .expect = {.collectives = 1, .counts = {{Opcode::kCollectivePermute, 1}}, .comm_bytes = 64.0}},
    {.name = "UnevenDimShiftsThePadding",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[10,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT %r = f32[10,3]{1,0} reverse(%a), dimensions={0,1}, sharding={devices=[4,1]<=[4]}
})",
     .expect = {.only = Opcode::kCollectivePermute}},
    {.name = "UnevenMirroredOrderShiftsByThePadding",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[10]{0} parameter(0), sharding={devices=[4]<=[4]}
  ROOT %r = f32[10]{0} reverse(%a), dimensions={0}, sharding={devices=[4]3,2,1,0}
})",
     .expect = {.only = Opcode::kCollectivePermute}},
    {.name = "TwoDimMeshBothDimsReversed",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[8,6]{1,0} parameter(0), sharding={devices=[2,2,2]<=[8] last_tile_dim_replicate}
  ROOT %r = f32[8,6]{1,0} reverse(%a), dimensions={0,1}, sharding={devices=[2,2,2]<=[8] last_tile_dim_replicate}
})",
     .expect = {.only = Opcode::kCollectivePermute}},
};

PARTITION_CASE_TESTS(ShapeOpsReverseTest, kReverseCases, kDistinctNumbers);

}  // namespace
}  // namespace gspmd::partition_test
