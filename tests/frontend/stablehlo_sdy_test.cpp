// Shardy and GSPMD annotations in StableHLO text: sdy.mesh (with device_ids), #sdy.sharding
// (open/closed dims, priorities, sub-axes, replicated axes), sdy.sharding_constraint,
// sdy.reshard, sdy.sharding_group, sdy.propagation_barrier, sdy.manual_computation,
// sdy.named_computation, mhlo.sharding strings and mhlo.frontend_attributes; and what
// propagation makes of them (user priorities in rounds, barrier directions).
#include <gtest/gtest.h>

#include "frontend/stablehlo_test_util.h"
#include "partitioner/partitioner.h"
#include "propagation/propagation.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"
#include "sharding/sharding_text.h"

namespace gspmd {
namespace {

using namespace stablehlo_test;  // NOLINT: test helpers

const Instruction& Named(const Module& module, const std::string& name) {
  for (const auto& computation : module.computations())
    if (const Instruction* instruction = computation->FindInstruction(name)) return *instruction;
  ADD_FAILURE() << "no instruction " << name;
  return *module.entry()->root();
}

std::unique_ptr<Module> Propagated(const std::string& text) {
  std::unique_ptr<Module> module = Read(text);
  PropagateShardings(*module);
  return module;
}

std::string ShardingOf(const Module& module, const std::string& name) {
  const Instruction& instruction = Named(module, name);
  return instruction.sharding() ? instruction.sharding()->ToString() : "(none)";
}

TEST(StableHloSdy, MeshesAndShardingsBecomeXlaSdyAttributes) {
  std::string hlo = Hlo(R"(module @m attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  sdy.mesh @shuffled = <["d"=8], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>
  func.func public @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y", ?}p1], replicated={}>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = stablehlo.tanh %a {sdy.sharding = #sdy.sharding_per_value<[<@shuffled, [{"d"}, {}]>]>} : tensor<8x16xf32>
    return %0 : tensor<8x16xf32>
  }
})");
  EXPECT_HLO_LINE(hlo, "frontend_attributes=\\{xla.sdy.meshes=\\{mesh = #sdy.mesh<\\[\"x\"=2, \"y\"=4\\]>, shuffled = "
                       "#sdy.mesh<\\[\"d\"=8\\], device_ids=\\[7, 6, 5, 4, 3, 2, 1, 0\\]>\\}\\}");
  EXPECT_HLO_LINE(hlo, "parameter\\(0\\), frontend_attributes=\\{xla.sdy.sharding=\"#sdy.sharding<@mesh, "
                       "\\[\\{\\\\\"x\\\\\"\\}, \\{\\\\\"y\\\\\", \\?\\}p1\\], replicated=\\{\\}>\"\\}");
  EXPECT_HLO_LINE(hlo, "custom-call\\(%tanh\\), custom_call_target=\"xla.sdy.FuncResultSharding\", custom_call_has_side_effect=true");
}

TEST(StableHloSdy, SubAxesReplicatedAxesAndDeviceIdsPropagate) {
  std::unique_ptr<Module> module = Propagated(R"(module @m {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func public @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"y"}], replicated={"x":(2)2}>}) -> tensor<8x4xf32> {
    %0 = stablehlo.negate %a : tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
})");
  // "x":(1)2 is the major half of x: devices {0..3} and {4..7} split dim 0; y splits dim 1.
  Sharding expected = ParseSharding("{devices=[2,2,2]<=[2,2,2]T(0,2,1) last_tile_dim_replicate}");
  EXPECT_EQ(*Named(*module, "Arg_0").sharding(), expected) << ShardingOf(*module, "Arg_0");
  EXPECT_EQ(*Named(*module, "negate").sharding(), expected) << ShardingOf(*module, "negate");
}

TEST(StableHloSdy, BadShardingsAreErrorsAtTheAttribute) {
  ExpectErrorAt(R"(module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}]>}) -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
})", 3, 53, "axis 'z' is not in mesh['x'=2]");
  ExpectErrorAt(R"(module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@nomesh, [{"x"}]>}) -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
})", 3, 53, "unknown mesh @nomesh");
  ExpectErrorAt(R"(module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<4x4xf32> {
    return %a : tensor<4x4xf32>
  }
})", 3, 55, "has 1 dimension shardings but the value is f32[4,4] (rank 2)");
  ExpectErrorAt(R"(func.func @main(%a: tensor<4xf32> {mhlo.sharding = "{devices=[3]<=[3]"}) -> tensor<4xf32> {
  return %a : tensor<4xf32>
})", 1, 52, "bad mhlo.sharding");
  ExpectErrorAt(R"(func.func @main(%a: tensor<4xf32> {mhlo.sharding = "{devices=[2,2]<=[4]}"}) -> tensor<4xf32> {
  return %a : tensor<4xf32>
})", 1, 52, "does not fit f32[4]");
}

TEST(StableHloSdy, UserPrioritiesPropagateInRounds) {
  // x's sharding has more tiles, but y's has the higher priority (p0 < p1): the sum follows y.
  auto program = [](const std::string& x_priority, const std::string& y_priority) {
    return R"(module @m {
  sdy.mesh @mesh = <["a"=2, "b"=2, "c"=2]>
  func.func public @main(%x: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "b"})" + x_priority +
           R"(, {}]>}, %y: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"c"})" + y_priority + R"(, {}]>}) -> tensor<8x8xf32> {
    %0 = stablehlo.add %x, %y : tensor<8x8xf32>
    %1 = stablehlo.multiply %0, %0 : tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }
})";
  };
  std::unique_ptr<Module> plain = Propagated(program("", ""));
  EXPECT_EQ(ShardingOf(*plain, "add"), ShardingOf(*plain, "Arg_0"));
  std::unique_ptr<Module> prioritized = Propagated(program("p1", "p0"));
  EXPECT_EQ(ShardingOf(*prioritized, "add"), ShardingOf(*prioritized, "Arg_1"));
  EXPECT_EQ(ShardingOf(*prioritized, "multiply"), ShardingOf(*prioritized, "Arg_1"));
  // The user's shardings stay as written, whatever their priority.
  EXPECT_EQ(ShardingOf(*prioritized, "Arg_0"), ShardingOf(*plain, "Arg_0"));
}

TEST(StableHloSdy, ConstraintReshardAndGroup) {
  std::string text = R"(module @m {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
    %0 = sdy.sharding_constraint %a <@mesh, [{"x"}, {}]> : tensor<4x4xf32>
    %1 = stablehlo.exponential %0 : tensor<4x4xf32>
    %2 = sdy.reshard %1 <@mesh, [{}, {"y"}]> : tensor<4x4xf32>
    %3 = stablehlo.abs %b : tensor<4x4xf32>
    sdy.sharding_group %3 group_id=4 : tensor<4x4xf32>
    sdy.sharding_group %1 group_id=4 : tensor<4x4xf32>
    return %2, %3 : tensor<4x4xf32>, tensor<4x4xf32>
  }
})";
  std::string hlo = Hlo(text);
  EXPECT_HLO_LINE(hlo, "custom-call\\(%Arg_0\\), custom_call_target=\"Sharding\", frontend_attributes=\\{xla.sdy.sharding=\"#sdy.sharding_per_value<\\[<@mesh, \\[\\{\\\\\"x\\\\\"\\}, \\{\\}\\]>\\]>\"\\}");
  EXPECT_HLO_LINE(hlo, "custom-call\\(%exponential\\), custom_call_target=\"xla.sdy.Sharding\"");
  EXPECT_HLO_LINE(hlo, "\\(\\) custom-call\\(%abs\\), custom_call_target=\"xla.sdy.ShardingGroup\", custom_call_has_side_effect=true, "
                       "frontend_attributes=\\{xla.sdy.sharding_group_id=\"4\"\\}");
  std::unique_ptr<Module> module = Propagated(text);
  // The constraint shards exponential along x, the reshard's operand wants y: both fit. The
  // group ties abs to exponential.
  EXPECT_EQ(*Named(*module, "exponential").sharding(), ParseSharding("{devices=[2,2]<=[4]}")) << ShardingOf(*module, "exponential");
  EXPECT_EQ(*Named(*module, "abs").sharding(), *Named(*module, "exponential").sharding());
  ExpectValue(Eval(text, {F32({4, 4}, std::vector<double>(16, 0)), F32({4, 4}, std::vector<double>(16, -2))}).tuple_elements()[1],
              F32({4, 4}, std::vector<double>(16, 2)));
}

TEST(StableHloSdy, PropagationBarrierDirections) {
  auto program = [](const std::string& direction) {
    return R"(module @m {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
    %0 = sdy.propagation_barrier %a allowed_direction=)" + direction + R"( : tensor<8xf32>
    %1 = stablehlo.negate %0 : tensor<8xf32>
    %2 = stablehlo.negate %b : tensor<8xf32>
    %3 = sdy.propagation_barrier %2 allowed_direction=)" + direction + R"( : tensor<8xf32>
    %4 = sdy.sharding_constraint %3 <@mesh, [{"x"}]> : tensor<8xf32>
    return %1, %4 : tensor<8xf32>, tensor<8xf32>
  }
})";
  };
  const std::optional<Sharding> sharded = ParseSharding("{devices=[4]<=[4]}");
  // The result tuple has a sharded element, so its other one is replicated (XLA's tuple
  // shardings are whole); a value the barrier keeps every sharding from keeps none, as in XLA
  // (the partitioner replicates it).
  const std::optional<Sharding> replicated = Sharding::Replicated();
  const std::optional<Sharding> none_reached;
  std::unique_ptr<Module> none = Propagated(program("NONE"));
  EXPECT_TRUE(Named(*none, "negate").sharding() == replicated) << ShardingOf(*none, "negate");
  EXPECT_TRUE(Named(*none, "negate.1").sharding() == none_reached) << ShardingOf(*none, "negate.1");
  std::unique_ptr<Module> forward = Propagated(program("FORWARD"));
  EXPECT_TRUE(Named(*forward, "negate").sharding() == sharded) << ShardingOf(*forward, "negate");
  EXPECT_TRUE(Named(*forward, "negate.1").sharding() == none_reached) << ShardingOf(*forward, "negate.1");
  std::unique_ptr<Module> backward = Propagated(program("BACKWARD"));
  EXPECT_TRUE(Named(*backward, "negate").sharding() == replicated) << ShardingOf(*backward, "negate");
  EXPECT_TRUE(Named(*backward, "negate.1").sharding() == sharded) << ShardingOf(*backward, "negate.1");
}

TEST(StableHloSdy, ManualComputationRunsOnDevices) {
  std::string text = R"(module @m attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["d"=4]>
  func.func public @main(%x: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}) -> tensor<1x2xf32> {
    %0 = sdy.manual_computation(%x) in_shardings=[<@mesh, [{"d"}, {}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"d"} (%l: tensor<2x2xf32>) {
      %c = stablehlo.constant dense<0.0> : tensor<f32>
      %s = stablehlo.reduce(%l init: %c) applies stablehlo.add across dimensions = [0] : (tensor<2x2xf32>, tensor<f32>) -> tensor<2xf32>
      %r = stablehlo.reshape %s : (tensor<2xf32>) -> tensor<1x2xf32>
      %a = "stablehlo.all_reduce"(%r) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%p: tensor<f32>, %q: tensor<f32>):
        %t = stablehlo.add %p, %q : tensor<f32>
        stablehlo.return %t : tensor<f32>
      }) : (tensor<1x2xf32>) -> tensor<1x2xf32>
      sdy.return %a : tensor<1x2xf32>
    } : (tensor<8x2xf32>) -> tensor<1x2xf32>
    return %0 : tensor<1x2xf32>
  }
})";
  std::string hlo = Hlo(text);
  EXPECT_HLO_LINE(hlo, "f32\\[2,2\\]\\{1,0\\} custom-call\\(%Arg_0\\), custom_call_target=\"xla.sdy.GlobalToLocalShape\"");
  EXPECT_HLO_LINE(hlo, "call\\(%custom-call\\), to_apply=%xla.sdy.manual_computation_body");
  EXPECT_HLO_LINE(hlo, "custom_call_target=\"xla.sdy.LocalToGlobalShape\"");
  // A local body shape that does not fit the in_shardings is an error.
  std::string wrong = text;
  wrong.replace(wrong.find("in_shardings=[<@mesh, [{\"d\"}, {}]>]"), 35, "in_shardings=[<@mesh, [{}, {}]>]");
  EXPECT_NE(ReadError(wrong).find("argument 0 of the body (local shapes) region of sdy.manual_computation is tensor<2x2xf32>, "
                                  "expected tensor<8x2xf32>"), std::string::npos) << ReadError(wrong);
  std::unique_ptr<Module> module = Read(text);
  PropagateShardings(*module);
  PartitionResult partitioned = PartitionModule(*module);
  std::vector<double> values(16);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  std::vector<Literal> inputs = {F32({8, 2}, values)};
  std::vector<Literal> outputs = RunSpmd(*partitioned.module, inputs, OptionsFromLikeModule(*partitioned.module, module.get()));
  // Column sums of the whole array.
  ExpectValue(outputs[0], F32({1, 2}, {56, 64}));
}

TEST(StableHloSdy, NamedComputationIsACall) {
  std::string text = R"(func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = sdy.named_computation<"double">(%x) (%arg1: tensor<3xf32>) {
    %1 = stablehlo.add %arg1, %arg1 : tensor<3xf32>
    sdy.return %1 : tensor<3xf32>
  } : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
})";
  EXPECT_HLO_LINE(Hlo(text), "call\\(%Arg_0\\), to_apply=%double");
  ExpectValue(Eval(text, {F32({3}, {1, 2, 3})}), F32({3}, {2, 4, 6}));
}

TEST(StableHloGspmd, ShardingStringsAndFrontendAttributes) {
  std::string hlo = Hlo(R"(module @m attributes {mhlo.num_partitions = 4 : i32, mhlo.frontend_attributes = {mode = "train"}} {
  func.func public @main(%a: tensor<8xf32> {mhlo.sharding = "{devices=[4]<=[4]}", mhlo.frontend_attributes = {role = "input"}}) -> (tensor<8xf32> {jax.result_info = "r0", mhlo.sharding = "{devices=[2,2]<=[4] last_tile_dim_replicate}"}, tensor<8xf32>) {
    %0 = stablehlo.custom_call @Sharding(%a) {backend_config = "unspecified_dims=[0]", mhlo.sharding = "{replicated}"} : (tensor<8xf32>) -> tensor<8xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<8xf32>) -> tensor<2xf32>
    %2 = stablehlo.custom_call @SPMDShardToFullShape(%1) {mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<2xf32>) -> tensor<8xf32>
    return %0, %2 : tensor<8xf32>, tensor<8xf32>
  }
})");
  EXPECT_HLO_LINE(hlo, "frontend_attributes=\\{mode=\"train\"\\}");
  EXPECT_HLO_LINE(hlo, "parameter\\(0\\), sharding=\\{devices=\\[4\\]<=\\[4\\]\\}, frontend_attributes=\\{role=\"input\"\\}");
  EXPECT_HLO_LINE(hlo, "custom_call_target=\"Sharding\", sharding=\\{replicated\\}, backend_config=\"unspecified_dims=\\[0\\]\"");
  EXPECT_HLO_LINE(hlo, "f32\\[2\\]\\{0\\} custom-call\\(%custom-call\\), custom_call_target=\"SPMDFullToShardShape\", sharding=\\{manual\\}");
  EXPECT_HLO_LINE(hlo, "ROOT %tuple = \\(f32\\[8\\]\\{0\\}, f32\\[8\\]\\{0\\}\\) tuple\\(%custom-call, %custom-call\\.2\\), sharding=\\{\\{devices=\\[2,2\\]<=\\[4\\] last_tile_dim_replicate\\}, \\{replicated\\}\\}");
}

}  // namespace
}  // namespace gspmd
