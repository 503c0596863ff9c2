// Relative-error and exact comparison of literals.
#include "analysis/literal_compare.h"

#include <cmath>

namespace gspmd {

LiteralComparison CompareLiterals(const Literal& actual, const Literal& expected, double rtol, double atol) {
  LiteralComparison result;
  if (actual.shape().IsTuple() || expected.shape().IsTuple()) {
    if (!actual.shape().Compatible(expected.shape())) {
      result.message = StrCat("shape ", actual.shape().ToString(false), " differs from expected ",
                              expected.shape().ToString(false));
      return result;
    }
    result.matches = true;
    for (size_t i = 0; i < actual.tuple_elements().size(); ++i) {
      LiteralComparison element =
          CompareLiterals(actual.tuple_elements()[i], expected.tuple_elements()[i], rtol, atol);
      result.relative_error = std::max(result.relative_error, element.relative_error);
      result.rms_difference = std::max(result.rms_difference, element.rms_difference);
      result.mismatched_elements += element.mismatched_elements;
      if (!element.matches && result.matches) {
        result.matches = false;
        result.message = StrCat("tuple element ", i, ": ", element.message);
      }
    }
    return result;
  }
  if (actual.element_type() != expected.element_type() ||
      actual.shape().dims() != expected.shape().dims()) {
    result.message = StrCat("shape ", actual.shape().ToString(false), " differs from expected ",
                            expected.shape().ToString(false));
    return result;
  }
  int64_t count = actual.element_count();
  if (!IsFloatingPoint(actual.element_type())) {
    for (int64_t i = 0; i < count; ++i)
      if (actual.GetAsInt64(i) != expected.GetAsInt64(i)) ++result.mismatched_elements;
    result.matches = result.mismatched_elements == 0;
    if (!result.matches)
      result.message = StrCat(result.mismatched_elements, " of ", count, " elements differ");
    return result;
  }
  double diff_norm = 0, ref_norm = 0;
  int64_t nan_mismatches = 0;
  int64_t finite_pairs = 0;
  for (int64_t i = 0; i < count; ++i) {
    double a = actual.GetAsDouble(i), e = expected.GetAsDouble(i);
    if (std::isnan(a) || std::isnan(e)) {
      if (std::isnan(a) != std::isnan(e)) ++nan_mismatches;
      continue;
    }
    if (std::isinf(a) || std::isinf(e)) {
      if (a != e) ++nan_mismatches;
      continue;
    }
    diff_norm += (a - e) * (a - e);
    ref_norm += e * e;
    ++finite_pairs;
    if (a != e) ++result.mismatched_elements;
  }
  result.rms_difference = finite_pairs > 0 ? std::sqrt(diff_norm / static_cast<double>(finite_pairs)) : 0;
  diff_norm = std::sqrt(diff_norm);
  ref_norm = std::sqrt(ref_norm);
  result.relative_error = ref_norm > 0 ? diff_norm / ref_norm : diff_norm;
  result.mismatched_elements += nan_mismatches;
  const bool within = result.relative_error <= rtol || (atol > 0 && result.rms_difference <= atol);
  result.matches = nan_mismatches == 0 && within;
  if (nan_mismatches > 0)
    result.message = StrCat(nan_mismatches, " elements differ in NaN/inf");
  else if (!result.matches && atol > 0)
    result.message = StrCat("relative error ", result.relative_error, " exceeds ", rtol, " and the RMS difference ",
                            result.rms_difference, " exceeds ", atol);
  else if (!result.matches)
    result.message = StrCat("relative error ", result.relative_error, " exceeds ", rtol);
  return result;
}

}  // namespace gspmd
