module @jit_fn attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<4xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.reshape %arg0 : (tensor<4xf32>) -> tensor<1x4xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<16x4xf32>
    %2 = stablehlo.reshape %1 : (tensor<16x4xf32>) -> tensor<64xf32>
    %3 = stablehlo.reshape %2 : (tensor<64xf32>) -> tensor<4x8x2xf32>
    %4 = stablehlo.dot_general %arg0, %3, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4xf32>, tensor<4x8x2xf32>) -> tensor<8x2xf32>
    %5 = stablehlo.reshape %arg0 : (tensor<4xf32>) -> tensor<1x4xf32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<384x4xf32>
    %7 = stablehlo.reshape %6 : (tensor<384x4xf32>) -> tensor<1536xf32>
    %8 = stablehlo.reshape %7 : (tensor<1536xf32>) -> tensor<16x2x6x8xf32>
    %9 = stablehlo.dot_general %4, %8, contracting_dims = [0, 1] x [3, 1], precision = [DEFAULT, DEFAULT] : (tensor<8x2xf32>, tensor<16x2x6x8xf32>) -> tensor<16x6xf32>
    %10 = stablehlo.cosine %4 : tensor<8x2xf32>
    %11 = stablehlo.sine %4 : tensor<8x2xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<16x6xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<16x6xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<16x6xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %16:6 = stablehlo.while(%iterArg = %9, %iterArg_13 = %c, %iterArg_14 = %12, %iterArg_15 = %13, %iterArg_16 = %14, %iterArg_17 = %15) : tensor<16x6xf32>, tensor<i32>, tensor<6xf32>, tensor<16x6xf32>, tensor<16x6xf32>, tensor<16x6xf32>
    cond {
      %c_18 = stablehlo.constant dense<16> : tensor<i32>
      %40 = stablehlo.compare LT, %iterArg_13, %c_18, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %40 : tensor<i1>
    } do {
      %40 = func.call @dynamic_index_in_dim(%iterArg, %iterArg_13) : (tensor<16x6xf32>, tensor<i32>) -> tensor<6xf32>
      %41:4 = func.call @closed_call(%iterArg_14, %40) : (tensor<6xf32>, tensor<6xf32>) -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>)
      %42 = func.call @dynamic_update_index_in_dim(%iterArg_15, %41#1, %iterArg_13) : (tensor<16x6xf32>, tensor<6xf32>, tensor<i32>) -> tensor<16x6xf32>
      %43 = func.call @dynamic_update_index_in_dim(%iterArg_16, %41#2, %iterArg_13) : (tensor<16x6xf32>, tensor<6xf32>, tensor<i32>) -> tensor<16x6xf32>
      %44 = func.call @dynamic_update_index_in_dim(%iterArg_17, %41#3, %iterArg_13) : (tensor<16x6xf32>, tensor<6xf32>, tensor<i32>) -> tensor<16x6xf32>
      %c_18 = stablehlo.constant dense<1> : tensor<i32>
      %45 = stablehlo.add %iterArg_13, %c_18 : tensor<i32>
      stablehlo.return %iterArg, %45, %41#0, %42, %43, %44 : tensor<16x6xf32>, tensor<i32>, tensor<6xf32>, tensor<16x6xf32>, tensor<16x6xf32>, tensor<16x6xf32>
    }
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %17 = stablehlo.reduce(%16#2 init: %cst_3) applies stablehlo.add across dimensions = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<f32>
    %cst_4 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %18 = stablehlo.multiply %17, %cst_4 : tensor<f32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %19 = stablehlo.add %cst_5, %18 : tensor<f32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %cst_7 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_8 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %21 = stablehlo.multiply %cst_7, %cst_8 : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %23 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<16x6xf32>
    %c_10 = stablehlo.constant dense<0> : tensor<i32>
    %24:5 = stablehlo.while(%iterArg = %16#4, %iterArg_13 = %16#5, %iterArg_14 = %c_10, %iterArg_15 = %22, %iterArg_16 = %23) : tensor<16x6xf32>, tensor<16x6xf32>, tensor<i32>, tensor<6xf32>, tensor<16x6xf32>
    cond {
      %c_17 = stablehlo.constant dense<16> : tensor<i32>
      %40 = stablehlo.compare LT, %iterArg_14, %c_17, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %40 : tensor<i1>
    } do {
      %c_17 = stablehlo.constant dense<16> : tensor<i32>
      %40 = stablehlo.subtract %c_17, %iterArg_14 : tensor<i32>
      %c_18 = stablehlo.constant dense<1> : tensor<i32>
      %41 = stablehlo.subtract %40, %c_18 : tensor<i32>
      %42 = func.call @dynamic_index_in_dim(%iterArg, %41) : (tensor<16x6xf32>, tensor<i32>) -> tensor<6xf32>
      %43 = func.call @dynamic_index_in_dim(%iterArg_13, %41) : (tensor<16x6xf32>, tensor<i32>) -> tensor<6xf32>
      %44:2 = func.call @closed_call_0(%iterArg_15, %42, %43) : (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> (tensor<6xf32>, tensor<6xf32>)
      %45 = func.call @dynamic_update_index_in_dim(%iterArg_16, %44#1, %41) : (tensor<16x6xf32>, tensor<6xf32>, tensor<i32>) -> tensor<16x6xf32>
      %c_19 = stablehlo.constant dense<1> : tensor<i32>
      %46 = stablehlo.add %iterArg_14, %c_19 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_13, %46, %44#0, %45 : tensor<16x6xf32>, tensor<16x6xf32>, tensor<i32>, tensor<6xf32>, tensor<16x6xf32>
    }
    %25 = stablehlo.dot_general %24#4, %4, contracting_dims = [] x [], precision = [DEFAULT, DEFAULT] : (tensor<16x6xf32>, tensor<8x2xf32>) -> tensor<16x6x8x2xf32>
    %26 = stablehlo.transpose %25, dims = [0, 3, 1, 2] : (tensor<16x6x8x2xf32>) -> tensor<16x2x6x8xf32>
    %27 = stablehlo.dot_general %24#4, %8, contracting_dims = [0, 1] x [0, 2], precision = [DEFAULT, DEFAULT] : (tensor<16x6xf32>, tensor<16x2x6x8xf32>) -> tensor<2x8xf32>
    %28 = stablehlo.transpose %27, dims = [1, 0] : (tensor<2x8xf32>) -> tensor<8x2xf32>
    %29 = stablehlo.reshape %26 : (tensor<16x2x6x8xf32>) -> tensor<1536xf32>
    %30 = stablehlo.reshape %29 : (tensor<1536xf32>) -> tensor<384x4xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %31 = stablehlo.reduce(%30 init: %cst_11) applies stablehlo.add across dimensions = [0] : (tensor<384x4xf32>, tensor<f32>) -> tensor<4xf32>
    %32 = stablehlo.dot_general %28, %arg0, contracting_dims = [] x [], precision = [DEFAULT, DEFAULT] : (tensor<8x2xf32>, tensor<4xf32>) -> tensor<8x2x4xf32>
    %33 = stablehlo.transpose %32, dims = [2, 0, 1] : (tensor<8x2x4xf32>) -> tensor<4x8x2xf32>
    %34 = stablehlo.dot_general %28, %3, contracting_dims = [0, 1] x [1, 2], precision = [DEFAULT, DEFAULT] : (tensor<8x2xf32>, tensor<4x8x2xf32>) -> tensor<4xf32>
    %35 = stablehlo.add %31, %34 : tensor<4xf32>
    %36 = stablehlo.reshape %33 : (tensor<4x8x2xf32>) -> tensor<64xf32>
    %37 = stablehlo.reshape %36 : (tensor<64xf32>) -> tensor<16x4xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %38 = stablehlo.reduce(%37 init: %cst_12) applies stablehlo.add across dimensions = [0] : (tensor<16x4xf32>, tensor<f32>) -> tensor<4xf32>
    %39 = stablehlo.add %35, %38 : tensor<4xf32>
    return %19, %39 : tensor<f32>, tensor<4xf32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<16x6xf32>, %arg1: tensor<i32>) -> tensor<6xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, sizes = [1, 6] : (tensor<16x6xf32>, tensor<i32>, tensor<i32>) -> tensor<1x6xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x6xf32>) -> tensor<6xf32>
    return %1 : tensor<6xf32>
  }
  func.func private @closed_call(%arg0: tensor<6xf32>, %arg1: tensor<6xf32>) -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) {
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<6xf32>
    %2 = stablehlo.add %1, %arg1 : tensor<6xf32>
    %3 = stablehlo.tanh %2 : tensor<6xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %5 = stablehlo.subtract %4, %3 : tensor<6xf32>
    return %3, %3, %3, %5 : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<16x6xf32>, %arg1: tensor<6xf32>, %arg2: tensor<i32>) -> tensor<16x6xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<6xf32>) -> tensor<1x6xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c : (tensor<16x6xf32>, tensor<1x6xf32>, tensor<i32>, tensor<i32>) -> tensor<16x6xf32>
    return %1 : tensor<16x6xf32>
  }
  func.func private @closed_call_0(%arg0: tensor<6xf32>, %arg1: tensor<6xf32>, %arg2: tensor<6xf32>) -> (tensor<6xf32>, tensor<6xf32>) {
    %0 = stablehlo.multiply %arg0, %arg2 : tensor<6xf32>
    %1 = stablehlo.multiply %0, %arg1 : tensor<6xf32>
    %2 = stablehlo.add %0, %1 : tensor<6xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %4 = stablehlo.multiply %2, %3 : tensor<6xf32>
    return %4, %2 : tensor<6xf32>, tensor<6xf32>
  }
}
