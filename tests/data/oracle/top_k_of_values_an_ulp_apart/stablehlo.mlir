module @jit_fn attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x2xf32> {mhlo.sharding = "{replicated}"}, %arg1: tensor<12x5x8xi1> {mhlo.sharding = "{replicated}"}, %arg2: tensor<4x2x7xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<12x20x4xi32> {jax.result_info = "result[0]", mhlo.sharding = "{devices=[2,1,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}) {
    %0 = stablehlo.convert %arg0 : (tensor<6x2xf32>) -> tensor<6x2xbf16>
    %1 = stablehlo.convert %arg1 : (tensor<12x5x8xi1>) -> tensor<12x5x8xf32>
    %2 = stablehlo.reshape %arg0 : (tensor<6x2xf32>) -> tensor<12xf32>
    %3 = stablehlo.reshape %2 : (tensor<12xf32>) -> tensor<1x12xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<1x12xf32>) -> tensor<5x12xf32>
    %5 = stablehlo.reshape %4 : (tensor<5x12xf32>) -> tensor<60xf32>
    %6 = stablehlo.reshape %5 : (tensor<60xf32>) -> tensor<20x1x3xf32>
    %7 = stablehlo.convolution(%1, %6) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [1], pad = [[1, 1]], lhs_dilate = [1], rhs_dilate = [2], reverse = [false]} {batch_group_count = 1 : i64, feature_group_count = 5 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<12x5x8xf32>, tensor<20x1x3xf32>) -> tensor<12x20x6xf32>
    %8 = stablehlo.reshape %arg2 : (tensor<4x2x7xf32>) -> tensor<56xf32>
    %9 = stablehlo.slice %8 [0:36] : (tensor<56xf32>) -> tensor<36xf32>
    %10 = stablehlo.reshape %9 : (tensor<36xf32>) -> tensor<6x6xf32>
    %cst = stablehlo.constant dense<0.0833333358> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6x6xf32>
    %12 = stablehlo.multiply %10, %11 : tensor<6x6xf32>
    %13 = stablehlo.convert %arg1 : (tensor<12x5x8xi1>) -> tensor<12x5x8xi32>
    %14 = stablehlo.abs %13 : tensor<12x5x8xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %15 = stablehlo.reduce(%14 init: %c) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<12x5x8xi32>, tensor<i32>) -> tensor<i32>
    %c_0 = stablehlo.constant dense<5> : tensor<i32>
    %16 = call @remainder(%15, %c_0) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %c_1 = stablehlo.constant dense<1> : tensor<i32>
    %17 = stablehlo.add %16, %c_1 : tensor<i32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %18:4 = stablehlo.while(%iterArg = %17, %iterArg_4 = %12, %iterArg_5 = %c_2, %iterArg_6 = %7) : tensor<i32>, tensor<6x6xf32>, tensor<i32>, tensor<12x20x6xf32>
    cond {
      %25 = stablehlo.compare LT, %iterArg_5, %iterArg, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %25 : tensor<i1>
    } do {
      %c_7 = stablehlo.constant dense<1> : tensor<i32>
      %25 = stablehlo.add %iterArg_5, %c_7 : tensor<i32>
      %26 = stablehlo.dot_general %iterArg_6, %iterArg_4, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<12x20x6xf32>, tensor<6x6xf32>) -> tensor<12x20x6xf32>
      %cst_8 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
      %27 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<12x20x6xf32>
      %28 = stablehlo.multiply %iterArg_6, %27 : tensor<12x20x6xf32>
      %29 = stablehlo.add %26, %28 : tensor<12x20x6xf32>
      %30 = stablehlo.tanh %29 : tensor<12x20x6xf32>
      stablehlo.return %iterArg, %iterArg_4, %25, %30 : tensor<i32>, tensor<6x6xf32>, tensor<i32>, tensor<12x20x6xf32>
    }
    %cst_3 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %19 = stablehlo.reduce(%18#3 init: %cst_3) applies stablehlo.minimum across dimensions = [1, 2] : (tensor<12x20x6xf32>, tensor<f32>) -> tensor<12xf32>
    %20 = stablehlo.convert %arg1 : (tensor<12x5x8xi1>) -> tensor<12x5x8xf32>
    %21 = stablehlo.reshape %20 : (tensor<12x5x8xf32>) -> tensor<480xf32>
    %22 = stablehlo.slice %21 [0:160] : (tensor<480xf32>) -> tensor<160xf32>
    %23 = stablehlo.reshape %22 : (tensor<160xf32>) -> tensor<4x20x2xf32>
    %24 = stablehlo.convolution(%7, %23) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [2], pad = [[2, 2]], lhs_dilate = [1], rhs_dilate = [1], reverse = [false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<12x20x6xf32>, tensor<4x20x2xf32>) -> tensor<12x4x5xf32>
    %values, %indices = chlo.top_k(%18#3, k = 4) : tensor<12x20x6xf32> -> (tensor<12x20x4xf32>, tensor<12x20x4xi32>)
    return %indices : tensor<12x20x4xi32>
  }
  func.func private @remainder(%arg0: tensor<i32>, %arg1: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare EQ, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %2 = call @_where(%1, %c_0, %0) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %3 = stablehlo.remainder %arg0, %2 : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.compare NE, %3, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.compare LT, %3, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.compare LT, %2, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %7 = stablehlo.compare NE, %5, %6, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %8 = stablehlo.and %7, %4 : tensor<i1>
    %9 = stablehlo.add %3, %2 : tensor<i32>
    %10 = stablehlo.select %8, %9, %3 : tensor<i1>, tensor<i32>
    return %10 : tensor<i32>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i32>
    return %0 : tensor<i32>
  }
}
