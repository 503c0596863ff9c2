// StableHLO collectives as per-device programs run on simulated devices: all_reduce (dense
// groups and Shardy mesh axes), all_gather, reduce_scatter, all_to_all with split and concat
// dimensions that differ, collective_permute, partition_id.
#include <gtest/gtest.h>

#include "frontend/stablehlo_test_util.h"
#include "runtime/spmd/spmd_executor.h"

namespace gspmd {
namespace {

using namespace stablehlo_test;  // NOLINT: test helpers

// Runs a per-device StableHLO program on `devices` devices; returns device 0's results.
std::vector<Literal> RunOnDevices(const std::string& text, const std::vector<Literal>& inputs, int64_t devices) {
  std::unique_ptr<Module> module = Read(text);
  SpmdRunOptions options;
  options.num_devices = devices;
  return RunSpmd(*module, inputs, options);
}

// %v = x * (partition_id + 1) on each device, before the collective.
constexpr char kPrologue[] = R"(
  %pid = stablehlo.partition_id : tensor<ui32>
  %p = stablehlo.convert %pid : (tensor<ui32>) -> tensor<f32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %p1 = stablehlo.add %p, %one : tensor<f32>
  %b = stablehlo.broadcast_in_dim %p1, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %v = stablehlo.multiply %x, %b : tensor<4xf32>
)";

std::string Program(const std::string& collective, const std::string& result_type) {
  return "module @m attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {\n"
         "func.func @main(%x: tensor<4xf32>) -> " + result_type + " {" + kPrologue + collective +
         "  return %r : " + result_type + "\n}\n}\n";
}

TEST(StableHloCollectives, AllReduceWithGroups) {
  std::string text = Program(R"(  %r = "stablehlo.all_reduce"(%v) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
  ^bb0(%a: tensor<f32>, %c: tensor<f32>):
    %s = stablehlo.add %a, %c : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4xf32>) -> tensor<4xf32>
)", "tensor<4xf32>");
  EXPECT_HLO_LINE(Hlo(text), "all-reduce\\(%multiply\\), channel_id=1, replica_groups=\\{\\{0,1\\},\\{2,3\\}\\}, use_global_device_ids=true");
  // Device 0 sums devices 0 and 1: x*1 + x*2.
  ExpectValue(RunOnDevices(text, {F32({4}, {1, 2, 3, 4})}, 4)[0], F32({4}, {3, 6, 9, 12}));
}

TEST(StableHloCollectives, AllReduceOverShardyMeshAxes) {
  std::string text = R"(module @m attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {)" + std::string(kPrologue) + R"(
    %r = "stablehlo.all_reduce"(%v) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = "a">]>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %c: tensor<f32>):
      %s = stablehlo.add %a, %c : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<4xf32>) -> tensor<4xf32>
    return %r : tensor<4xf32>
  }
})";
  EXPECT_HLO_LINE(Hlo(text), "replica_groups=mesh\\['a'=2,'b'=2\\] \\{'a'\\}");
  // Axis "a" groups devices {0, 2} and {1, 3}: device 0 gets x*1 + x*3.
  ExpectValue(RunOnDevices(text, {F32({4}, {1, 2, 3, 4})}, 4)[0], F32({4}, {4, 8, 12, 16}));
}

TEST(StableHloCollectives, AllGatherAndReduceScatter) {
  std::string gather = Program(R"(  %r = "stablehlo.all_gather"(%v) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> : (tensor<4xf32>) -> tensor<16xf32>
)", "tensor<16xf32>");
  Literal gathered = RunOnDevices(gather, {F32({4}, {1, 0, 0, 0})}, 4)[0];
  ExpectValue(gathered, F32({16}, {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0}));
  std::string scatter = Program(R"(  %r = "stablehlo.reduce_scatter"(%v) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, scatter_dimension = 0 : i64, use_global_device_ids}> ({
  ^bb0(%a: tensor<f32>, %c: tensor<f32>):
    %s = stablehlo.add %a, %c : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4xf32>) -> tensor<1xf32>
)", "tensor<1xf32>");
  // Device 0 gets element 0 of the sum over devices: 1*(1+2+3+4).
  ExpectValue(RunOnDevices(scatter, {F32({4}, {1, 2, 3, 4})}, 4)[0], F32({1}, {10}));
}

TEST(StableHloCollectives, AllToAllWithDifferentSplitAndConcatDims) {
  // Each device splits its [2, 4] value along dim 1 into 2 pieces of [2, 2] and concatenates
  // the pieces it receives along dim 0: [4, 2].
  std::string text = R"(module @m attributes {mhlo.num_partitions = 2 : i32} {
  func.func @main(%x: tensor<2x4xf32>) -> tensor<4x2xf32> {
    %pid = stablehlo.partition_id : tensor<ui32>
    %p = stablehlo.convert %pid : (tensor<ui32>) -> tensor<f32>
    %hundred = stablehlo.constant dense<100.0> : tensor<f32>
    %q = stablehlo.multiply %p, %hundred : tensor<f32>
    %b = stablehlo.broadcast_in_dim %q, dims = [] : (tensor<f32>) -> tensor<2x4xf32>
    %v = stablehlo.add %x, %b : tensor<2x4xf32>
    %r = "stablehlo.all_to_all"(%v) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, concat_dimension = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, split_count = 2 : i64, split_dimension = 1 : i64}> : (tensor<2x4xf32>) -> tensor<4x2xf32>
    return %r : tensor<4x2xf32>
  }
})";
  std::string hlo = Hlo(text);
  EXPECT_HLO_LINE(hlo, "f32\\[2,2,2\\]\\{2,1,0\\} all-to-all\\(%reshape\\), channel_id=2, replica_groups=\\{\\{0,1\\}\\}, dimensions=\\{1\\}");
  // Device 0: its own first piece [[1,2],[5,6]], then device 1's first piece [[101,102],[105,106]].
  ExpectValue(RunOnDevices(text, {F32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})}, 2)[0],
              F32({4, 2}, {1, 2, 5, 6, 101, 102, 105, 106}));
}

TEST(StableHloCollectives, CollectivePermute) {
  std::string text = Program(R"(  %r = "stablehlo.collective_permute"(%v) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>}> : (tensor<4xf32>) -> tensor<4xf32>
)", "tensor<4xf32>");
  EXPECT_HLO_LINE(Hlo(text), "collective-permute\\(%multiply\\), channel_id=1, source_target_pairs=\\{\\{0,1\\},\\{1,2\\},\\{2,3\\},\\{3,0\\}\\}");
  // Device 0 receives device 3's value: x*4.
  ExpectValue(RunOnDevices(text, {F32({4}, {1, 2, 3, 4})}, 4)[0], F32({4}, {4, 8, 12, 16}));
}

}  // namespace
}  // namespace gspmd
