// compare's total order written both ways, type=TOTALORDER and order=TOTAL: each prints back
// as written, both mean XLA's float total order (-NaN < -inf < ... < -0 < +0 < ... < +inf <
// +NaN, NaNs ordered by payload) in every place the interpreter compares (elementwise compare,
// sort comparators recognized or compiled or evaluated, reducers, select-and-scatter), and a
// sort-based top-k with it partitions onto uneven shards without changing the result.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "hlo_text_test_util.h"
#include "partitioner/partition_test_harness.h"
#include "runtime/interp/evaluator.h"

namespace gspmd {
namespace {

using testing::Canonical;
using testing::Find;
using testing::ParseError;

constexpr uint32_t kPosNaN = 0x7fc00000, kPosNaN2 = 0x7fc00001, kNegNaN = 0xffc00000, kPosInf = 0x7f800000,
                   kNegInf = 0xff800000, kPosZero = 0, kNegZero = 0x80000000, kOne = 0x3f800000,
                   kMinusOne = 0xbf800000, kTwo = 0x40000000;

// Values whose total order differs from IEEE comparison.
const std::vector<uint32_t> kAwkward = {kPosNaN, kNegZero, kOne, kNegNaN, kPosZero, kNegInf, kPosNaN2, kMinusOne,
                                        kPosInf, kTwo};

Literal F32Bits(std::vector<int64_t> dims, const std::vector<uint32_t>& bits) {
  Literal literal(Shape(ElementType::kF32, std::move(dims)));
  std::memcpy(literal.raw(), bits.data(), bits.size() * sizeof(uint32_t));
  return literal;
}

std::vector<uint32_t> BitsOf(const Literal& literal) {
  std::vector<uint32_t> bits(static_cast<size_t>(literal.element_count()));
  std::memcpy(bits.data(), literal.raw(), bits.size() * sizeof(uint32_t));
  return bits;
}

// XLA's total order as a signed key of the bits.
int32_t TotalKey(uint32_t bits) {
  int32_t value;
  std::memcpy(&value, &bits, 4);
  return value < 0 ? value ^ 0x7fffffff : value;
}

float AsFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

Literal Evaluate(const std::string& text, std::vector<Literal> arguments) {
  std::unique_ptr<Module> module = ParseModule(text);
  return EvaluateModule(*module, arguments);
}

// ---- Text ----

TEST(ComparisonOrderTest, BothSpellingsPrintBackAsWritten) {
  const std::string text = R"(HloModule m

ENTRY %main (a: f32[4], b: f32[4], i: s32[4]) -> (pred[4], pred[4], pred[4], pred[4], pred[4]) {
  %a = f32[4]{0} parameter(0)
  %b = f32[4]{0} parameter(1)
  %i = s32[4]{0} parameter(2)
  %total = pred[4]{0} compare(%a, %b), direction=LT, order=TOTAL
  %partial = pred[4]{0} compare(%a, %b), direction=LT, order=PARTIAL
  %old = pred[4]{0} compare(%a, %b), direction=LT, type=TOTALORDER
  %ints = pred[4]{0} compare(%i, %i), direction=GE, order=TOTAL
  %plain = pred[4]{0} compare(%a, %b), direction=LT
  ROOT %t = (pred[4]{0}, pred[4]{0}, pred[4]{0}, pred[4]{0}, pred[4]{0}) tuple(%total, %partial, %old, %ints, %plain)
}

)";
  EXPECT_EQ(Canonical(text), text);
  std::unique_ptr<Module> module = ParseModule(text);
  EXPECT_EQ(Find(*module, "total").comparison_type, ComparisonType::kTotalOrder);
  EXPECT_EQ(Find(*module, "old").comparison_type, ComparisonType::kTotalOrder);
  EXPECT_EQ(Find(*module, "partial").comparison_type, ComparisonType::kFloat);
  EXPECT_EQ(Find(*module, "ints").comparison_type, ComparisonType::kSigned);
  EXPECT_EQ(Find(*module, "plain").comparison_type, ComparisonType::kDefault);
}

TEST(ComparisonOrderTest, OrdersThatDoNotFitTheOperandsAreErrors) {
  auto module = [](const std::string& type, const std::string& attributes) {
    return "HloModule m\nENTRY e {\n  a = " + type + "[2] parameter(0)\n  ROOT c = pred[2] compare(a, a), direction=LT" +
           attributes + "\n}\n";
  };
  EXPECT_EQ(ParseError(module("s32", ", order=PARTIAL")),
            "t.hlo:4:55: error: order=PARTIAL on s32 values, which are totally ordered: expected order=TOTAL "
            "(PARTIAL is for floating-point values)");
  EXPECT_EQ(ParseError(module("c64", ", order=TOTAL")),
            "t.hlo:4:55: error: order=TOTAL on c64 values: complex numbers have no total order (expected "
            "order=PARTIAL)");
  EXPECT_EQ(ParseError(module("f32", ", order=TOTALISH")),
            "t.hlo:4:55: error: expected a comparison order (TOTAL or PARTIAL), found 'TOTALISH'");
  EXPECT_EQ(ParseError(module("f32", ", type=TOTALORDER, order=TOTAL")),
            "t.hlo:4:66: error: compare takes type= or order= (two spellings of its comparison type), not both");
  EXPECT_EQ(ParseError(module("f32", ", ordering=TOTAL")).substr(0, 53),
            "t.hlo:4:49: error: unknown attribute 'ordering' on co");
}

// ---- Semantics: the same in every place the interpreter compares ----

// Elementwise compare in every direction, against the total order (TOTAL, TOTALORDER) and
// IEEE comparison (PARTIAL, the default).
TEST(ComparisonOrderTest, ElementwiseCompareInEveryDirection) {
  std::vector<uint32_t> lhs, rhs;
  for (uint32_t a : kAwkward)
    for (uint32_t b : kAwkward) {
      lhs.push_back(a);
      rhs.push_back(b);
    }
  const int64_t n = static_cast<int64_t>(lhs.size());
  const std::string shape = "f32[" + std::to_string(n) + "]";
  const std::vector<std::string> directions = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  for (const std::string& spelling : {std::string("order=TOTAL"), std::string("type=TOTALORDER"),
                                      std::string("order=PARTIAL"), std::string("")}) {
    const bool total = spelling.find("TOTAL") != std::string::npos;
    for (size_t d = 0; d < directions.size(); ++d) {
      SCOPED_TRACE(spelling + " " + directions[d]);
      std::string text = "HloModule m\nENTRY e {\n  a = " + shape + " parameter(0)\n  b = " + shape +
                         " parameter(1)\n  ROOT c = pred[" + std::to_string(n) + "] compare(a, b), direction=" +
                         directions[d] + (spelling.empty() ? "" : ", " + spelling) + "\n}\n";
      Literal result = Evaluate(text, {F32Bits({n}, lhs), F32Bits({n}, rhs)});
      for (int64_t i = 0; i < n; ++i) {
        bool expected;
        if (total) {
          int32_t x = TotalKey(lhs[i]), y = TotalKey(rhs[i]);
          expected = d == 0 ? x == y : d == 1 ? x != y : d == 2 ? x < y : d == 3 ? x <= y : d == 4 ? x > y : x >= y;
        } else {
          float x = AsFloat(lhs[i]), y = AsFloat(rhs[i]);
          expected = d == 0 ? x == y : d == 1 ? x != y : d == 2 ? x < y : d == 3 ? x <= y : d == 4 ? x > y : x >= y;
        }
        ASSERT_EQ(result.data<bool>()[i], expected) << std::hex << lhs[i] << " vs " << rhs[i];
      }
    }
  }
}

std::vector<uint32_t> TotalOrderSorted(std::vector<uint32_t> bits, bool descending) {
  std::stable_sort(bits.begin(), bits.end(), [&](uint32_t a, uint32_t b) {
    return descending ? TotalKey(a) > TotalKey(b) : TotalKey(a) < TotalKey(b);
  });
  return bits;
}

// A one-operand sort whose comparator compares wrap(p0) with wrap(p1): wrap "" is the direct
// compare kernels recognize, "copy" one the scalar-program compiler takes, "reshape" one
// only the Evaluator runs.
std::string SortText(const std::string& wrap, const std::string& direction, const std::string& spelling) {
  auto operand = [&](const std::string& p) {
    return wrap.empty() ? p : "f32[] " + wrap + "(" + p + ")";
  };
  return "HloModule m\ncmp {\n  p0 = f32[] parameter(0)\n  p1 = f32[] parameter(1)\n  ROOT c = pred[] compare(" +
         operand("p0") + ", " + operand("p1") + "), direction=" + direction + ", " + spelling +
         "\n}\nENTRY e {\n  x = f32[10] parameter(0)\n  ROOT s = f32[10] sort(x), dimensions={0}, is_stable=true, "
         "to_apply=cmp\n}\n";
}

TEST(ComparisonOrderTest, SortComparatorsOfEveryKind) {
  for (const std::string& spelling : {std::string("order=TOTAL"), std::string("type=TOTALORDER")}) {
    for (const std::string& wrap : {std::string(""), std::string("copy"), std::string("reshape")}) {
      for (bool descending : {false, true}) {
        SCOPED_TRACE(spelling + " wrap=" + wrap + (descending ? " GT" : " LT"));
        Literal result = Evaluate(SortText(wrap, descending ? "GT" : "LT", spelling), {F32Bits({10}, kAwkward)});
        EXPECT_EQ(BitsOf(result), TotalOrderSorted(kAwkward, descending));
      }
    }
  }
}

// Reducers that keep the total-order maximum or minimum: compiled, and evaluated.
TEST(ComparisonOrderTest, ReducersKeepTheTotalOrderExtremes) {
  for (const std::string& wrap : {std::string("copy"), std::string("reshape")}) {
    for (const std::string& direction : {std::string("GT"), std::string("LT")}) {
      SCOPED_TRACE(wrap + " " + direction);
      std::string text = "HloModule m\npick {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                         "  wa = f32[] " + wrap + "(a)\n  c = pred[] compare(wa, b), direction=" + direction +
                         ", order=TOTAL\n  ROOT r = f32[] select(c, a, b)\n}\nENTRY e {\n"
                         "  x = f32[10] parameter(0)\n  z = f32[] constant(0)\n"
                         "  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=pick\n}\n";
      // The init 0 takes part too: it is neither extreme here.
      Literal result = Evaluate(text, {F32Bits({10}, kAwkward)});
      EXPECT_EQ(BitsOf(result), std::vector<uint32_t>{direction == "GT" ? kPosNaN2 : kNegNaN});
    }
  }
}

// select-and-scatter keeps the window's first element while select(first, next) holds: with
// GE in the total order -0 loses to +0 and NaN wins over everything (IEEE GE would keep -0
// and let 1 beat NaN).
TEST(ComparisonOrderTest, SelectAndScatterSelectsByTheTotalOrder) {
  const std::string text = R"(HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE, order=TOTAL
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[8] parameter(0)
  source = f32[4] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[8] select-and-scatter(x, source, z), window={size=2 stride=2}, select=ge, scatter=add
}
)";
  Literal source = Literal::FromDoubles(Shape(ElementType::kF32, {4}), std::vector<double>{1, 2, 3, 4});
  Literal result = Evaluate(text, {F32Bits({8}, {kNegZero, kPosZero, kPosNaN, kOne, kNegNaN, kNegInf, kOne, kPosNaN2}),
                              std::move(source)});
  std::vector<double> values;
  for (int64_t i = 0; i < 8; ++i) values.push_back(result.GetAsDouble(i));
  EXPECT_EQ(values, (std::vector<double>{0, 1, 2, 0, 0, 3, 0, 4}));
}

// ---- Partitioning: a sort-based top-k in the total order, split unevenly ----

// Top-2 of rows of 1001 split 4 ways (shards of 251, the last padded by 3): each device sorts
// its shard and offers its first 2, so the padding must lose to every value, -NaN included,
// or it would be offered and picked in place of one.
std::string TopKText(const std::string& spelling) {
  return R"(HloModule topk, num_partitions=4

%greater (a: f32[], b: f32[], i: s32[], j: s32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %i = s32[] parameter(2)
  %j = s32[] parameter(3)
  ROOT %gt = pred[] compare(%a, %b), direction=GT, )" +
         spelling + R"(
}

ENTRY %main (x: f32[2,1001]) -> (f32[2,2], s32[2,2]) {
  %x = f32[2,1001]{1,0} parameter(0), sharding={devices=[1,4]<=[4]}
  %iota = s32[2,1001]{1,0} iota(), iota_dimension=1
  %sort = (f32[2,1001]{1,0}, s32[2,1001]{1,0}) sort(%x, %iota), dimensions={1}, is_stable=true, to_apply=%greater, sharding={{devices=[1,4]<=[4]}, {devices=[1,4]<=[4]}}
  %values = f32[2,1001]{1,0} get-tuple-element(%sort), index=0
  %indices = s32[2,1001]{1,0} get-tuple-element(%sort), index=1
  %top_values = f32[2,2]{1,0} slice(%values), slice={[0:2], [0:2]}
  %top_indices = s32[2,2]{1,0} slice(%indices), slice={[0:2], [0:2]}
  ROOT %t = (f32[2,2]{1,0}, s32[2,2]{1,0}) tuple(%top_values, %top_indices), sharding={{replicated}, {replicated}}
}

)";
}

TEST(ComparisonOrderTest, SortBasedTopKPartitionsUnevenly) {
  // Row 0: the awkward values, then -NaN; row 1: -NaN but for one 2 in the padded last shard.
  std::vector<uint32_t> bits(2 * 1001, kNegNaN);
  std::copy(kAwkward.begin(), kAwkward.end(), bits.begin());
  bits[1001 + 1000] = kTwo;
  const std::vector<uint32_t> expected_values = {kPosNaN2, kPosNaN, kTwo, kNegNaN};
  const std::vector<int64_t> expected_indices = {6, 0, 1000, 0};
  for (const std::string& spelling : {std::string("order=TOTAL"), std::string("type=TOTALORDER")}) {
    SCOPED_TRACE(spelling);
    const std::string text = TopKText(spelling);
    EXPECT_EQ(Canonical(text), text);
    std::vector<Literal> inputs;
    inputs.push_back(F32Bits({2, 1001}, bits));
    std::vector<Literal> expected = FlattenTuple(Evaluate(text, {F32Bits({2, 1001}, bits)}));
    ASSERT_EQ(expected.size(), 2u);
    EXPECT_EQ(BitsOf(expected[0]), expected_values);
    for (size_t i = 0; i < expected_indices.size(); ++i)
      EXPECT_EQ(expected[1].GetAsInt64(static_cast<int64_t>(i)), expected_indices[i]) << i;

    partition_test::Partitioned partitioned = partition_test::Partition(text);
    // Each device sorts its own shard (then the gathered candidates).
    std::vector<const Instruction*> sorts = partition_test::InstructionsWith(*partitioned.module, Opcode::kSort);
    ASSERT_EQ(sorts.size(), 2u) << partitioned.text;
    EXPECT_EQ(sorts[0]->shape().tuple_shape(0).dims(), (std::vector<int64_t>{2, 251})) << partitioned.text;
    std::optional<std::vector<Literal>> outputs = partition_test::RunPartitioned(partitioned, inputs);
    ASSERT_TRUE(outputs.has_value());
    ASSERT_EQ(outputs->size(), 2u);
    EXPECT_EQ(BitsOf((*outputs)[0]), expected_values) << partitioned.text;
    for (size_t i = 0; i < expected_indices.size(); ++i)
      EXPECT_EQ((*outputs)[1].GetAsInt64(static_cast<int64_t>(i)), expected_indices[i]) << i;
  }
}

}  // namespace
}  // namespace gspmd
