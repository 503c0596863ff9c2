// Partitioning tests for dynamic-slice and dynamic-update-slice: dims sliced at run time are
// replicated on the operand only when they must be; dynamic-update-slice writes each device's
// part of the update under a mask; results match the interpreter, including clamped starts.
#include <string>
#include <vector>

#include "partitioner/partition_test_harness.h"

namespace gspmd::partition_test {
namespace {

const std::vector<PartitionCase> kDynamicSliceCases = {
    {.name = "UnshardedSlicedDimIsLocal",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[8,16]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %i = s32[] parameter(1), sharding={replicated}
  %z = s32[] constant(0)
  ROOT %d = f32[8,5]{1,0} dynamic-slice(%a, %z, %i), dynamic_slice_sizes={8,5}, sharding={devices=[4,1]<=[4]}
})",
     .expect = {.collectives = 0},
     .scalar_runs = {{0}, {3}, {11}, {14}}},
    {.name = "ShardedSlicedDimEvenResult",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[16,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %i = s32[] parameter(1), sharding={replicated}
  %z = s32[] constant(0)
  ROOT %d = f32[8,3]{1,0} dynamic-slice(%a, %i, %z), dynamic_slice_sizes={8,3}, sharding={devices=[4,1]<=[4]}
})",
     .expect = {.only = Opcode::kAllGather},
     .scalar_runs = {{0}, {5}, {8}, {20}, {-3}}},
    {.name = "ShardedSlicedDimUnevenResult",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[16,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %i = s32[] parameter(1), sharding={replicated}
  %z = s32[] constant(0)
  ROOT %d = f32[7,3]{1,0} dynamic-slice(%a, %i, %z), dynamic_slice_sizes={7,3}, sharding={devices=[4,1]<=[4]}
})",
     .scalar_runs = {{0}, {6}, {9}, {15}}},
    // Gathering the operand would send 7/8 of 1 KiB; summing the one-row parts sends 28 bytes.
    {.name = "SmallSliceOfShardedDimSumsMaskedParts",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[64,4]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %i = s32[] parameter(1), sharding={replicated}
  %z = s32[] constant(0)
  ROOT %d = f32[1,4]{1,0} dynamic-slice(%a, %i, %z), dynamic_slice_sizes={1,4}, sharding={replicated}
})",
     .expect = {.counts = {{Opcode::kAllGather, 0}, {Opcode::kAllReduce, 1}}, .max_comm_bytes = 28.0},
     .scalar_runs = {{0}, {7}, {8}, {63}, {100}, {-2}}},
    {.name = "MaskedSliceAcrossTwoShardsOfUnevenDim",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %a = s32[30,2]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %i = s32[] parameter(1), sharding={replicated}
  %z = s32[] constant(0)
  ROOT %d = s32[3,2]{1,0} dynamic-slice(%a, %i, %z), dynamic_slice_sizes={3,2}, sharding={devices=[4,1]<=[4]}
})",
     .expect = {.counts = {{Opcode::kAllGather, 0}}},
     .scalar_runs = {{0}, {6}, {7}, {23}, {27}, {29}}},
    {.name = "ConstantStartSlicesLikeAStaticSlice",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[16,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}
  %i = s32[] constant(3)
  %z = s32[] constant(0)
  ROOT %d = f32[10,8]{1,0} dynamic-slice(%a, %i, %z), dynamic_slice_sizes={10,8}, sharding={devices=[8,1]<=[8]}
})",
     .expect = {.only = Opcode::kCollectivePermute}},
};

PARTITION_CASE_TESTS(ShapeOpsDynamicSliceTest, kDynamicSliceCases, kDistinctNumbers);

const std::vector<PartitionCase> kDynamicUpdateSliceCases = {
    {.name = "UpdateOnShardedDimIsMaskedLocally",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[16,3]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %u = f32[5,3]{1,0} parameter(1), sharding={replicated}
  %i = s32[] parameter(2), sharding={replicated}
  %z = s32[] constant(0)
  ROOT %d = f32[16,3]{1,0} dynamic-update-slice(%a, %u, %i, %z), sharding={devices=[4,1]<=[4]}
})",
     .expect = {.collectives = 0},
     .scalar_runs = {{0}, {2}, {6}, {11}, {14}, {-1}}},
    {.name = "UnevenOperandTwoDimMesh",
     .hlo = R"(HloModule m, num_partitions=8
ENTRY e {
  %a = f32[10,6]{1,0} parameter(0), sharding={devices=[4,2]<=[8]}
  %u = f32[3,6]{1,0} parameter(1), sharding={devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}
  %i = s32[] parameter(2), sharding={replicated}
  %z = s32[] constant(0)
  ROOT %d = f32[10,6]{1,0} dynamic-update-slice(%a, %u, %i, %z), sharding={devices=[4,2]<=[8]}
})",
     .expect = {.collectives = 0},
     .scalar_runs = {{0}, {2}, {7}, {9}}},
    {.name = "TwoUpdatedDimsOneSharded",
     .hlo = R"(HloModule m, num_partitions=4
ENTRY e {
  %a = f32[8,12]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %u = f32[2,5]{1,0} parameter(1), sharding={replicated}
  %i = s32[] parameter(2), sharding={replicated}
  %j = s32[] parameter(3), sharding={replicated}
  ROOT %d = f32[8,12]{1,0} dynamic-update-slice(%a, %u, %i, %j), sharding={devices=[1,4]<=[4]}
})",
     .expect = {.collectives = 0},
     .scalar_runs = {{0, 0}, {3, 4}, {6, 7}, {7, 10}}},
};

PARTITION_CASE_TESTS(ShapeOpsDynamicUpdateSliceTest, kDynamicUpdateSliceCases, kDistinctNumbers);

}  // namespace
}  // namespace gspmd::partition_test
