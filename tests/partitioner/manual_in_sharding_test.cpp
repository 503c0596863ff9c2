// A shard_map (sdy.manual_computation) whose in_shardings split its operand otherwise than the
// operand arrives: each device's body must get the piece in_shardings name, even when the
// operand's own pieces have the same shape (found by the XLA oracle's soak, seed 10677).
#include <gtest/gtest.h>

#include "analysis/literal_compare.h"
#include "api/gspmd.h"

namespace gspmd::api {
namespace {

// The operand is split P('x', 'y'); the body wants P('z', 'x') (dim 0 over z, the mesh's minor
// axis), gathers dim 0 over z and returns it P(None, 'x'): the result is the input itself.
constexpr const char* kReorderedAxes = R"(module @jit_fn attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>
  func.func public @main(%arg0: tensor<16x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<16x2xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"z"}, {"x"}]>] out_shardings=[<@mesh, [{}, {"x"}]>] manual_axes={"x", "y", "z"} (%arg1: tensor<8x1xf32>) {
      %1 = "stablehlo.all_gather"(%arg1) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, use_global_device_ids}> : (tensor<8x1xf32>) -> tensor<16x1xf32>
      sdy.return %1 : tensor<16x1xf32>
    } : (tensor<16x2xf32>) -> tensor<16x2xf32>
    return %0 : tensor<16x2xf32>
  }
}
)";

TEST(ManualInShardingTest, TheBodyGetsThePiecesInShardingsName) {
  const Program program = Program::FromText(kReorderedAxes, "reordered.mlir");
  Literal input(Shape(ElementType::kF32, {16, 2}));
  for (int64_t i = 0; i < 32; ++i) input.data<float>()[i] = static_cast<float>(i);
  const std::vector<Literal> outputs = api::Run(program, {input});
  ASSERT_EQ(outputs.size(), 1u);
  const LiteralComparison same = CompareLiterals(outputs[0], input, 0);
  EXPECT_TRUE(same.matches) << same.message;
  // The operand is resharded to the body's layout on the way in: some collective moves it.
  const std::string per_device = Partition(program).per_device.Text();
  EXPECT_TRUE(per_device.find("collective-permute") != std::string::npos ||
              per_device.find("all-to-all") != std::string::npos || per_device.find("all-gather(%Arg") != std::string::npos)
      << per_device;
}

}  // namespace
}  // namespace gspmd::api
