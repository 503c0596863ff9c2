// StableHLO gather and scatter with their dimension numbers (including batching dims), and
// the checks of those numbers.
#include <gtest/gtest.h>

#include "frontend/stablehlo_test_util.h"

namespace gspmd {
namespace {

using namespace stablehlo_test;  // NOLINT: test helpers

TEST(StableHloGather, EmbeddingLookup) {
  // jnp.take(table, ids, axis=0) as JAX lowers it.
  std::string text = R"(func.func @main(%table: tensor<4x2xf32>, %ids: tensor<3x1xi32>) -> tensor<3x2xf32> {
  %0 = "stablehlo.gather"(%table, %ids) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 2>}> : (tensor<4x2xf32>, tensor<3x1xi32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
})";
  EXPECT_HLO_LINE(Hlo(text), "gather\\(%Arg_0, %Arg_1\\), offset_dims=\\{1\\}, collapsed_slice_dims=\\{0\\}, "
                             "start_index_map=\\{0\\}, index_vector_dim=1, slice_sizes=\\{1,2\\}");
  ExpectValue(Eval(text, {F32({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31}), S32({3, 1}, {2, 0, 3})}),
              F32({3, 2}, {20, 21, 0, 1, 30, 31}));
}

TEST(StableHloGather, BatchingDims) {
  std::string text = R"(func.func @main(%x: tensor<2x3xf32>, %i: tensor<2x1xi32>) -> tensor<2xf32> {
  %0 = "stablehlo.gather"(%x, %i) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1>}> : (tensor<2x3xf32>, tensor<2x1xi32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
})";
  EXPECT_HLO_LINE(Hlo(text), "operand_batching_dims=\\{0\\}, start_indices_batching_dims=\\{0\\}");
  ExpectValue(Eval(text, {F32({2, 3}, {1, 2, 3, 4, 5, 6}), S32({2, 1}, {2, 0})}), F32({2}, {3, 4}));
}

TEST(StableHloScatter, AddsUpdatesAtIndices) {
  std::string text = R"(func.func @main(%x: tensor<4xf32>, %i: tensor<3x1xi32>, %u: tensor<3xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) : (tensor<4xf32>, tensor<3x1xi32>, tensor<3xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
})";
  EXPECT_HLO_LINE(Hlo(text), "scatter\\(%Arg_0, %Arg_1, %Arg_2\\), update_window_dims=\\{\\}, inserted_window_dims=\\{0\\}, "
                             "scatter_dims_to_operand_dims=\\{0\\}, index_vector_dim=1, to_apply=%region");
  ExpectValue(Eval(text, {F32({4}, {1, 1, 1, 1}), S32({3, 1}, {0, 2, 0}), F32({3}, {5, 6, 7})}), F32({4}, {13, 1, 7, 1}));
}

TEST(StableHloScatter, TwoInputsGiveTwoResults) {
  std::string text = R"(func.func @main(%x: tensor<3xf32>, %y: tensor<3xi32>, %i: tensor<1x1xi32>, %u: tensor<1xf32>, %v: tensor<1xi32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %0:2 = "stablehlo.scatter"(%x, %y, %i, %u, %v) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<i32>, %c: tensor<f32>, %d: tensor<i32>):
    stablehlo.return %c, %d : tensor<f32>, tensor<i32>
  }) : (tensor<3xf32>, tensor<3xi32>, tensor<1x1xi32>, tensor<1xf32>, tensor<1xi32>) -> (tensor<3xf32>, tensor<3xi32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xi32>
})";
  Literal result = Eval(text, {F32({3}, {1, 2, 3}), S32({3}, {4, 5, 6}), S32({1, 1}, {1}), F32({1}, {9}), S32({1}, {7})});
  ExpectValue(result.tuple_elements()[0], F32({3}, {1, 9, 3}));
  ExpectValue(result.tuple_elements()[1], S32({3}, {4, 7, 6}));
  // The update region's arguments are the inputs' elements, then the updates' elements.
  std::string swapped = text;
  swapped.replace(swapped.find("%b: tensor<i32>"), 15, "%b: tensor<f32>");
  ExpectErrorAt(swapped, 2, 188, "argument 1 of the update region of stablehlo.scatter is tensor<f32>, expected tensor<i32>");
}

TEST(StableHloGather, BadDimensionNumbersAreErrors) {
  ExpectErrorAt(R"(func.func @main(%t: tensor<4x2xf32>, %i: tensor<3x1xi32>) -> tensor<3x2xf32> {
  %0 = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [5], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 2>}> : (tensor<4x2xf32>, tensor<3x1xi32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
})", 2, 8, "collapsed_slice_dims has dimension 5, out of range");
  ExpectErrorAt(R"(func.func @main(%t: tensor<4x2xf32>, %i: tensor<3x1xi32>) -> tensor<3x2xf32> {
  %0 = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], bogus = [0]>, slice_sizes = array<i64: 1, 2>}> : (tensor<4x2xf32>, tensor<3x1xi32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
})", 2, 94, "unknown field bogus of #stablehlo.gather");
}

}  // namespace
}  // namespace gspmd
