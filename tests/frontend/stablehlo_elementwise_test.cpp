// StableHLO elementwise ops in pretty and generic form: each becomes the HLO opcode that
// computes the same values (checked against the HLO text program), plus compare, select,
// clamp, convert, bitcast_convert, reduce_precision and the CHLO elementwise ops.
#include <gtest/gtest.h>

#include "frontend/stablehlo_test_util.h"

namespace gspmd {
namespace {

using namespace stablehlo_test;  // NOLINT: test helpers

struct ElementwiseCase {
  const char* op;    // stablehlo op name without the dialect
  const char* hlo;   // the HLO opcode it becomes
  const char* type;  // MLIR element type of operands and result
};

constexpr ElementwiseCase kUnary[] = {
    {"abs", "abs", "f32"},          {"cbrt", "cbrt", "f32"},
    {"ceil", "ceil", "f32"},        {"count_leading_zeros", "count-leading-zeros", "i32"},
    {"cosine", "cosine", "f32"},    {"exponential", "exponential", "f32"},
    {"exponential_minus_one", "exponential-minus-one", "f32"},
    {"floor", "floor", "f32"},      {"log", "log", "f32"},
    {"log_plus_one", "log-plus-one", "f32"},
    {"logistic", "logistic", "f32"}, {"negate", "negate", "f32"},
    {"not", "not", "i32"},          {"popcnt", "popcnt", "i32"},
    {"round_nearest_afz", "round-nearest-afz", "f32"},
    {"round_nearest_even", "round-nearest-even", "f32"},
    {"rsqrt", "rsqrt", "f32"},      {"sign", "sign", "f32"},
    {"sine", "sine", "f32"},        {"sqrt", "sqrt", "f32"},
    {"tan", "tan", "f32"},          {"tanh", "tanh", "f32"},
};

constexpr ElementwiseCase kBinary[] = {
    {"add", "add", "f32"},          {"subtract", "subtract", "f32"},
    {"multiply", "multiply", "f32"}, {"divide", "divide", "f32"},
    {"remainder", "remainder", "f32"}, {"maximum", "maximum", "f32"},
    {"minimum", "minimum", "f32"},  {"power", "power", "f32"},
    {"atan2", "atan2", "f32"},      {"and", "and", "i32"},
    {"or", "or", "i32"},            {"xor", "xor", "i32"},
    {"shift_left", "shift-left", "i32"},
    {"shift_right_arithmetic", "shift-right-arithmetic", "i32"},
    {"shift_right_logical", "shift-right-logical", "i32"},
};

Literal Input(const char* type, int which) {
  if (std::string(type) == "f32") return which == 0 ? F32({4}, {0.5, 1.5, 2.25, 3.0}) : F32({4}, {2.0, 0.75, 1.25, 0.5});
  return which == 0 ? S32({4}, {1, 6, -7, 12}) : S32({4}, {3, 1, 2, 5});
}

std::string HloType(const char* type) { return std::string(type) == "f32" ? "f32" : "s32"; }

// The same op written as HLO text, evaluated.
Literal HloValue(const ElementwiseCase& c, int arity) {
  std::string t = HloType(c.type);
  std::string text = "HloModule m\nENTRY e {\n  x = " + t + "[4] parameter(0)\n";
  if (arity == 2) text += "  y = " + t + "[4] parameter(1)\n";
  text += "  ROOT r = " + t + "[4] " + c.hlo + (arity == 2 ? "(x, y)" : "(x)") + "\n}\n";
  std::vector<Literal> inputs;
  for (int i = 0; i < arity; ++i) inputs.push_back(Input(c.type, i));
  return EvaluateModule(*ParseModule(text), inputs);
}

std::string Program(const ElementwiseCase& c, int arity, bool generic) {
  std::string t = std::string("tensor<4x") + c.type + ">";
  std::string args = "%arg0: " + t + (arity == 2 ? ", %arg1: " + t : "");
  std::string operands = arity == 2 ? "%arg0, %arg1" : "%arg0";
  std::string op = generic ? "\"stablehlo." + std::string(c.op) + "\"(" + operands + ") : (" + (arity == 2 ? t + ", " + t : t) +
                                 ") -> " + t
                           : "stablehlo." + std::string(c.op) + " " + operands + " : " + t;
  return "func.func @main(" + args + ") -> " + t + " {\n  %0 = " + op + "\n  return %0 : " + t + "\n}\n";
}

void CheckCase(const ElementwiseCase& c, int arity) {
  for (bool generic : {false, true}) {
    SCOPED_TRACE(std::string(c.op) + (generic ? " (generic)" : " (pretty)"));
    std::string text = Program(c, arity, generic);
    std::string hlo = Hlo(text);
    EXPECT_HLO_LINE(hlo, std::string("ROOT %") + "[^ ]+ = " + HloType(c.type) + "\\[4\\]\\{0\\} " + c.hlo + "\\(");
    std::vector<Literal> inputs;
    for (int i = 0; i < arity; ++i) inputs.push_back(Input(c.type, i));
    Literal expected = HloValue(c, arity);
    EXPECT_TRUE(Eval(text, inputs).BitwiseEquals(expected));
  }
}

TEST(StableHloElementwise, UnaryOpsInBothForms) {
  for (const ElementwiseCase& c : kUnary) CheckCase(c, 1);
}

TEST(StableHloElementwise, BinaryOpsInBothForms) {
  for (const ElementwiseCase& c : kBinary) CheckCase(c, 2);
}

TEST(StableHloElementwise, OpsWithAttributeDictionariesAndFunctionTypes) {
  std::string hlo = Hlo(R"(func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %b {mhlo.sharding = "{replicated}"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = stablehlo.tanh %0 {mhlo.frontend_attributes = {note = "x"}} : tensor<2xf32>
  return %1 : tensor<2xf32>
})");
  EXPECT_HLO_LINE(hlo, "add\\(%Arg_0, %Arg_1\\), sharding=\\{replicated\\}");
  EXPECT_HLO_LINE(hlo, "tanh\\(%add\\), frontend_attributes=\\{note=\"x\"\\}");
}

TEST(StableHloElementwise, CompareDirectionsAndTypes) {
  const char* directions[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  const char* hlo_directions[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  for (int d = 0; d < 6; ++d) {
    std::string pretty = std::string("func.func @main(%a: tensor<3xi32>, %b: tensor<3xi32>) -> tensor<3xi1> {\n  %0 = stablehlo.compare ") +
                         directions[d] + ", %a, %b, SIGNED : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>\n  return %0 : tensor<3xi1>\n}\n";
    std::string hlo = Hlo(pretty);
    EXPECT_HLO_LINE(hlo, std::string("compare\\(%Arg_0, %Arg_1\\), direction=") + hlo_directions[d] + ", type=SIGNED");
  }
  std::string generic = R"(func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xi1> {
  %0 = "stablehlo.compare"(%a, %b) {compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
})";
  EXPECT_HLO_LINE(Hlo(generic), "direction=LT, type=TOTALORDER");
  Literal value = Eval(generic, {F32({3}, {1, 2, 3}), F32({3}, {2, 2, 2})});
  ExpectValue(value, Pred({3}, {1, 0, 0}));
  // No type word: the default for the operands.
  EXPECT_HLO_LINE(Hlo(R"(func.func @main(%a: tensor<f32>) -> tensor<i1> {
  %0 = stablehlo.compare  GE, %a, %a : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %0 : tensor<i1>
})"), "compare\\(%Arg_0, %Arg_0\\), direction=GE$");
}

TEST(StableHloElementwise, SelectWithFullAndScalarPredicate) {
  std::string full = R"(func.func @main(%p: tensor<3xi1>, %a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.select %p, %a, %b : tensor<3xi1>, tensor<3xf32>
  return %0 : tensor<3xf32>
})";
  ExpectValue(Eval(full, {Pred({3}, {1, 0, 1}), F32({3}, {1, 2, 3}), F32({3}, {4, 5, 6})}), F32({3}, {1, 5, 3}));
  std::string scalar = R"(func.func @main(%p: tensor<i1>, %a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "stablehlo.select"(%p, %a, %b) : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
})";
  EXPECT_HLO_LINE(Hlo(scalar), "pred\\[3\\]\\{0\\} broadcast\\(%Arg_0\\)");
  ExpectValue(Eval(scalar, {Pred({}, {0}), F32({3}, {1, 2, 3}), F32({3}, {4, 5, 6})}), F32({3}, {4, 5, 6}));
}

TEST(StableHloElementwise, ClampWithScalarBounds) {
  std::string text = R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<1.0> : tensor<f32>
  %0 = stablehlo.clamp %lo, %x, %hi : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
})";
  ExpectValue(Eval(text, {F32({4}, {-1, 0.5, 2, 1})}), F32({4}, {0, 0.5, 1, 1}));
}

TEST(StableHloElementwise, ConvertBitcastIsFiniteAndReducePrecision) {
  std::string text = R"(func.func @main(%x: tensor<3xf32>) -> (tensor<3xi32>, tensor<3xi32>, tensor<3xi1>, tensor<3xf32>, tensor<3xbf16>) {
  %0 = stablehlo.convert %x : (tensor<3xf32>) -> tensor<3xi32>
  %1 = stablehlo.bitcast_convert %x : (tensor<3xf32>) -> tensor<3xi32>
  %2 = stablehlo.is_finite %x : (tensor<3xf32>) -> tensor<3xi1>
  %3 = stablehlo.reduce_precision %x, format = e5m2 : tensor<3xf32>
  %4 = "stablehlo.convert"(%x) : (tensor<3xf32>) -> tensor<3xbf16>
  return %0, %1, %2, %3, %4 : tensor<3xi32>, tensor<3xi32>, tensor<3xi1>, tensor<3xf32>, tensor<3xbf16>
})";
  std::string hlo = Hlo(text);
  EXPECT_HLO_LINE(hlo, "s32\\[3\\]\\{0\\} convert\\(%Arg_0\\)");
  EXPECT_HLO_LINE(hlo, "s32\\[3\\]\\{0\\} bitcast-convert\\(%Arg_0\\)");
  EXPECT_HLO_LINE(hlo, "reduce-precision\\(%Arg_0\\), exponent_bits=5, mantissa_bits=2");
  EXPECT_HLO_LINE(hlo, "bf16\\[3\\]\\{0\\} convert\\(%Arg_0\\)");
  Literal result = Eval(text, {F32({3}, {1.0, 2.75, 1.0 / 0.0})});
  ExpectValue(result.tuple_elements()[0], S32({3}, {1, 2, 2147483647}));
  ExpectValue(result.tuple_elements()[2], Pred({3}, {1, 1, 0}));
}

TEST(StableHloElementwise, ChloErfAndTan) {
  std::string text = R"(func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = chlo.erf %x : tensor<2xf32> -> tensor<2xf32>
  %1 = "chlo.tan"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
})";
  std::string hlo = Hlo(text);
  EXPECT_HLO_LINE(hlo, "erf\\(%Arg_0\\)");
  EXPECT_HLO_LINE(hlo, "tan\\(%Arg_0\\)");
  Literal result = Eval(text, {F32({2}, {0.0, 1.0})});
  ExpectValue(result.tuple_elements()[0], F32({2}, {0.0, 0.8427007929}));
}

}  // namespace
}  // namespace gspmd
