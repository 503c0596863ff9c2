// Malformed StableHLO text: every class of bad input is an error at FILE:LINE:COL that says
// what was expected (truncated files, unknown and unsupported ops, bad and dynamic types, bad
// attributes, mismatched regions and types, undefined and redefined values), never a crash.
#include <gtest/gtest.h>

#include "frontend/stablehlo_test_util.h"

namespace gspmd {
namespace {

using namespace stablehlo_test;  // NOLINT: test helpers

constexpr char kGood[] = R"(module @m {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %x, %x : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
)";

TEST(StableHloErrors, TruncatedFileAtEveryPoint) {
  // Every prefix of a valid module is an error (or, when it happens to be complete, reads),
  // never a crash.
  const std::string text = kGood;
  for (size_t cut = 0; cut + 2 < text.size(); ++cut) {
    std::string message = ReadError(text.substr(0, cut));
    EXPECT_EQ(message.rfind("t.mlir:", 0), 0u) << "prefix of " << cut << " bytes: " << message;
  }
  ExpectErrorAt("module @m {\n  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n    %0 = stablehlo.add %x, %x : tensor<4x",
                3, 42, "expected an element type");
  ExpectErrorAt("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n", 3, 1,
                "expected '}' to close function @main, found end of file");
}

TEST(StableHloErrors, UnknownAndUnsupportedOps) {
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.frobnicate %x : tensor<4xf32>
  return %0 : tensor<4xf32>
})", 2, 8, "unknown operation 'stablehlo.frobnicate'");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.fft"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
})", 2, 8, "stablehlo.fft: FFTs are not supported");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = chlo.lgamma %x : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
})", 2, 8, "chlo.lgamma: this CHLO op is not supported");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.sort %x : tensor<4xf32>
  return %0 : tensor<4xf32>
})", 2, 8, "stablehlo.sort has no custom syntax: expected the generic form");
}

TEST(StableHloErrors, BadAndDynamicTypes) {
  ExpectErrorAt(R"(func.func @main(%x: tensor<?x4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
})", 1, 28, "dynamic dimension '?' in tensor<?x4xf32>: dynamic shapes are not supported");
  ExpectErrorAt(R"(func.func @main(%x: tensor<*xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
})", 1, 28, "unranked tensor");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xcomplex<f32>>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
})", 1, 30, "complex element types are not supported");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf8E4M3FN>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
})", 1, 30, "element type f8E4M3FN");
  ExpectErrorAt(R"(func.func @main(%x: memref<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
})", 1, 21, "type memref is not supported");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %x : tensor<5xf32>
  return %0 : tensor<4xf32>
})", 2, 22, "operand 0 of stablehlo.add has type tensor<4xf32> but the op's type says tensor<5xf32>");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xi32> {
  return %x : tensor<4xi32>
})", 2, 10, "operand 0 of func.return has type tensor<4xf32> but the op's type says tensor<4xi32>");
}

TEST(StableHloErrors, BadAttributes) {
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4x2xf32> {
  %0 = stablehlo.broadcast_in_dim %x, dims = [0, x] : (tensor<4xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
})", 2, 50, "expected an integer in dims");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4x2xf32> {
  %0 = stablehlo.broadcast_in_dim %x, dims = [3] : (tensor<4xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
})", 2, 8, "broadcast_in_dim dims [0] = 3 is not a distinct dimension of tensor<4x2xf32>");
  ExpectErrorAt(R"(func.func @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<2xf32>
  return %0 : tensor<2xf32>
})", 2, 33, "constant list has more than 2 elements in dimension 0 of tensor<2xf32>");
  ExpectErrorAt(R"(func.func @main() -> tensor<2xi8> {
  %0 = stablehlo.constant dense<[1, 300]> : tensor<2xi8>
  return %0 : tensor<2xi8>
})", 2, 37, "integer constant 300 does not fit in s8");
  ExpectErrorAt(R"(func.func @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense<"0x0000"> : tensor<2xf32>
  return %0 : tensor<2xf32>
})", 2, 33, "hex data of 2 bytes for tensor<2xf32>: expected 8 bytes");
  ExpectErrorAt(R"(func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xi1> {
  %0 = stablehlo.compare BETWEEN, %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
})", 2, 26, "unknown comparison direction BETWEEN");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.reverse"(%x) {dimensions = "zero"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
})", 2, 46, "dimensions: expected a list of integers");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.reverse"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
})", 2, 8, "stablehlo.reverse needs the attribute dimensions");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32> {mhlo.sharding = #stablehlo.nope<1>}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
})", 1, 52, "mhlo.sharding: expected a string");
}

TEST(StableHloErrors, MismatchedRegionArgumentsAndResults) {
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<f32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce"(%x, %c) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>):
    stablehlo.return %a : tensor<f32>
  }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
})", 3, 67, "the reducer region of stablehlo.reduce has 1 arguments, expected 2");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<f32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce"(%x, %c) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  }) : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
})", 6, 5, "value 0 returned by the reducer region of stablehlo.reduce is tensor<i1>, expected tensor<f32>");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.if"(%x) ({
    stablehlo.return %x : tensor<4xf32>
  }, {
    stablehlo.return %x : tensor<4xf32>
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
})", 2, 23, "the predicate of stablehlo.if must be tensor<i1>");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.reduce"(%x, %x) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %a : tensor<f32>
  ^bb1:
    stablehlo.return %b : tensor<f32>
  }) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
})", 5, 3, "regions with several blocks are not supported");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>, %y: tensor<f32>) -> tensor<f32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %c) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
   reducer(%a: tensor<f32>, %b: tensor<f32>) {
    %s = stablehlo.add %a, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }
  return %0 : tensor<f32>
})", 5, 28, "a value defined outside the region is used in the region of stablehlo.reduce");
}

TEST(StableHloErrors, UndefinedAndRedefinedValues) {
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %y : tensor<4xf32>
  return %0 : tensor<4xf32>
})", 2, 26, "use of undefined value %y");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %x : tensor<4xf32>
  %0 = stablehlo.add %0, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
})", 3, 3, "%0 is defined twice");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0:2 = stablehlo.add %x, %x : tensor<4xf32>
  return %0#0 : tensor<4xf32>
})", 2, 3, "stablehlo.add produces 1 results but 2 names are bound to it");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x#3 : tensor<4xf32>
})", 2, 10, "%x#3 does not exist: %x has 1 result");
  ExpectErrorAt(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x, %x : tensor<4xf32>, tensor<4xf32>
})", 2, 3, "function @main returns 2 values, its type says 1");
}

TEST(StableHloErrors, ModuleStructure) {
  ExpectErrorAt("", 1, 1, "the module has no func.func");
  ExpectErrorAt(R"(module {
  func.func private @f(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
})", 1, 1, "no function @main and 0 public functions");
  ExpectErrorAt(R"(module {
  func.func @main(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
  func.func @main(%x: tensor<f32>) -> tensor<f32> {
    return %x : tensor<f32>
  }
})", 5, 13, "function @main is defined twice");
  ExpectErrorAt(R"(module {
  stablehlo.add
})", 2, 3, "expected func.func or sdy.mesh in the module");
  ExpectErrorAt("func.func @main(%x: tensor<f32>) -> tensor<f32> {\n  %0 = stablehlo.add %x, %x : tensor<f32> loc(#loc9)\n  return %0 : tensor<f32>\n}\n",
                2, 47, "unknown location alias #loc9");
  ExpectErrorAt("func.func @main(%x: tensor<f32>) -> tensor<f32> {\n  %0 = \"stablehlo.add\"(%x, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n  return %0 : tensor<f32>\n}\n\"junk\"\n",
                5, 1, "expected 'module' or func.func");
}

}  // namespace
}  // namespace gspmd
