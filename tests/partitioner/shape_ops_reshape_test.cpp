// Partitioning tests for reshape: splits and merges of sharded dims stay local, degenerate
// dims are free, incompatible layouts are resharded (never fully replicated when a better
// layout exists), and the numbers match the unpartitioned program.
#include <string>
#include <vector>

#include "partitioner/partition_test_harness.h"

namespace gspmd::partition_test {
namespace {

std::string OnFourDevices(const std::string& body) {
  return "HloModule m, num_partitions=4\nENTRY e {\n  " + body + "\n}\n";
}

const std::vector<PartitionCase> kReshapeCases = {
    {.name = "SplitKeepsAxesOnTheMajorPart",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[16]{0} parameter(0), sharding={devices=[4]<=[4]}
  ROOT %r = f32[4,4]{1,0} reshape(%x), sharding={devices=[4,1]<=[4]}
})",
     .expect = {.collectives = 0}},
    {.name = "SplitSpreadsAnAxisOverBothParts",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16]{0} parameter(0), sharding={devices=[8]<=[8]}
  ROOT %r = f32[4,4]{1,0} reshape(%x), sharding={devices=[4,2]<=[8]}
})",
     .expect = {.collectives = 0}},
    {.name = "MergeKeepsTheMajorDimsAxes",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[4,4]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT %r = f32[16]{0} reshape(%x), sharding={devices=[4]<=[4]}
})",
     .expect = {.collectives = 0}},
    {.name = "MergeOfFullySplitMajorAndSplitMinor",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[4,8]{1,0} parameter(0), sharding={devices=[4,2]<=[8]}
  ROOT %r = f32[32]{0} reshape(%x), sharding={devices=[8]<=[8]}
})",
     .expect = {.collectives = 0}},
    {.name = "DegenerateDimsAreFree",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[8]{0} parameter(0), sharding={devices=[8]<=[8]}
  %a = f32[1,8]{1,0} reshape(%x), sharding={devices=[1,8]<=[8]}
  %b = f32[1,1,8]{2,1,0} reshape(%a), sharding={devices=[1,1,8]<=[8]}
  %c = f32[8,1]{1,0} reshape(%b), sharding={devices=[8,1]<=[8]}
  ROOT %d = f32[8]{0} reshape(%c), sharding={devices=[8]<=[8]}
})",
     .expect = {.collectives = 0}},
    {.name = "UnevenDegenerateDimsAreFree",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[10,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %a = f32[1,10,3,1]{3,2,1,0} reshape(%x), sharding={devices=[1,4,1,1]<=[4]}
  ROOT %b = f32[10,3]{1,0} reshape(%a), sharding={devices=[4,1]<=[4]}
})",
     .expect = {.collectives = 0}},
    {.name = "PartiallyReplicatedSplit",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[16,6]{1,0} parameter(0), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
  ROOT %r = f32[4,4,6]{2,1,0} reshape(%x), sharding={devices=[4,1,1,2]<=[8] last_tile_dim_replicate}
})",
     .expect = {.collectives = 0}},
    {.name = "TwoDimMeshMergeOfFullySplitDim",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[8,4,6]{2,1,0} parameter(0), sharding={devices=[2,4,1]<=[8]}
  ROOT %r = f32[8,24]{1,0} reshape(%x), sharding={devices=[2,4]<=[8]}
})",
     .expect = {.collectives = 0}},
    {.name = "MinorShardedMergeUsesAllToAllNotReplication",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[16,4]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  ROOT %r = f32[64]{0} reshape(%x), sharding={devices=[4]<=[4]}
})",
     // Less than gathering the operand (3/4 of 256 bytes); one all-to-all would be 48.
     .expect = {.counts = {{Opcode::kAllGather, 0}}, .at_least = {{Opcode::kAllToAll, 1}}, .comm_bytes_below = 192.0}},
    {.name = "IncompatibleTargetMovesTheRemainderOfAnAxis",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[32]{0} parameter(0), sharding={devices=[8]<=[8]}
  ROOT %r = f32[4,8]{1,0} reshape(%x), sharding={devices=[1,8]<=[8]}
})",
     .expect = {.comm_bytes_below = 112.0}},  // less than gathering the operand
    {.name = "UnevenMergeUsesAHaloExchange",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[6,4]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT %r = f32[24]{0} reshape(%x), sharding={devices=[4]<=[4]}
})",
     // Gathering the operand would send 3/4 of 96 bytes.
     .expect = {.only = Opcode::kCollectivePermute, .comm_bytes_below = 72.0}},
    // Uneven splits and merges on 4 devices: halo exchanges only.
    {.name = "UnevenSplit_12_to_3x4",
     .hlo = OnFourDevices("%x = f32[12]{0} parameter(0), sharding={devices=[4]<=[4]}\n"
                          "  ROOT %r = f32[3,4]{1,0} reshape(%x), sharding={devices=[4,1]<=[4]}"),
     .expect = {.only = Opcode::kCollectivePermute}},
    {.name = "UnevenMerge_10x3_to_30",
     .hlo = OnFourDevices("%x = f32[10,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}\n"
                          "  ROOT %r = f32[30]{0} reshape(%x), sharding={devices=[4]<=[4]}"),
     .expect = {.only = Opcode::kCollectivePermute}},
    {.name = "UnevenSplit_30_to_10x3",
     .hlo = OnFourDevices("%x = f32[30]{0} parameter(0), sharding={devices=[4]<=[4]}\n"
                          "  ROOT %r = f32[10,3]{1,0} reshape(%x), sharding={devices=[4,1]<=[4]}"),
     .expect = {.only = Opcode::kCollectivePermute}},
    {.name = "UnevenSplit_2x15_to_2x5x3",
     .hlo = OnFourDevices("%x = f32[2,15]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}\n"
                          "  ROOT %r = f32[2,5,3]{2,1,0} reshape(%x), sharding={devices=[1,4,1]<=[4]}"),
     .expect = {.only = Opcode::kCollectivePermute}},
    {.name = "UnevenMerge_7x2x3_to_14x3",
     .hlo = OnFourDevices("%x = f32[7,2,3]{2,1,0} parameter(0), sharding={devices=[4,1,1]<=[4]}\n"
                          "  ROOT %r = f32[14,3]{1,0} reshape(%x), sharding={devices=[4,1]<=[4]}"),
     .expect = {.only = Opcode::kCollectivePermute}},
    {.name = "ThreeToTwoDimsOnTwoDimMesh",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %x = f32[4,6,8]{2,1,0} parameter(0), sharding={devices=[2,1,4]<=[8]}
  ROOT %r = f32[24,8]{1,0} reshape(%x), sharding={devices=[2,4]<=[8]}
})",
     .expect = {.collectives = 0}},
    {.name = "ReplicatedResultFromShardedOperand",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %x = f32[4,6]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT %r = f32[24]{0} reshape(%x), sharding={replicated}
})",
     .expect = {.counts = {{Opcode::kAllGather, 1}}}},
    {.name = "MirroredDeviceOrderStaysLocal",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[16,4]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %r = f32[16,4]{1,0} reverse(%a), dimensions={0}, sharding={devices=[8,1]7,6,5,4,3,2,1,0}
  ROOT %s = f32[64]{0} reshape(%r), sharding={devices=[8]7,6,5,4,3,2,1,0}
})",
     .expect = {.collectives = 0}},
    // A reshape laid out as no local reshape reaches (propagation's partial guess: [1,4] ->
    // [1,2,2]), whose one user wants [4,1]: made again from its operand in that layout, one
    // all-to-all (12 B), instead of gathering the operand whole (48 B) and slicing (oracle
    // seed 112416, a dot's operand: 54 B -> 18 B = XLA's).
    {.name = "ReshapeMadeAgainInItsUsersLayout",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %p = f32[4,4] parameter(0), sharding={devices=[1,4]<=[4]}
  %r = f32[8,2] reshape(%p), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}
  ROOT %c = f32[8,2] copy(%r), sharding={devices=[4,1]<=[4]}
})",
     .expect = {.collectives = 1, .only = Opcode::kAllToAll, .comm_bytes = 12}},
};

PARTITION_CASE_TESTS(ShapeOpsReshapeTest, kReshapeCases, kDistinctNumbers);

}  // namespace
}  // namespace gspmd::partition_test
