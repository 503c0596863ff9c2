module @jit_fn attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}, {name = "z", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<16x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<16x2xf32> {jax.result_info = "result[0]"}, tensor<16x2xf32> {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) {
    %c = stablehlo.constant dense<[6, 4, 8]> : tensor<3xi32>
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"z"}, {"x"}]>] out_shardings=[<@mesh, [{}, {"x"}]>] manual_axes={"x", "y", "z"} (%arg1: tensor<8x1xf32>) {
      %11 = "stablehlo.all_gather"(%arg1) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, use_global_device_ids}> : (tensor<8x1xf32>) -> tensor<16x1xf32>
      sdy.return %11 : tensor<16x1xf32>
    } : (tensor<16x2xf32>) -> tensor<16x2xf32>
    %1 = stablehlo.reshape %0 : (tensor<16x2xf32>) -> tensor<32xf32>
    %2 = stablehlo.slice %1 [0:6] : (tensor<32xf32>) -> tensor<6xf32>
    %3 = stablehlo.reshape %2 : (tensor<6xf32>) -> tensor<3x2xf32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<3xi32>
    %5 = stablehlo.compare LT, %c, %4, SIGNED : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
    %c_1 = stablehlo.constant dense<16> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<3xi32>
    %7 = stablehlo.add %c, %6 : tensor<3xi32>
    %8 = stablehlo.select %5, %7, %c : tensor<3xi1>, tensor<3xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0] : (tensor<3xi32>) -> tensor<3x1xi32>
    %10 = "stablehlo.scatter"(%0, %9, %3) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %11 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %11 : tensor<f32>
    }) : (tensor<16x2xf32>, tensor<3x1xi32>, tensor<3x2xf32>) -> tensor<16x2xf32>
    return %0, %10 : tensor<16x2xf32>, tensor<16x2xf32>
  }
}
