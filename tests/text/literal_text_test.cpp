// PrintLiteral: XLA's number formatting (shortest round-tripping precision) and nesting.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "text/printer.h"

namespace gspmd {
namespace {

std::string PrintScalar(ElementType type, double value) {
  return PrintLiteral(Literal::Scalar(type, value));
}

TEST(LiteralTextTest, FloatsUseTheShortestPrecisionThatRoundTrips) {
  EXPECT_EQ(PrintScalar(ElementType::kF32, 0.797884583), "0.797884583");
  EXPECT_EQ(PrintScalar(ElementType::kF32, 0.044715), "0.044715");
  EXPECT_EQ(PrintScalar(ElementType::kF32, 1e-05), "1e-05");
  EXPECT_EQ(PrintScalar(ElementType::kF32, 1.0), "1");
  EXPECT_EQ(PrintScalar(ElementType::kF32, -2.5), "-2.5");
  EXPECT_EQ(PrintScalar(ElementType::kF32, 0.1), "0.1");
  EXPECT_EQ(PrintScalar(ElementType::kF64, 0.1), "0.1");
  EXPECT_EQ(PrintScalar(ElementType::kF64, 1.0 / 3.0), "0.33333333333333331");
  EXPECT_EQ(PrintScalar(ElementType::kF32, 1.0 / 3.0), "0.333333343");
  EXPECT_EQ(PrintScalar(ElementType::kBF16, 0.1), "0.1");
  EXPECT_EQ(PrintScalar(ElementType::kF16, 0.333), "0.333");
  EXPECT_EQ(PrintScalar(ElementType::kF32, 3.4028234663852886e38), "3.40282347e+38");
}

TEST(LiteralTextTest, SpecialFloatValues) {
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(PrintScalar(ElementType::kF32, inf), "inf");
  EXPECT_EQ(PrintScalar(ElementType::kF32, -inf), "-inf");
  EXPECT_EQ(PrintScalar(ElementType::kF64, std::nan("")), "nan");
  EXPECT_EQ(PrintScalar(ElementType::kBF16, -inf), "-inf");
}

TEST(LiteralTextTest, IntegersAndPredicates) {
  EXPECT_EQ(PrintScalar(ElementType::kS32, -7), "-7");
  EXPECT_EQ(PrintScalar(ElementType::kS8, -128), "-128");
  EXPECT_EQ(PrintScalar(ElementType::kU8, 255), "255");
  EXPECT_EQ(PrintScalar(ElementType::kPred, 1), "true");
  EXPECT_EQ(PrintScalar(ElementType::kPred, 0), "false");
  Literal big(Shape(ElementType::kU64, {}));
  big.data<uint64_t>()[0] = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(PrintLiteral(big), "18446744073709551615");
}

TEST(LiteralTextTest, ArraysNestWithSpacedOuterBraces) {
  std::vector<int64_t> values = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(PrintLiteral(Literal::FromInts(Shape(ElementType::kS32, {6}), values)), "{1, 2, 3, 4, 5, 6}");
  EXPECT_EQ(PrintLiteral(Literal::FromInts(Shape(ElementType::kS32, {2, 3}), values)), "{ {1, 2, 3}, {4, 5, 6} }");
  EXPECT_EQ(PrintLiteral(Literal::FromInts(Shape(ElementType::kS32, {3, 1, 2}), values)),
            "{ { {1, 2} }, { {3, 4} }, { {5, 6} } }");
  EXPECT_EQ(PrintLiteral(Literal(Shape(ElementType::kF32, {0}))), "{}");
  EXPECT_EQ(PrintLiteral(Literal(Shape(ElementType::kF32, {2, 0}))), "{ {}, {} }");
}

TEST(LiteralTextTest, Tuples) {
  std::vector<Literal> elements;
  elements.push_back(Literal::Scalar(ElementType::kF32, 1.5));
  elements.push_back(Literal::FromInts(Shape(ElementType::kS32, {2}), std::vector<int64_t>{1, 2}));
  EXPECT_EQ(PrintLiteral(Literal::Tuple(std::move(elements))), "(1.5, {1, 2})");
}

}  // namespace
}  // namespace gspmd
