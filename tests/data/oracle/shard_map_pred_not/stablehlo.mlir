module @jit_fn attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=2, "expert"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 2 : i64}, {name = "expert", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<3x5x1x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}, {}]>}, %arg1: tensor<1x2xi1> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"data"}]>}, %arg2: tensor<3xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<1x2xi1> {jax.result_info = "result[0]"}) {
    %0 = sdy.manual_computation(%arg1) in_shardings=[<@mesh, [{}, {"expert"}]>] out_shardings=[<@mesh, [{}, {"expert"}]>] manual_axes={"data", "model", "expert"} (%arg3: tensor<1x1xi1>) {
      %1 = stablehlo.not %arg3 : tensor<1x1xi1>
      sdy.return %1 : tensor<1x1xi1>
    } : (tensor<1x2xi1>) -> tensor<1x2xi1>
    return %0 : tensor<1x2xi1>
  }
}
