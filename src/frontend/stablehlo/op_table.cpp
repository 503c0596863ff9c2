// The op table, built from each family's registration, and the ops we name but cannot read.
#include "frontend/stablehlo/op_table.h"

#include <utility>

namespace gspmd::stablehlo {

const OpTable& Ops() {
  static const OpTable table = [] {
    OpTable t;
    RegisterElementwiseOps(t);
    RegisterShapeOps(t);
    RegisterDotConvOps(t);
    RegisterReduceOps(t);
    RegisterGatherScatterOps(t);
    RegisterControlFlowOps(t);
    RegisterCollectiveOps(t);
    RegisterCustomCallOps(t);
    RegisterSdyOps(t);
    return t;
  }();
  return table;
}

std::string_view UnsupportedOpReason(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kReasons[] = {
      {"stablehlo.fft", "FFTs are not supported"},
      {"stablehlo.cholesky", "linear-algebra solvers are not supported"},
      {"stablehlo.triangular_solve", "linear-algebra solvers are not supported"},
      {"stablehlo.batch_norm_training", "batch-norm ops are not supported (expected them decomposed)"},
      {"stablehlo.batch_norm_inference", "batch-norm ops are not supported (expected them decomposed)"},
      {"stablehlo.batch_norm_grad", "batch-norm ops are not supported (expected them decomposed)"},
      {"stablehlo.complex", "complex numbers are not supported"},
      {"stablehlo.real", "complex numbers are not supported"},
      {"stablehlo.imag", "complex numbers are not supported"},
      {"stablehlo.dynamic_broadcast_in_dim", "dynamic shapes are not supported"},
      {"stablehlo.dynamic_conv", "dynamic shapes are not supported"},
      {"stablehlo.dynamic_gather", "dynamic shapes are not supported"},
      {"stablehlo.dynamic_iota", "dynamic shapes are not supported"},
      {"stablehlo.dynamic_pad", "dynamic shapes are not supported"},
      {"stablehlo.dynamic_reshape", "dynamic shapes are not supported"},
      {"stablehlo.real_dynamic_slice", "dynamic shapes are not supported"},
      {"stablehlo.set_dimension_size", "dynamic shapes are not supported"},
      {"stablehlo.compute_reshape_shape", "dynamic shapes are not supported"},
      {"stablehlo.cstr_reshapable", "dynamic shapes are not supported"},
      {"stablehlo.uniform_quantize", "quantized types are not supported"},
      {"stablehlo.uniform_dequantize", "quantized types are not supported"},
      {"stablehlo.einsum", "einsum is deprecated in StableHLO (expected dot_general)"},
      {"stablehlo.unary_einsum", "einsum is deprecated in StableHLO (expected reduce)"},
      {"stablehlo.torch_index_select", "torch_index_select is not supported (expected gather)"},
      {"stablehlo.infeed", "host transfers are not supported"},
      {"stablehlo.outfeed", "host transfers are not supported"},
      {"stablehlo.send", "host transfers are not supported"},
      {"stablehlo.recv", "host transfers are not supported"},
      {"stablehlo.trace", "stablehlo.trace is not supported"},
      {"sdy.all_gather", "explicit Shardy collectives (after propagation) are not supported"},
      {"sdy.all_reduce", "explicit Shardy collectives (after propagation) are not supported"},
      {"sdy.all_slice", "explicit Shardy collectives (after propagation) are not supported"},
      {"sdy.all_to_all", "explicit Shardy collectives (after propagation) are not supported"},
      {"sdy.collective_permute", "explicit Shardy collectives (after propagation) are not supported"},
      {"sdy.reduce_scatter", "explicit Shardy collectives (after propagation) are not supported"},
  };
  for (const auto& [op, reason] : kReasons)
    if (op == name) return reason;
  if (name.starts_with("chlo.")) return "this CHLO op is not supported (expected it legalized to StableHLO)";
  return {};
}

}  // namespace gspmd::stablehlo
