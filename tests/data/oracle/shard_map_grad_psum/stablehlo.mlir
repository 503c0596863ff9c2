module @jit_fn attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<4x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> (tensor<f32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, []>}, tensor<4x3xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.slice %arg0 [2:3, 0:3] : (tensor<4x3xf32>) -> tensor<1x3xf32>
    %1 = stablehlo.abs %0 : tensor<1x3xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x3xf32>
    %3 = stablehlo.compare GE, %0, %2, FLOAT : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xi1>
    %4 = stablehlo.sqrt %1 : tensor<1x3xf32>
    %cst_0 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<1x3xf32>
    %6 = stablehlo.divide %5, %4 : tensor<1x3xf32>
    %7:4 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{}, {}]>] out_shardings=[<@mesh, [{"data", "model"}, {}]>, <@mesh, [{"data", "model"}, {}]>, <@mesh, [{"data", "model"}]>, <@mesh, [{}, {}]>] manual_axes={"data", "model"} (%arg1: tensor<1x3xf32>) {
      %17 = stablehlo.tanh %arg1 : tensor<1x3xf32>
      %cst_8 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %18 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<1x3xf32>
      %19 = stablehlo.subtract %18, %17 : tensor<1x3xf32>
      %cst_9 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %20 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<1x3xf32>
      %21 = stablehlo.multiply %17, %20 : tensor<1x3xf32>
      %cst_10 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %22 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<1x3xf32>
      %23 = stablehlo.add %21, %22 : tensor<1x3xf32>
      %cst_11 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %24 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<1xf32>
      sdy.return %17, %19, %24, %23 : tensor<1x3xf32>, tensor<1x3xf32>, tensor<1xf32>, tensor<1x3xf32>
    } : (tensor<1x3xf32>) -> (tensor<8x3xf32>, tensor<8x3xf32>, tensor<8xf32>, tensor<1x3xf32>)
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.reduce(%7#3 init: %cst_1) applies stablehlo.add across dimensions = [0, 1] : (tensor<1x3xf32>, tensor<f32>) -> tensor<f32>
    %cst_2 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %9 = stablehlo.multiply %8, %cst_2 : tensor<f32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.add %cst_3, %9 : tensor<f32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_5 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %11 = stablehlo.multiply %cst_4, %cst_5 : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [] : (tensor<f32>) -> tensor<1x3xf32>
    %cst_6 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<1x3xf32>
    %14 = stablehlo.divide %12, %13 : tensor<1x3xf32>
    %15 = sdy.manual_computation(%14, %7#0, %7#1, %7#2) in_shardings=[<@mesh, [{}, {}]>, <@mesh, [{"data", "model"}, {}]>, <@mesh, [{"data", "model"}, {}]>, <@mesh, [{"data", "model"}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"data", "model"} (%arg1: tensor<1x3xf32>, %arg2: tensor<1x3xf32>, %arg3: tensor<1x3xf32>, %arg4: tensor<1xf32>) {
      %17 = stablehlo.reshape %arg4 : (tensor<1xf32>) -> tensor<f32>
      %18 = stablehlo.broadcast_in_dim %17, dims = [] : (tensor<f32>) -> tensor<1x3xf32>
      %19 = stablehlo.multiply %arg1, %18 : tensor<1x3xf32>
      %20 = stablehlo.multiply %19, %arg3 : tensor<1x3xf32>
      %21 = stablehlo.multiply %20, %arg2 : tensor<1x3xf32>
      %22 = stablehlo.add %20, %21 : tensor<1x3xf32>
      %23 = "stablehlo.all_reduce"(%22) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
      ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
        %24 = stablehlo.add %arg5, %arg6 : tensor<f32>
        stablehlo.return %24 : tensor<f32>
      }) : (tensor<1x3xf32>) -> tensor<1x3xf32>
      sdy.return %23 : tensor<1x3xf32>
    } : (tensor<1x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8xf32>) -> tensor<1x3xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %16 = stablehlo.pad %15, %cst_7, low = [2, 0], high = [1, 0], interior = [0, 0] : (tensor<1x3xf32>, tensor<f32>) -> tensor<4x3xf32>
    return %10, %16 : tensor<f32>, tensor<4x3xf32>
  }
}
