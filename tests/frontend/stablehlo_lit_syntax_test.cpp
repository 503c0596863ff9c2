// MLIR spellings found in XLA's Shardy lit tests (xla/service/spmd/shardy/test/*.mlir) that the
// StableHLO reader refused: a space between dense and '<', and index-typed dense attributes
// (a custom call's operand_layouts).
#include <gtest/gtest.h>

#include "frontend/stablehlo_test_util.h"

namespace gspmd {
namespace {

using namespace stablehlo_test;  // NOLINT: test helpers

TEST(StableHloLitSyntaxTest, DenseWithASpaceBeforeItsValue) {
  const char* text = R"(func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.constant dense <[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>
  %1 = stablehlo.add %arg0, %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
)";
  ExpectValue(Eval(text, {F32({4}, {1, 1, 1, 1})}), F32({4}, {1, 2, 3, 4}));
}

TEST(StableHloLitSyntaxTest, IndexTypedLayoutsOfACustomCall) {
  const char* text = R"(func.func @main(%arg0: tensor<f64>) -> tensor<f64> {
  %c = stablehlo.constant dense<7> : tensor<i64>
  stablehlo.custom_call @host_callback(%c, %arg0) {api_version = 2 : i32, has_side_effect = true, operand_layouts = [dense<> : tensor<0xindex>, dense<> : tensor<0xindex>], result_layouts = []} : (tensor<i64>, tensor<f64>) -> ()
  return %arg0 : tensor<f64>
}
)";
  std::string hlo = Hlo(text);
  EXPECT_TRUE(HasLine(hlo, "custom-call")) << hlo;
  EXPECT_TRUE(HasLine(hlo, "host_callback")) << hlo;
}

}  // namespace
}  // namespace gspmd
