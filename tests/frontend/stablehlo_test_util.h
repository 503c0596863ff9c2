// Helpers for the StableHLO reader tests: read MLIR text, print the converted HLO (checking it
// parses again), evaluate it, and check errors' FILE:LINE:COL.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/literal_compare.h"
#include "frontend/stablehlo/reader.h"
#include "ir/module.h"
#include "runtime/interp/evaluator.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd::stablehlo_test {

inline std::unique_ptr<Module> Read(std::string_view text) { return ParseStableHlo(text, "t.mlir"); }

// The converted module as HLO text; the text must parse again and print the same.
inline std::string Hlo(std::string_view text) {
  std::unique_ptr<Module> module = Read(text);
  std::string printed = PrintModule(*module);
  std::unique_ptr<Module> again = ParseModule(printed, "<printed>");
  EXPECT_EQ(PrintModule(*again), printed) << "the converted module does not print stably";
  return printed;
}

// The error message reading `text` gives ("" when it reads).
inline std::string ReadError(std::string_view text) {
  try {
    Read(text);
  } catch (const UserError& error) {
    return error.what();
  }
  return "";
}

// Reading `text` fails at LINE:COL with a message containing `fragment`.
inline void ExpectErrorAt(std::string_view text, int line, int column, const std::string& fragment) {
  std::string message = ReadError(text);
  std::string where = "t.mlir:" + std::to_string(line) + ":" + std::to_string(column) + ": error: ";
  EXPECT_EQ(message.rfind(where, 0), 0u) << "expected an error at " << where << " but got: " << message;
  EXPECT_NE(message.find(fragment), std::string::npos) << "expected '" << fragment << "' in: " << message;
}

inline Literal F32(std::vector<int64_t> dims, std::vector<double> values) {
  return Literal::FromDoubles(Shape(ElementType::kF32, std::move(dims)), values);
}
inline Literal S32(std::vector<int64_t> dims, std::vector<int64_t> values) {
  return Literal::FromInts(Shape(ElementType::kS32, std::move(dims)), values);
}
inline Literal Pred(std::vector<int64_t> dims, std::vector<int64_t> values) {
  return Literal::FromInts(Shape(ElementType::kPred, std::move(dims)), values);
}

// Evaluates the converted module of `text` on one device.
inline Literal Eval(std::string_view text, const std::vector<Literal>& inputs = {}) {
  std::unique_ptr<Module> module = Read(text);
  return EvaluateModule(*module, inputs);
}

// Evaluates an HLO text program (the reference the StableHLO reading is compared with).
inline Literal EvalHlo(std::string_view hlo, const std::vector<Literal>& inputs) {
  return EvaluateModule(*ParseModule(hlo, "reference.hlo"), inputs);
}

// `actual` equals `expected` (floats within rtol 1e-5 relative norm, others exactly).
inline void ExpectValue(const Literal& actual, const Literal& expected) {
  LiteralComparison comparison = CompareLiterals(actual, expected, 1e-5);
  EXPECT_TRUE(comparison.matches) << comparison.message;
}

// Whether `hlo` contains a line matching the regular expression `pattern`.
inline bool HasLine(const std::string& hlo, const std::string& pattern) {
  std::regex re(pattern);
  size_t start = 0;
  while (start < hlo.size()) {
    size_t end = hlo.find('\n', start);
    if (end == std::string::npos) end = hlo.size();
    if (std::regex_search(hlo.substr(start, end - start), re)) return true;
    start = end + 1;
  }
  return false;
}

#define EXPECT_HLO_LINE(hlo, pattern) EXPECT_TRUE(::gspmd::stablehlo_test::HasLine(hlo, pattern)) << "no line matching '" << (pattern) << "' in:\n" << (hlo)

}  // namespace gspmd::stablehlo_test
