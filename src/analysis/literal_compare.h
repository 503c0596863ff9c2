// Comparing computed values with reference values: relative error for floats, exact match
// for integers and booleans.
#pragma once

#include <string>

#include "ir/literal.h"

namespace gspmd {

struct LiteralComparison {
  bool matches = false;
  double relative_error = 0;  // ||actual - expected|| / ||expected|| (floats)
  double rms_difference = 0;  // sqrt(mean((actual - expected)^2)) over the finite pairs (floats)
  int64_t mismatched_elements = 0;
  std::string message;  // why it does not match ("" when it does)
};

// Floats match when ||actual - expected||_2 / ||expected||_2 <= rtol (when ||expected|| is 0,
// the absolute norm is used) or when the root-mean-square difference is <= atol (values near
// zero, such as converged gradients, differ by rounding far beyond any rtol); NaNs and
// infinities must be in the same places. Integers and booleans must be equal. Shapes (dims and
// element type) must be equal. The CLI's --rtol/--atol (compare, run, train) mean this.
LiteralComparison CompareLiterals(const Literal& actual, const Literal& expected, double rtol = 1e-4,
                                  double atol = 0);

}  // namespace gspmd
