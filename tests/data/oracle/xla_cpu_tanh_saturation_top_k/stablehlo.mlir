module @jit_fn attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x12x16x4xf32> {mhlo.sharding = "{devices=[1,2,1,1]<=[2]}"}) -> (tensor<2x16x8x1xi32> {jax.result_info = "result[0]"}) {
    %c = stablehlo.constant dense<[1, 0, 1, 1, 1]> : tensor<5xi32>
    %0 = stablehlo.reshape %arg0 : (tensor<2x12x16x4xf32>) -> tensor<1536xf32>
    %1 = stablehlo.reshape %0 : (tensor<1536xf32>) -> tensor<1x1536xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x1536xf32>) -> tensor<2x1536xf32>
    %3 = stablehlo.reshape %2 : (tensor<2x1536xf32>) -> tensor<3072xf32>
    %4 = stablehlo.slice %3 [0:2304] : (tensor<3072xf32>) -> tensor<2304xf32>
    %5 = stablehlo.reshape %4 : (tensor<2304xf32>) -> tensor<4x8x6x12xf32>
    %6 = stablehlo.dot_general %arg0, %5, contracting_dims = [1, 3] x [3, 0], precision = [DEFAULT, DEFAULT] : (tensor<2x12x16x4xf32>, tensor<4x8x6x12xf32>) -> tensor<2x16x8x6xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1, 2, 3] : (tensor<2x12x16x4xf32>, tensor<f32>) -> tensor<2xf32>
    %8 = call @cumsum(%6) : (tensor<2x16x8x6xf32>) -> tensor<2x16x8x6xf32>
    %9 = stablehlo.tanh %6 : tensor<2x16x8x6xf32>
    %10 = stablehlo.exponential %9 : tensor<2x16x8x6xf32>
    %11 = stablehlo.reshape %7 : (tensor<2xf32>) -> tensor<1x2xf32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0, 1] : (tensor<1x2xf32>) -> tensor<3x2xf32>
    %13 = stablehlo.reshape %12 : (tensor<3x2xf32>) -> tensor<6xf32>
    %14 = stablehlo.slice %13 [0:5] : (tensor<6xf32>) -> tensor<5xf32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %15 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %16 = stablehlo.compare LT, %c, %15, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_1 = stablehlo.constant dense<2> : tensor<i32>
    %17 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %18 = stablehlo.add %c, %17 : tensor<5xi32>
    %19 = stablehlo.select %16, %18, %c : tensor<5xi1>, tensor<5xi32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %21 = "stablehlo.scatter"(%7, %20, %14) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %22 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %22 : tensor<f32>
    }) : (tensor<2xf32>, tensor<5x1xi32>, tensor<5xf32>) -> tensor<2xf32>
    %values, %indices = chlo.top_k(%10, k = 1) : tensor<2x16x8x6xf32> -> (tensor<2x16x8x1xf32>, tensor<2x16x8x1xi32>)
    return %indices : tensor<2x16x8x1xi32>
  }
  func.func private @cumsum(%arg0: tensor<2x16x8x6xf32>) -> tensor<2x16x8x6xf32> {
    %0 = call @cumsum_0(%arg0) : (tensor<2x16x8x6xf32>) -> tensor<2x16x8x6xf32>
    return %0 : tensor<2x16x8x6xf32>
  }
  func.func private @cumsum_0(%arg0: tensor<2x16x8x6xf32>) -> tensor<2x16x8x6xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<[[1, 0], [0, 0], [0, 0], [0, 0]]> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 2, 1, 1, 1>, window_strides = array<i64: 1, 1, 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<2x16x8x6xf32>, tensor<f32>) -> tensor<2x16x8x6xf32>
    return %1 : tensor<2x16x8x6xf32>
  }
}
