// Helpers for the heavy-kernel tests (dot, convolution, reduce, gather/scatter, sort): run a
// small HLO module, make random literals, compare values.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ir/literal.h"
#include "runtime/interp/evaluator.h"
#include "support/diagnostic.h"
#include "text/parser.h"

namespace gspmd::kernel_test {

inline Literal RunHlo(const std::string& text, std::vector<Literal> arguments) {
  std::unique_ptr<Module> module = ParseModule(text);
  return EvaluateModule(*module, arguments);
}

inline Literal Array(ElementType type, std::vector<int64_t> dims, std::vector<double> values) {
  return Literal::FromDoubles(Shape(type, std::move(dims)), values);
}

inline Literal Ints(ElementType type, std::vector<int64_t> dims, std::vector<int64_t> values) {
  return Literal::FromInts(Shape(type, std::move(dims)), values);
}

// Small integers in [low, high] so float results are exact whatever the summation order.
inline Literal RandomLiteral(const Shape& shape, std::mt19937& rng, int low = -4, int high = 4) {
  Literal literal(shape);
  std::uniform_int_distribution<int> dist(low, high);
  for (int64_t i = 0; i < literal.element_count(); ++i) literal.SetFromDouble(i, dist(rng));
  return literal;
}

inline std::vector<double> Doubles(const Literal& literal) {
  std::vector<double> out;
  for (int64_t i = 0; i < literal.element_count(); ++i) out.push_back(literal.GetAsDouble(i));
  return out;
}

inline void ExpectValues(const Literal& actual, const std::vector<double>& expected, double tolerance = 0) {
  std::vector<double> values = Doubles(actual);
  ASSERT_EQ(values.size(), expected.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(values[i])) << "at " << i;
      continue;
    }
    if (values[i] == expected[i]) continue;  // also infinities
    EXPECT_NEAR(values[i], expected[i], tolerance) << "at " << i;
  }
}

// "1,2,3" for dims lists in HLO attributes.
inline std::string Join(const std::vector<int64_t>& values, const char* separator = ",") {
  std::ostringstream out;
  for (size_t i = 0; i < values.size(); ++i) out << (i ? separator : "") << values[i];
  return out.str();
}

inline std::string ShapeText(ElementType type, const std::vector<int64_t>& dims) {
  return Shape(type, dims).ToString(false);
}

// Unflattens a row-major linear index.
inline std::vector<int64_t> Unflatten(int64_t linear, const std::vector<int64_t>& dims) {
  std::vector<int64_t> index(dims.size());
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    index[d] = dims[d] == 0 ? 0 : linear % dims[d];
    linear = dims[d] == 0 ? 0 : linear / dims[d];
  }
  return index;
}

inline int64_t Flatten(const std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  int64_t linear = 0;
  for (size_t d = 0; d < dims.size(); ++d) linear = linear * dims[d] + index[d];
  return linear;
}

}  // namespace gspmd::kernel_test
