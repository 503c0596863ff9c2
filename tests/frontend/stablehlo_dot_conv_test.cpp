// StableHLO dot_general (pretty batching/contracting dims and generic #stablehlo.dot), dot,
// and convolution (dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {...},
// the generic #stablehlo.conv<...> and its raw form).
#include <gtest/gtest.h>

#include "frontend/stablehlo_test_util.h"

namespace gspmd {
namespace {

using namespace stablehlo_test;  // NOLINT: test helpers

TEST(StableHloDot, DotGeneralPrettyAndGeneric) {
  std::string pretty = R"(func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
})";
  std::string generic = R"(func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<
      lhs_batching_dimensions = [0],
      rhs_batching_dimensions = [0],
      lhs_contracting_dimensions = [2],
      rhs_contracting_dimensions = [1]
    >,
    precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]
  } : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
})";
  for (const std::string& text : {pretty, generic}) {
    std::string hlo = Hlo(text);
    EXPECT_HLO_LINE(hlo, "dot\\(%Arg_0, %Arg_1\\), lhs_batch_dims=\\{0\\}, lhs_contracting_dims=\\{2\\}, "
                         "rhs_batch_dims=\\{0\\}, rhs_contracting_dims=\\{1\\}");
  }
  std::vector<double> a(24), b(40);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 5) - 2;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 3) + 0.5;
  Literal x = F32({2, 3, 4}, a), y = F32({2, 4, 5}, b);
  Literal expected = EvalHlo(R"(HloModule m
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[2,4,5] parameter(1)
  ROOT d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})", {x, y});
  EXPECT_TRUE(Eval(pretty, {x, y}).BitwiseEquals(expected));
  EXPECT_TRUE(Eval(generic, {x, y}).BitwiseEquals(expected));
}

TEST(StableHloDot, NonDefaultPrecisionAndPlainDot) {
  std::string text = R"(func.func @main(%a: tensor<3x4xf32>, %b: tensor<4xf32>) -> (tensor<3xf32>, tensor<3x3xf32>) {
  %0 = stablehlo.dot %a, %b, precision = [HIGHEST, HIGHEST] : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  %1 = stablehlo.dot_general %a, %a, contracting_dims = [1] x [1] : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3x3xf32>
})";
  std::string hlo = Hlo(text);
  EXPECT_HLO_LINE(hlo, "dot\\(%Arg_0, %Arg_1\\), lhs_contracting_dims=\\{1\\}, rhs_contracting_dims=\\{0\\}, "
                       "operand_precision=\\{highest,highest\\}");
  Literal result = Eval(text, {F32({3, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}), F32({4}, {5, 6, 7, 8})});
  ExpectValue(result.tuple_elements()[0], F32({3}, {5, 6, 7}));
}

TEST(StableHloConvolution, PrettyFormWithWindow) {
  std::string text = R"(func.func @main(%x: tensor<1x4x4x1xf32>, %k: tensor<3x3x1x2xf32>) -> tensor<1x2x4x2xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x4x4x1xf32>, tensor<3x3x1x2xf32>) -> tensor<1x2x4x2xf32>
  return %0 : tensor<1x2x4x2xf32>
})";
  std::string hlo = Hlo(text);
  EXPECT_HLO_LINE(hlo, "convolution\\(%Arg_0, %Arg_1\\), window=\\{size=3x3 stride=2x1 pad=1_1x1_1\\}, dim_labels=b01f_01io->b01f");
  std::vector<double> xs(16), ks(18);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<double>(i);
  for (size_t i = 0; i < ks.size(); ++i) ks[i] = static_cast<double>(i % 4) - 1;
  Literal x = F32({1, 4, 4, 1}, xs), k = F32({3, 3, 1, 2}, ks);
  Literal expected = EvalHlo(R"(HloModule m
ENTRY e {
  x = f32[1,4,4,1] parameter(0)
  k = f32[3,3,1,2] parameter(1)
  ROOT c = f32[1,2,4,2] convolution(x, k), window={size=3x3 stride=2x1 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})", {x, k});
  EXPECT_TRUE(Eval(text, {x, k}).BitwiseEquals(expected));
}

TEST(StableHloConvolution, GenericLabelsRawFormDilationsAndGroups) {
  // NCHW input, OIHW kernel, 2 feature groups, dilated kernel.
  std::string labels = R"(func.func @main(%x: tensor<1x2x5x5xf32>, %k: tensor<2x1x2x2xf32>) -> tensor<1x2x3x3xf32> {
  %0 = "stablehlo.convolution"(%x, %k) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, feature_group_count = 2 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<0> : tensor<2x2xi64>, rhs_dilation = array<i64: 2, 2>, window_reversal = array<i1: false, false>, window_strides = array<i64: 1, 1>}> : (tensor<1x2x5x5xf32>, tensor<2x1x2x2xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
})";
  std::string raw = R"(func.func @main(%x: tensor<1x2x5x5xf32>, %k: tensor<2x1x2x2xf32>) -> tensor<1x2x3x3xf32> {
  %0 = "stablehlo.convolution"(%x, %k) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 1, input_spatial_dimensions = [2, 3], kernel_input_feature_dimension = 1, kernel_output_feature_dimension = 0, kernel_spatial_dimensions = [2, 3], output_batch_dimension = 0, output_feature_dimension = 1, output_spatial_dimensions = [2, 3]>, feature_group_count = 2 : i64, rhs_dilation = dense<2> : tensor<2xi64>, window_strides = dense<1> : tensor<2xi64>} : (tensor<1x2x5x5xf32>, tensor<2x1x2x2xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
})";
  std::vector<double> xs(50), ks(8);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<double>(i % 7);
  for (size_t i = 0; i < ks.size(); ++i) ks[i] = static_cast<double>(i) - 3;
  Literal x = F32({1, 2, 5, 5}, xs), k = F32({2, 1, 2, 2}, ks);
  Literal expected = EvalHlo(R"(HloModule m
ENTRY e {
  x = f32[1,2,5,5] parameter(0)
  k = f32[2,1,2,2] parameter(1)
  ROOT c = f32[1,2,3,3] convolution(x, k), window={size=2x2 rhs_dilate=2x2}, dim_labels=bf01_oi01->bf01, feature_group_count=2
})", {x, k});
  for (const std::string& text : {labels, raw}) {
    std::string hlo = Hlo(text);
    EXPECT_HLO_LINE(hlo, "window=\\{size=2x2 rhs_dilate=2x2\\}, dim_labels=bf01_oi01->bf01, feature_group_count=2");
    EXPECT_TRUE(Eval(text, {x, k}).BitwiseEquals(expected));
  }
}

TEST(StableHloConvolution, WrongResultSizeIsAnError) {
  ExpectErrorAt(R"(func.func @main(%x: tensor<1x4x4x1xf32>, %k: tensor<3x3x1x2xf32>) -> tensor<1x4x4x2xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} : (tensor<1x4x4x1xf32>, tensor<3x3x1x2xf32>) -> tensor<1x4x4x2xf32>
  return %0 : tensor<1x4x4x2xf32>
})", 2, 8, "convolution spatial dimension 0 gives 2 outputs but the result type has 4");
}

}  // namespace
}  // namespace gspmd
