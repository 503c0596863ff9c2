// Tests of the interpreter's elementwise kernels through small HLO modules.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ir/literal.h"
#include "runtime/interp/evaluator.h"
#include "support/diagnostic.h"
#include "text/parser.h"

namespace gspmd {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Literal Array(ElementType type, std::vector<int64_t> dims, std::vector<double> values) {
  return Literal::FromDoubles(Shape(type, std::move(dims)), values);
}

Literal Ints(ElementType type, std::vector<int64_t> dims, std::vector<int64_t> values) {
  return Literal::FromInts(Shape(type, std::move(dims)), values);
}

Literal RunHlo(const std::string& text, std::vector<Literal> arguments) {
  std::unique_ptr<Module> module = ParseModule(text);
  return EvaluateModule(*module, arguments);
}

std::vector<double> Doubles(const Literal& literal) {
  std::vector<double> out;
  for (int64_t i = 0; i < literal.element_count(); ++i) out.push_back(literal.GetAsDouble(i));
  return out;
}

std::vector<int64_t> Int64s(const Literal& literal) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < literal.element_count(); ++i) out.push_back(literal.GetAsInt64(i));
  return out;
}

// "HloModule m ENTRY e { p0 = T[N] parameter(0) ... ROOT r = OUT[N] op(p0, p1), ATTRS }".
std::string BinaryModule(const std::string& type, const std::string& op, const std::string& out_type,
                         const std::string& attributes = "") {
  return "HloModule m\nENTRY e {\n  p0 = " + type + " parameter(0)\n  p1 = " + type +
         " parameter(1)\n  ROOT r = " + out_type + " " + op + "(p0, p1)" + attributes + "\n}\n";
}

std::string UnaryModule(const std::string& type, const std::string& op, const std::string& out_type) {
  return "HloModule m\nENTRY e {\n  p0 = " + type + " parameter(0)\n  ROOT r = " + out_type + " " + op +
         "(p0)\n}\n";
}

void ExpectDoubles(const Literal& actual, const std::vector<double>& expected, double tolerance = 0) {
  std::vector<double> values = Doubles(actual);
  ASSERT_EQ(values.size(), expected.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(values[i])) << "element " << i << " is " << values[i];
      continue;
    }
    if (std::isinf(expected[i])) {
      EXPECT_EQ(values[i], expected[i]) << "element " << i;
      continue;
    }
    EXPECT_NEAR(values[i], expected[i], tolerance) << "element " << i;
  }
}

TEST(ElementwiseTest, FloatArithmetic) {
  Literal a = Array(ElementType::kF32, {4}, {1, 2, 3, 4});
  Literal b = Array(ElementType::kF32, {4}, {0.5, -2, 8, 3});
  ExpectDoubles(RunHlo(BinaryModule("f32[4]", "add", "f32[4]"), {a, b}), {1.5, 0, 11, 7});
  ExpectDoubles(RunHlo(BinaryModule("f32[4]", "subtract", "f32[4]"), {a, b}), {0.5, 4, -5, 1});
  ExpectDoubles(RunHlo(BinaryModule("f32[4]", "multiply", "f32[4]"), {a, b}), {0.5, -4, 24, 12});
  ExpectDoubles(RunHlo(BinaryModule("f32[4]", "divide", "f32[4]"), {a, b}), {2, -1, 0.375, 4.0 / 3}, 1e-6);
  ExpectDoubles(RunHlo(BinaryModule("f32[4]", "remainder", "f32[4]"), {a, b}), {0, 0, 3, 1});
  ExpectDoubles(RunHlo(BinaryModule("f32[4]", "power", "f32[4]"), {a, b}), {1, 0.25, 6561, 64}, 1e-3);
  ExpectDoubles(RunHlo(BinaryModule("f32[4]", "atan2", "f32[4]"), {a, b}),
                {std::atan2(1, 0.5), std::atan2(2, -2), std::atan2(3, 8), std::atan2(4, 3)}, 1e-6);
}

TEST(ElementwiseTest, FloatRemainderKeepsDividendSign) {
  Literal a = Array(ElementType::kF32, {2}, {-7, 7});
  Literal b = Array(ElementType::kF32, {2}, {3, -3});
  ExpectDoubles(RunHlo(BinaryModule("f32[2]", "remainder", "f32[2]"), {a, b}), {-1, 1});
}

TEST(ElementwiseTest, MaxMinPropagateNaN) {
  Literal a = Array(ElementType::kF32, {3}, {kNaN, 1, 2});
  Literal b = Array(ElementType::kF32, {3}, {1, kNaN, 3});
  ExpectDoubles(RunHlo(BinaryModule("f32[3]", "maximum", "f32[3]"), {a, b}), {kNaN, kNaN, 3});
  ExpectDoubles(RunHlo(BinaryModule("f32[3]", "minimum", "f32[3]"), {a, b}), {kNaN, kNaN, 2});
}

TEST(ElementwiseTest, IntegerDivisionByZeroAndOverflow) {
  constexpr int64_t kMin = std::numeric_limits<int32_t>::min();
  Literal a = Ints(ElementType::kS32, {5}, {7, -7, kMin, 5, -5});
  Literal b = Ints(ElementType::kS32, {5}, {0, 0, -1, 2, 2});
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("s32[5]", "divide", "s32[5]"), {a, b})),
            (std::vector<int64_t>{-1, -1, kMin, 2, -2}));
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("s32[5]", "remainder", "s32[5]"), {a, b})),
            (std::vector<int64_t>{7, -7, 0, 1, -1}));
  Literal ua = Ints(ElementType::kU32, {2}, {7, 9});
  Literal ub = Ints(ElementType::kU32, {2}, {0, 2});
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("u32[2]", "divide", "u32[2]"), {ua, ub})),
            (std::vector<int64_t>{4294967295LL, 4}));
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("u32[2]", "remainder", "u32[2]"), {ua, ub})),
            (std::vector<int64_t>{7, 1}));
}

TEST(ElementwiseTest, IntegerArithmeticWraps) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int32_t>::min();
  Literal a = Ints(ElementType::kS32, {2}, {kMax, kMin});
  Literal b = Ints(ElementType::kS32, {2}, {1, 1});
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("s32[2]", "add", "s32[2]"), {a, b})), (std::vector<int64_t>{kMin, kMin + 1}));
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("s32[2]", "subtract", "s32[2]"), {a, b})),
            (std::vector<int64_t>{kMax - 1, kMax}));
  Literal c = Ints(ElementType::kS8, {2}, {100, -128});
  Literal d = Ints(ElementType::kS8, {2}, {3, -1});
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("s8[2]", "multiply", "s8[2]"), {c, d})), (std::vector<int64_t>{44, -128}));
  EXPECT_EQ(Int64s(RunHlo(UnaryModule("s8[2]", "negate", "s8[2]"), {c})), (std::vector<int64_t>{-100, -128}));
  EXPECT_EQ(Int64s(RunHlo(UnaryModule("s8[2]", "abs", "s8[2]"), {c})), (std::vector<int64_t>{100, -128}));
}

TEST(ElementwiseTest, S64ValuesBeyond32Bits) {
  int64_t big = int64_t(1) << 40;
  Literal a = Ints(ElementType::kS64, {3}, {big, -big, std::numeric_limits<int64_t>::max()});
  Literal b = Ints(ElementType::kS64, {3}, {big, 3, 1});
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("s64[3]", "add", "s64[3]"), {a, b})),
            (std::vector<int64_t>{big * 2, -big + 3, std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("s64[3]", "multiply", "s64[3]"), {a, b})),
            (std::vector<int64_t>{0, -3 * big, std::numeric_limits<int64_t>::max()}));
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("s64[3]", "divide", "s64[3]"), {a, b})),
            (std::vector<int64_t>{1, -big / 3, std::numeric_limits<int64_t>::max()}));
}

TEST(ElementwiseTest, IntegerPower) {
  Literal a = Ints(ElementType::kS32, {6}, {2, 2, 1, -1, -1, 3});
  Literal b = Ints(ElementType::kS32, {6}, {10, -1, -5, 3, -1, 0});
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("s32[6]", "power", "s32[6]"), {a, b})),
            (std::vector<int64_t>{1024, 0, 1, -1, 0, 1}));
}

TEST(ElementwiseTest, Shifts) {
  Literal a = Ints(ElementType::kS32, {4}, {1, -8, -8, 5});
  Literal b = Ints(ElementType::kS32, {4}, {31, 40, 1, 32});
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("s32[4]", "shift-left", "s32[4]"), {a, b})),
            (std::vector<int64_t>{std::numeric_limits<int32_t>::min(), 0, -16, 0}));
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("s32[4]", "shift-right-arithmetic", "s32[4]"), {a, b})),
            (std::vector<int64_t>{0, -1, -4, 0}));
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("s32[4]", "shift-right-logical", "s32[4]"), {a, b})),
            (std::vector<int64_t>{0, 0, 0x7ffffffc, 0}));
  Literal c = Ints(ElementType::kU8, {2}, {0x81, 0x81});
  Literal d = Ints(ElementType::kU8, {2}, {1, 8});
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("u8[2]", "shift-left", "u8[2]"), {c, d})), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("u8[2]", "shift-right-arithmetic", "u8[2]"), {c, d})),
            (std::vector<int64_t>{0xc0, 0xff}));
}

TEST(ElementwiseTest, LogicalAndBitwise) {
  Literal p = Ints(ElementType::kPred, {4}, {0, 0, 1, 1});
  Literal q = Ints(ElementType::kPred, {4}, {0, 1, 0, 1});
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("pred[4]", "and", "pred[4]"), {p, q})), (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("pred[4]", "or", "pred[4]"), {p, q})), (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("pred[4]", "xor", "pred[4]"), {p, q})), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(Int64s(RunHlo(UnaryModule("pred[4]", "not", "pred[4]"), {p})), (std::vector<int64_t>{1, 1, 0, 0}));
  Literal a = Ints(ElementType::kS32, {2}, {0b1100, -1});
  Literal b = Ints(ElementType::kS32, {2}, {0b1010, 5});
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("s32[2]", "and", "s32[2]"), {a, b})), (std::vector<int64_t>{0b1000, 5}));
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("s32[2]", "or", "s32[2]"), {a, b})), (std::vector<int64_t>{0b1110, -1}));
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("s32[2]", "xor", "s32[2]"), {a, b})), (std::vector<int64_t>{0b0110, -6}));
  EXPECT_EQ(Int64s(RunHlo(UnaryModule("s32[2]", "not", "s32[2]"), {a})), (std::vector<int64_t>{-13, 0}));
}

TEST(ElementwiseTest, IntegerBitCounts) {
  Literal a = Ints(ElementType::kS32, {3}, {0, 1, -1});
  EXPECT_EQ(Int64s(RunHlo(UnaryModule("s32[3]", "popcnt", "s32[3]"), {a})), (std::vector<int64_t>{0, 1, 32}));
  EXPECT_EQ(Int64s(RunHlo(UnaryModule("s32[3]", "count-leading-zeros", "s32[3]"), {a})),
            (std::vector<int64_t>{32, 31, 0}));
  Literal b = Ints(ElementType::kS32, {3}, {-5, 0, 7});
  EXPECT_EQ(Int64s(RunHlo(UnaryModule("s32[3]", "sign", "s32[3]"), {b})), (std::vector<int64_t>{-1, 0, 1}));
  EXPECT_EQ(Int64s(RunHlo(UnaryModule("s32[3]", "abs", "s32[3]"), {b})), (std::vector<int64_t>{5, 0, 7}));
}

TEST(ElementwiseTest, FloatUnaryOps) {
  Literal x = Array(ElementType::kF32, {4}, {0.25, 1, 2.5, 4});
  ExpectDoubles(RunHlo(UnaryModule("f32[4]", "exponential", "f32[4]"), {x}),
                {std::exp(0.25), std::exp(1), std::exp(2.5), std::exp(4)}, 1e-4);
  ExpectDoubles(RunHlo(UnaryModule("f32[4]", "exponential-minus-one", "f32[4]"), {x}),
                {std::expm1(0.25), std::expm1(1), std::expm1(2.5), std::expm1(4)}, 1e-4);
  ExpectDoubles(RunHlo(UnaryModule("f32[4]", "log", "f32[4]"), {x}),
                {std::log(0.25), 0, std::log(2.5), std::log(4)}, 1e-6);
  ExpectDoubles(RunHlo(UnaryModule("f32[4]", "log-plus-one", "f32[4]"), {x}),
                {std::log1p(0.25), std::log1p(1), std::log1p(2.5), std::log1p(4)}, 1e-6);
  ExpectDoubles(RunHlo(UnaryModule("f32[4]", "sqrt", "f32[4]"), {x}), {0.5, 1, std::sqrt(2.5), 2}, 1e-6);
  ExpectDoubles(RunHlo(UnaryModule("f32[4]", "rsqrt", "f32[4]"), {x}), {2, 1, 1 / std::sqrt(2.5), 0.5}, 1e-6);
  ExpectDoubles(RunHlo(UnaryModule("f32[4]", "cbrt", "f32[4]"), {x}),
                {std::cbrt(0.25), 1, std::cbrt(2.5), std::cbrt(4)}, 1e-6);
  ExpectDoubles(RunHlo(UnaryModule("f32[4]", "tanh", "f32[4]"), {x}),
                {std::tanh(0.25), std::tanh(1), std::tanh(2.5), std::tanh(4)}, 1e-6);
  ExpectDoubles(RunHlo(UnaryModule("f32[4]", "logistic", "f32[4]"), {x}),
                {1 / (1 + std::exp(-0.25)), 1 / (1 + std::exp(-1)), 1 / (1 + std::exp(-2.5)),
                 1 / (1 + std::exp(-4))},
                1e-6);
  ExpectDoubles(RunHlo(UnaryModule("f32[4]", "sine", "f32[4]"), {x}),
                {std::sin(0.25), std::sin(1), std::sin(2.5), std::sin(4)}, 1e-6);
  ExpectDoubles(RunHlo(UnaryModule("f32[4]", "cosine", "f32[4]"), {x}),
                {std::cos(0.25), std::cos(1), std::cos(2.5), std::cos(4)}, 1e-6);
  ExpectDoubles(RunHlo(UnaryModule("f32[4]", "tan", "f32[4]"), {x}),
                {std::tan(0.25), std::tan(1), std::tan(2.5), std::tan(4)}, 1e-5);
  ExpectDoubles(RunHlo(UnaryModule("f32[4]", "erf", "f32[4]"), {x}),
                {std::erf(0.25), std::erf(1), std::erf(2.5), std::erf(4)}, 1e-6);
}

TEST(ElementwiseTest, Rounding) {
  Literal x = Array(ElementType::kF32, {6}, {2.5, -2.5, 3.5, -0.4, 1.6, -1.6});
  ExpectDoubles(RunHlo(UnaryModule("f32[6]", "round-nearest-afz", "f32[6]"), {x}), {3, -3, 4, -0.0, 2, -2});
  ExpectDoubles(RunHlo(UnaryModule("f32[6]", "round-nearest-even", "f32[6]"), {x}), {2, -2, 4, -0.0, 2, -2});
  ExpectDoubles(RunHlo(UnaryModule("f32[6]", "floor", "f32[6]"), {x}), {2, -3, 3, -1, 1, -2});
  ExpectDoubles(RunHlo(UnaryModule("f32[6]", "ceil", "f32[6]"), {x}), {3, -2, 4, -0.0, 2, -1});
}

TEST(ElementwiseTest, SignAbsNegateAndIsFinite) {
  double inf = std::numeric_limits<double>::infinity();
  Literal x = Array(ElementType::kF32, {5}, {-3, 0, 2, kNaN, -inf});
  ExpectDoubles(RunHlo(UnaryModule("f32[5]", "sign", "f32[5]"), {x}), {-1, 0, 1, kNaN, -1});
  ExpectDoubles(RunHlo(UnaryModule("f32[5]", "abs", "f32[5]"), {x}), {3, 0, 2, kNaN, inf});
  ExpectDoubles(RunHlo(UnaryModule("f32[5]", "negate", "f32[5]"), {x}), {3, 0, -2, kNaN, inf});
  EXPECT_EQ(Int64s(RunHlo(UnaryModule("f32[5]", "is-finite", "pred[5]"), {x})),
            (std::vector<int64_t>{1, 1, 1, 0, 0}));
}

TEST(ElementwiseTest, Bf16RoundsEachResultToNearestEven) {
  double tiny = std::ldexp(1.0, -8);  // half an ulp of 1.0 in bf16
  Literal a = Array(ElementType::kBF16, {3}, {1, 1, 256});
  Literal b = Array(ElementType::kBF16, {3}, {tiny, tiny + std::ldexp(1.0, -9), 1});
  // 1 + 2^-8 is a tie -> 1; 1 + 3*2^-9 rounds up to 1 + 2^-7; 256 + 1 is a tie -> 256.
  ExpectDoubles(RunHlo(BinaryModule("bf16[3]", "add", "bf16[3]"), {a, b}), {1, 1 + std::ldexp(1.0, -7), 256});
  Literal c = Array(ElementType::kBF16, {1}, {3});
  // 1/3 in bf16: 0.333984375.
  ExpectDoubles(RunHlo(BinaryModule("bf16[1]", "divide", "bf16[1]"), {Array(ElementType::kBF16, {1}, {1}), c}),
                {0.333984375});
  ExpectDoubles(RunHlo(UnaryModule("bf16[1]", "exponential", "bf16[1]"), {Array(ElementType::kBF16, {1}, {1})}),
                {2.71875});
}

TEST(ElementwiseTest, F16AndF64) {
  Literal a = Array(ElementType::kF16, {2}, {1, 2048});
  Literal b = Array(ElementType::kF16, {2}, {0.25, 1});
  ExpectDoubles(RunHlo(BinaryModule("f16[2]", "add", "f16[2]"), {a, b}), {1.25, 2048});
  Literal c = Array(ElementType::kF64, {1}, {1e300});
  ExpectDoubles(RunHlo(BinaryModule("f64[1]", "multiply", "f64[1]"), {c, Array(ElementType::kF64, {1}, {10})}),
                {1e301}, 1e287);
}

TEST(ElementwiseTest, CompareDirections) {
  Literal a = Array(ElementType::kF32, {3}, {1, 2, kNaN});
  Literal b = Array(ElementType::kF32, {3}, {2, 2, 1});
  auto compare = [&](const std::string& direction) {
    return Int64s(RunHlo(BinaryModule("f32[3]", "compare", "pred[3]", ", direction=" + direction), {a, b}));
  };
  EXPECT_EQ(compare("EQ"), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(compare("NE"), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(compare("LT"), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(compare("LE"), (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(compare("GT"), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(compare("GE"), (std::vector<int64_t>{0, 1, 0}));
}

TEST(ElementwiseTest, CompareTotalOrder) {
  Literal a = Array(ElementType::kF32, {3}, {-0.0, kNaN, -kNaN});
  Literal b = Array(ElementType::kF32, {3}, {0.0, std::numeric_limits<double>::infinity(), -1e30});
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("f32[3]", "compare", "pred[3]", ", direction=LT, type=TOTALORDER"), {a, b})),
            (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("f32[3]", "compare", "pred[3]", ", direction=EQ, type=TOTALORDER"), {a, a})),
            (std::vector<int64_t>{1, 1, 1}));
  // The default (partial) order: -0 == +0, NaN equals nothing.
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("f32[3]", "compare", "pred[3]", ", direction=EQ"), {a, b})),
            (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("f32[3]", "compare", "pred[3]", ", direction=EQ"), {a, a})),
            (std::vector<int64_t>{1, 0, 0}));
}

TEST(ElementwiseTest, CompareSignedAndUnsigned) {
  Literal a = Ints(ElementType::kS32, {2}, {-1, 3});
  Literal b = Ints(ElementType::kS32, {2}, {1, 3});
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("s32[2]", "compare", "pred[2]", ", direction=GT"), {a, b})),
            (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("s32[2]", "compare", "pred[2]", ", direction=GT, type=UNSIGNED"), {a, b})),
            (std::vector<int64_t>{1, 0}));
  Literal p = Ints(ElementType::kPred, {2}, {1, 0});
  Literal q = Ints(ElementType::kPred, {2}, {0, 0});
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("pred[2]", "compare", "pred[2]", ", direction=GT"), {p, q})),
            (std::vector<int64_t>{1, 0}));
  Literal u = Ints(ElementType::kU64, {1}, {std::numeric_limits<int64_t>::max()});
  Literal v = Ints(ElementType::kU64, {1}, {5});
  EXPECT_EQ(Int64s(RunHlo(BinaryModule("u64[1]", "compare", "pred[1]", ", direction=GE"), {u, v})),
            (std::vector<int64_t>{1}));
}

TEST(ElementwiseTest, SelectWithArrayAndScalarPredicate) {
  std::string array_text = R"(HloModule m
ENTRY e {
  p = pred[3] parameter(0)
  a = s32[3] parameter(1)
  b = s32[3] parameter(2)
  ROOT r = s32[3] select(p, a, b)
})";
  Literal p = Ints(ElementType::kPred, {3}, {1, 0, 1});
  Literal a = Ints(ElementType::kS32, {3}, {1, 2, 3});
  Literal b = Ints(ElementType::kS32, {3}, {-1, -2, -3});
  EXPECT_EQ(Int64s(RunHlo(array_text, {p, a, b})), (std::vector<int64_t>{1, -2, 3}));
  std::string scalar_text = R"(HloModule m
ENTRY e {
  p = pred[] parameter(0)
  a = bf16[3] parameter(1)
  b = bf16[3] parameter(2)
  ROOT r = bf16[3] select(p, a, b)
})";
  Literal s = Ints(ElementType::kPred, {}, {0});
  Literal fa = Array(ElementType::kBF16, {3}, {1, 2, 3});
  Literal fb = Array(ElementType::kBF16, {3}, {-1, -2, -3});
  ExpectDoubles(RunHlo(scalar_text, {s, fa, fb}), {-1, -2, -3});
}

TEST(ElementwiseTest, ClampWithScalarAndArrayBounds) {
  std::string text = R"(HloModule m
ENTRY e {
  lo = f32[] parameter(0)
  x = f32[4] parameter(1)
  hi = f32[4] parameter(2)
  ROOT r = f32[4] clamp(lo, x, hi)
})";
  Literal lo = Array(ElementType::kF32, {}, {0});
  Literal x = Array(ElementType::kF32, {4}, {-1, 0.5, 5, kNaN});
  Literal hi = Array(ElementType::kF32, {4}, {1, 1, 2, 1});
  ExpectDoubles(RunHlo(text, {lo, x, hi}), {0, 0.5, 2, kNaN});
  std::string int_text = R"(HloModule m
ENTRY e {
  lo = s32[] constant(-2)
  x = s32[3] parameter(0)
  hi = s32[] constant(2)
  ROOT r = s32[3] clamp(lo, x, hi)
})";
  EXPECT_EQ(Int64s(RunHlo(int_text, {Ints(ElementType::kS32, {3}, {-9, 1, 9})})), (std::vector<int64_t>{-2, 1, 2}));
}

TEST(ElementwiseTest, ConvertSaturatesAndRounds) {
  Literal x = Array(ElementType::kF32, {5}, {1.7, -1.7, 1e20, -1e20, kNaN});
  EXPECT_EQ(Int64s(RunHlo(UnaryModule("f32[5]", "convert", "s32[5]"), {x})),
            (std::vector<int64_t>{1, -1, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 0}));
  Literal y = Array(ElementType::kF32, {2}, {1.00390625, 0.1});  // 1 + 2^-8 ties to even -> 1
  ExpectDoubles(RunHlo(UnaryModule("f32[2]", "convert", "bf16[2]"), {y}), {1, 0.10009765625});
  Literal z = Ints(ElementType::kS32, {3}, {0, 2, -1});
  EXPECT_EQ(Int64s(RunHlo(UnaryModule("s32[3]", "convert", "pred[3]"), {z})), (std::vector<int64_t>{0, 1, 1}));
}

TEST(ElementwiseTest, BitcastConvert) {
  Literal x = Array(ElementType::kF32, {2}, {1, -2});
  EXPECT_EQ(Int64s(RunHlo(UnaryModule("f32[2]", "bitcast-convert", "s32[2]"), {x})),
            (std::vector<int64_t>{0x3f800000, static_cast<int32_t>(0xc0000000u)}));
  EXPECT_EQ(Int64s(RunHlo(UnaryModule("f32[1]", "bitcast-convert", "u8[1,4]"), {Array(ElementType::kF32, {1}, {1})})),
            (std::vector<int64_t>{0, 0, 0x80, 0x3f}));
  EXPECT_EQ(Int64s(RunHlo(UnaryModule("u16[2,2]", "bitcast-convert", "u32[2]"),
                       {Ints(ElementType::kU16, {2, 2}, {1, 2, 3, 4})})),
            (std::vector<int64_t>{0x00020001, 0x00040003}));
}

TEST(ElementwiseTest, ReducePrecisionMatchesBf16) {
  std::string text = R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[4] reduce-precision(p), exponent_bits=8, mantissa_bits=7
})";
  Literal x = Array(ElementType::kF32, {4}, {1.00390625, 0.1, 3.14159, -1e-3});
  Literal bf16 = x.Convert(ElementType::kBF16);
  ExpectDoubles(RunHlo(text, {x}), Doubles(bf16));
  std::string narrow = R"(HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  ROOT r = f32[3] reduce-precision(p), exponent_bits=5, mantissa_bits=10
})";
  // f16 range: 1e6 overflows to inf, 1e-9 underflows to 0.
  ExpectDoubles(RunHlo(narrow, {Array(ElementType::kF32, {3}, {1e6, 1e-9, kNaN})}),
                {std::numeric_limits<double>::infinity(), 0, kNaN});
}

TEST(ElementwiseTest, MismatchedShapesAreUserErrors) {
  EXPECT_THROW(RunHlo(BinaryModule("f32[2]", "add", "f32[2]"),
                   {Array(ElementType::kF32, {2}, {1, 2}), Array(ElementType::kF32, {3}, {1, 2, 3})}),
               UserError);
  EXPECT_THROW(RunHlo(UnaryModule("s32[1]", "exponential", "s32[1]"), {Ints(ElementType::kS32, {1}, {1})}),
               UserError);
  EXPECT_THROW(RunHlo(UnaryModule("f32[2,2]", "bitcast-convert", "s32[4]"), {Array(ElementType::kF32, {2, 2}, {1, 2, 3, 4})}),
               UserError);
}

}  // namespace
}  // namespace gspmd
