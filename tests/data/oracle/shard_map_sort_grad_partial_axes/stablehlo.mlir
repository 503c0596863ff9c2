module @jit_fn attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, {name = "y", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<5x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> (tensor<f32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, []>}, tensor<5x2xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.reshape %arg0 : (tensor<5x2xf32>) -> tensor<10xf32>
    %1 = stablehlo.reshape %0 : (tensor<10xf32>) -> tensor<1x10xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x10xf32>) -> tensor<60x10xf32>
    %3 = stablehlo.reshape %2 : (tensor<60x10xf32>) -> tensor<600xf32>
    %4 = stablehlo.reshape %3 : (tensor<600xf32>) -> tensor<2x3x10x10xf32>
    %5 = stablehlo.reshape %arg0 : (tensor<5x2xf32>) -> tensor<10xf32>
    %6 = stablehlo.reshape %5 : (tensor<10xf32>) -> tensor<1x10xf32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<1x10xf32>) -> tensor<3x10xf32>
    %8 = stablehlo.reshape %7 : (tensor<3x10xf32>) -> tensor<30xf32>
    %9 = stablehlo.slice %8 [0:24] : (tensor<30xf32>) -> tensor<24xf32>
    %10 = stablehlo.reshape %9 : (tensor<24xf32>) -> tensor<4x3x2x1xf32>
    %11 = stablehlo.convolution(%4, %10) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [0, 1]], lhs_dilate = [1, 1], rhs_dilate = [2, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x3x10x10xf32>, tensor<4x3x2x1xf32>) -> tensor<2x4x10x11xf32>
    %12 = stablehlo.iota dim = 0 : tensor<2x4x10x11xui32>
    %13:3 = "stablehlo.sort"(%11, %11, %12) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<f32>, %arg4: tensor<f32>, %arg5: tensor<ui32>, %arg6: tensor<ui32>):
      %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %63 = stablehlo.compare EQ, %arg1, %cst_16, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_17 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %64 = stablehlo.select %63, %cst_17, %arg1 : tensor<i1>, tensor<f32>
      %65 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_18 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %66 = stablehlo.select %65, %cst_18, %64 : tensor<i1>, tensor<f32>
      %cst_19 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %67 = stablehlo.compare EQ, %arg2, %cst_19, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_20 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %68 = stablehlo.select %67, %cst_20, %arg2 : tensor<i1>, tensor<f32>
      %69 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %cst_21 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %70 = stablehlo.select %69, %cst_21, %68 : tensor<i1>, tensor<f32>
      %71 = stablehlo.compare LT, %66, %70, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %71 : tensor<i1>
    }) : (tensor<2x4x10x11xf32>, tensor<2x4x10x11xf32>, tensor<2x4x10x11xui32>) -> (tensor<2x4x10x11xf32>, tensor<2x4x10x11xf32>, tensor<2x4x10x11xui32>)
    %14 = stablehlo.broadcast_in_dim %13#2, dims = [0, 1, 2, 3] : (tensor<2x4x10x11xui32>) -> tensor<2x4x10x11x1xui32>
    %15:4 = sdy.manual_computation(%13#1) in_shardings=[<@mesh, [{}, {}, {"y"}, {}]>] out_shardings=[<@mesh, [{"x", "y"}, {}, {}, {}]>, <@mesh, [{"x", "y"}, {}, {}, {}]>, <@mesh, [{"x", "y"}]>, <@mesh, [{}, {}, {"y"}, {}]>] manual_axes={"x", "y"} (%arg1: tensor<2x4x5x11xf32>) {
      %63 = stablehlo.tanh %arg1 : tensor<2x4x5x11xf32>
      %cst_16 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %64 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<2x4x5x11xf32>
      %65 = stablehlo.subtract %64, %63 : tensor<2x4x5x11xf32>
      %cst_17 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %66 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<2x4x5x11xf32>
      %67 = stablehlo.multiply %63, %66 : tensor<2x4x5x11xf32>
      %cst_18 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %68 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<2x4x5x11xf32>
      %69 = stablehlo.add %67, %68 : tensor<2x4x5x11xf32>
      %cst_19 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %70 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<1xf32>
      sdy.return %63, %65, %70, %69 : tensor<2x4x5x11xf32>, tensor<2x4x5x11xf32>, tensor<1xf32>, tensor<2x4x5x11xf32>
    } : (tensor<2x4x10x11xf32>) -> (tensor<8x4x5x11xf32>, tensor<8x4x5x11xf32>, tensor<4xf32>, tensor<2x4x10x11xf32>)
    %16 = stablehlo.convert %13#0 : (tensor<2x4x10x11xf32>) -> tensor<2x4x10x11xi32>
    %c = stablehlo.constant dense<2> : tensor<i32>
    %17 = call @remainder(%16, %c) : (tensor<2x4x10x11xi32>, tensor<i32>) -> tensor<2x4x10x11xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %18 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<2x4x10x11xi32>
    %19 = stablehlo.compare EQ, %17, %18, SIGNED : (tensor<2x4x10x11xi32>, tensor<2x4x10x11xi32>) -> tensor<2x4x10x11xi1>
    %20 = call @_where_0(%19, %13#1, %13#1) : (tensor<2x4x10x11xi1>, tensor<2x4x10x11xf32>, tensor<2x4x10x11xf32>) -> tensor<2x4x10x11xf32>
    %21 = sdy.sharding_constraint %20 <@mesh, [{}, {}, {"x"}, {}]> : tensor<2x4x10x11xf32>
    %22:4 = sdy.manual_computation(%13#1) in_shardings=[<@mesh, [{}, {}, {"x"}, {}]>] out_shardings=[<@mesh, [{"x", "y"}, {}, {}, {}]>, <@mesh, [{"x", "y"}, {}, {}, {}]>, <@mesh, [{"x", "y"}]>, <@mesh, [{}, {}, {"x"}, {}]>] manual_axes={"x", "y"} (%arg1: tensor<2x4x5x11xf32>) {
      %63 = stablehlo.tanh %arg1 : tensor<2x4x5x11xf32>
      %cst_16 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %64 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<2x4x5x11xf32>
      %65 = stablehlo.subtract %64, %63 : tensor<2x4x5x11xf32>
      %cst_17 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %66 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<2x4x5x11xf32>
      %67 = stablehlo.multiply %63, %66 : tensor<2x4x5x11xf32>
      %cst_18 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %68 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<2x4x5x11xf32>
      %69 = stablehlo.add %67, %68 : tensor<2x4x5x11xf32>
      %cst_19 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %70 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<1xf32>
      sdy.return %63, %65, %70, %69 : tensor<2x4x5x11xf32>, tensor<2x4x5x11xf32>, tensor<1xf32>, tensor<2x4x5x11xf32>
    } : (tensor<2x4x10x11xf32>) -> (tensor<8x4x5x11xf32>, tensor<8x4x5x11xf32>, tensor<4xf32>, tensor<2x4x10x11xf32>)
    %23 = stablehlo.reshape %22#3 : (tensor<2x4x10x11xf32>) -> tensor<8x10x11xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %24 = stablehlo.reduce(%21 init: %cst) applies stablehlo.add across dimensions = [0, 1, 2, 3] : (tensor<2x4x10x11xf32>, tensor<f32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %25 = stablehlo.multiply %24, %cst_1 : tensor<f32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %26 = stablehlo.add %cst_2, %25 : tensor<f32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %27 = stablehlo.reduce(%22#3 init: %cst_3) applies stablehlo.add across dimensions = [0, 1, 2, 3] : (tensor<2x4x10x11xf32>, tensor<f32>) -> tensor<f32>
    %cst_4 = stablehlo.constant dense<7.500000e-01> : tensor<f32>
    %28 = stablehlo.multiply %27, %cst_4 : tensor<f32>
    %29 = stablehlo.add %26, %28 : tensor<f32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %30 = stablehlo.reduce(%23 init: %cst_5) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<8x10x11xf32>, tensor<f32>) -> tensor<f32>
    %cst_6 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %31 = stablehlo.multiply %30, %cst_6 : tensor<f32>
    %32 = stablehlo.add %29, %31 : tensor<f32>
    %cst_7 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_8 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %33 = stablehlo.multiply %cst_7, %cst_8 : tensor<f32>
    %34 = stablehlo.broadcast_in_dim %33, dims = [] : (tensor<f32>) -> tensor<8x10x11xf32>
    %cst_9 = stablehlo.constant dense<7.500000e-01> : tensor<f32>
    %35 = stablehlo.multiply %cst_7, %cst_9 : tensor<f32>
    %36 = stablehlo.broadcast_in_dim %35, dims = [] : (tensor<f32>) -> tensor<2x4x10x11xf32>
    %cst_10 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %37 = stablehlo.multiply %cst_7, %cst_10 : tensor<f32>
    %38 = stablehlo.broadcast_in_dim %37, dims = [] : (tensor<f32>) -> tensor<2x4x10x11xf32>
    %39 = stablehlo.reshape %34 : (tensor<8x10x11xf32>) -> tensor<2x4x10x11xf32>
    %40 = stablehlo.add %36, %39 : tensor<2x4x10x11xf32>
    %cst_11 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %41 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<2x4x10x11xf32>
    %42 = stablehlo.divide %40, %41 : tensor<2x4x10x11xf32>
    %43 = sdy.manual_computation(%42, %22#0, %22#1, %22#2) in_shardings=[<@mesh, [{}, {}, {"x"}, {}]>, <@mesh, [{"x", "y"}, {}, {}, {}]>, <@mesh, [{"x", "y"}, {}, {}, {}]>, <@mesh, [{"x", "y"}]>] out_shardings=[<@mesh, [{}, {}, {"x"}, {}]>] manual_axes={"x", "y"} (%arg1: tensor<2x4x5x11xf32>, %arg2: tensor<2x4x5x11xf32>, %arg3: tensor<2x4x5x11xf32>, %arg4: tensor<1xf32>) {
      %63 = stablehlo.reshape %arg4 : (tensor<1xf32>) -> tensor<f32>
      %64 = stablehlo.broadcast_in_dim %63, dims = [] : (tensor<f32>) -> tensor<2x4x5x11xf32>
      %65 = stablehlo.multiply %arg1, %64 : tensor<2x4x5x11xf32>
      %66 = stablehlo.multiply %65, %arg3 : tensor<2x4x5x11xf32>
      %67 = stablehlo.multiply %66, %arg2 : tensor<2x4x5x11xf32>
      %68 = stablehlo.add %66, %67 : tensor<2x4x5x11xf32>
      %69 = "stablehlo.all_reduce"(%68) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
      ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
        %70 = stablehlo.add %arg5, %arg6 : tensor<f32>
        stablehlo.return %70 : tensor<f32>
      }) : (tensor<2x4x5x11xf32>) -> tensor<2x4x5x11xf32>
      sdy.return %69 : tensor<2x4x5x11xf32>
    } : (tensor<2x4x10x11xf32>, tensor<8x4x5x11xf32>, tensor<8x4x5x11xf32>, tensor<4xf32>) -> tensor<2x4x10x11xf32>
    %44 = sdy.sharding_constraint %38 <@mesh, [{}, {}, {"x"}, {}]> : tensor<2x4x10x11xf32>
    %45:2 = call @_where_1(%19, %44) : (tensor<2x4x10x11xi1>, tensor<2x4x10x11xf32>) -> (tensor<2x4x10x11xf32>, tensor<2x4x10x11xf32>)
    %46 = stablehlo.add %43, %45#0 : tensor<2x4x10x11xf32>
    %47 = stablehlo.add %46, %45#1 : tensor<2x4x10x11xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %48 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<2x4x10x11xf32>
    %49 = "stablehlo.scatter"(%48, %14, %47) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], input_batching_dims = [1, 2, 3], scatter_indices_batching_dims = [1, 2, 3], scatter_dims_to_operand_dims = [0], index_vector_dim = 4>, unique_indices = false}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %63 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %63 : tensor<f32>
    }) : (tensor<2x4x10x11xf32>, tensor<2x4x10x11x1xui32>, tensor<2x4x10x11xf32>) -> tensor<2x4x10x11xf32>
    %50 = stablehlo.convolution(%4, %49) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [2, 1], pad = [[1, 1], [0, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x3x10x10xf32>, tensor<2x4x10x11xf32>) -> tensor<4x3x2x1xf32>
    %51 = stablehlo.reverse %10, dims = [2, 3] : tensor<4x3x2x1xf32>
    %52 = stablehlo.convolution(%49, %51) dim_numbers = [b, f, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [0, -1]], lhs_dilate = [1, 1], rhs_dilate = [2, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x4x10x11xf32>, tensor<4x3x2x1xf32>) -> tensor<2x3x10x10xf32>
    %53 = stablehlo.reshape %50 : (tensor<4x3x2x1xf32>) -> tensor<24xf32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %54 = stablehlo.pad %53, %cst_13, low = [0], high = [6], interior = [0] : (tensor<24xf32>, tensor<f32>) -> tensor<30xf32>
    %55 = stablehlo.reshape %54 : (tensor<30xf32>) -> tensor<3x10xf32>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %56 = stablehlo.reduce(%55 init: %cst_14) applies stablehlo.add across dimensions = [0] : (tensor<3x10xf32>, tensor<f32>) -> tensor<10xf32>
    %57 = stablehlo.reshape %56 : (tensor<10xf32>) -> tensor<5x2xf32>
    %58 = stablehlo.reshape %52 : (tensor<2x3x10x10xf32>) -> tensor<600xf32>
    %59 = stablehlo.reshape %58 : (tensor<600xf32>) -> tensor<60x10xf32>
    %cst_15 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %60 = stablehlo.reduce(%59 init: %cst_15) applies stablehlo.add across dimensions = [0] : (tensor<60x10xf32>, tensor<f32>) -> tensor<10xf32>
    %61 = stablehlo.reshape %60 : (tensor<10xf32>) -> tensor<5x2xf32>
    %62 = stablehlo.add %57, %61 : tensor<5x2xf32>
    return %32, %62 : tensor<f32>, tensor<5x2xf32>
  }
  func.func private @remainder(%arg0: tensor<2x4x10x11xi32>, %arg1: tensor<i32>) -> tensor<2x4x10x11xi32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare EQ, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %2 = call @_where(%1, %c_0, %0) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i32>) -> tensor<2x4x10x11xi32>
    %4 = stablehlo.remainder %arg0, %3 : tensor<2x4x10x11xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<2x4x10x11xi32>
    %6 = stablehlo.compare NE, %4, %5, SIGNED : (tensor<2x4x10x11xi32>, tensor<2x4x10x11xi32>) -> tensor<2x4x10x11xi1>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<2x4x10x11xi32>
    %8 = stablehlo.compare LT, %4, %7, SIGNED : (tensor<2x4x10x11xi32>, tensor<2x4x10x11xi32>) -> tensor<2x4x10x11xi1>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %9 = stablehlo.compare LT, %2, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %10 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<i1>) -> tensor<2x4x10x11xi1>
    %11 = stablehlo.compare NE, %8, %10, UNSIGNED : (tensor<2x4x10x11xi1>, tensor<2x4x10x11xi1>) -> tensor<2x4x10x11xi1>
    %12 = stablehlo.and %11, %6 : tensor<2x4x10x11xi1>
    %13 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<i32>) -> tensor<2x4x10x11xi32>
    %14 = stablehlo.add %4, %13 : tensor<2x4x10x11xi32>
    %15 = stablehlo.select %12, %14, %4 : tensor<2x4x10x11xi1>, tensor<2x4x10x11xi32>
    return %15 : tensor<2x4x10x11xi32>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i32>
    return %0 : tensor<i32>
  }
  func.func private @_where_0(%arg0: tensor<2x4x10x11xi1>, %arg1: tensor<2x4x10x11xf32>, %arg2: tensor<2x4x10x11xf32>) -> tensor<2x4x10x11xf32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<2x4x10x11xi1>, tensor<2x4x10x11xf32>
    return %0 : tensor<2x4x10x11xf32>
  }
  func.func private @_where_1(%arg0: tensor<2x4x10x11xi1>, %arg1: tensor<2x4x10x11xf32>) -> (tensor<2x4x10x11xf32>, tensor<2x4x10x11xf32>) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x4x10x11xf32>
    %1 = stablehlo.select %arg0, %0, %arg1 : tensor<2x4x10x11xi1>, tensor<2x4x10x11xf32>
    %2 = stablehlo.select %arg0, %arg1, %0 : tensor<2x4x10x11xi1>, tensor<2x4x10x11xf32>
    return %2, %1 : tensor<2x4x10x11xf32>, tensor<2x4x10x11xf32>
  }
}
