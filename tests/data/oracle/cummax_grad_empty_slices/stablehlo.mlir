module @jit_fn attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=2, "expert"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 2 : i64}, {name = "model", size = 2 : i64}, {name = "expert", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<2x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<2x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<f32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, []>}, tensor<2x2xf32> {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {"expert"}]>}, tensor<2x2xf32> {jax.result_info = "result[2]", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = stablehlo.add %arg1, %arg1 : tensor<2x2xf32>
    %c = stablehlo.constant dense<1357834390> : tensor<i32>
    %c_0 = stablehlo.constant dense<32> : tensor<i32>
    %1 = stablehlo.shift_right_logical %c, %c_0 : tensor<i32>
    %2 = stablehlo.convert %1 : (tensor<i32>) -> tensor<ui32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<ui32>) -> tensor<1xui32>
    %c_1 = stablehlo.constant dense<-1> : tensor<i32>
    %4 = stablehlo.and %c, %c_1 : tensor<i32>
    %5 = stablehlo.convert %4 : (tensor<i32>) -> tensor<ui32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<ui32>) -> tensor<1xui32>
    %7 = stablehlo.concatenate %3, %6, dim = 0 : (tensor<1xui32>, tensor<1xui32>) -> tensor<2xui32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %8 = call @_bernoulli(%7, %cst) : (tensor<2xui32>, tensor<f32>) -> tensor<2x2xi1>
    %9 = stablehlo.slice %arg1 [0:2, 0:1:2] : (tensor<2x2xf32>) -> tensor<2x1xf32>
    %10 = stablehlo.slice %arg1 [0:2, 1:2:2] : (tensor<2x2xf32>) -> tensor<2x1xf32>
    %11 = stablehlo.maximum %9, %10 : tensor<2x1xf32>
    %12 = stablehlo.compare EQ, %9, %11, FLOAT : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xi1>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<2x1xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<2x1xf32>
    %15 = stablehlo.select %12, %13, %14 : tensor<2x1xi1>, tensor<2x1xf32>
    %16 = stablehlo.compare EQ, %10, %11, FLOAT : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xi1>
    %cst_4 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<2x1xf32>
    %cst_5 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<2x1xf32>
    %19 = stablehlo.select %16, %17, %18 : tensor<2x1xi1>, tensor<2x1xf32>
    %20 = stablehlo.divide %15, %19 : tensor<2x1xf32>
    %21 = stablehlo.compare EQ, %10, %11, FLOAT : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xi1>
    %cst_6 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<2x1xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %23 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<2x1xf32>
    %24 = stablehlo.select %21, %22, %23 : tensor<2x1xi1>, tensor<2x1xf32>
    %25 = stablehlo.compare EQ, %9, %11, FLOAT : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xi1>
    %cst_8 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %26 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<2x1xf32>
    %cst_9 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %27 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<2x1xf32>
    %28 = stablehlo.select %25, %26, %27 : tensor<2x1xi1>, tensor<2x1xf32>
    %29 = stablehlo.divide %24, %28 : tensor<2x1xf32>
    %30 = stablehlo.slice %11 [0:2, 0:0] : (tensor<2x1xf32>) -> tensor<2x0xf32>
    %31 = stablehlo.slice %arg1 [0:2, 2:2:2] : (tensor<2x2xf32>) -> tensor<2x0xf32>
    %32 = stablehlo.maximum %30, %31 : tensor<2x0xf32>
    %33 = stablehlo.compare EQ, %30, %32, FLOAT : (tensor<2x0xf32>, tensor<2x0xf32>) -> tensor<2x0xi1>
    %cst_10 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %34 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<2x0xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %35 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<2x0xf32>
    %36 = stablehlo.select %33, %34, %35 : tensor<2x0xi1>, tensor<2x0xf32>
    %37 = stablehlo.compare EQ, %31, %32, FLOAT : (tensor<2x0xf32>, tensor<2x0xf32>) -> tensor<2x0xi1>
    %cst_12 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %38 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<2x0xf32>
    %cst_13 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %39 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<2x0xf32>
    %40 = stablehlo.select %37, %38, %39 : tensor<2x0xi1>, tensor<2x0xf32>
    %41 = stablehlo.divide %36, %40 : tensor<2x0xf32>
    %42 = stablehlo.compare EQ, %31, %32, FLOAT : (tensor<2x0xf32>, tensor<2x0xf32>) -> tensor<2x0xi1>
    %cst_14 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %43 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<2x0xf32>
    %cst_15 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %44 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<2x0xf32>
    %45 = stablehlo.select %42, %43, %44 : tensor<2x0xi1>, tensor<2x0xf32>
    %46 = stablehlo.compare EQ, %30, %32, FLOAT : (tensor<2x0xf32>, tensor<2x0xf32>) -> tensor<2x0xi1>
    %cst_16 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %47 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<2x0xf32>
    %cst_17 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %48 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<2x0xf32>
    %49 = stablehlo.select %46, %47, %48 : tensor<2x0xi1>, tensor<2x0xf32>
    %50 = stablehlo.divide %45, %49 : tensor<2x0xf32>
    %51 = stablehlo.slice %arg1 [0:2, 0:1] : (tensor<2x2xf32>) -> tensor<2x1xf32>
    %52 = stablehlo.concatenate %51, %32, dim = 1 : (tensor<2x1xf32>, tensor<2x0xf32>) -> tensor<2x1xf32>
    %cst_18 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %53 = stablehlo.pad %52, %cst_18, low = [0, 0], high = [0, 1], interior = [0, 1] : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x2xf32>
    %cst_19 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %54 = stablehlo.pad %11, %cst_19, low = [0, 1], high = [0, 0], interior = [0, 1] : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x2xf32>
    %55 = stablehlo.add %53, %54 : tensor<2x2xf32>
    %56 = call @argmin(%55) : (tensor<2x2xf32>) -> tensor<2xi32>
    %57 = stablehlo.convert %8 : (tensor<2x2xi1>) -> tensor<2x2xbf16>
    %58 = stablehlo.minimum %arg0, %55 : tensor<2x2xf32>
    %59 = stablehlo.compare EQ, %arg0, %58, FLOAT : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xi1>
    %cst_20 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %60 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %cst_21 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %61 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %62 = stablehlo.select %59, %60, %61 : tensor<2x2xi1>, tensor<2x2xf32>
    %63 = stablehlo.compare EQ, %55, %58, FLOAT : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xi1>
    %cst_22 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %64 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %cst_23 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %65 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %66 = stablehlo.select %63, %64, %65 : tensor<2x2xi1>, tensor<2x2xf32>
    %67 = stablehlo.divide %62, %66 : tensor<2x2xf32>
    %68 = stablehlo.compare EQ, %55, %58, FLOAT : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xi1>
    %cst_24 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %69 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %cst_25 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %70 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %71 = stablehlo.select %68, %69, %70 : tensor<2x2xi1>, tensor<2x2xf32>
    %72 = stablehlo.compare EQ, %arg0, %58, FLOAT : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xi1>
    %cst_26 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %73 = stablehlo.broadcast_in_dim %cst_26, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %cst_27 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %74 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %75 = stablehlo.select %72, %73, %74 : tensor<2x2xi1>, tensor<2x2xf32>
    %76 = stablehlo.divide %71, %75 : tensor<2x2xf32>
    %cst_28 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %77 = stablehlo.reduce(%58 init: %cst_28) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x2xf32>, tensor<f32>) -> tensor<f32>
    %cst_29 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %78 = stablehlo.multiply %77, %cst_29 : tensor<f32>
    %cst_30 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %79 = stablehlo.add %cst_30, %78 : tensor<f32>
    %cst_31 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_32 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %80 = stablehlo.multiply %cst_31, %cst_32 : tensor<f32>
    %81 = stablehlo.broadcast_in_dim %80, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %82 = stablehlo.multiply %81, %76 : tensor<2x2xf32>
    %83 = stablehlo.multiply %81, %67 : tensor<2x2xf32>
    %cst_33 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %84 = stablehlo.pad %82, %cst_33, low = [0, -1], high = [0, 0], interior = [0, 0] : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x1xf32>
    %85 = stablehlo.slice %84 [0:2, 0:1:2] : (tensor<2x1xf32>) -> tensor<2x1xf32>
    %cst_34 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %86 = stablehlo.pad %82, %cst_34, low = [0, 0], high = [0, -1], interior = [0, 0] : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x1xf32>
    %87 = stablehlo.slice %86 [0:2, 0:1:2] : (tensor<2x1xf32>) -> tensor<2x1xf32>
    %88 = stablehlo.slice %87 [0:2, 0:1] : (tensor<2x1xf32>) -> tensor<2x1xf32>
    %89 = stablehlo.slice %87 [0:2, 1:1] : (tensor<2x1xf32>) -> tensor<2x0xf32>
    %cst_35 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %90 = stablehlo.pad %88, %cst_35, low = [0, 0], high = [0, 1], interior = [0, 0] : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x2xf32>
    %91 = stablehlo.multiply %89, %50 : tensor<2x0xf32>
    %92 = stablehlo.multiply %89, %41 : tensor<2x0xf32>
    %cst_36 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %93 = stablehlo.pad %91, %cst_36, low = [0, 2], high = [0, 0], interior = [0, 1] : (tensor<2x0xf32>, tensor<f32>) -> tensor<2x2xf32>
    %94 = stablehlo.add %90, %93 : tensor<2x2xf32>
    %cst_37 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %95 = stablehlo.pad %92, %cst_37, low = [0, 0], high = [0, 1], interior = [0, 0] : (tensor<2x0xf32>, tensor<f32>) -> tensor<2x1xf32>
    %96 = stablehlo.add %85, %95 : tensor<2x1xf32>
    %97 = stablehlo.multiply %96, %29 : tensor<2x1xf32>
    %98 = stablehlo.multiply %96, %20 : tensor<2x1xf32>
    %cst_38 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %99 = stablehlo.pad %97, %cst_38, low = [0, 1], high = [0, 0], interior = [0, 1] : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x2xf32>
    %100 = stablehlo.add %94, %99 : tensor<2x2xf32>
    %cst_39 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %101 = stablehlo.pad %98, %cst_39, low = [0, 0], high = [0, 1], interior = [0, 1] : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x2xf32>
    %102 = stablehlo.add %100, %101 : tensor<2x2xf32>
    return %79, %83, %102 : tensor<f32>, tensor<2x2xf32>, tensor<2x2xf32>
  }
  func.func private @_bernoulli(%arg0: tensor<2xui32>, %arg1: tensor<f32>) -> tensor<2x2xi1> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = call @_uniform(%arg0, %cst, %cst_0) : (tensor<2xui32>, tensor<f32>, tensor<f32>) -> tensor<2x2xf32>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %2 = stablehlo.compare LT, %0, %1, FLOAT : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xi1>
    return %2 : tensor<2x2xi1>
  }
  func.func private @_uniform(%arg0: tensor<2xui32>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> tensor<2x2xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.convert %arg2 : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<1x1xf32>
    %3 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<1x1xf32>
    %4 = stablehlo.slice %arg0 [0:1] : (tensor<2xui32>) -> tensor<1xui32>
    %5 = stablehlo.reshape %4 : (tensor<1xui32>) -> tensor<ui32>
    %6 = stablehlo.slice %arg0 [1:2] : (tensor<2xui32>) -> tensor<1xui32>
    %7 = stablehlo.reshape %6 : (tensor<1xui32>) -> tensor<ui32>
    %8 = stablehlo.iota dim = 0 : tensor<2x2xui64>
    %9 = stablehlo.iota dim = 1 : tensor<2x2xui64>
    %c = stablehlo.constant dense<2> : tensor<ui64>
    %10 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<ui64>) -> tensor<2x2xui64>
    %11 = stablehlo.multiply %10, %8 : tensor<2x2xui64>
    %c_0 = stablehlo.constant dense<1> : tensor<ui64>
    %12 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<ui64>) -> tensor<2x2xui64>
    %13 = stablehlo.multiply %12, %9 : tensor<2x2xui64>
    %14 = stablehlo.add %11, %13 : tensor<2x2xui64>
    %c_1 = stablehlo.constant dense<32> : tensor<ui64>
    %15 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<ui64>) -> tensor<2x2xui64>
    %16 = stablehlo.shift_right_logical %14, %15 : tensor<2x2xui64>
    %17 = stablehlo.convert %14 : (tensor<2x2xui64>) -> tensor<2x2xui32>
    %18 = stablehlo.convert %16 : (tensor<2x2xui64>) -> tensor<2x2xui32>
    %19:2 = call @threefry2x32(%5, %7, %18, %17) : (tensor<ui32>, tensor<ui32>, tensor<2x2xui32>, tensor<2x2xui32>) -> (tensor<2x2xui32>, tensor<2x2xui32>)
    %20 = stablehlo.xor %19#0, %19#1 : tensor<2x2xui32>
    %c_2 = stablehlo.constant dense<9> : tensor<ui32>
    %21 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<ui32>) -> tensor<2x2xui32>
    %22 = stablehlo.shift_right_logical %20, %21 : tensor<2x2xui32>
    %c_3 = stablehlo.constant dense<1065353216> : tensor<ui32>
    %23 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<ui32>) -> tensor<2x2xui32>
    %24 = stablehlo.or %22, %23 : tensor<2x2xui32>
    %25 = stablehlo.bitcast_convert %24 : (tensor<2x2xui32>) -> tensor<2x2xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %26 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %27 = stablehlo.subtract %25, %26 : tensor<2x2xf32>
    %28 = stablehlo.subtract %3, %2 : tensor<1x1xf32>
    %29 = stablehlo.broadcast_in_dim %28, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<2x2xf32>
    %30 = stablehlo.multiply %27, %29 : tensor<2x2xf32>
    %31 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<2x2xf32>
    %32 = stablehlo.add %30, %31 : tensor<2x2xf32>
    %33 = stablehlo.broadcast_in_dim %2, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<2x2xf32>
    %34 = stablehlo.maximum %33, %32 : tensor<2x2xf32>
    return %34 : tensor<2x2xf32>
  }
  func.func private @threefry2x32(%arg0: tensor<ui32>, %arg1: tensor<ui32>, %arg2: tensor<2x2xui32>, %arg3: tensor<2x2xui32>) -> (tensor<2x2xui32>, tensor<2x2xui32>) {
    %c = stablehlo.constant dense<[13, 15, 26, 6]> : tensor<4xui32>
    %c_0 = stablehlo.constant dense<[17, 29, 16, 24]> : tensor<4xui32>
    %0 = stablehlo.xor %arg0, %arg1 : tensor<ui32>
    %c_1 = stablehlo.constant dense<466688986> : tensor<ui32>
    %1 = stablehlo.xor %0, %c_1 : tensor<ui32>
    %2 = stablehlo.broadcast_in_dim %arg0, dims = [] : (tensor<ui32>) -> tensor<2x2xui32>
    %3 = stablehlo.add %arg2, %2 : tensor<2x2xui32>
    %4 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<ui32>) -> tensor<2x2xui32>
    %5 = stablehlo.add %arg3, %4 : tensor<2x2xui32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %6:9 = stablehlo.while(%iterArg = %c_3, %iterArg_4 = %c_2, %iterArg_5 = %3, %iterArg_6 = %5, %iterArg_7 = %arg1, %iterArg_8 = %1, %iterArg_9 = %arg0, %iterArg_10 = %c, %iterArg_11 = %c_0) : tensor<i32>, tensor<i32>, tensor<2x2xui32>, tensor<2x2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>
    cond {
      %c_12 = stablehlo.constant dense<5> : tensor<i32>
      %7 = stablehlo.compare LT, %iterArg, %c_12, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %7 : tensor<i1>
    } do {
      %7:8 = func.call @closed_call(%iterArg_4, %iterArg_5, %iterArg_6, %iterArg_7, %iterArg_8, %iterArg_9, %iterArg_10, %iterArg_11) : (tensor<i32>, tensor<2x2xui32>, tensor<2x2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<i32>, tensor<2x2xui32>, tensor<2x2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>)
      %c_12 = stablehlo.constant dense<1> : tensor<i32>
      %8 = stablehlo.add %iterArg, %c_12 : tensor<i32>
      stablehlo.return %8, %7#0, %7#1, %7#2, %7#3, %7#4, %7#5, %7#6, %7#7 : tensor<i32>, tensor<i32>, tensor<2x2xui32>, tensor<2x2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>
    }
    return %6#2, %6#3 : tensor<2x2xui32>, tensor<2x2xui32>
  }
  func.func private @closed_call(%arg0: tensor<i32>, %arg1: tensor<2x2xui32>, %arg2: tensor<2x2xui32>, %arg3: tensor<ui32>, %arg4: tensor<ui32>, %arg5: tensor<ui32>, %arg6: tensor<4xui32>, %arg7: tensor<4xui32>) -> (tensor<i32>, tensor<2x2xui32>, tensor<2x2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %0 = stablehlo.add %arg0, %c : tensor<i32>
    %1 = stablehlo.slice %arg6 [0:1] : (tensor<4xui32>) -> tensor<1xui32>
    %2 = stablehlo.reshape %1 : (tensor<1xui32>) -> tensor<ui32>
    %3 = stablehlo.add %arg1, %arg2 : tensor<2x2xui32>
    %4 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<ui32>) -> tensor<2x2xui32>
    %5 = stablehlo.shift_left %arg2, %4 : tensor<2x2xui32>
    %c_0 = stablehlo.constant dense<32> : tensor<ui32>
    %6 = stablehlo.subtract %c_0, %2 : tensor<ui32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<ui32>) -> tensor<2x2xui32>
    %8 = stablehlo.shift_right_logical %arg2, %7 : tensor<2x2xui32>
    %9 = stablehlo.or %5, %8 : tensor<2x2xui32>
    %10 = stablehlo.xor %3, %9 : tensor<2x2xui32>
    %11 = stablehlo.slice %arg6 [1:2] : (tensor<4xui32>) -> tensor<1xui32>
    %12 = stablehlo.reshape %11 : (tensor<1xui32>) -> tensor<ui32>
    %13 = stablehlo.add %3, %10 : tensor<2x2xui32>
    %14 = stablehlo.broadcast_in_dim %12, dims = [] : (tensor<ui32>) -> tensor<2x2xui32>
    %15 = stablehlo.shift_left %10, %14 : tensor<2x2xui32>
    %c_1 = stablehlo.constant dense<32> : tensor<ui32>
    %16 = stablehlo.subtract %c_1, %12 : tensor<ui32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [] : (tensor<ui32>) -> tensor<2x2xui32>
    %18 = stablehlo.shift_right_logical %10, %17 : tensor<2x2xui32>
    %19 = stablehlo.or %15, %18 : tensor<2x2xui32>
    %20 = stablehlo.xor %13, %19 : tensor<2x2xui32>
    %21 = stablehlo.slice %arg6 [2:3] : (tensor<4xui32>) -> tensor<1xui32>
    %22 = stablehlo.reshape %21 : (tensor<1xui32>) -> tensor<ui32>
    %23 = stablehlo.add %13, %20 : tensor<2x2xui32>
    %24 = stablehlo.broadcast_in_dim %22, dims = [] : (tensor<ui32>) -> tensor<2x2xui32>
    %25 = stablehlo.shift_left %20, %24 : tensor<2x2xui32>
    %c_2 = stablehlo.constant dense<32> : tensor<ui32>
    %26 = stablehlo.subtract %c_2, %22 : tensor<ui32>
    %27 = stablehlo.broadcast_in_dim %26, dims = [] : (tensor<ui32>) -> tensor<2x2xui32>
    %28 = stablehlo.shift_right_logical %20, %27 : tensor<2x2xui32>
    %29 = stablehlo.or %25, %28 : tensor<2x2xui32>
    %30 = stablehlo.xor %23, %29 : tensor<2x2xui32>
    %31 = stablehlo.slice %arg6 [3:4] : (tensor<4xui32>) -> tensor<1xui32>
    %32 = stablehlo.reshape %31 : (tensor<1xui32>) -> tensor<ui32>
    %33 = stablehlo.add %23, %30 : tensor<2x2xui32>
    %34 = stablehlo.broadcast_in_dim %32, dims = [] : (tensor<ui32>) -> tensor<2x2xui32>
    %35 = stablehlo.shift_left %30, %34 : tensor<2x2xui32>
    %c_3 = stablehlo.constant dense<32> : tensor<ui32>
    %36 = stablehlo.subtract %c_3, %32 : tensor<ui32>
    %37 = stablehlo.broadcast_in_dim %36, dims = [] : (tensor<ui32>) -> tensor<2x2xui32>
    %38 = stablehlo.shift_right_logical %30, %37 : tensor<2x2xui32>
    %39 = stablehlo.or %35, %38 : tensor<2x2xui32>
    %40 = stablehlo.xor %33, %39 : tensor<2x2xui32>
    %41 = stablehlo.broadcast_in_dim %arg3, dims = [] : (tensor<ui32>) -> tensor<2x2xui32>
    %42 = stablehlo.add %33, %41 : tensor<2x2xui32>
    %43 = stablehlo.broadcast_in_dim %arg4, dims = [] : (tensor<ui32>) -> tensor<2x2xui32>
    %44 = stablehlo.add %40, %43 : tensor<2x2xui32>
    %c_4 = stablehlo.constant dense<1> : tensor<i32>
    %45 = stablehlo.add %arg0, %c_4 : tensor<i32>
    %46 = stablehlo.convert %45 : (tensor<i32>) -> tensor<ui32>
    %47 = stablehlo.broadcast_in_dim %46, dims = [] : (tensor<ui32>) -> tensor<2x2xui32>
    %48 = stablehlo.add %44, %47 : tensor<2x2xui32>
    return %0, %42, %48, %arg4, %arg5, %arg3, %arg7, %arg6 : tensor<i32>, tensor<2x2xui32>, tensor<2x2xui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>
  }
  func.func private @argmin(%arg0: tensor<2x2xf32>) -> tensor<2xi32> {
    %0 = stablehlo.iota dim = 0 : tensor<2x2xi32>
    %cst = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [0] : (tensor<2x2xf32>, tensor<2x2xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, tensor<2xi32>)
     reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
      %2 = stablehlo.compare LT, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f32>
      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i32>
      stablehlo.return %9, %10 : tensor<f32>, tensor<i32>
    }
    return %1#1 : tensor<2xi32>
  }
}
