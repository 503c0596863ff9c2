module @jit_fn attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["a"=2, "b"=2, "c"=2]> {stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, {name = "b", size = 2 : i64}, {name = "c", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<3x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"c"}]>}) -> (tensor<3x1xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{}, {"b"}]>] out_shardings=[<@mesh, [{}, {}]>] manual_axes={"a", "b", "c"} (%arg1: tensor<3x1xf32>) {
      %1 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2], [1, 3], [4, 6], [5, 7]]> : tensor<4x2xi64>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %2 = stablehlo.add %arg2, %arg3 : tensor<f32>
        stablehlo.return %2 : tensor<f32>
      }) : (tensor<3x1xf32>) -> tensor<3x1xf32>
      sdy.return %1 : tensor<3x1xf32>
    } : (tensor<3x2xf32>) -> tensor<3x1xf32>
    return %0 : tensor<3x1xf32>
  }
}
