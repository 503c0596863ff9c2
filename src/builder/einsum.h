// Einsum specs ("bsd,dnh->bsnh") lowered to one HLO dot plus pre-reductions and a transpose.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/attributes.h"
#include "ir/shape.h"

namespace gspmd {

// How to compute a two-operand einsum with HLO ops:
//   lhs' = reduce-sum(lhs, lhs_sum_dims)   (labels only in lhs and not in the output)
//   rhs' = reduce-sum(rhs, rhs_sum_dims)
//   out  = transpose(dot(lhs', rhs', dot_dims), output_permutation)
// dot_dims index lhs'/rhs' (after the reductions).
struct EinsumPlan {
  std::vector<int64_t> lhs_sum_dims;
  std::vector<int64_t> rhs_sum_dims;
  DotDimensionNumbers dot_dims;
  std::vector<int64_t> output_permutation;  // output dim i = dot result dim permutation[i]
  std::vector<int64_t> output_dims;
};

// Plans `spec` for operands of the given shapes. A malformed spec (wrong label counts, repeated
// labels, output labels absent from both operands, mismatched sizes) is a UserError naming the
// spec and what is wrong.
EinsumPlan PlanEinsum(const std::string& spec, const Shape& lhs, const Shape& rhs);

}  // namespace gspmd
