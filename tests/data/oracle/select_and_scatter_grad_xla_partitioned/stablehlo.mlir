module @jit_fn attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x8xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<f32> {jax.result_info = "result[0]", mhlo.sharding = "{replicated}"}, tensor<6x8xf32> {jax.result_info = "result[1]", mhlo.sharding = "{devices=[1,4]<=[2,2]T(1,0)}"}) {
    %0 = stablehlo.reshape %arg0 : (tensor<6x8xf32>) -> tensor<48xf32>
    %1 = stablehlo.reshape %0 : (tensor<48xf32>) -> tensor<1x48xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x48xf32>) -> tensor<14x48xf32>
    %3 = stablehlo.reshape %2 : (tensor<14x48xf32>) -> tensor<672xf32>
    %4 = stablehlo.slice %3 [0:648] : (tensor<672xf32>) -> tensor<648xf32>
    %5 = stablehlo.reshape %4 : (tensor<648xf32>) -> tensor<4x3x9x6xf32>
    %6 = stablehlo.reshape %arg0 : (tensor<6x8xf32>) -> tensor<48xf32>
    %7 = stablehlo.reshape %6 : (tensor<48xf32>) -> tensor<1x48xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<1x48xf32>) -> tensor<2x48xf32>
    %9 = stablehlo.reshape %8 : (tensor<2x48xf32>) -> tensor<96xf32>
    %10 = stablehlo.slice %9 [0:72] : (tensor<96xf32>) -> tensor<72xf32>
    %11 = stablehlo.reshape %10 : (tensor<72xf32>) -> tensor<4x3x2x3xf32>
    %12 = stablehlo.convolution(%5, %11) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 2], [0, 2]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<4x3x9x6xf32>, tensor<4x3x2x3xf32>) -> tensor<4x4x11x6xf32>
    %13 = stablehlo.abs %arg0 : tensor<6x8xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6x8xf32>
    %15 = stablehlo.compare GE, %arg0, %14, FLOAT : (tensor<6x8xf32>, tensor<6x8xf32>) -> tensor<6x8xi1>
    %16 = stablehlo.convert %12 : (tensor<4x4x11x6xf32>) -> tensor<4x4x11x6xbf16>
    %17 = stablehlo.custom_call @Sharding(%12) {backend_config = "", mhlo.sharding = "{devices=[1,1,1,2,2]<=[4] last_tile_dim_replicate}"} : (tensor<4x4x11x6xf32>) -> tensor<4x4x11x6xf32>
    %18 = stablehlo.custom_call @SPMDFullToShardShape(%17) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<4x4x11x6xf32>) -> tensor<4x4x11x3xf32>
    %19:4 = call @shmap_body(%18) : (tensor<4x4x11x3xf32>) -> (tensor<4x4x11x3xf32>, tensor<4x4x11x3xf32>, tensor<1xf32>, tensor<4x4x11x3xf32>)
    %20 = stablehlo.custom_call @Sharding(%19#0) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<4x4x11x3xf32>) -> tensor<4x4x11x3xf32>
    %21 = stablehlo.custom_call @SPMDShardToFullShape(%20) {backend_config = "", mhlo.sharding = "{devices=[4,1,1,1]<=[4]}"} : (tensor<4x4x11x3xf32>) -> tensor<16x4x11x3xf32>
    %22 = stablehlo.custom_call @Sharding(%19#1) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<4x4x11x3xf32>) -> tensor<4x4x11x3xf32>
    %23 = stablehlo.custom_call @SPMDShardToFullShape(%22) {backend_config = "", mhlo.sharding = "{devices=[4,1,1,1]<=[4]}"} : (tensor<4x4x11x3xf32>) -> tensor<16x4x11x3xf32>
    %24 = stablehlo.custom_call @Sharding(%19#2) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<1xf32>) -> tensor<1xf32>
    %25 = stablehlo.custom_call @SPMDShardToFullShape(%24) {backend_config = "", mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<1xf32>) -> tensor<4xf32>
    %26 = stablehlo.custom_call @Sharding(%19#3) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<4x4x11x3xf32>) -> tensor<4x4x11x3xf32>
    %27 = stablehlo.custom_call @SPMDShardToFullShape(%26) {backend_config = "", mhlo.sharding = "{devices=[1,1,1,2,2]<=[4] last_tile_dim_replicate}"} : (tensor<4x4x11x3xf32>) -> tensor<4x4x11x6xf32>
    %cst_0 = stablehlo.constant dense<0xFF80> : tensor<bf16>
    %28 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<bf16>) -> tensor<bf16>
    %29 = "stablehlo.reduce_window"(%16, %28) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<[[0, 1], [0, 0], [0, 0], [1, 0]]> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 2, 1, 1, 2>, window_strides = array<i64: 1, 1, 1, 1>}> ({
    ^bb0(%arg1: tensor<bf16>, %arg2: tensor<bf16>):
      %86 = stablehlo.maximum %arg1, %arg2 : tensor<bf16>
      stablehlo.return %86 : tensor<bf16>
    }) : (tensor<4x4x11x6xbf16>, tensor<bf16>) -> tensor<4x4x11x6xbf16>
    %30 = stablehlo.convert %16 : (tensor<4x4x11x6xbf16>) -> tensor<4x4x11x6xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %31 = stablehlo.reduce(%30 init: %cst_1) applies stablehlo.add across dimensions = [0, 1, 2, 3] : (tensor<4x4x11x6xf32>, tensor<f32>) -> tensor<f32>
    %cst_2 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %32 = stablehlo.multiply %31, %cst_2 : tensor<f32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %33 = stablehlo.add %cst_3, %32 : tensor<f32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %34 = stablehlo.reduce(%27 init: %cst_4) applies stablehlo.add across dimensions = [0, 1, 2, 3] : (tensor<4x4x11x6xf32>, tensor<f32>) -> tensor<f32>
    %cst_5 = stablehlo.constant dense<7.500000e-01> : tensor<f32>
    %35 = stablehlo.multiply %34, %cst_5 : tensor<f32>
    %36 = stablehlo.add %33, %35 : tensor<f32>
    %37 = stablehlo.convert %29 : (tensor<4x4x11x6xbf16>) -> tensor<4x4x11x6xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %38 = stablehlo.reduce(%37 init: %cst_6) applies stablehlo.add across dimensions = [0, 1, 2, 3] : (tensor<4x4x11x6xf32>, tensor<f32>) -> tensor<f32>
    %cst_7 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %39 = stablehlo.multiply %38, %cst_7 : tensor<f32>
    %40 = stablehlo.add %36, %39 : tensor<f32>
    %cst_8 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %41 = stablehlo.reduce(%cst_8 init: %cst_9) applies stablehlo.add across dimensions = [] : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %cst_10 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %42 = stablehlo.multiply %41, %cst_10 : tensor<f32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %43 = stablehlo.reduce(%42 init: %cst_11) applies stablehlo.add across dimensions = [] : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %44 = stablehlo.broadcast_in_dim %43, dims = [] : (tensor<f32>) -> tensor<4x4x11x6xf32>
    %45 = stablehlo.convert %44 : (tensor<4x4x11x6xf32>) -> tensor<4x4x11x6xbf16>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %46 = stablehlo.reduce(%cst_8 init: %cst_12) applies stablehlo.add across dimensions = [] : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %cst_13 = stablehlo.constant dense<7.500000e-01> : tensor<f32>
    %47 = stablehlo.multiply %cst_8, %cst_13 : tensor<f32>
    %48 = stablehlo.broadcast_in_dim %47, dims = [] : (tensor<f32>) -> tensor<4x4x11x6xf32>
    %cst_14 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %49 = stablehlo.multiply %46, %cst_14 : tensor<f32>
    %cst_15 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %50 = stablehlo.reduce(%49 init: %cst_15) applies stablehlo.add across dimensions = [] : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %51 = stablehlo.broadcast_in_dim %50, dims = [] : (tensor<f32>) -> tensor<4x4x11x6xf32>
    %52 = stablehlo.convert %51 : (tensor<4x4x11x6xf32>) -> tensor<4x4x11x6xbf16>
    %cst_16 = stablehlo.constant dense<0xFF80> : tensor<bf16>
    %53 = stablehlo.pad %16, %cst_16, low = [0, 0, 0, 1], high = [1, 0, 0, 0], interior = [0, 0, 0, 0] : (tensor<4x4x11x6xbf16>, tensor<bf16>) -> tensor<5x4x11x7xbf16>
    %cst_17 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %54 = "stablehlo.select_and_scatter"(%53, %45, %cst_17) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 2, 1, 1, 2>, window_strides = array<i64: 1, 1, 1, 1>}> ({
    ^bb0(%arg1: tensor<bf16>, %arg2: tensor<bf16>):
      %86 = stablehlo.compare GE, %arg1, %arg2, FLOAT : (tensor<bf16>, tensor<bf16>) -> tensor<i1>
      stablehlo.return %86 : tensor<i1>
    }, {
    ^bb0(%arg1: tensor<bf16>, %arg2: tensor<bf16>):
      %86 = stablehlo.add %arg1, %arg2 : tensor<bf16>
      stablehlo.return %86 : tensor<bf16>
    }) : (tensor<5x4x11x7xbf16>, tensor<4x4x11x6xbf16>, tensor<bf16>) -> tensor<5x4x11x7xbf16>
    %55 = stablehlo.slice %54 [0:4, 0:4, 0:11, 1:7] : (tensor<5x4x11x7xbf16>) -> tensor<4x4x11x6xbf16>
    %56 = stablehlo.add %52, %55 : tensor<4x4x11x6xbf16>
    %cst_18 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %57 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<4x4x11x6xf32>
    %58 = stablehlo.divide %48, %57 : tensor<4x4x11x6xf32>
    %59 = stablehlo.custom_call @Sharding(%58) {backend_config = "", mhlo.sharding = "{devices=[1,1,1,2,2]<=[4] last_tile_dim_replicate}"} : (tensor<4x4x11x6xf32>) -> tensor<4x4x11x6xf32>
    %60 = stablehlo.custom_call @SPMDFullToShardShape(%59) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<4x4x11x6xf32>) -> tensor<4x4x11x3xf32>
    %61 = stablehlo.custom_call @Sharding(%21) {backend_config = "", mhlo.sharding = "{devices=[4,1,1,1]<=[4]}"} : (tensor<16x4x11x3xf32>) -> tensor<16x4x11x3xf32>
    %62 = stablehlo.custom_call @SPMDFullToShardShape(%61) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<16x4x11x3xf32>) -> tensor<4x4x11x3xf32>
    %63 = stablehlo.custom_call @Sharding(%23) {backend_config = "", mhlo.sharding = "{devices=[4,1,1,1]<=[4]}"} : (tensor<16x4x11x3xf32>) -> tensor<16x4x11x3xf32>
    %64 = stablehlo.custom_call @SPMDFullToShardShape(%63) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<16x4x11x3xf32>) -> tensor<4x4x11x3xf32>
    %65 = stablehlo.custom_call @Sharding(%25) {backend_config = "", mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<4xf32>) -> tensor<4xf32>
    %66 = stablehlo.custom_call @SPMDFullToShardShape(%65) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<4xf32>) -> tensor<1xf32>
    %67 = call @shmap_body_0(%60, %62, %64, %66) : (tensor<4x4x11x3xf32>, tensor<4x4x11x3xf32>, tensor<4x4x11x3xf32>, tensor<1xf32>) -> tensor<4x4x11x3xf32>
    %68 = stablehlo.custom_call @Sharding(%67) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<4x4x11x3xf32>) -> tensor<4x4x11x3xf32>
    %69 = stablehlo.custom_call @SPMDShardToFullShape(%68) {backend_config = "", mhlo.sharding = "{devices=[1,1,1,2,2]<=[4] last_tile_dim_replicate}"} : (tensor<4x4x11x3xf32>) -> tensor<4x4x11x6xf32>
    %70 = stablehlo.convert %56 : (tensor<4x4x11x6xbf16>) -> tensor<4x4x11x6xf32>
    %71 = stablehlo.add %69, %70 : tensor<4x4x11x6xf32>
    %72 = stablehlo.convolution(%5, %71) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = [[1, 2], [0, 2]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<4x3x9x6xf32>, tensor<4x4x11x6xf32>) -> tensor<4x3x2x3xf32>
    %73 = stablehlo.reverse %11, dims = [2, 3] : tensor<4x3x2x3xf32>
    %74 = stablehlo.convolution(%71, %73) dim_numbers = [b, f, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[0, -1], [2, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<4x4x11x6xf32>, tensor<4x3x2x3xf32>) -> tensor<4x3x9x6xf32>
    %75 = stablehlo.reshape %72 : (tensor<4x3x2x3xf32>) -> tensor<72xf32>
    %cst_19 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %76 = stablehlo.pad %75, %cst_19, low = [0], high = [24], interior = [0] : (tensor<72xf32>, tensor<f32>) -> tensor<96xf32>
    %77 = stablehlo.reshape %76 : (tensor<96xf32>) -> tensor<2x48xf32>
    %cst_20 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %78 = stablehlo.reduce(%77 init: %cst_20) applies stablehlo.add across dimensions = [0] : (tensor<2x48xf32>, tensor<f32>) -> tensor<48xf32>
    %79 = stablehlo.reshape %78 : (tensor<48xf32>) -> tensor<6x8xf32>
    %80 = stablehlo.reshape %74 : (tensor<4x3x9x6xf32>) -> tensor<648xf32>
    %cst_21 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %81 = stablehlo.pad %80, %cst_21, low = [0], high = [24], interior = [0] : (tensor<648xf32>, tensor<f32>) -> tensor<672xf32>
    %82 = stablehlo.reshape %81 : (tensor<672xf32>) -> tensor<14x48xf32>
    %cst_22 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %83 = stablehlo.reduce(%82 init: %cst_22) applies stablehlo.add across dimensions = [0] : (tensor<14x48xf32>, tensor<f32>) -> tensor<48xf32>
    %84 = stablehlo.reshape %83 : (tensor<48xf32>) -> tensor<6x8xf32>
    %85 = stablehlo.add %79, %84 : tensor<6x8xf32>
    return %40, %85 : tensor<f32>, tensor<6x8xf32>
  }
  func.func private @shmap_body(%arg0: tensor<4x4x11x3xf32>) -> (tensor<4x4x11x3xf32> {jax.result_info = "[('data', 'model'), None, None, None]"}, tensor<4x4x11x3xf32> {jax.result_info = "[('data', 'model'), None, None, None]"}, tensor<1xf32> {jax.result_info = "[('data', 'model')]"}, tensor<4x4x11x3xf32> {jax.result_info = "[None, None, None, ('data',)]"}) {
    %0 = stablehlo.tanh %arg0 : tensor<4x4x11x3xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x4x11x3xf32>
    %2 = stablehlo.subtract %1, %0 : tensor<4x4x11x3xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x4x11x3xf32>
    %4 = stablehlo.multiply %0, %3 : tensor<4x4x11x3xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<4x4x11x3xf32>
    %6 = stablehlo.add %4, %5 : tensor<4x4x11x3xf32>
    %cst_2 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<1xf32>
    return %0, %2, %7, %6 : tensor<4x4x11x3xf32>, tensor<4x4x11x3xf32>, tensor<1xf32>, tensor<4x4x11x3xf32>
  }
  func.func private @shmap_body_0(%arg0: tensor<4x4x11x3xf32>, %arg1: tensor<4x4x11x3xf32>, %arg2: tensor<4x4x11x3xf32>, %arg3: tensor<1xf32>) -> (tensor<4x4x11x3xf32> {jax.result_info = "[None, None, None, ('data',)]"}) {
    %0 = stablehlo.reshape %arg3 : (tensor<1xf32>) -> tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<4x4x11x3xf32>
    %2 = stablehlo.multiply %arg0, %1 : tensor<4x4x11x3xf32>
    %3 = stablehlo.multiply %2, %arg2 : tensor<4x4x11x3xf32>
    %4 = stablehlo.multiply %3, %arg1 : tensor<4x4x11x3xf32>
    %5 = stablehlo.add %3, %4 : tensor<4x4x11x3xf32>
    %6 = "stablehlo.all_reduce"(%5) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %7 = stablehlo.add %arg4, %arg5 : tensor<f32>
      stablehlo.return %7 : tensor<f32>
    }) : (tensor<4x4x11x3xf32>) -> tensor<4x4x11x3xf32>
    return %6 : tensor<4x4x11x3xf32>
  }
}
