// Comparing computed values with reference values: relative error for floats, exact match
// for integers and booleans.
#pragma once

#include <string>

#include "ir/literal.h"

namespace gspmd {

struct LiteralComparison {
  bool matches = false;
  double relative_error = 0;  // ||actual - expected|| / ||expected|| (floats)
  int64_t mismatched_elements = 0;
  std::string message;  // why it does not match ("" when it does)
};

// Floats match when ||actual - expected||_2 / ||expected||_2 <= rtol (NaNs must be in the same
// places; when ||expected|| is 0, the absolute norm is used). Integers and booleans must be
// equal. Shapes (dims and element type) must be equal.
LiteralComparison CompareLiterals(const Literal& actual, const Literal& expected, double rtol = 1e-4);

}  // namespace gspmd
