// StableHLO ops with regions over scalars: reduce (compact `applies` form, region form with
// reducer(...) pairs, generic form, several inputs), reduce_window, select_and_scatter, sort
// with its comparator, and map.
#include <gtest/gtest.h>

#include "frontend/stablehlo_test_util.h"

namespace gspmd {
namespace {

using namespace stablehlo_test;  // NOLINT: test helpers

TEST(StableHloReduce, CompactAppliesForm) {
  std::string text = R"(func.func @main(%x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<3xf32>) {
  %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %m = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %1 = stablehlo.reduce(%x init: %m) applies stablehlo.maximum across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0, %1 : tensor<2xf32>, tensor<3xf32>
})";
  std::string hlo = Hlo(text);
  EXPECT_HLO_LINE(hlo, "reduce\\(%Arg_0, %constant\\), dimensions=\\{1\\}, to_apply=%region");
  EXPECT_HLO_LINE(hlo, "ROOT %add = f32\\[\\] add\\(%Arg_0(\\.[0-9]+)?, %Arg_1(\\.[0-9]+)?\\)");
  Literal result = Eval(text, {F32({2, 3}, {1, 5, 2, -1, -3, 4})});
  ExpectValue(result.tuple_elements()[0], F32({2}, {8, 0}));
  ExpectValue(result.tuple_elements()[1], F32({3}, {1, 5, 4}));
}

// Reduces applying the same op to the same types share one reducer computation, as XLA's
// text shares them; another op or another type gets its own.
TEST(StableHloReduce, CompactReducersAreSharedPerOpAndType) {
  std::string text = R"(func.func @main(%x: tensor<2x3xf32>, %i: tensor<2x3xi32>) -> (tensor<2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xi32>) {
  %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %z = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %1 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
  %2 = stablehlo.reduce(%x init: %c) applies stablehlo.maximum across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
  %3 = stablehlo.reduce(%i init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x3xi32>, tensor<i32>) -> tensor<2xi32>
  return %0, %1, %2, %3 : tensor<2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xi32>
})";
  std::unique_ptr<Module> module = Read(text);
  std::vector<const Computation*> reducers;
  for (const auto& instruction : module->entry()->instructions())
    if (instruction->opcode() == Opcode::kReduce) reducers.push_back(instruction->to_apply());
  ASSERT_EQ(reducers.size(), 4u);
  EXPECT_EQ(reducers[0], reducers[1]);
  EXPECT_NE(reducers[0], reducers[2]);
  EXPECT_NE(reducers[0], reducers[3]);
  EXPECT_EQ(module->computations().size(), 4u);  // main and three reducers
  Literal result = Eval(text, {F32({2, 3}, {1, 5, 2, -1, -3, 4}), S32({2, 3}, {1, 2, 3, 4, 5, 6})});
  ExpectValue(result.tuple_elements()[0], F32({2}, {8, 0}));
  ExpectValue(result.tuple_elements()[1], F32({3}, {0, 2, 6}));
  ExpectValue(result.tuple_elements()[2], F32({3}, {1, 5, 4}));
  ExpectValue(result.tuple_elements()[3], S32({2}, {6, 15}));
}

// A region's values are numbered on from its parent's (%1000 inside a function whose values
// reach %999); the region reads them, and the parent's numbers after the region too.
TEST(StableHloReduce, RegionNumbersContinueTheParents) {
  std::string text = R"(func.func @main(%x: tensor<4xi32>) -> tensor<i32> {
  %999 = stablehlo.constant dense<1> : tensor<i32>
  %1000 = "stablehlo.reduce"(%x, %999) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %1001 = stablehlo.multiply %a, %b : tensor<i32>
    %1002 = stablehlo.maximum %1001, %999 : tensor<i32>
    "stablehlo.return"(%1002) : (tensor<i32>) -> ()
  }) : (tensor<4xi32>, tensor<i32>) -> tensor<i32>
  %1003 = stablehlo.add %1000, %999 : tensor<i32>
  %5 = stablehlo.add %1003, %1003 : tensor<i32>
  return %5 : tensor<i32>
})";
  // max(product, 1) = 24, then (24 + 1) * 2.
  ExpectValue(Eval(text, {S32({4}, {1, 2, 3, 4})}), S32({}, {50}));
}

TEST(StableHloReduce, RegionFormWithTwoInputsIsArgmax) {
  std::string text = R"(func.func @main(%x: tensor<2x4xf32>) -> tensor<2xi32> {
  %0 = stablehlo.iota dim = 1 : tensor<2x4xi32>
  %1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %2 = stablehlo.constant dense<0> : tensor<i32>
  %3:2 = stablehlo.reduce(%x init: %1), (%0 init: %2) across dimensions = [1] : (tensor<2x4xf32>, tensor<2x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)
   reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
    %4 = stablehlo.compare  GT, %arg1, %arg3,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %5 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f32>
    %6 = stablehlo.select %4, %arg2, %arg4 : tensor<i1>, tensor<i32>
    stablehlo.return %5, %6 : tensor<f32>, tensor<i32>
  }
  return %3#1 : tensor<2xi32>
})";
  std::string hlo = Hlo(text);
  EXPECT_HLO_LINE(hlo, "\\(f32\\[2\\]\\{0\\}, s32\\[2\\]\\{0\\}\\) reduce\\(%Arg_0, %iota, %constant, %constant\\.1\\)");
  ExpectValue(Eval(text, {F32({2, 4}, {1, 7, 3, 2, 9, -1, 9.5, 0})}), S32({2}, {1, 2}));
}

TEST(StableHloReduce, GenericFormWithBlockArguments) {
  std::string text = R"(func.func @main(%x: tensor<4xi32>) -> tensor<i32> {
  %c = stablehlo.constant dense<1> : tensor<i32>
  %0 = "stablehlo.reduce"(%x, %c) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %1 = stablehlo.multiply %a, %b : tensor<i32>
    "stablehlo.return"(%1) : (tensor<i32>) -> ()
  }) : (tensor<4xi32>, tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
})";
  ExpectValue(Eval(text, {S32({4}, {1, 2, 3, 4})}), S32({}, {24}));
}

TEST(StableHloReduce, ReduceWindowIsCumulativeSum) {
  // jnp.cumsum lowers to this reduce_window.
  std::string text = R"(func.func @main(%x: tensor<2x4xi32>) -> tensor<2x4xi32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0 = "stablehlo.reduce_window"(%x, %c) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [3, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 4>, window_strides = array<i64: 1, 1>}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %1 = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %1 : tensor<i32>
  }) : (tensor<2x4xi32>, tensor<i32>) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
})";
  EXPECT_HLO_LINE(Hlo(text), "reduce-window\\(%Arg_0, %constant\\), window=\\{size=1x4 pad=0_0x3_0\\}, to_apply=%region");
  ExpectValue(Eval(text, {S32({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})}), S32({2, 4}, {1, 3, 6, 10, 5, 11, 18, 26}));
}

TEST(StableHloReduce, SelectAndScatterIsMaxPoolGradient) {
  std::string text = R"(func.func @main(%x: tensor<4xf32>, %g: tensor<2xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.select_and_scatter"(%x, %g, %zero) <{padding = dense<0> : tensor<1x2xi64>, window_dimensions = array<i64: 2>, window_strides = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) : (tensor<4xf32>, tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
})";
  EXPECT_HLO_LINE(Hlo(text), "select-and-scatter\\(%Arg_0, %Arg_1, %constant\\), window=\\{size=2 stride=2\\}, select=%region, scatter=%region\\.1");
  ExpectValue(Eval(text, {F32({4}, {1, 3, 5, 2}), F32({2}, {10, 20})}), F32({4}, {0, 10, 20, 0}));
}

TEST(StableHloReduce, SortWithComparatorOverTwoInputs) {
  std::string text = R"(func.func @main(%k: tensor<4xf32>, %v: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>) {
  %0:2 = "stablehlo.sort"(%k, %v) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %1 = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) : (tensor<4xf32>, tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<4xi32>
})";
  EXPECT_HLO_LINE(Hlo(text), "sort\\(%Arg_0, %Arg_1\\), dimensions=\\{0\\}, is_stable=true, to_apply=%region");
  Literal result = Eval(text, {F32({4}, {2, 9, 1, 5}), S32({4}, {0, 1, 2, 3})});
  ExpectValue(result.tuple_elements()[0], F32({4}, {9, 5, 2, 1}));
  ExpectValue(result.tuple_elements()[1], S32({4}, {1, 3, 0, 2}));
}

TEST(StableHloReduce, DefaultSortDimensionIsTheLast) {
  std::string text = R"(func.func @main(%k: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = "stablehlo.sort"(%k) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %1 = stablehlo.compare LT, %a, %b : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) : (tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
})";
  ExpectValue(Eval(text, {S32({2, 3}, {3, 1, 2, 0, 9, -4})}), S32({2, 3}, {1, 2, 3, -4, 0, 9}));
}

TEST(StableHloReduce, MapAppliesItsComputationPerElement) {
  std::string text = R"(func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "stablehlo.map"(%a, %b) <{dimensions = array<i64: 0>}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %1 = stablehlo.multiply %x, %y : tensor<f32>
    %2 = stablehlo.add %1, %x : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
})";
  ExpectValue(Eval(text, {F32({3}, {1, 2, 3}), F32({3}, {4, 5, 6})}), F32({3}, {5, 12, 21}));
}

TEST(StableHloReduce, RegionMayUseEnclosingConstants) {
  std::string text = R"(func.func @main(%x: tensor<3xf32>) -> tensor<f32> {
  %two = stablehlo.constant dense<2.0> : tensor<f32>
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %c) across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
   reducer(%a: tensor<f32>, %b: tensor<f32>)  {
    %1 = stablehlo.multiply %b, %two : tensor<f32>
    %2 = stablehlo.add %a, %1 : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }
  return %0 : tensor<f32>
})";
  ExpectValue(Eval(text, {F32({3}, {1, 2, 3})}), F32({}, {12}));
}

}  // namespace
}  // namespace gspmd
