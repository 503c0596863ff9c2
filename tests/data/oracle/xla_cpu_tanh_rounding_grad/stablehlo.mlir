module @jit_fn attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x2xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}, %arg1: tensor<2x8x12xi32> {mhlo.sharding = "{replicated}"}, %arg2: tensor<8xi32> {mhlo.sharding = "{devices=[2]<=[2]}"}) -> (tensor<f32> {jax.result_info = "result[0]", mhlo.sharding = "{replicated}"}, tensor<4x2xf32> {jax.result_info = "result[1]", mhlo.sharding = "{replicated}"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0:4 = stablehlo.while(%iterArg = %arg0, %iterArg_36 = %c_0, %iterArg_37 = %c, %iterArg_38 = %arg0) : tensor<4x2xf32>, tensor<i32>, tensor<i32>, tensor<4x2xf32>
    cond {
      %c_39 = stablehlo.constant dense<4> : tensor<i32>
      %93 = stablehlo.compare LT, %iterArg_36, %c_39, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %93 : tensor<i1>
    } do {
      %93:2 = func.call @closed_call(%iterArg, %iterArg_37, %iterArg_38) : (tensor<4x2xf32>, tensor<i32>, tensor<4x2xf32>) -> (tensor<i32>, tensor<4x2xf32>)
      %c_39 = stablehlo.constant dense<1> : tensor<i32>
      %94 = stablehlo.add %iterArg_36, %c_39 : tensor<i32>
      stablehlo.return %iterArg, %94, %93#0, %93#1 : tensor<4x2xf32>, tensor<i32>, tensor<i32>, tensor<4x2xf32>
    }
    %values, %indices = chlo.top_k(%arg2, k = 8) : tensor<8xi32> -> (tensor<8xi32>, tensor<8xi32>)
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0#3 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4x2xf32>, tensor<f32>) -> tensor<2xf32>
    %cst_1 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %3 = stablehlo.divide %1, %2 : tensor<2xf32>
    %4 = stablehlo.reshape %0#3 : (tensor<4x2xf32>) -> tensor<8xf32>
    %5 = stablehlo.slice %4 [0:4] : (tensor<8xf32>) -> tensor<4xf32>
    %6 = stablehlo.reshape %5 : (tensor<4xf32>) -> tensor<2x2xf32>
    %cst_2 = stablehlo.constant dense<2.500000e-01> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %8 = stablehlo.multiply %6, %7 : tensor<2x2xf32>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<1x2xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<1x2xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<1x2xf32>
    %c_7 = stablehlo.constant dense<0> : tensor<i32>
    %12:7 = stablehlo.while(%iterArg = %8, %iterArg_36 = %c_7, %iterArg_37 = %c_3, %iterArg_38 = %3, %iterArg_39 = %9, %iterArg_40 = %10, %iterArg_41 = %11) : tensor<2x2xf32>, tensor<i32>, tensor<i32>, tensor<2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>
    cond {
      %c_42 = stablehlo.constant dense<1> : tensor<i32>
      %93 = stablehlo.compare LT, %iterArg_36, %c_42, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %93 : tensor<i1>
    } do {
      %93:5 = func.call @closed_call_0(%iterArg, %iterArg_37, %iterArg_38) : (tensor<2x2xf32>, tensor<i32>, tensor<2xf32>) -> (tensor<i32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
      %94 = func.call @dynamic_update_index_in_dim(%iterArg_39, %93#2, %iterArg_36) : (tensor<1x2xf32>, tensor<2xf32>, tensor<i32>) -> tensor<1x2xf32>
      %95 = func.call @dynamic_update_index_in_dim(%iterArg_40, %93#3, %iterArg_36) : (tensor<1x2xf32>, tensor<2xf32>, tensor<i32>) -> tensor<1x2xf32>
      %96 = func.call @dynamic_update_index_in_dim(%iterArg_41, %93#4, %iterArg_36) : (tensor<1x2xf32>, tensor<2xf32>, tensor<i32>) -> tensor<1x2xf32>
      %c_42 = stablehlo.constant dense<1> : tensor<i32>
      %97 = stablehlo.add %iterArg_36, %c_42 : tensor<i32>
      stablehlo.return %iterArg, %97, %93#0, %93#1, %94, %95, %96 : tensor<2x2xf32>, tensor<i32>, tensor<i32>, tensor<2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>
    }
    %13 = stablehlo.custom_call @Sharding(%12#3) {backend_config = "", mhlo.sharding = "{devices=[2]<=[2]}"} : (tensor<2xf32>) -> tensor<2xf32>
    %cst_8 = stablehlo.constant dense<1.500000e+00> : tensor<f32>
    %14 = stablehlo.pad %12#3, %cst_8, low = [-1], high = [3], interior = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
    %15 = stablehlo.convert %indices : (tensor<8xi32>) -> tensor<8xf32>
    %16 = stablehlo.reshape %15 : (tensor<8xf32>) -> tensor<1x8xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<8x8xf32>
    %18 = stablehlo.reshape %17 : (tensor<8x8xf32>) -> tensor<64xf32>
    %19 = stablehlo.reshape %18 : (tensor<64xf32>) -> tensor<16x4xf32>
    %20 = stablehlo.dot_general %14, %19, contracting_dims = [0] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4xf32>, tensor<16x4xf32>) -> tensor<16xf32>
    %21 = stablehlo.slice %indices [0:5] : (tensor<8xi32>) -> tensor<5xi32>
    %c_9 = stablehlo.constant dense<4> : tensor<i32>
    %22 = call @remainder(%21, %c_9) : (tensor<5xi32>, tensor<i32>) -> tensor<5xi32>
    %23:2 = call @take_along_axis(%14, %22) : (tensor<4xf32>, tensor<5xi32>) -> (tensor<5xf32>, tensor<5x1xi32>)
    %24 = stablehlo.tanh %14 : tensor<4xf32>
    %cst_10 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %25 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %26 = stablehlo.subtract %25, %24 : tensor<4xf32>
    %27 = stablehlo.custom_call @Sharding(%23#0) {backend_config = "", mhlo.sharding = "{replicated}"} : (tensor<5xf32>) -> tensor<5xf32>
    %28 = stablehlo.custom_call @SPMDFullToShardShape(%27) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<5xf32>) -> tensor<5xf32>
    %29:4 = call @shmap_body(%28) : (tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>, tensor<1xf32>, tensor<5xf32>)
    %30 = stablehlo.custom_call @Sharding(%29#0) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<5xf32>) -> tensor<5xf32>
    %31 = stablehlo.custom_call @SPMDShardToFullShape(%30) {backend_config = "", mhlo.sharding = "{devices=[2]<=[2]}"} : (tensor<5xf32>) -> tensor<10xf32>
    %32 = stablehlo.custom_call @Sharding(%29#1) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<5xf32>) -> tensor<5xf32>
    %33 = stablehlo.custom_call @SPMDShardToFullShape(%32) {backend_config = "", mhlo.sharding = "{devices=[2]<=[2]}"} : (tensor<5xf32>) -> tensor<10xf32>
    %34 = stablehlo.custom_call @Sharding(%29#2) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<1xf32>) -> tensor<1xf32>
    %35 = stablehlo.custom_call @SPMDShardToFullShape(%34) {backend_config = "", mhlo.sharding = "{devices=[2]<=[2]}"} : (tensor<1xf32>) -> tensor<2xf32>
    %36 = stablehlo.custom_call @Sharding(%29#3) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<5xf32>) -> tensor<5xf32>
    %37 = stablehlo.custom_call @SPMDShardToFullShape(%36) {backend_config = "", mhlo.sharding = "{replicated}"} : (tensor<5xf32>) -> tensor<5xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %38 = stablehlo.reduce(%23#0 init: %cst_11) applies stablehlo.add across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
    %cst_12 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %39 = stablehlo.multiply %38, %cst_12 : tensor<f32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %40 = stablehlo.add %cst_13, %39 : tensor<f32>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %41 = stablehlo.reduce(%24 init: %cst_14) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %cst_15 = stablehlo.constant dense<7.500000e-01> : tensor<f32>
    %42 = stablehlo.multiply %41, %cst_15 : tensor<f32>
    %43 = stablehlo.add %40, %42 : tensor<f32>
    %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %44 = stablehlo.reduce(%37 init: %cst_16) applies stablehlo.add across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
    %cst_17 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %45 = stablehlo.multiply %44, %cst_17 : tensor<f32>
    %46 = stablehlo.add %43, %45 : tensor<f32>
    %cst_18 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_19 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %47 = stablehlo.reduce(%cst_18 init: %cst_19) applies stablehlo.add across dimensions = [] : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %cst_20 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %48 = stablehlo.multiply %cst_18, %cst_20 : tensor<f32>
    %49 = stablehlo.broadcast_in_dim %48, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %cst_21 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %50 = stablehlo.reduce(%47 init: %cst_21) applies stablehlo.add across dimensions = [] : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %cst_22 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %51 = stablehlo.reduce(%47 init: %cst_22) applies stablehlo.add across dimensions = [] : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %cst_23 = stablehlo.constant dense<7.500000e-01> : tensor<f32>
    %52 = stablehlo.multiply %51, %cst_23 : tensor<f32>
    %cst_24 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %53 = stablehlo.reduce(%52 init: %cst_24) applies stablehlo.add across dimensions = [] : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %54 = stablehlo.broadcast_in_dim %53, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %cst_25 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %55 = stablehlo.multiply %50, %cst_25 : tensor<f32>
    %cst_26 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %56 = stablehlo.reduce(%55 init: %cst_26) applies stablehlo.add across dimensions = [] : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %57 = stablehlo.broadcast_in_dim %56, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %cst_27 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %58 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %59 = stablehlo.divide %49, %58 : tensor<5xf32>
    %60 = stablehlo.custom_call @Sharding(%59) {backend_config = "", mhlo.sharding = "{replicated}"} : (tensor<5xf32>) -> tensor<5xf32>
    %61 = stablehlo.custom_call @SPMDFullToShardShape(%60) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<5xf32>) -> tensor<5xf32>
    %62 = stablehlo.custom_call @Sharding(%31) {backend_config = "", mhlo.sharding = "{devices=[2]<=[2]}"} : (tensor<10xf32>) -> tensor<10xf32>
    %63 = stablehlo.custom_call @SPMDFullToShardShape(%62) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<10xf32>) -> tensor<5xf32>
    %64 = stablehlo.custom_call @Sharding(%33) {backend_config = "", mhlo.sharding = "{devices=[2]<=[2]}"} : (tensor<10xf32>) -> tensor<10xf32>
    %65 = stablehlo.custom_call @SPMDFullToShardShape(%64) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<10xf32>) -> tensor<5xf32>
    %66 = stablehlo.custom_call @Sharding(%35) {backend_config = "", mhlo.sharding = "{devices=[2]<=[2]}"} : (tensor<2xf32>) -> tensor<2xf32>
    %67 = stablehlo.custom_call @SPMDFullToShardShape(%66) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<2xf32>) -> tensor<1xf32>
    %68 = call @shmap_body_1(%61, %63, %65, %67) : (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<1xf32>) -> tensor<5xf32>
    %69 = stablehlo.custom_call @Sharding(%68) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<5xf32>) -> tensor<5xf32>
    %70 = stablehlo.custom_call @SPMDShardToFullShape(%69) {backend_config = "", mhlo.sharding = "{replicated}"} : (tensor<5xf32>) -> tensor<5xf32>
    %71 = stablehlo.add %57, %70 : tensor<5xf32>
    %72 = stablehlo.multiply %54, %26 : tensor<4xf32>
    %73 = stablehlo.multiply %72, %24 : tensor<4xf32>
    %74 = stablehlo.add %72, %73 : tensor<4xf32>
    %75 = call @take_along_axis_2(%23#1, %71) : (tensor<5x1xi32>, tensor<5xf32>) -> tensor<4xf32>
    %76 = stablehlo.add %74, %75 : tensor<4xf32>
    %cst_28 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %77 = stablehlo.pad %76, %cst_28, low = [1], high = [-3], interior = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<2xf32>
    %78 = stablehlo.slice %77 [0:2] : (tensor<2xf32>) -> tensor<2xf32>
    %cst_29 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %79 = stablehlo.broadcast_in_dim %cst_29, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %c_30 = stablehlo.constant dense<0> : tensor<i32>
    %80:7 = stablehlo.while(%iterArg = %12#4, %iterArg_36 = %12#5, %iterArg_37 = %12#6, %iterArg_38 = %8, %iterArg_39 = %c_30, %iterArg_40 = %79, %iterArg_41 = %78) : tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2x2xf32>, tensor<i32>, tensor<2x2xf32>, tensor<2xf32>
    cond {
      %c_42 = stablehlo.constant dense<1> : tensor<i32>
      %93 = stablehlo.compare LT, %iterArg_39, %c_42, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %93 : tensor<i1>
    } do {
      %c_42 = stablehlo.constant dense<1> : tensor<i32>
      %93 = stablehlo.subtract %c_42, %iterArg_39 : tensor<i32>
      %c_43 = stablehlo.constant dense<1> : tensor<i32>
      %94 = stablehlo.subtract %93, %c_43 : tensor<i32>
      %95 = func.call @dynamic_index_in_dim(%iterArg, %94) : (tensor<1x2xf32>, tensor<i32>) -> tensor<2xf32>
      %96 = func.call @dynamic_index_in_dim(%iterArg_36, %94) : (tensor<1x2xf32>, tensor<i32>) -> tensor<2xf32>
      %97 = func.call @dynamic_index_in_dim(%iterArg_37, %94) : (tensor<1x2xf32>, tensor<i32>) -> tensor<2xf32>
      %98:2 = func.call @closed_call_3(%iterArg_38, %iterArg_40, %iterArg_41, %95, %96, %97) : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>)
      %c_44 = stablehlo.constant dense<1> : tensor<i32>
      %99 = stablehlo.add %iterArg_39, %c_44 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_36, %iterArg_37, %iterArg_38, %99, %98#0, %98#1 : tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2x2xf32>, tensor<i32>, tensor<2x2xf32>, tensor<2xf32>
    }
    %cst_31 = stablehlo.constant dense<2.500000e-01> : tensor<f32>
    %81 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %82 = stablehlo.multiply %80#5, %81 : tensor<2x2xf32>
    %83 = stablehlo.reshape %82 : (tensor<2x2xf32>) -> tensor<4xf32>
    %cst_32 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %84 = stablehlo.pad %83, %cst_32, low = [0], high = [4], interior = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<8xf32>
    %85 = stablehlo.reshape %84 : (tensor<8xf32>) -> tensor<4x2xf32>
    %cst_33 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %86 = stablehlo.broadcast_in_dim %cst_33, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %87 = stablehlo.divide %80#6, %86 : tensor<2xf32>
    %88 = stablehlo.broadcast_in_dim %87, dims = [1] : (tensor<2xf32>) -> tensor<4x2xf32>
    %89 = stablehlo.add %85, %88 : tensor<4x2xf32>
    %cst_34 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %90 = stablehlo.broadcast_in_dim %cst_34, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
    %c_35 = stablehlo.constant dense<0> : tensor<i32>
    %91:3 = stablehlo.while(%iterArg = %c_35, %iterArg_36 = %90, %iterArg_37 = %89) : tensor<i32>, tensor<4x2xf32>, tensor<4x2xf32>
    cond {
      %c_38 = stablehlo.constant dense<4> : tensor<i32>
      %93 = stablehlo.compare LT, %iterArg, %c_38, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %93 : tensor<i1>
    } do {
      %c_38 = stablehlo.constant dense<4> : tensor<i32>
      %93 = stablehlo.subtract %c_38, %iterArg : tensor<i32>
      %c_39 = stablehlo.constant dense<1> : tensor<i32>
      %94 = stablehlo.subtract %93, %c_39 : tensor<i32>
      %95:2 = func.call @closed_call_4(%iterArg_36, %iterArg_37) : (tensor<4x2xf32>, tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>)
      %c_40 = stablehlo.constant dense<1> : tensor<i32>
      %96 = stablehlo.add %iterArg, %c_40 : tensor<i32>
      stablehlo.return %96, %95#0, %95#1 : tensor<i32>, tensor<4x2xf32>, tensor<4x2xf32>
    }
    %92 = stablehlo.add %91#1, %91#2 : tensor<4x2xf32>
    return %46, %92 : tensor<f32>, tensor<4x2xf32>
  }
  func.func private @closed_call(%arg0: tensor<4x2xf32>, %arg1: tensor<i32>, %arg2: tensor<4x2xf32>) -> (tensor<i32>, tensor<4x2xf32>) {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %0 = stablehlo.add %arg1, %c : tensor<i32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
    %2 = stablehlo.multiply %arg2, %1 : tensor<4x2xf32>
    %3 = stablehlo.add %2, %arg0 : tensor<4x2xf32>
    %4 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
    %6 = stablehlo.add %3, %5 : tensor<4x2xf32>
    return %0, %6 : tensor<i32>, tensor<4x2xf32>
  }
  func.func private @closed_call_0(%arg0: tensor<2x2xf32>, %arg1: tensor<i32>, %arg2: tensor<2xf32>) -> (tensor<i32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %0 = stablehlo.add %arg1, %c : tensor<i32>
    %1 = stablehlo.dot_general %arg2, %arg0, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2xf32>, tensor<2x2xf32>) -> tensor<2xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %3 = stablehlo.multiply %arg2, %2 : tensor<2xf32>
    %4 = stablehlo.add %1, %3 : tensor<2xf32>
    %5 = stablehlo.tanh %4 : tensor<2xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %7 = stablehlo.subtract %6, %5 : tensor<2xf32>
    return %0, %5, %arg2, %5, %7 : tensor<i32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<1x2xf32>, %arg1: tensor<2xf32>, %arg2: tensor<i32>) -> tensor<1x2xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<2xf32>) -> tensor<1x2xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
    return %1 : tensor<1x2xf32>
  }
  func.func private @remainder(%arg0: tensor<5xi32>, %arg1: tensor<i32>) -> tensor<5xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare EQ, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %2 = call @_where(%1, %c_0, %0) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %4 = stablehlo.remainder %arg0, %3 : tensor<5xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %6 = stablehlo.compare NE, %4, %5, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %8 = stablehlo.compare LT, %4, %7, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %9 = stablehlo.compare LT, %2, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %10 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<i1>) -> tensor<5xi1>
    %11 = stablehlo.compare NE, %8, %10, UNSIGNED : (tensor<5xi1>, tensor<5xi1>) -> tensor<5xi1>
    %12 = stablehlo.and %11, %6 : tensor<5xi1>
    %13 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %14 = stablehlo.add %4, %13 : tensor<5xi32>
    %15 = stablehlo.select %12, %14, %4 : tensor<5xi1>, tensor<5xi32>
    return %15 : tensor<5xi32>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i32>
    return %0 : tensor<i32>
  }
  func.func private @take_along_axis(%arg0: tensor<4xf32>, %arg1: tensor<5xi32>) -> (tensor<5xf32>, tensor<5x1xi32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_0 = stablehlo.constant dense<4> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<5xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<5xi1>, tensor<5xi32>
    %5 = stablehlo.reshape %4 : (tensor<5xi32>) -> tensor<5x1xi32>
    %6 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<4xf32>, tensor<5x1xi32>) -> tensor<5xf32>
    return %6, %5 : tensor<5xf32>, tensor<5x1xi32>
  }
  func.func private @shmap_body(%arg0: tensor<5xf32>) -> (tensor<5xf32> {jax.result_info = "[('x',)]"}, tensor<5xf32> {jax.result_info = "[('x',)]"}, tensor<1xf32> {jax.result_info = "[('x',)]"}, tensor<5xf32> {jax.result_info = "[None]"}) {
    %0 = stablehlo.tanh %arg0 : tensor<5xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %2 = stablehlo.subtract %1, %0 : tensor<5xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %4 = stablehlo.multiply %0, %3 : tensor<5xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %6 = stablehlo.add %4, %5 : tensor<5xf32>
    %cst_2 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<1xf32>
    return %0, %2, %7, %6 : tensor<5xf32>, tensor<5xf32>, tensor<1xf32>, tensor<5xf32>
  }
  func.func private @shmap_body_1(%arg0: tensor<5xf32>, %arg1: tensor<5xf32>, %arg2: tensor<5xf32>, %arg3: tensor<1xf32>) -> (tensor<5xf32> {jax.result_info = "[None]"}) {
    %0 = stablehlo.reshape %arg3 : (tensor<1xf32>) -> tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<5xf32>
    %2 = stablehlo.multiply %arg0, %1 : tensor<5xf32>
    %3 = stablehlo.multiply %2, %arg2 : tensor<5xf32>
    %4 = stablehlo.multiply %3, %arg1 : tensor<5xf32>
    %5 = stablehlo.add %3, %4 : tensor<5xf32>
    %6 = "stablehlo.all_reduce"(%5) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %7 = stablehlo.add %arg4, %arg5 : tensor<f32>
      stablehlo.return %7 : tensor<f32>
    }) : (tensor<5xf32>) -> tensor<5xf32>
    return %6 : tensor<5xf32>
  }
  func.func private @take_along_axis_2(%arg0: tensor<5x1xi32>, %arg1: tensor<5xf32>) -> tensor<4xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %c = stablehlo.constant dense<3> : tensor<1xi32>
    %c_0 = stablehlo.constant dense<2147483647> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %2 = stablehlo.minimum %c, %1 : tensor<1xi32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [1] : (tensor<1xi32>) -> tensor<5x1xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<5x1xi32>
    %5 = stablehlo.clamp %4, %arg0, %3 : tensor<5x1xi32>
    %6 = "stablehlo.scatter"(%0, %5, %arg1) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %7 = stablehlo.add %arg2, %arg3 : tensor<f32>
      stablehlo.return %7 : tensor<f32>
    }) : (tensor<4xf32>, tensor<5x1xi32>, tensor<5xf32>) -> tensor<4xf32>
    return %6 : tensor<4xf32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<1x2xf32>, %arg1: tensor<i32>) -> tensor<2xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, sizes = [1, 2] : (tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x2xf32>) -> tensor<2xf32>
    return %1 : tensor<2xf32>
  }
  func.func private @closed_call_3(%arg0: tensor<2x2xf32>, %arg1: tensor<2x2xf32>, %arg2: tensor<2xf32>, %arg3: tensor<2xf32>, %arg4: tensor<2xf32>, %arg5: tensor<2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>) {
    %0 = stablehlo.multiply %arg2, %arg5 : tensor<2xf32>
    %1 = stablehlo.multiply %0, %arg4 : tensor<2xf32>
    %2 = stablehlo.add %0, %1 : tensor<2xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %4 = stablehlo.multiply %2, %3 : tensor<2xf32>
    %5 = stablehlo.dot_general %2, %arg3, contracting_dims = [] x [], precision = [DEFAULT, DEFAULT] : (tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
    %6 = stablehlo.transpose %5, dims = [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %7 = stablehlo.add %arg1, %6 : tensor<2x2xf32>
    %8 = stablehlo.dot_general %2, %arg0, contracting_dims = [0] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2xf32>, tensor<2x2xf32>) -> tensor<2xf32>
    %9 = stablehlo.add %4, %8 : tensor<2xf32>
    return %7, %9 : tensor<2x2xf32>, tensor<2xf32>
  }
  func.func private @closed_call_4(%arg0: tensor<4x2xf32>, %arg1: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4x2xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x2xf32>
    %2 = stablehlo.multiply %arg1, %1 : tensor<4x2xf32>
    return %0, %2 : tensor<4x2xf32>, tensor<4x2xf32>
  }
}
