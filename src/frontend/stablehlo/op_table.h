// The table of StableHLO/CHLO/Shardy/func operations the reader knows: for each op name its
// pretty-syntax parser (the custom assembly StableHLO prints, e.g. `stablehlo.add %a, %b :
// tensor<4xf32>`; null when the op is always printed in generic form) and its converter to
// HLO. One file per family registers its ops, each with the same two entry points:
//   ops_elementwise.cpp   unary, binary, compare, select, clamp, convert, chlo.erf, ...
//   ops_shape.cpp         constant, iota, broadcast, reshape, transpose, slice, pad, ...
//   ops_dot_conv.cpp      dot, dot_general, convolution
//   ops_reduce.cpp        reduce, reduce_window, select_and_scatter, sort, map
//   ops_gather_scatter.cpp gather, scatter
//   ops_control_flow.cpp  while, if, case, call, composite, return, optimization_barrier
//   ops_collectives.cpp   all_reduce, all_gather, reduce_scatter, all_to_all, ...
//   ops_custom_call.cpp   custom_call, chlo.top_k, rng, tokens
//   ops_sdy.cpp           sdy.sharding_constraint, manual_computation, sharding_group, ...
#pragma once

#include <string_view>
#include <unordered_map>

#include "frontend/stablehlo/module_reader.h"

namespace gspmd::stablehlo {

// Reads the rest of the op after its name (operands, attributes, regions, types) into `op`.
using PrettyParser = void (*)(ModuleReader& reader, OpSyntax& op);
// Builds the op's HLO instructions (staged with reader.Add) and returns its results.
using Converter = Converted (*)(ModuleReader& reader, OpSyntax& op);

struct OpEntry {
  PrettyParser pretty = nullptr;
  Converter convert = nullptr;
};

class OpTable {
 public:
  void Add(std::string_view name, PrettyParser pretty, Converter convert) { entries_[name] = {pretty, convert}; }
  const OpEntry* Find(std::string_view name) const {
    auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }

 private:
  std::unordered_map<std::string_view, OpEntry> entries_;  // lookups only
};

// Every known op (built once).
const OpTable& Ops();
// Why a known StableHLO/CHLO op cannot be read ("" when the name is not one of them), for
// the error that names it: e.g. stablehlo.fft -> "FFTs are not supported".
std::string_view UnsupportedOpReason(std::string_view name);

void RegisterElementwiseOps(OpTable& table);
void RegisterShapeOps(OpTable& table);
void RegisterDotConvOps(OpTable& table);
void RegisterReduceOps(OpTable& table);
void RegisterGatherScatterOps(OpTable& table);
void RegisterControlFlowOps(OpTable& table);
void RegisterCollectiveOps(OpTable& table);
void RegisterCustomCallOps(OpTable& table);
void RegisterSdyOps(OpTable& table);

}  // namespace gspmd::stablehlo
