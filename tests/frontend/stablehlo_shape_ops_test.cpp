// StableHLO constants (every element type; splat, nested lists, hex data) and data-movement
// ops (iota, broadcast_in_dim, broadcast, reshape, transpose, reverse, concatenate, slice,
// dynamic_slice, dynamic_update_slice, pad, tuples, get_dimension_size) in MLIR text.
#include <gtest/gtest.h>

#include <cmath>

#include <cstring>

#include "frontend/stablehlo_test_util.h"

namespace gspmd {
namespace {

using namespace stablehlo_test;  // NOLINT: test helpers

// The literal of `%0 = stablehlo.constant VALUE : TYPE`.
Literal Constant(const std::string& value, const std::string& type) {
  return Eval("func.func @main() -> " + type + " {\n  %0 = stablehlo.constant " + value + " : " + type +
              "\n  return %0 : " + type + "\n}\n");
}

TEST(StableHloConstants, EveryElementTypeSplatAndList) {
  struct Case {
    const char* type;
    ElementType element;
    const char* splat;
    double splat_value;
    const char* list;
    std::vector<double> list_values;
  };
  const Case cases[] = {
      {"i1", ElementType::kPred, "true", 1, "[true, false, true]", {1, 0, 1}},
      {"i8", ElementType::kS8, "-128", -128, "[127, -1, 0]", {127, -1, 0}},
      {"si8", ElementType::kS8, "-5", -5, "[1, 2, 3]", {1, 2, 3}},
      {"ui8", ElementType::kU8, "255", 255, "[0, 128, 255]", {0, 128, 255}},
      {"i16", ElementType::kS16, "-32768", -32768, "[1, -2, 3]", {1, -2, 3}},
      {"ui16", ElementType::kU16, "65535", 65535, "[1, 2, 3]", {1, 2, 3}},
      {"i32", ElementType::kS32, "-2147483648", -2147483648.0, "[7, -8, 9]", {7, -8, 9}},
      {"si32", ElementType::kS32, "42", 42, "[0x10, 2, 3]", {16, 2, 3}},
      {"ui32", ElementType::kU32, "4294967295", 4294967295.0, "[1, 2, 3]", {1, 2, 3}},
      {"i64", ElementType::kS64, "-9", -9, "[1, 2, 3]", {1, 2, 3}},
      {"ui64", ElementType::kU64, "12", 12, "[1, 2, 3]", {1, 2, 3}},
      {"bf16", ElementType::kBF16, "1.500000e+00", 1.5, "[1.0, -2.0, 0.5]", {1, -2, 0.5}},
      {"f16", ElementType::kF16, "-2.5", -2.5, "[0.25, 1.0, 2.0]", {0.25, 1, 2}},
      {"f32", ElementType::kF32, "0.899999976", 0.899999976, "[1.000000e+00, -3.5E-1, 7.0]", {1, -0.35, 7}},
      {"f64", ElementType::kF64, "1.0e-300", 1e-300, "[1.0, 2.0, 3.0]", {1, 2, 3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.type);
    Literal splat = Constant(std::string("dense<") + c.splat + ">", std::string("tensor<2x") + c.type + ">");
    ASSERT_EQ(splat.element_type(), c.element);
    for (int64_t i = 0; i < 2; ++i) EXPECT_DOUBLE_EQ(splat.GetAsDouble(i), static_cast<double>(Literal::FromDoubles(
                                                                                Shape(c.element, {}), std::vector<double>{c.splat_value}).GetAsDouble(0)));
    Literal list = Constant(std::string("dense<") + c.list + ">", std::string("tensor<3x") + c.type + ">");
    ExpectValue(list, Literal::FromDoubles(Shape(c.element, {3}), c.list_values));
  }
}

TEST(StableHloConstants, NestedListsScalarsAndEmpty) {
  ExpectValue(Constant("dense<[[1, 2, 3], [4, 5, 6]]>", "tensor<2x3xi32>"), S32({2, 3}, {1, 2, 3, 4, 5, 6}));
  ExpectValue(Constant("dense<[[[1.0], [2.0]]]>", "tensor<1x2x1xf32>"), F32({1, 2, 1}, {1, 2}));
  ExpectValue(Constant("dense<3>", "tensor<i32>"), S32({}, {3}));
  EXPECT_EQ(Constant("dense<>", "tensor<0xf32>").element_count(), 0);
  EXPECT_EQ(Constant("dense<[]>", "tensor<0x4xf32>").element_count(), 0);
}

TEST(StableHloConstants, HexBitPatternsAndHexData) {
  // MLIR prints inf/nan (and any float) as its bits: 0xFF800000 is -inf.
  Literal neg_inf = Constant("dense<0xFF800000>", "tensor<f32>");
  EXPECT_TRUE(std::isinf(neg_inf.data<float>()[0]) && neg_inf.data<float>()[0] < 0);
  Literal nan = Constant("dense<0x7FC00000>", "tensor<2xf32>");
  EXPECT_TRUE(std::isnan(nan.data<float>()[1]));
  EXPECT_EQ(Constant("dense<0x3FC0>", "tensor<bf16>").GetAsDouble(0), 1.5);
  EXPECT_EQ(Constant("dense<[0x3C00, 0x4000]>", "tensor<2xf16>").GetAsDouble(1), 2.0);
  // Hex data: the raw little-endian elements...
  ExpectValue(Constant("dense<\"0x0000803F00000040\">", "tensor<2xf32>"), F32({2}, {1, 2}));
  ExpectValue(Constant("dense<\"0x01000000FFFFFFFF\">", "tensor<2xi32>"), S32({2}, {1, -1}));
  ExpectValue(Constant("dense<\"0x0100010000\">", "tensor<5xi1>"), Pred({5}, {1, 0, 1, 0, 0}));
  // ...or one element, a splat.
  ExpectValue(Constant("dense<\"0x0000C03F\">", "tensor<3xf32>"), F32({3}, {1.5, 1.5, 1.5}));
  ExpectValue(Constant("dense<\"0x000000000000F03F\">", "tensor<2xf64>"),
              Literal::FromDoubles(Shape(ElementType::kF64, {2}), std::vector<double>{1, 1}));
}

TEST(StableHloConstants, GenericFormAndHloText) {
  std::string text = R"(func.func @main() -> tensor<2xf32> {
  %0 = "stablehlo.constant"() <{value = dense<[5.000000e-01, 2.500000e+00]> : tensor<2xf32>}> : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
})";
  EXPECT_HLO_LINE(Hlo(text), "ROOT %constant = f32\\[2\\]\\{0\\} constant\\(\\{0\\.5, 2\\.5\\}\\)");
}

TEST(StableHloShapeOps, IotaBroadcastReshapeTranspose) {
  std::string text = R"(func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xi32>, tensor<4x2x3xf32>, tensor<3x2xf32>, tensor<6xf32>, tensor<5x2x3xf32>) {
  %0 = stablehlo.iota dim = 1 : tensor<2x3xi32>
  %1 = stablehlo.broadcast_in_dim %x, dims = [1, 2] : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
  %2 = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %3 = stablehlo.reshape %x : (tensor<2x3xf32>) -> tensor<6xf32>
  %4 = stablehlo.broadcast %x, sizes = [5] : (tensor<2x3xf32>) -> tensor<5x2x3xf32>
  return %0, %1, %2, %3, %4 : tensor<2x3xi32>, tensor<4x2x3xf32>, tensor<3x2xf32>, tensor<6xf32>, tensor<5x2x3xf32>
})";
  std::string hlo = Hlo(text);
  EXPECT_HLO_LINE(hlo, "s32\\[2,3\\]\\{1,0\\} iota\\(\\), iota_dimension=1");
  EXPECT_HLO_LINE(hlo, "f32\\[4,2,3\\]\\{2,1,0\\} broadcast\\(%Arg_0\\), dimensions=\\{1,2\\}");
  EXPECT_HLO_LINE(hlo, "transpose\\(%Arg_0\\), dimensions=\\{1,0\\}");
  EXPECT_HLO_LINE(hlo, "f32\\[5,2,3\\]\\{2,1,0\\} broadcast\\(%Arg_0\\), dimensions=\\{1,2\\}");
  Literal result = Eval(text, {F32({2, 3}, {1, 2, 3, 4, 5, 6})});
  ExpectValue(result.tuple_elements()[0], S32({2, 3}, {0, 1, 2, 0, 1, 2}));
  ExpectValue(result.tuple_elements()[2], F32({3, 2}, {1, 4, 2, 5, 3, 6}));
}

TEST(StableHloShapeOps, BroadcastInDimExpandsSizeOneDimsAndReorders) {
  // dims of size 1 that expand are reshaped away; out-of-order dims are transposed first.
  std::string text = R"(func.func @main(%x: tensor<2x1xf32>, %y: tensor<3x2xf32>) -> (tensor<2x4xf32>, tensor<2x3xf32>) {
  %0 = stablehlo.broadcast_in_dim %x, dims = [0, 1] : (tensor<2x1xf32>) -> tensor<2x4xf32>
  %1 = "stablehlo.broadcast_in_dim"(%y) <{broadcast_dimensions = array<i64: 1, 0>}> : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x3xf32>
})";
  std::string hlo = Hlo(text);
  EXPECT_HLO_LINE(hlo, "f32\\[2\\]\\{0\\} reshape\\(%Arg_0\\)");
  EXPECT_HLO_LINE(hlo, "f32\\[2,3\\]\\{1,0\\} transpose\\(%Arg_1\\), dimensions=\\{1,0\\}");
  Literal result = Eval(text, {F32({2, 1}, {7, 8}), F32({3, 2}, {1, 2, 3, 4, 5, 6})});
  ExpectValue(result.tuple_elements()[0], F32({2, 4}, {7, 7, 7, 7, 8, 8, 8, 8}));
  ExpectValue(result.tuple_elements()[1], F32({2, 3}, {1, 3, 5, 2, 4, 6}));
}

TEST(StableHloShapeOps, OlderDenseSpellingsOfIntegerLists) {
  std::string text = R"(func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "stablehlo.transpose"(%x) {permutation = dense<[1, 0]> : tensor<2xi64>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
})";
  EXPECT_HLO_LINE(Hlo(text), "transpose\\(%Arg_0\\), dimensions=\\{1,0\\}");
}

TEST(StableHloShapeOps, ConcatenateSliceReversePad) {
  std::string text = R"(func.func @main(%a: tensor<2x2xf32>, %b: tensor<1x2xf32>) -> (tensor<3x2xf32>, tensor<1x2xf32>, tensor<2x2xf32>, tensor<4x5xf32>) {
  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
  %1 = stablehlo.slice %0 [0:3:2, 1:2] : (tensor<3x2xf32>) -> tensor<2x1xf32>
  %2 = stablehlo.reshape %1 : (tensor<2x1xf32>) -> tensor<1x2xf32>
  %3 = stablehlo.reverse %a, dims = [0, 1] : tensor<2x2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %4 = stablehlo.pad %a, %zero, low = [1, 0], high = [0, 1], interior = [0, 1] : (tensor<2x2xf32>, tensor<f32>) -> tensor<3x4xf32>
  %5 = "stablehlo.pad"(%4, %zero) <{edge_padding_high = array<i64: 1, 0>, edge_padding_low = array<i64: 0, 1>, interior_padding = array<i64: 0, 0>}> : (tensor<3x4xf32>, tensor<f32>) -> tensor<4x5xf32>
  return %0, %2, %3, %5 : tensor<3x2xf32>, tensor<1x2xf32>, tensor<2x2xf32>, tensor<4x5xf32>
})";
  std::string hlo = Hlo(text);
  EXPECT_HLO_LINE(hlo, "concatenate\\(%Arg_0, %Arg_1\\), dimensions=\\{0\\}");
  EXPECT_HLO_LINE(hlo, "slice\\(%concatenate\\), slice=\\{\\[0:3:2\\], \\[1:2:1\\]\\}");
  EXPECT_HLO_LINE(hlo, "pad\\(%Arg_0, %constant\\), padding=1_0_0x0_1_1");
  Literal result = Eval(text, {F32({2, 2}, {1, 2, 3, 4}), F32({1, 2}, {5, 6})});
  ExpectValue(result.tuple_elements()[1], F32({1, 2}, {2, 6}));
  ExpectValue(result.tuple_elements()[2], F32({2, 2}, {4, 3, 2, 1}));
  ExpectValue(result.tuple_elements()[3],
              F32({4, 5}, {0, 0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0, 0}));
}

TEST(StableHloShapeOps, DynamicSliceAndUpdate) {
  std::string text = R"(func.func @main(%x: tensor<4x3xf32>, %i: tensor<i32>, %u: tensor<1x3xf32>) -> (tensor<2x3xf32>, tensor<4x3xf32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.dynamic_slice %x, %i, %c0, sizes = [2, 3] : (tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
  %1 = stablehlo.dynamic_update_slice %x, %u, %i, %c0 : (tensor<4x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<4x3xf32>
})";
  std::string hlo = Hlo(text);
  EXPECT_HLO_LINE(hlo, "dynamic-slice\\(%Arg_0, %Arg_1, %constant\\), dynamic_slice_sizes=\\{2,3\\}");
  Literal result = Eval(text, {F32({4, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}), S32({}, {3}), F32({1, 3}, {-1, -2, -3})});
  // The start is clamped so the slice stays inside: rows 2..3.
  ExpectValue(result.tuple_elements()[0], F32({2, 3}, {6, 7, 8, 9, 10, 11}));
  ExpectValue(result.tuple_elements()[1], F32({4, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, -1, -2, -3}));
}

TEST(StableHloShapeOps, TuplesAndDimensionSizes) {
  std::string text = R"(func.func @main(%x: tensor<4x3xf32>) -> (tensor<3xf32>, tensor<i32>) {
  %t = stablehlo.tuple %x, %x : tuple<tensor<4x3xf32>, tensor<4x3xf32>>
  %e = stablehlo.get_tuple_element %t[1] : (tuple<tensor<4x3xf32>, tensor<4x3xf32>>) -> tensor<4x3xf32>
  %g = "stablehlo.get_tuple_element"(%t) <{index = 0 : i32}> : (tuple<tensor<4x3xf32>, tensor<4x3xf32>>) -> tensor<4x3xf32>
  %s = stablehlo.slice %g [1:2, 0:3] : (tensor<4x3xf32>) -> tensor<1x3xf32>
  %r = stablehlo.reshape %s : (tensor<1x3xf32>) -> tensor<3xf32>
  %n = stablehlo.get_dimension_size %e, dim = 0 : (tensor<4x3xf32>) -> tensor<i32>
  return %r, %n : tensor<3xf32>, tensor<i32>
})";
  std::string hlo = Hlo(text);
  EXPECT_HLO_LINE(hlo, "tuple\\(%Arg_0, %Arg_0\\)");
  EXPECT_HLO_LINE(hlo, "get-tuple-element\\(%tuple\\), index=1");
  Literal result = Eval(text, {F32({4, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})});
  ExpectValue(result.tuple_elements()[0], F32({3}, {3, 4, 5}));
  ExpectValue(result.tuple_elements()[1], S32({}, {4}));
}

}  // namespace
}  // namespace gspmd
