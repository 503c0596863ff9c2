// Tests of the interpreter's sort and top-k kernels: direct comparators (LT, GT, swapped,
// TOTALORDER with NaN and signed zeros), several operands with stability, a generic
// lexicographic comparator against std::stable_sort, the topk op and the TopK custom-call.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kernel_test_util.h"

namespace gspmd::kernel_test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A single-operand sort of `shape` along `dim` whose comparator ROOT is `compare`.
std::string SortModule(const std::string& shape, int dim, const std::string& compare, const std::string& type = "f32") {
  return "HloModule m\ncmp {\n  p0 = " + type + "[] parameter(0)\n  p1 = " + type + "[] parameter(1)\n  ROOT c = pred[] " +
         compare + "\n}\nENTRY e {\n  x = " + shape + " parameter(0)\n  ROOT s = " + shape + " sort(x), dimensions={" +
         std::to_string(dim) + "}, to_apply=cmp\n}\n";
}

TEST(SortTest, AscendingAlongLastDim) {
  Literal result = RunHlo(SortModule("f32[2,3]", 1, "compare(p0, p1), direction=LT"),
                          {Array(ElementType::kF32, {2, 3}, {3, 1, 2, 0, -1, 5})});
  ExpectValues(result, {1, 2, 3, -1, 0, 5});
}

TEST(SortTest, DescendingAlongFirstDim) {
  Literal result = RunHlo(SortModule("s32[3,2]", 0, "compare(p0, p1), direction=GT", "s32"),
                          {Ints(ElementType::kS32, {3, 2}, {1, 6, 3, 4, 2, 5})});
  ExpectValues(result, {3, 6, 2, 5, 1, 4});
}

TEST(SortTest, SwappedParametersReverseTheOrder) {
  Literal result = RunHlo(SortModule("f32[4]", 0, "compare(p1, p0), direction=LT"), {Array(ElementType::kF32, {4}, {2, 9, -1, 4})});
  ExpectValues(result, {9, 4, 2, -1});
}

TEST(SortTest, TotalOrderPlacesNaNLastAndNegativeZeroFirst) {
  Literal result = RunHlo(SortModule("f32[6]", 0, "compare(p0, p1), direction=LT, type=TOTALORDER"),
                          {Array(ElementType::kF32, {6}, {kNaN, 1, 0.0, -kInf, -0.0, -2})});
  ExpectValues(result, {-kInf, -2, 0, 0, 1, kNaN});
  EXPECT_TRUE(std::signbit(result.GetAsDouble(2)));
  EXPECT_FALSE(std::signbit(result.GetAsDouble(3)));
}

TEST(SortTest, Bf16TotalOrderDescending) {
  Literal result = RunHlo(SortModule("bf16[4]", 0, "compare(p0, p1), direction=GT, type=TOTALORDER", "bf16"),
                          {Array(ElementType::kBF16, {4}, {0.5, kNaN, -3, 8})});
  ExpectValues(result, {kNaN, 8, 0.5, -3});
}

TEST(SortTest, ArgsortIsStable) {
  std::string text = R"(HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[6] parameter(0)
  idx = s32[6] iota(), iota_dimension=0
  ROOT s = (f32[6], s32[6]) sort(x, idx), dimensions={0}, is_stable=true, to_apply=cmp
}
)";
  std::vector<Literal> leaves = FlattenTuple(RunHlo(text, {Array(ElementType::kF32, {6}, {2, 1, 2, 0, 1, 2})}));
  ASSERT_EQ(leaves.size(), 2u);
  ExpectValues(leaves[0], {0, 1, 1, 2, 2, 2});
  ExpectValues(leaves[1], {3, 1, 4, 0, 2, 5});
}

TEST(SortTest, GenericLexicographicComparatorMatchesStableSort) {
  // Sort by key (descending), then by value (ascending): not a single compare, so the
  // evaluator runs the comparator.
  std::string text = R"(HloModule m
cmp {
  k0 = s32[] parameter(0)
  k1 = s32[] parameter(1)
  v0 = f32[] parameter(2)
  v1 = f32[] parameter(3)
  gt = pred[] compare(k0, k1), direction=GT
  eq = pred[] compare(k0, k1), direction=EQ
  lt = pred[] compare(v0, v1), direction=LT
  tie = pred[] and(eq, lt)
  ROOT r = pred[] or(gt, tie)
}
ENTRY e {
  k = s32[3,40] parameter(0)
  v = f32[3,40] parameter(1)
  ROOT s = (s32[3,40], f32[3,40]) sort(k, v), dimensions={1}, to_apply=cmp
}
)";
  std::mt19937 rng(61);
  Literal keys = RandomLiteral(Shape(ElementType::kS32, {3, 40}), rng, 0, 3);
  Literal values = RandomLiteral(Shape(ElementType::kF32, {3, 40}), rng, -5, 5);
  std::vector<Literal> leaves = FlattenTuple(RunHlo(text, {keys, values}));
  ASSERT_EQ(leaves.size(), 2u);
  std::vector<double> expected_keys, expected_values;
  for (int64_t row = 0; row < 3; ++row) {
    std::vector<std::pair<double, double>> pairs;
    for (int64_t j = 0; j < 40; ++j) pairs.emplace_back(keys.GetAsDouble(row * 40 + j), values.GetAsDouble(row * 40 + j));
    std::stable_sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) {
      return a.first > b.first || (a.first == b.first && a.second < b.second);
    });
    for (const auto& [key, value] : pairs) {
      expected_keys.push_back(key);
      expected_values.push_back(value);
    }
  }
  ExpectValues(leaves[0], expected_keys);
  ExpectValues(leaves[1], expected_values);
}

TEST(SortTest, RandomMultiOperandSortIsStable) {
  std::string text = R"(HloModule m
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = s32[5,7,4] parameter(0)
  v = f32[5,7,4] parameter(1)
  ROOT s = (s32[5,7,4], f32[5,7,4]) sort(k, v), dimensions={1}, is_stable=true, to_apply=cmp
}
)";
  std::mt19937 rng(62);
  Literal keys = RandomLiteral(Shape(ElementType::kS32, {5, 7, 4}), rng, 0, 2);
  Literal values = RandomLiteral(Shape(ElementType::kF32, {5, 7, 4}), rng, -9, 9);
  std::vector<Literal> leaves = FlattenTuple(RunHlo(text, {keys, values}));
  std::vector<double> expected_keys(140), expected_values(140);
  for (int64_t a = 0; a < 5; ++a) {
    for (int64_t c = 0; c < 4; ++c) {
      std::vector<int64_t> order(7);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
        return keys.GetAsDouble(a * 28 + x * 4 + c) < keys.GetAsDouble(a * 28 + y * 4 + c);
      });
      for (int64_t j = 0; j < 7; ++j) {
        expected_keys[a * 28 + j * 4 + c] = keys.GetAsDouble(a * 28 + order[j] * 4 + c);
        expected_values[a * 28 + j * 4 + c] = values.GetAsDouble(a * 28 + order[j] * 4 + c);
      }
    }
  }
  ExpectValues(leaves[0], expected_keys);
  ExpectValues(leaves[1], expected_values);
}

TEST(SortTest, ComparatorArityMismatchIsUserError) {
  std::string text = R"(HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  ROOT s = (f32[3], f32[3]) sort(x, y), dimensions={0}, to_apply=cmp
}
)";
  EXPECT_THROW(RunHlo(text, {Literal(Shape(ElementType::kF32, {3})), Literal(Shape(ElementType::kF32, {3}))}), UserError);
}

TEST(TopKTest, LargestWithTiesByLowerIndex) {
  std::string text = R"(HloModule m
ENTRY e {
  x = f32[2,5] parameter(0)
  ROOT t = (f32[2,3], s32[2,3]) topk(x), k=3, largest=true
}
)";
  std::vector<Literal> leaves = FlattenTuple(RunHlo(text, {Array(ElementType::kF32, {2, 5}, {1, 7, 3, 7, 2, 0, -1, 0, 4, 0})}));
  ASSERT_EQ(leaves.size(), 2u);
  ExpectValues(leaves[0], {7, 7, 3, 4, 0, 0});
  ExpectValues(leaves[1], {1, 3, 2, 3, 0, 2});
}

TEST(TopKTest, Smallest) {
  std::string text = R"(HloModule m
ENTRY e {
  x = s32[6] parameter(0)
  ROOT t = (s32[2], s32[2]) topk(x), k=2, largest=false
}
)";
  std::vector<Literal> leaves = FlattenTuple(RunHlo(text, {Ints(ElementType::kS32, {6}, {5, -2, 8, -2, 0, 1})}));
  ExpectValues(leaves[0], {-2, -2});
  ExpectValues(leaves[1], {1, 3});
}

TEST(TopKTest, CustomCallTopK) {
  std::string text = R"(HloModule m
ENTRY e {
  x = f32[2,4] parameter(0)
  ROOT t = (f32[2,2], s32[2,2]) custom-call(x), custom_call_target="TopK"
}
)";
  std::vector<Literal> leaves = FlattenTuple(RunHlo(text, {Array(ElementType::kF32, {2, 4}, {0.5, 3, kNaN, 2, 4, 4, 1, 9})}));
  ASSERT_EQ(leaves.size(), 2u);
  ExpectValues(leaves[0], {kNaN, 3, 9, 4});
  ExpectValues(leaves[1], {2, 1, 3, 0});
}

TEST(TopKTest, KLargerThanDimIsUserError) {
  std::string text = R"(HloModule m
ENTRY e {
  x = f32[3] parameter(0)
  ROOT t = (f32[4], s32[4]) topk(x), k=4, largest=true
}
)";
  EXPECT_THROW(RunHlo(text, {Literal(Shape(ElementType::kF32, {3}))}), UserError);
}

}  // namespace
}  // namespace gspmd::kernel_test
