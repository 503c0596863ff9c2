// Tests of sort's keyed fast path (sort_keys.h): JAX's total-order key comparator and other
// key functions sort exactly as the generic per-pair comparator path does, NaNs under a plain
// LT go last, and comparators that are no single key comparison still take the generic path.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "kernel_test_util.h"
#include "runtime/interp/sort_keys.h"

namespace gspmd::kernel_test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The key JAX's sort lowering computes for f32 (lax._float_to_int_for_sort): zeros and NaNs
// standardized, negative numbers flipped so that s32 order is the total order.
std::string KeyFunction(const std::string& side, const std::string& p) {
  std::string s = side;
  return "  " + s + "s = s32[] bitcast-convert(" + p + ")\n  " + s + "u = u32[] bitcast-convert(" + p + ")\n  " + s +
         "zero = f32[] constant(0)\n  " + s + "iszero = pred[] compare(" + p + ", " + s + "zero), direction=EQ\n  " + s +
         "izero = s32[] constant(0)\n  " + s + "s1 = s32[] select(" + s + "iszero, " + s + "izero, " + s + "s)\n  " + s +
         "isnan = pred[] compare(" + p + ", " + p + "), direction=NE\n  " + s + "nanbits = s32[] constant(2143289344)\n  " +
         s + "s2 = s32[] select(" + s + "isnan, " + s + "nanbits, " + s + "s1)\n  " + s +
         "max = u32[] constant(2147483647)\n  " + s + "d = u32[] subtract(" + s + "max, " + s + "u)\n  " + s +
         "flipped = s32[] bitcast-convert(" + s + "d)\n  " + s + "neg = pred[] compare(" + s + "s2, " + s +
         "izero), direction=LT\n  " + s + "key = s32[] select(" + s + "neg, " + s + "flipped, " + s + "s2)\n";
}

// An argsort of f32[rows, cols] along `dim` with JAX's key comparator; `generic` ANDs the
// comparison with true so the comparator is no single compare and takes the generic path.
std::string JaxArgsort(int64_t rows, int64_t cols, int dim, bool descending, bool generic) {
  std::string shape = "[" + std::to_string(rows) + "," + std::to_string(cols) + "]";
  std::string text = "HloModule m\ncmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                     "  i = s32[] parameter(2)\n  j = s32[] parameter(3)\n" +
                     KeyFunction("l", "a") + KeyFunction("r", "b");
  std::string compare = "pred[] compare(lkey, rkey), direction=" + std::string(descending ? "GT" : "LT") + "\n";
  if (generic)
    text += "  lt = " + compare + "  t = pred[] constant(true)\n  ROOT c = pred[] and(lt, t)\n";
  else
    text += "  ROOT lt = " + compare;
  text += "}\nENTRY e {\n  x = f32" + shape + " parameter(0)\n  idx = s32" + shape + " iota(), iota_dimension=" +
          std::to_string(dim) + "\n  ROOT s = (f32" + shape + ", s32" + shape + ") sort(x, idx), dimensions={" +
          std::to_string(dim) + "}, is_stable=true, to_apply=cmp\n}\n";
  return text;
}

Literal SpecialFloats(int64_t rows, int64_t cols, std::mt19937& rng) {
  const double specials[] = {kNaN, -kNaN, kInf, -kInf, 0.0, -0.0, 1.0, -1.0};
  std::uniform_int_distribution<int> pick(0, 11);
  std::uniform_real_distribution<double> value(-3, 3);
  std::vector<double> values;
  for (int64_t i = 0; i < rows * cols; ++i) {
    int k = pick(rng);
    values.push_back(k < 8 ? specials[k] : std::round(value(rng) * 4) / 4);  // many ties
  }
  return Array(ElementType::kF32, {rows, cols}, values);
}

TEST(SortKeysTest, JaxKeyComparatorIsRecognized) {
  std::unique_ptr<Module> module = ParseModule(JaxArgsort(1, 8, 1, false, false));
  Literal x(Shape(ElementType::kF32, {1, 8})), idx(Shape(ElementType::kS32, {1, 8}));
  const Literal* operands[] = {&x, &idx};
  std::optional<kernel::KeyedOrder> order =
      kernel::RecognizeKeyedOrder(*module->entry()->root()->to_apply(), Operands(operands, 2));
  ASSERT_TRUE(order.has_value());
  EXPECT_EQ(order->key_operand, 0);
  EXPECT_FALSE(order->descending);
  EXPECT_EQ(order->key_type, ElementType::kS32);
  EXPECT_TRUE(order->key.has_value());

  std::unique_ptr<Module> generic = ParseModule(JaxArgsort(1, 8, 1, false, true));
  EXPECT_FALSE(kernel::RecognizeKeyedOrder(*generic->entry()->root()->to_apply(), Operands(operands, 2)));
}

TEST(SortKeysTest, JaxKeyComparatorMatchesGenericPathBitwise) {
  std::mt19937 rng(15);
  for (int dim : {0, 1}) {
    for (bool descending : {false, true}) {
      Literal x = SpecialFloats(7, 53, rng);
      std::vector<Literal> fast = FlattenTuple(RunHlo(JaxArgsort(7, 53, dim, descending, false), {x}));
      std::vector<Literal> slow = FlattenTuple(RunHlo(JaxArgsort(7, 53, dim, descending, true), {x}));
      ASSERT_EQ(fast.size(), 2u);
      EXPECT_TRUE(fast[0].BitwiseEquals(slow[0])) << "dim " << dim << " descending " << descending;
      EXPECT_TRUE(fast[1].BitwiseEquals(slow[1])) << "dim " << dim << " descending " << descending;
    }
  }
}

TEST(SortKeysTest, JaxKeyOrderIsTheTotalOrderWithStandardizedZerosAndNaNs) {
  Literal x = Array(ElementType::kF32, {1, 8}, {kNaN, 2, -0.0, -kInf, 0.0, -kNaN, -1, kInf});
  std::vector<Literal> leaves = FlattenTuple(RunHlo(JaxArgsort(1, 8, 1, false, false), {x}));
  // NaNs of either sign standardize to +NaN (last); -0 and 0 are equal, kept in input order.
  ExpectValues(leaves[1], {3, 6, 2, 4, 1, 7, 0, 5});
}

TEST(SortKeysTest, PlainLessThanPutsNaNsLastAndKeepsTiesStable) {
  std::string text = R"(HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[7] parameter(0)
  idx = s32[7] iota(), iota_dimension=0
  ROOT s = (f32[7], s32[7]) sort(x, idx), dimensions={0}, to_apply=cmp
}
)";
  std::vector<Literal> leaves = FlattenTuple(RunHlo(text, {Array(ElementType::kF32, {7}, {kNaN, 3, 1, kNaN, 1, -2, 0})}));
  ExpectValues(leaves[1], {5, 6, 2, 4, 1, 0, 3});
}

TEST(SortKeysTest, NegatedKeySortsDescending) {
  // K(x) = -x with LT is a descending sort by x: a key function other than JAX's.
  std::string text = R"(HloModule m
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  na = s32[] negate(a)
  nb = s32[] negate(b)
  ROOT lt = pred[] compare(na, nb), direction=LT
}
ENTRY e {
  x = s32[6] parameter(0)
  ROOT s = s32[6] sort(x), dimensions={0}, to_apply=cmp
}
)";
  ExpectValues(RunHlo(text, {Ints(ElementType::kS32, {6}, {4, -1, 9, 0, 4, -7})}), {9, 4, 4, 0, -1, -7});
}

TEST(SortKeysTest, DifferentFunctionsOnEachSideTakeTheGenericPath) {
  // compare(-a, b): not one key applied to both sides, so the comparator runs per pair.
  std::string text = R"(HloModule m
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  na = s32[] negate(a)
  ROOT lt = pred[] compare(na, b), direction=LT
}
ENTRY e {
  x = s32[4] parameter(0)
  ROOT s = s32[4] sort(x), dimensions={0}, to_apply=cmp
}
)";
  std::unique_ptr<Module> module = ParseModule(text);
  Literal x = Ints(ElementType::kS32, {4}, {1, 2, 3, 4});
  const Literal* operands[] = {&x};
  EXPECT_FALSE(kernel::RecognizeKeyedOrder(*module->entry()->root()->to_apply(), Operands(operands, 1)));
  Literal result = EvaluateModule(*module, std::vector<Literal>{x});  // runs, whatever order an inconsistent comparator gives
  EXPECT_EQ(result.element_count(), 4);
}

}  // namespace
}  // namespace gspmd::kernel_test
