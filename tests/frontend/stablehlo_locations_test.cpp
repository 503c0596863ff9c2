// MLIR locations become HLO metadata (op_name from name locations, source file and line from
// file locations, through aliases defined after the module, callsites and fused locations),
// and every converted instruction records where its op was written.
#include <gtest/gtest.h>

#include "frontend/stablehlo_test_util.h"

namespace gspmd {
namespace {

using namespace stablehlo_test;  // NOLINT: test helpers

TEST(StableHloLocations, NameFileCallsiteAndFusedLocations) {
  std::string hlo = Hlo(R"(#loc1 = loc("model.py":12:4)
module @m {
  func.func public @main(%x: tensor<4xf32> loc("x")) -> tensor<4xf32> {
    %0 = stablehlo.negate %x : tensor<4xf32> loc(#loc2)
    %1 = stablehlo.exponential %0 : tensor<4xf32> loc("jit(f)/exp"("layers.py":3:1))
    %2 = stablehlo.tanh %1 : tensor<4xf32> loc(#loc4)
    %3 = stablehlo.sine %2 : tensor<4xf32> loc(fused["sine_op", #loc1])
    %4 = stablehlo.abs %3 : tensor<4xf32> loc(unknown)
    return %4 : tensor<4xf32>
  }
}
#loc2 = loc("jit(f)/jit(main)/neg"(#loc1))
#loc3 = loc("caller.py":99:2)
#loc4 = loc(callsite(#loc1 at #loc3))
)");
  EXPECT_HLO_LINE(hlo, "negate\\(%Arg_0\\), metadata=\\{op_name=\"jit\\(f\\)/jit\\(main\\)/neg\" source_file=\"model.py\" source_line=12\\}");
  EXPECT_HLO_LINE(hlo, "exponential\\(%negate\\), metadata=\\{op_name=\"jit\\(f\\)/exp\" source_file=\"layers.py\" source_line=3\\}");
  EXPECT_HLO_LINE(hlo, "tanh\\(%exponential\\), metadata=\\{source_file=\"model.py\" source_line=12\\}");
  EXPECT_HLO_LINE(hlo, "sine\\(%tanh\\), metadata=\\{op_name=\"sine_op\" source_file=\"model.py\" source_line=12\\}");
  EXPECT_HLO_LINE(hlo, "ROOT %abs = f32\\[4\\]\\{0\\} abs\\(%sine\\)$");
}

TEST(StableHloLocations, ExpandedOpsShareTheMetadata) {
  // broadcast_in_dim that expands a size-1 dim becomes reshape + broadcast: both get the op's location.
  std::string hlo = Hlo(R"(func.func @main(%x: tensor<2x1xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.broadcast_in_dim %x, dims = [0, 1] : (tensor<2x1xf32>) -> tensor<2x3xf32> loc("bcast")
  return %0 : tensor<2x3xf32>
})");
  EXPECT_HLO_LINE(hlo, "reshape\\(%Arg_0\\), metadata=\\{op_name=\"bcast\"\\}");
  EXPECT_HLO_LINE(hlo, "broadcast\\(%reshape\\), dimensions=\\{0\\}, metadata=\\{op_name=\"bcast\"\\}");
}

TEST(StableHloLocations, InstructionsRecordWhereTheirOpWasWritten) {
  std::unique_ptr<Module> module = Read("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                                        "  %0 = stablehlo.add %x, %x : tensor<4xf32>\n"
                                        "  %sum = stablehlo.multiply %0, %x : tensor<4xf32>\n"
                                        "  return %sum : tensor<4xf32>\n}\n");
  const Instruction* root = module->entry()->root();
  ASSERT_NE(root->source(), nullptr);
  EXPECT_EQ(root->source()->location.ToString(), "t.mlir:3:10");
  EXPECT_EQ(root->source()->name, "%sum");
}

}  // namespace
}  // namespace gspmd
