module @jit_fn attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["a"=2, "b"=2, "c"=2]> {stablehlo.mesh = {axes = [{name = "a", size = 2 : i64}, {name = "b", size = 2 : i64}, {name = "c", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<2x7x5xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}]>}, %arg1: tensor<2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}, %arg2: tensor<7x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg3: tensor<7x2xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>}) -> (tensor<1xi32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<7x2xbf16> {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{}, {"c"}]>}) {
    %0 = stablehlo.maximum %arg1, %arg1 : tensor<2xi32>
    %c = stablehlo.constant dense<2> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare LT, %c, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_1 = stablehlo.constant dense<2> : tensor<i32>
    %c_2 = stablehlo.constant dense<2> : tensor<i32>
    %2 = stablehlo.add %c_1, %c_2 : tensor<i32>
    %c_3 = stablehlo.constant dense<2> : tensor<i32>
    %3 = stablehlo.select %1, %2, %c_3 : tensor<i1>, tensor<i32>
    %4 = stablehlo.dynamic_slice %0, %3, sizes = [1] : (tensor<2xi32>, tensor<i32>) -> tensor<1xi32>
    %5 = sdy.manual_computation(%arg3) in_shardings=[<@mesh, [{}, {"a"}]>] out_shardings=[<@mesh, [{}, {"a"}]>] manual_axes={"a", "b", "c"} (%arg4: tensor<7x1xbf16>) {
      %6 = stablehlo.tanh %arg4 : tensor<7x1xbf16>
      %cst = stablehlo.constant dense<2.000000e+00> : tensor<bf16>
      %7 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<bf16>) -> tensor<7x1xbf16>
      %8 = stablehlo.multiply %6, %7 : tensor<7x1xbf16>
      %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<bf16>
      %9 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<bf16>) -> tensor<7x1xbf16>
      %10 = stablehlo.add %8, %9 : tensor<7x1xbf16>
      sdy.return %10 : tensor<7x1xbf16>
    } : (tensor<7x2xbf16>) -> tensor<7x2xbf16>
    return %4, %5 : tensor<1xi32>, tensor<7x2xbf16>
  }
}
