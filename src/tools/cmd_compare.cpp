// `gspmd compare ACTUAL.npy EXPECTED.npy [--rtol R] [--atol A] [--json]`: compares two arrays; exit 1
// if they differ.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/literal_compare.h"
#include "io/array_source.h"
#include "io/npy.h"
#include "support/diagnostic.h"
#include "tools/commands.h"
#include "tools/tool_util.h"

namespace gspmd::tools {
namespace {

struct CompareOptions {
  std::string actual;
  std::string expected;
  double rtol = kDefaultRtol;
  double atol = kDefaultAtol;
  bool json = false;
};

// Largest |a - b| over all elements (NaN when either holds a NaN where the other does not).
double MaxAbsError(const Literal& actual, const Literal& expected) {
  const Literal a = actual.Convert(ElementType::kF64);
  const Literal b = expected.Convert(ElementType::kF64);
  const double* x = a.data<double>();
  const double* y = b.data<double>();
  double worst = 0;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    const bool both_nan = std::isnan(x[i]) && std::isnan(y[i]);
    const bool same_infinity = std::isinf(x[i]) && x[i] == y[i];
    if (both_nan || same_infinity) continue;
    const double difference = std::fabs(x[i] - y[i]);
    if (std::isnan(difference)) return difference;
    worst = std::max(worst, difference);
  }
  return worst;
}

// Exit code 0 when the arrays match within rtol or atol, 1 otherwise (the result line says why).
int RunCompare(const CompareOptions& options) {
  CheckTolerances(options.rtol, options.atol, "compare");
  const Literal actual = ReadArrayFile(options.actual);
  const Literal expected = ReadArrayFile(options.expected);
  LiteralComparison comparison = CompareLiterals(actual, expected, options.rtol, options.atol);
  const bool same_shape = actual.shape().Compatible(expected.shape());
  const bool only_the_type_differs =
      actual.shape().dims() == expected.shape().dims() && actual.element_type() != expected.element_type();
  if (only_the_type_differs)
    comparison.message = StrCat("element type ", ElementTypeName(actual.element_type()), " differs from expected ",
                                ElementTypeName(expected.element_type()), " (the dims match)");
  if (options.json) {
    // The same figures as the line, unrounded; null where the shapes differ (or a NaN).
    nlohmann::json result = {{"actual", options.actual},
                             {"expected", options.expected},
                             {"shape", actual.shape().ToString(false)},
                             {"dtype", ElementTypeName(actual.element_type())},
                             {"expected_shape", expected.shape().ToString(false)},
                             {"max_abs_err", nullptr},
                             {"rel_err", nullptr},
                             {"rms_err", nullptr},
                             {"rtol", options.rtol},
                             {"atol", options.atol},
                             {"pass", comparison.matches},
                             {"message", comparison.message}};
    if (same_shape) {
      result["max_abs_err"] = MaxAbsError(actual, expected);
      result["rel_err"] = comparison.relative_error;
      result["rms_err"] = comparison.rms_difference;
    }
    std::printf("%s\n", result.dump(2).c_str());
    return comparison.matches ? 0 : 1;
  }
  std::string line = options.actual + " vs " + options.expected + ": " + actual.shape().ToString(false);
  if (same_shape) {
    char numbers[160];
    std::snprintf(numbers, sizeof(numbers), " max_abs_err=%.3g rel_err=%.3g rms_err=%.3g (rtol %.3g, atol %.3g)",
                  MaxAbsError(actual, expected), comparison.relative_error, comparison.rms_difference, options.rtol,
                  options.atol);
    line += numbers;
  }
  line += comparison.matches ? " PASS" : " FAIL";
  if (!comparison.matches && !comparison.message.empty()) line += ": " + comparison.message;
  std::printf("%s\n", line.c_str());
  return comparison.matches ? 0 : 1;
}

}  // namespace

void AddCompareCommand(CLI::App& app) {
  auto options = std::make_shared<CompareOptions>();
  CLI::App* command = app.add_subcommand(
      "compare", "Compare two .npy arrays: relative L2 error for floats, exact for integers; exit 1 on mismatch");
  command->add_option("ACTUAL", options->actual, "computed .npy file")->required();
  command->add_option("EXPECTED", options->expected, "reference .npy file")->required();
  AddToleranceOptions(*command, options->rtol, options->atol, "");
  command->add_flag("--json", options->json,
                    "print JSON: shape, dtype, max_abs_err, rel_err, rms_err, rtol, atol, pass (exit 1 still on a "
                    "mismatch)");
  command->callback([options] {
    if (RunCompare(*options) != 0) throw CLI::RuntimeError(1);
  });
}

}  // namespace gspmd::tools
