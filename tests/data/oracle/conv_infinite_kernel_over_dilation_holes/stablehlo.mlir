module @jit_fn attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x16x16xf32> {mhlo.sharding = "{replicated}"}, %arg1: tensor<4x2xbf16> {mhlo.sharding = "{replicated}"}, %arg2: tensor<6x2xbf16> {mhlo.sharding = "{replicated}"}) -> (tensor<f32> {jax.result_info = "result[0]", mhlo.sharding = "{replicated}"}, tensor<1x16x16xf32> {jax.result_info = "result[1]", mhlo.sharding = "{devices=[1,2,1]<=[2]}"}) {
    %0 = stablehlo.cosine %arg2 : tensor<6x2xbf16>
    %1 = stablehlo.reshape %arg1 : (tensor<4x2xbf16>) -> tensor<8xbf16>
    %2 = stablehlo.reshape %1 : (tensor<8xbf16>) -> tensor<1x8xbf16>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<1x8xbf16>) -> tensor<20x8xbf16>
    %4 = stablehlo.reshape %3 : (tensor<20x8xbf16>) -> tensor<160xbf16>
    %5 = stablehlo.reshape %4 : (tensor<160xbf16>) -> tensor<4x4x10xbf16>
    %6 = stablehlo.convert %arg0 : (tensor<1x16x16xf32>) -> tensor<1x16x16xbf16>
    %7 = stablehlo.reshape %6 : (tensor<1x16x16xbf16>) -> tensor<256xbf16>
    %8 = stablehlo.slice %7 [0:12] : (tensor<256xbf16>) -> tensor<12xbf16>
    %9 = stablehlo.reshape %8 : (tensor<12xbf16>) -> tensor<1x4x3xbf16>
    %10 = stablehlo.convolution(%5, %9) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [1], pad = [[1, 2]], lhs_dilate = [2], rhs_dilate = [2], reverse = [false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<4x4x10xbf16>, tensor<1x4x3xbf16>) -> tensor<4x1x18xbf16>
    %11 = stablehlo.abs %10 : tensor<4x1x18xbf16>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %12 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<bf16>) -> tensor<4x1x18xbf16>
    %13 = stablehlo.compare GE, %10, %12, FLOAT : (tensor<4x1x18xbf16>, tensor<4x1x18xbf16>) -> tensor<4x1x18xi1>
    %14 = stablehlo.sqrt %11 : tensor<4x1x18xbf16>
    %cst_0 = stablehlo.constant dense<5.000000e-01> : tensor<bf16>
    %15 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<bf16>) -> tensor<4x1x18xbf16>
    %16 = stablehlo.divide %15, %14 : tensor<4x1x18xbf16>
    %17 = stablehlo.convert %14 : (tensor<4x1x18xbf16>) -> tensor<4x1x18xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %18 = stablehlo.reduce(%17 init: %cst_1) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<4x1x18xf32>, tensor<f32>) -> tensor<f32>
    %cst_2 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %19 = stablehlo.multiply %18, %cst_2 : tensor<f32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %20 = stablehlo.add %cst_3, %19 : tensor<f32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_5 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %21 = stablehlo.multiply %cst_4, %cst_5 : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [] : (tensor<f32>) -> tensor<4x1x18xf32>
    %23 = stablehlo.convert %22 : (tensor<4x1x18xf32>) -> tensor<4x1x18xbf16>
    %24 = stablehlo.multiply %23, %16 : tensor<4x1x18xbf16>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %25 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<bf16>) -> tensor<4x1x18xbf16>
    %26 = stablehlo.select %13, %25, %24 : tensor<4x1x18xi1>, tensor<4x1x18xbf16>
    %27 = stablehlo.select %13, %24, %25 : tensor<4x1x18xi1>, tensor<4x1x18xbf16>
    %28 = stablehlo.negate %26 : tensor<4x1x18xbf16>
    %29 = stablehlo.add %27, %28 : tensor<4x1x18xbf16>
    %30 = stablehlo.convolution(%5, %29) dim_numbers = [f, b, 0]x[i, o, 0]->[f, b, 0], window = {stride = [2], pad = [[1, 2]], lhs_dilate = [2], rhs_dilate = [1], reverse = [false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<4x4x10xbf16>, tensor<4x1x18xbf16>) -> tensor<1x4x3xbf16>
    %31 = stablehlo.reshape %30 : (tensor<1x4x3xbf16>) -> tensor<12xbf16>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %32 = stablehlo.pad %31, %cst_7, low = [0], high = [244], interior = [0] : (tensor<12xbf16>, tensor<bf16>) -> tensor<256xbf16>
    %33 = stablehlo.reshape %32 : (tensor<256xbf16>) -> tensor<1x16x16xbf16>
    %34 = stablehlo.convert %33 : (tensor<1x16x16xbf16>) -> tensor<1x16x16xf32>
    return %20, %34 : tensor<f32>, tensor<1x16x16xf32>
  }
}
