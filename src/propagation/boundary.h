// Whether propagation may choose the shardings of a module's boundary values (the entry
// parameters and the root), as XLA's allow_spmd_sharding_propagation_to_parameters /
// _to_output say, and the rule that a propagated boundary value splits evenly or not at all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/module.h"
#include "sharding/sharding.h"

namespace gspmd::propagation {

// What propagation may do with one leaf of a boundary value.
enum class BoundaryPolicy : uint8_t {
  // The default: a leaf the user annotated keeps its annotation; an unannotated one is
  // propagated (what JAX asks for when it leaves an in/out sharding unspecified, and its
  // exports annotate every leaf it does specify, replicated ones included).
  kUnannotated,
  // --propagate-to-...=true: propagated, an annotation being only where it starts.
  kAllow,
  // =false: an annotation is kept; an unannotated leaf stays replicated and constrains nothing.
  kForbid,
};

// "true", "false" or "true,false,..." (braces allowed, as XLA prints them: "{true,false}").
// UserError naming `what` (the option or attribute) otherwise.
std::vector<bool> ParseBoundaryFlags(const std::string& text, const std::string& what);

// The policy of every leaf of the entry parameters (in parameter order, each parameter's
// leaves depth first) and of the root, from the requested flags (empty: the module's
// allow_spmd_sharding_propagation_to_* attribute, else the default). One flag applies to
// every leaf; otherwise one per parameter (or per element of a single tuple parameter) and
// one per root tuple element. UserError when the count fits neither.
struct BoundaryPolicies {
  std::vector<std::vector<BoundaryPolicy>> parameters;  // [parameter][leaf]
  std::vector<BoundaryPolicy> root;                     // [leaf]
};
BoundaryPolicies ResolveBoundaryPolicies(const Module& module, const std::vector<bool>& to_parameters,
                                         const std::vector<bool>& to_outputs);

// True when every split dim of an array of `dims` divides evenly under `sharding` (tuple
// shardings are checked leaf by leaf against `shape`).
bool SplitsEvenly(const Shape& shape, const Sharding& sharding);

}  // namespace gspmd::propagation
