module @jit_fn attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x1x1xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<5x1xf32> {jax.result_info = "result[0]"}, tensor<5x3xf32> {jax.result_info = "result[1]", mhlo.sharding = "{replicated}"}) {
    %c = stablehlo.constant dense<0> : tensor<3xi32>
    %0 = stablehlo.reshape %arg0 : (tensor<5x1x1xf32>) -> tensor<5x1xf32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %1:4 = stablehlo.while(%iterArg = %0, %iterArg_12 = %c_1, %iterArg_13 = %c_0, %iterArg_14 = %0) : tensor<5x1xf32>, tensor<i32>, tensor<i32>, tensor<5x1xf32>
    cond {
      %c_15 = stablehlo.constant dense<2> : tensor<i32>
      %13 = stablehlo.compare LT, %iterArg_12, %c_15, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %13 : tensor<i1>
    } do {
      %13:2 = func.call @closed_call(%iterArg, %iterArg_13, %iterArg_14) : (tensor<5x1xf32>, tensor<i32>, tensor<5x1xf32>) -> (tensor<i32>, tensor<5x1xf32>)
      %c_15 = stablehlo.constant dense<1> : tensor<i32>
      %14 = stablehlo.add %iterArg_12, %c_15 : tensor<i32>
      stablehlo.return %iterArg, %14, %13#0, %13#1 : tensor<5x1xf32>, tensor<i32>, tensor<i32>, tensor<5x1xf32>
    }
    %2 = stablehlo.reshape %0 : (tensor<5x1xf32>) -> tensor<5xf32>
    %3 = stablehlo.slice %2 [0:3] : (tensor<5xf32>) -> tensor<3xf32>
    %4 = stablehlo.reshape %3 : (tensor<3xf32>) -> tensor<3x1xf32>
    %c_2 = stablehlo.constant dense<2> : tensor<i32>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.compare LT, %c_2, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_4 = stablehlo.constant dense<2> : tensor<i32>
    %c_5 = stablehlo.constant dense<5> : tensor<i32>
    %6 = stablehlo.add %c_4, %c_5 : tensor<i32>
    %c_6 = stablehlo.constant dense<2> : tensor<i32>
    %7 = stablehlo.select %5, %6, %c_6 : tensor<i1>, tensor<i32>
    %c_7 = stablehlo.constant dense<1> : tensor<i32>
    %c_8 = stablehlo.constant dense<0> : tensor<i32>
    %8 = stablehlo.compare LT, %c_7, %c_8, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_9 = stablehlo.constant dense<1> : tensor<i32>
    %c_10 = stablehlo.constant dense<1> : tensor<i32>
    %9 = stablehlo.add %c_9, %c_10 : tensor<i32>
    %c_11 = stablehlo.constant dense<1> : tensor<i32>
    %10 = stablehlo.select %8, %9, %c_11 : tensor<i1>, tensor<i32>
    %11 = stablehlo.dynamic_update_slice %0, %4, %7, %10 : (tensor<5x1xf32>, tensor<3x1xf32>, tensor<i32>, tensor<i32>) -> tensor<5x1xf32>
    %12 = call @_take(%11, %c) : (tensor<5x1xf32>, tensor<3xi32>) -> tensor<5x3xf32>
    return %11, %12 : tensor<5x1xf32>, tensor<5x3xf32>
  }
  func.func private @closed_call(%arg0: tensor<5x1xf32>, %arg1: tensor<i32>, %arg2: tensor<5x1xf32>) -> (tensor<i32>, tensor<5x1xf32>) {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %0 = stablehlo.add %arg1, %c : tensor<i32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5x1xf32>
    %2 = stablehlo.multiply %arg2, %1 : tensor<5x1xf32>
    %3 = stablehlo.add %2, %arg0 : tensor<5x1xf32>
    %4 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<f32>) -> tensor<5x1xf32>
    %6 = stablehlo.add %3, %5 : tensor<5x1xf32>
    return %0, %6 : tensor<i32>, tensor<5x1xf32>
  }
  func.func private @_take(%arg0: tensor<5x1xf32>, %arg1: tensor<3xi32>) -> tensor<5x3xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<3xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<3xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<3xi32>
    %4 = call @_where(%1, %3, %arg1) : (tensor<3xi1>, tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<3xi32>) -> tensor<3x1xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<3x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [1] : (tensor<1xi32>) -> tensor<1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<1x1xi32>) -> tensor<3x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<3x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [1] : (tensor<3x1xi1>, tensor<i1>) -> tensor<3xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 5, 1>}> : (tensor<5x1xf32>, tensor<3x1xi32>) -> tensor<5x3xf32>
    %14 = stablehlo.broadcast_in_dim %12, dims = [1] : (tensor<3xi1>) -> tensor<5x3xi1>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5x3xf32>
    %16 = stablehlo.select %14, %13, %15 : tensor<5x3xi1>, tensor<5x3xf32>
    return %16 : tensor<5x3xf32>
  }
  func.func private @_where(%arg0: tensor<3xi1>, %arg1: tensor<3xi32>, %arg2: tensor<3xi32>) -> tensor<3xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<3xi1>, tensor<3xi32>
    return %0 : tensor<3xi32>
  }
}
