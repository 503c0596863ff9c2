module @jit_fn attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1xi1> {mhlo.sharding = "{replicated}"}, %arg1: tensor<8x2xf32> {mhlo.sharding = "{devices=[4,2]<=[2,4]T(1,0)}"}) -> (tensor<f32> {jax.result_info = "result[0]", mhlo.sharding = "{replicated}"}, tensor<8x2xf32> {jax.result_info = "result[1]", mhlo.sharding = "{replicated}"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg1, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[1, 0], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %31 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %31 : tensor<f32>
    }) : (tensor<8x2xf32>, tensor<f32>) -> tensor<8x2xf32>
    %2 = stablehlo.custom_call @Sharding(%arg0) {backend_config = "", mhlo.sharding = "{replicated}"} : (tensor<1xi1>) -> tensor<1xi1>
    %3 = stablehlo.custom_call @SPMDFullToShardShape(%2) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<1xi1>) -> tensor<1xi1>
    %4 = call @shmap_body(%3) : (tensor<1xi1>) -> tensor<1xi1>
    %5 = stablehlo.custom_call @Sharding(%4) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<1xi1>) -> tensor<1xi1>
    %6 = stablehlo.custom_call @SPMDShardToFullShape(%5) {backend_config = "", mhlo.sharding = "{replicated}"} : (tensor<1xi1>) -> tensor<1xi1>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %7:3 = stablehlo.while(%iterArg = %c_0, %iterArg_14 = %c, %iterArg_15 = %6) : tensor<i32>, tensor<i32>, tensor<1xi1>
    cond {
      %c_16 = stablehlo.constant dense<2> : tensor<i32>
      %31 = stablehlo.compare LT, %iterArg, %c_16, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %31 : tensor<i1>
    } do {
      %31:2 = func.call @closed_call(%iterArg_14, %iterArg_15) : (tensor<i32>, tensor<1xi1>) -> (tensor<i32>, tensor<1xi1>)
      %c_16 = stablehlo.constant dense<1> : tensor<i32>
      %32 = stablehlo.add %iterArg, %c_16 : tensor<i32>
      stablehlo.return %32, %31#0, %31#1 : tensor<i32>, tensor<i32>, tensor<1xi1>
    }
    %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<f32>
    %9 = "stablehlo.reduce_window"(%1, %8) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %31 = stablehlo.maximum %arg2, %arg3 : tensor<f32>
      stablehlo.return %31 : tensor<f32>
    }) : (tensor<8x2xf32>, tensor<f32>) -> tensor<8x2xf32>
    %10 = stablehlo.negate %9 : tensor<8x2xf32>
    %11 = stablehlo.exponential %10 : tensor<8x2xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<8x2xf32>
    %13 = stablehlo.add %12, %11 : tensor<8x2xf32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8x2xf32>
    %15 = stablehlo.divide %14, %13 : tensor<8x2xf32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %16 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<8x2xf32>
    %17 = stablehlo.subtract %16, %15 : tensor<8x2xf32>
    %18 = stablehlo.multiply %15, %17 : tensor<8x2xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %19 = stablehlo.reduce(%15 init: %cst_5) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x2xf32>, tensor<f32>) -> tensor<f32>
    %cst_6 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %20 = stablehlo.multiply %19, %cst_6 : tensor<f32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %21 = stablehlo.add %cst_7, %20 : tensor<f32>
    %cst_8 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_9 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %22 = stablehlo.multiply %cst_8, %cst_9 : tensor<f32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [] : (tensor<f32>) -> tensor<8x2xf32>
    %24 = stablehlo.multiply %23, %18 : tensor<8x2xf32>
    %cst_10 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %25 = stablehlo.pad %1, %cst_10, low = [0, 0], high = [1, 0], interior = [0, 0] : (tensor<8x2xf32>, tensor<f32>) -> tensor<9x2xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %26 = "stablehlo.select_and_scatter"(%25, %24, %cst_11) <{padding = dense<0> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %31 = stablehlo.compare GE, %arg2, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %31 : tensor<i1>
    }, {
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %31 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %31 : tensor<f32>
    }) : (tensor<9x2xf32>, tensor<8x2xf32>, tensor<f32>) -> tensor<9x2xf32>
    %27 = stablehlo.slice %26 [0:8, 0:2] : (tensor<9x2xf32>) -> tensor<8x2xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %28 = stablehlo.pad %27, %cst_12, low = [0, 0], high = [1, 0], interior = [0, 0] : (tensor<8x2xf32>, tensor<f32>) -> tensor<9x2xf32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %29 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<f32>
    %30 = "stablehlo.reduce_window"(%28, %29) <{base_dilations = array<i64: 1, 1>, padding = dense<0> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %31 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %31 : tensor<f32>
    }) : (tensor<9x2xf32>, tensor<f32>) -> tensor<8x2xf32>
    return %21, %30 : tensor<f32>, tensor<8x2xf32>
  }
  func.func private @shmap_body(%arg0: tensor<1xi1>) -> (tensor<1xi1> {jax.result_info = "[None]"}) {
    %0 = stablehlo.not %arg0 : tensor<1xi1>
    return %0 : tensor<1xi1>
  }
  func.func private @closed_call(%arg0: tensor<i32>, %arg1: tensor<1xi1>) -> (tensor<i32>, tensor<1xi1>) {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %0 = stablehlo.add %arg0, %c : tensor<i32>
    %c_0 = stablehlo.constant dense<2> : tensor<i32>
    %1 = call @remainder(%arg0, %c_0) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %2 = stablehlo.compare EQ, %1, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_2 = stablehlo.constant dense<false> : tensor<i1>
    %3 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i1>) -> tensor<i1>
    %4 = stablehlo.compare NE, %2, %3, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %5 = stablehlo.convert %4 : tensor<i1>
    %6 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<i1>) -> tensor<1xi1>
    %7 = stablehlo.xor %arg1, %6 : tensor<1xi1>
    return %0, %7 : tensor<i32>, tensor<1xi1>
  }
  func.func private @remainder(%arg0: tensor<i32>, %arg1: tensor<i32>) -> tensor<i32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.compare EQ, %arg1, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %1 = call @_where(%0, %c_0, %arg1) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %2 = stablehlo.remainder %arg0, %1 : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %3 = stablehlo.compare NE, %2, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.compare LT, %2, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.compare LT, %1, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %6 = stablehlo.compare NE, %4, %5, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %7 = stablehlo.and %6, %3 : tensor<i1>
    %8 = stablehlo.add %2, %1 : tensor<i32>
    %9 = stablehlo.select %7, %8, %2 : tensor<i1>, tensor<i32>
    return %9 : tensor<i32>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i32>
    return %0 : tensor<i32>
  }
}
