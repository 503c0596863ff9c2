module @jit_fn attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x2x2xbf16> {mhlo.sharding = "{devices=[2,2,1]<=[4]}"}) -> (tensor<1x2x2xbf16> {jax.result_info = "result[0]"}) {
    %c = stablehlo.constant dense<[[[0, 1], [0, 0]], [[0, 0], [0, 0]], [[0, 1], [0, 1]], [[0, 0], [0, 0]], [[1, 0], [0, 0]], [[1, 1], [0, 1]], [[0, 0], [0, 0]], [[0, 1], [1, 0]]]> : tensor<8x2x2xi32>
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<8x2x2xbf16>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<bf16>) -> tensor<8x2x2xbf16>
    %2 = stablehlo.add %1, %0 : tensor<8x2x2xbf16>
    %3 = stablehlo.rsqrt %2 : tensor<8x2x2xbf16>
    %4 = stablehlo.multiply %3, %3 : tensor<8x2x2xbf16>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
    %5 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<bf16>) -> tensor<8x2x2xbf16>
    %6 = stablehlo.add %5, %4 : tensor<8x2x2xbf16>
    %7 = stablehlo.rsqrt %6 : tensor<8x2x2xbf16>
    %8 = call @take_along_axis(%3, %c) : (tensor<8x2x2xbf16>, tensor<8x2x2xi32>) -> tensor<8x2x2xbf16>
    %9 = stablehlo.convert %7 : (tensor<8x2x2xbf16>) -> tensor<8x2x2xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.reduce(%9 init: %cst_1) applies stablehlo.add across dimensions = [0] : (tensor<8x2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [1, 2] : (tensor<2x2xf32>) -> tensor<1x2x2xf32>
    %12 = stablehlo.convert %11 : (tensor<1x2x2xf32>) -> tensor<1x2x2xbf16>
    %13 = stablehlo.sine %12 : tensor<1x2x2xbf16>
    return %13 : tensor<1x2x2xbf16>
  }
  func.func private @take_along_axis(%arg0: tensor<8x2x2xbf16>, %arg1: tensor<8x2x2xi32>) -> tensor<8x2x2xbf16> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8x2x2xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<8x2x2xi32>, tensor<8x2x2xi32>) -> tensor<8x2x2xi1>
    %c_0 = stablehlo.constant dense<2> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<8x2x2xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<8x2x2xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<8x2x2xi1>, tensor<8x2x2xi32>
    %5 = stablehlo.reshape %4 : (tensor<8x2x2xi32>) -> tensor<8x2x2x1xi32>
    %6 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0, 2], start_indices_batching_dims = [0, 2], start_index_map = [1], index_vector_dim = 3>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 1>}> : (tensor<8x2x2xbf16>, tensor<8x2x2x1xi32>) -> tensor<8x2x2xbf16>
    return %6 : tensor<8x2x2xbf16>
  }
}
