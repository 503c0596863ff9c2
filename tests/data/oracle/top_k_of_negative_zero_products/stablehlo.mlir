module @jit_fn attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x16x1xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<4x16x8xi32> {jax.result_info = "result[0]", mhlo.sharding = "{devices=[4,1,1]<=[4]}"}) {
    %0 = stablehlo.sine %arg0 : tensor<4x16x1xf32>
    %1 = stablehlo.reshape %arg0 : (tensor<4x16x1xf32>) -> tensor<64xf32>
    %2 = stablehlo.slice %1 [0:8] : (tensor<64xf32>) -> tensor<8xf32>
    %3 = stablehlo.reshape %2 : (tensor<8xf32>) -> tensor<8x1xf32>
    %4 = stablehlo.dot_general %0, %3, contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x16x1xf32>, tensor<8x1xf32>) -> tensor<4x16x8xf32>
    %values, %indices = chlo.top_k(%4, k = 8) : tensor<4x16x8xf32> -> (tensor<4x16x8xf32>, tensor<4x16x8xi32>)
    return %indices : tensor<4x16x8xi32>
  }
}
