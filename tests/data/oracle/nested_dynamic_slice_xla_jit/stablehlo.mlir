module @jit_fn attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x1xi1> {mhlo.sharding = "{replicated}"}, %arg1: tensor<1x5x5xf32> {mhlo.sharding = "{replicated}"}, %arg2: tensor<1x6xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<f32> {jax.result_info = "result[0]", mhlo.sharding = "{replicated}"}, tensor<1x5x5xf32> {jax.result_info = "result[1]"}, tensor<1x6xf32> {jax.result_info = "result[2]"}) {
    %c = stablehlo.constant dense<[[3, 3, 4, 4, 0]]> : tensor<1x5xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<4x3xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<1x5xi32>
    %1 = stablehlo.compare LT, %c, %0, SIGNED : (tensor<1x5xi32>, tensor<1x5xi32>) -> tensor<1x5xi1>
    %c_2 = stablehlo.constant dense<5> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<1x5xi32>
    %3 = stablehlo.add %c, %2 : tensor<1x5xi32>
    %4 = stablehlo.select %1, %3, %c : tensor<1x5xi1>, tensor<1x5xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<1x5xi32>) -> tensor<1x5x1xi32>
    %6 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<5x1xi1>, tensor<1x5x1xi32>) -> tensor<1x5x1xi1>
    %7 = call @_take(%6, %c_0) : (tensor<1x5x1xi1>, tensor<4x3xi32>) -> tensor<1x5x4x3xi1>
    %8 = stablehlo.custom_call @Sharding(%7) {backend_config = "", mhlo.sharding = "{devices=[1,1,2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"} : (tensor<1x5x4x3xi1>) -> tensor<1x5x4x3xi1>
    %9 = stablehlo.custom_call @SPMDFullToShardShape(%8) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<1x5x4x3xi1>) -> tensor<1x5x2x3xi1>
    %10 = call @shmap_body(%9) : (tensor<1x5x2x3xi1>) -> tensor<1x5x2x3xi1>
    %11 = stablehlo.custom_call @Sharding(%10) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<1x5x2x3xi1>) -> tensor<1x5x2x3xi1>
    %12 = stablehlo.custom_call @SPMDShardToFullShape(%11) {backend_config = "", mhlo.sharding = "{devices=[1,1,2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"} : (tensor<1x5x2x3xi1>) -> tensor<1x5x4x3xi1>
    %13 = stablehlo.custom_call @Sharding(%arg1) {backend_config = "", mhlo.sharding = "{replicated}"} : (tensor<1x5x5xf32>) -> tensor<1x5x5xf32>
    %14 = stablehlo.custom_call @SPMDFullToShardShape(%13) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<1x5x5xf32>) -> tensor<1x5x5xf32>
    %15:4 = call @shmap_body_0(%14) : (tensor<1x5x5xf32>) -> (tensor<1x5x5xf32>, tensor<1x5x5xf32>, tensor<1xf32>, tensor<1x5x5xf32>)
    %16 = stablehlo.custom_call @Sharding(%15#0) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<1x5x5xf32>) -> tensor<1x5x5xf32>
    %17 = stablehlo.custom_call @SPMDShardToFullShape(%16) {backend_config = "", mhlo.sharding = "{devices=[8,1,1]<=[8]}"} : (tensor<1x5x5xf32>) -> tensor<8x5x5xf32>
    %18 = stablehlo.custom_call @Sharding(%15#1) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<1x5x5xf32>) -> tensor<1x5x5xf32>
    %19 = stablehlo.custom_call @SPMDShardToFullShape(%18) {backend_config = "", mhlo.sharding = "{devices=[8,1,1]<=[8]}"} : (tensor<1x5x5xf32>) -> tensor<8x5x5xf32>
    %20 = stablehlo.custom_call @Sharding(%15#2) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<1xf32>) -> tensor<1xf32>
    %21 = stablehlo.custom_call @SPMDShardToFullShape(%20) {backend_config = "", mhlo.sharding = "{devices=[8]<=[8]}"} : (tensor<1xf32>) -> tensor<8xf32>
    %22 = stablehlo.custom_call @Sharding(%15#3) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<1x5x5xf32>) -> tensor<1x5x5xf32>
    %23 = stablehlo.custom_call @SPMDShardToFullShape(%22) {backend_config = "", mhlo.sharding = "{replicated}"} : (tensor<1x5x5xf32>) -> tensor<1x5x5xf32>
    %24 = stablehlo.convert %arg0 : (tensor<5x1xi1>) -> tensor<5x1xi32>
    %25 = stablehlo.abs %24 : tensor<5x1xi32>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %26 = stablehlo.reduce(%25 init: %c_3) applies stablehlo.add across dimensions = [0, 1] : (tensor<5x1xi32>, tensor<i32>) -> tensor<i32>
    %c_4 = stablehlo.constant dense<3> : tensor<i32>
    %27 = call @remainder(%26, %c_4) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %c_5 = stablehlo.constant dense<0> : tensor<i32>
    %c_6 = stablehlo.constant dense<0> : tensor<i32>
    %28 = stablehlo.compare LT, %c_5, %c_6, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_7 = stablehlo.constant dense<0> : tensor<i32>
    %c_8 = stablehlo.constant dense<1> : tensor<i32>
    %29 = stablehlo.add %c_7, %c_8 : tensor<i32>
    %c_9 = stablehlo.constant dense<0> : tensor<i32>
    %30 = stablehlo.select %28, %29, %c_9 : tensor<i1>, tensor<i32>
    %c_10 = stablehlo.constant dense<0> : tensor<i32>
    %31 = stablehlo.compare LT, %27, %c_10, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_11 = stablehlo.constant dense<5> : tensor<i32>
    %32 = stablehlo.add %27, %c_11 : tensor<i32>
    %33 = stablehlo.select %31, %32, %27 : tensor<i1>, tensor<i32>
    %c_12 = stablehlo.constant dense<4> : tensor<i32>
    %c_13 = stablehlo.constant dense<0> : tensor<i32>
    %34 = stablehlo.compare LT, %c_12, %c_13, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_14 = stablehlo.constant dense<4> : tensor<i32>
    %c_15 = stablehlo.constant dense<5> : tensor<i32>
    %35 = stablehlo.add %c_14, %c_15 : tensor<i32>
    %c_16 = stablehlo.constant dense<4> : tensor<i32>
    %36 = stablehlo.select %34, %35, %c_16 : tensor<i1>, tensor<i32>
    %37 = stablehlo.dynamic_slice %23, %30, %33, %36, sizes = [1, 4, 1] : (tensor<1x5x5xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x1xf32>
    %38 = stablehlo.not %12 : tensor<1x5x4x3xi1>
    %39 = stablehlo.convert %7 : (tensor<1x5x4x3xi1>) -> tensor<1x5x4x3xi32>
    %40 = stablehlo.abs %39 : tensor<1x5x4x3xi32>
    %c_17 = stablehlo.constant dense<0> : tensor<i32>
    %41 = stablehlo.reduce(%40 init: %c_17) applies stablehlo.add across dimensions = [0, 1, 2, 3] : (tensor<1x5x4x3xi32>, tensor<i32>) -> tensor<i32>
    %c_18 = stablehlo.constant dense<3> : tensor<i32>
    %42 = call @remainder(%41, %c_18) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %c_19 = stablehlo.constant dense<0> : tensor<i32>
    %c_20 = stablehlo.constant dense<0> : tensor<i32>
    %43 = stablehlo.compare LT, %c_19, %c_20, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_21 = stablehlo.constant dense<0> : tensor<i32>
    %c_22 = stablehlo.constant dense<1> : tensor<i32>
    %44 = stablehlo.add %c_21, %c_22 : tensor<i32>
    %c_23 = stablehlo.constant dense<0> : tensor<i32>
    %45 = stablehlo.select %43, %44, %c_23 : tensor<i1>, tensor<i32>
    %c_24 = stablehlo.constant dense<0> : tensor<i32>
    %46 = stablehlo.compare LT, %42, %c_24, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_25 = stablehlo.constant dense<4> : tensor<i32>
    %47 = stablehlo.add %42, %c_25 : tensor<i32>
    %48 = stablehlo.select %46, %47, %42 : tensor<i1>, tensor<i32>
    %c_26 = stablehlo.constant dense<0> : tensor<i32>
    %c_27 = stablehlo.constant dense<0> : tensor<i32>
    %49 = stablehlo.compare LT, %c_26, %c_27, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_28 = stablehlo.constant dense<0> : tensor<i32>
    %c_29 = stablehlo.constant dense<1> : tensor<i32>
    %50 = stablehlo.add %c_28, %c_29 : tensor<i32>
    %c_30 = stablehlo.constant dense<0> : tensor<i32>
    %51 = stablehlo.select %49, %50, %c_30 : tensor<i1>, tensor<i32>
    %52 = stablehlo.dynamic_slice %37, %45, %48, %51, sizes = [1, 3, 1] : (tensor<1x4x1xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x3x1xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %53 = stablehlo.reduce(%52 init: %cst) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<1x3x1xf32>, tensor<f32>) -> tensor<f32>
    %cst_31 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %54 = stablehlo.multiply %53, %cst_31 : tensor<f32>
    %cst_32 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %55 = stablehlo.add %cst_32, %54 : tensor<f32>
    %cst_33 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_34 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %56 = stablehlo.multiply %cst_33, %cst_34 : tensor<f32>
    %57 = stablehlo.broadcast_in_dim %56, dims = [] : (tensor<f32>) -> tensor<1x3x1xf32>
    %cst_35 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %58 = stablehlo.broadcast_in_dim %cst_35, dims = [] : (tensor<f32>) -> tensor<1x4x1xf32>
    %59 = stablehlo.dynamic_update_slice %58, %57, %45, %48, %51 : (tensor<1x4x1xf32>, tensor<1x3x1xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x1xf32>
    %cst_36 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %60 = stablehlo.broadcast_in_dim %cst_36, dims = [] : (tensor<f32>) -> tensor<1x5x5xf32>
    %61 = stablehlo.dynamic_update_slice %60, %59, %30, %33, %36 : (tensor<1x5x5xf32>, tensor<1x4x1xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x5x5xf32>
    %cst_37 = stablehlo.constant dense<8.000000e+00> : tensor<f32>
    %62 = stablehlo.broadcast_in_dim %cst_37, dims = [] : (tensor<f32>) -> tensor<1x5x5xf32>
    %63 = stablehlo.divide %61, %62 : tensor<1x5x5xf32>
    %64 = stablehlo.custom_call @Sharding(%63) {backend_config = "", mhlo.sharding = "{replicated}"} : (tensor<1x5x5xf32>) -> tensor<1x5x5xf32>
    %65 = stablehlo.custom_call @SPMDFullToShardShape(%64) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<1x5x5xf32>) -> tensor<1x5x5xf32>
    %66 = stablehlo.custom_call @Sharding(%17) {backend_config = "", mhlo.sharding = "{devices=[8,1,1]<=[8]}"} : (tensor<8x5x5xf32>) -> tensor<8x5x5xf32>
    %67 = stablehlo.custom_call @SPMDFullToShardShape(%66) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<8x5x5xf32>) -> tensor<1x5x5xf32>
    %68 = stablehlo.custom_call @Sharding(%19) {backend_config = "", mhlo.sharding = "{devices=[8,1,1]<=[8]}"} : (tensor<8x5x5xf32>) -> tensor<8x5x5xf32>
    %69 = stablehlo.custom_call @SPMDFullToShardShape(%68) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<8x5x5xf32>) -> tensor<1x5x5xf32>
    %70 = stablehlo.custom_call @Sharding(%21) {backend_config = "", mhlo.sharding = "{devices=[8]<=[8]}"} : (tensor<8xf32>) -> tensor<8xf32>
    %71 = stablehlo.custom_call @SPMDFullToShardShape(%70) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<8xf32>) -> tensor<1xf32>
    %72 = call @shmap_body_1(%65, %67, %69, %71) : (tensor<1x5x5xf32>, tensor<1x5x5xf32>, tensor<1x5x5xf32>, tensor<1xf32>) -> tensor<1x5x5xf32>
    %73 = stablehlo.custom_call @Sharding(%72) {backend_config = "", mhlo.sharding = "{manual}"} : (tensor<1x5x5xf32>) -> tensor<1x5x5xf32>
    %74 = stablehlo.custom_call @SPMDShardToFullShape(%73) {backend_config = "", mhlo.sharding = "{replicated}"} : (tensor<1x5x5xf32>) -> tensor<1x5x5xf32>
    %cst_38 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %75 = stablehlo.broadcast_in_dim %cst_38, dims = [] : (tensor<f32>) -> tensor<1x6xf32>
    return %55, %74, %75 : tensor<f32>, tensor<1x5x5xf32>, tensor<1x6xf32>
  }
  func.func private @_take(%arg0: tensor<1x5x1xi1>, %arg1: tensor<4x3xi32>) -> tensor<1x5x4x3xi1> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [0, 1] : (tensor<4x3xi32>) -> tensor<4x3x1xi32>
    %1 = "stablehlo.gather"(%arg0, %0) <{dimension_numbers = #stablehlo.gather<offset_dims = [0, 1], collapsed_slice_dims = [2], start_index_map = [2], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 5, 1>}> : (tensor<1x5x1xi1>, tensor<4x3x1xi32>) -> tensor<1x5x4x3xi1>
    return %1 : tensor<1x5x4x3xi1>
  }
  func.func private @shmap_body(%arg0: tensor<1x5x2x3xi1>) -> (tensor<1x5x2x3xi1> {jax.result_info = "[None, None, ('y',), None]"}) {
    %0 = stablehlo.not %arg0 : tensor<1x5x2x3xi1>
    return %0 : tensor<1x5x2x3xi1>
  }
  func.func private @shmap_body_0(%arg0: tensor<1x5x5xf32>) -> (tensor<1x5x5xf32> {jax.result_info = "[('x', 'y'), None, None]"}, tensor<1x5x5xf32> {jax.result_info = "[('x', 'y'), None, None]"}, tensor<1xf32> {jax.result_info = "[('x', 'y')]"}, tensor<1x5x5xf32> {jax.result_info = "[None, None, None]"}) {
    %0 = stablehlo.tanh %arg0 : tensor<1x5x5xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x5x5xf32>
    %2 = stablehlo.subtract %1, %0 : tensor<1x5x5xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<1x5x5xf32>
    %4 = stablehlo.multiply %0, %3 : tensor<1x5x5xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<1x5x5xf32>
    %6 = stablehlo.add %4, %5 : tensor<1x5x5xf32>
    %cst_2 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<1xf32>
    return %0, %2, %7, %6 : tensor<1x5x5xf32>, tensor<1x5x5xf32>, tensor<1xf32>, tensor<1x5x5xf32>
  }
  func.func private @remainder(%arg0: tensor<i32>, %arg1: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.convert %arg1 : tensor<i32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare EQ, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %2 = call @_where(%1, %c_0, %0) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %3 = stablehlo.remainder %arg0, %2 : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.compare NE, %3, %c_1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.compare LT, %3, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.compare LT, %2, %c_3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %7 = stablehlo.compare NE, %5, %6, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
    %8 = stablehlo.and %7, %4 : tensor<i1>
    %9 = stablehlo.add %3, %2 : tensor<i32>
    %10 = stablehlo.select %8, %9, %3 : tensor<i1>, tensor<i32>
    return %10 : tensor<i32>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i32>
    return %0 : tensor<i32>
  }
  func.func private @shmap_body_1(%arg0: tensor<1x5x5xf32>, %arg1: tensor<1x5x5xf32>, %arg2: tensor<1x5x5xf32>, %arg3: tensor<1xf32>) -> (tensor<1x5x5xf32> {jax.result_info = "[None, None, None]"}) {
    %0 = stablehlo.reshape %arg3 : (tensor<1xf32>) -> tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<1x5x5xf32>
    %2 = stablehlo.multiply %arg0, %1 : tensor<1x5x5xf32>
    %3 = stablehlo.multiply %2, %arg2 : tensor<1x5x5xf32>
    %4 = stablehlo.multiply %3, %arg1 : tensor<1x5x5xf32>
    %5 = stablehlo.add %3, %4 : tensor<1x5x5xf32>
    %6 = "stablehlo.all_reduce"(%5) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %7 = stablehlo.add %arg4, %arg5 : tensor<f32>
      stablehlo.return %7 : tensor<f32>
    }) : (tensor<1x5x5xf32>) -> tensor<1x5x5xf32>
    return %6 : tensor<1x5x5xf32>
  }
}
