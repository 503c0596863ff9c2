// Tests of FindDigitForm / EmitDigitForm: per-partition tables as arithmetic on partition-id.
#include <gtest/gtest.h>

#include "ir/hlo_builder.h"
#include "ir/computation.h"
#include "ir/partition_digits.h"
#include "text/printer.h"

namespace gspmd {
namespace {

std::vector<int64_t> TableOf(int64_t n, int64_t (*f)(int64_t)) {
  std::vector<int64_t> table;
  for (int64_t p = 0; p < n; ++p) table.push_back(f(p));
  return table;
}

TEST(PartitionDigitsTest, OneDigitOfAMesh) {
  // The row of a 2x4 mesh, times 8.
  auto form = FindDigitForm(TableOf(8, [](int64_t p) { return p / 4 * 8; }));
  ASSERT_TRUE(form.has_value());
  ASSERT_EQ(form->terms.size(), 1u);
  EXPECT_EQ(form->terms[0].stride, 4);
  EXPECT_EQ(form->terms[0].size, 2);
  EXPECT_EQ(form->terms[0].weight, 8);
  EXPECT_EQ(form->constant, 0);
}

TEST(PartitionDigitsTest, AdjacentDigitsMergeAndConstantsStay) {
  auto form = FindDigitForm(TableOf(2048, [](int64_t p) { return 3 + p % 64 * 5; }));
  ASSERT_TRUE(form.has_value());
  ASSERT_EQ(form->terms.size(), 1u);
  EXPECT_EQ(form->terms[0].stride, 1);
  EXPECT_EQ(form->terms[0].size, 64);
  EXPECT_EQ(form->terms[0].weight, 5);
  EXPECT_EQ(form->constant, 3);
}

TEST(PartitionDigitsTest, TransposedDigitsAndOddRadices) {
  // Column-major over a 3x4 mesh: p % 4 * 3 + p / 4.
  auto form = FindDigitForm(TableOf(12, [](int64_t p) { return p % 4 * 3 + p / 4; }));
  ASSERT_TRUE(form.has_value());
  ASSERT_EQ(form->terms.size(), 2u);
  EXPECT_EQ(form->terms[0].stride, 1);
  EXPECT_EQ(form->terms[0].size, 4);
  EXPECT_EQ(form->terms[0].weight, 3);
  EXPECT_EQ(form->terms[1].stride, 4);
  EXPECT_EQ(form->terms[1].size, 3);
  EXPECT_EQ(form->terms[1].weight, 1);
}

TEST(PartitionDigitsTest, NonLinearTablesHaveNoForm) {
  EXPECT_FALSE(FindDigitForm({0, 0, 1, 5}).has_value());
  EXPECT_FALSE(FindDigitForm(TableOf(8, [](int64_t p) { return std::min<int64_t>(p * 3, 10); })).has_value());
  EXPECT_FALSE(FindDigitForm({}).has_value());
}

TEST(PartitionDigitsTest, TableLookupEmitsArithmeticNotATable) {
  auto computation = std::make_unique<Computation>("main");
  NameUniquer names;
  HloBuilder b(computation.get(), &names);
  Instruction* offset = b.TableLookup(TableOf(2048, [](int64_t p) { return p / 64 * 16; }));
  std::string text = PrintComputation(*computation);
  EXPECT_EQ(offset->shape().element_type(), ElementType::kS32);
  EXPECT_NE(text.find("partition-id"), std::string::npos) << text;
  EXPECT_NE(text.find("divide"), std::string::npos) << text;
  EXPECT_EQ(text.find("remainder"), std::string::npos) << text;  // the top digit needs none
  EXPECT_EQ(text.find("s32[2048]"), std::string::npos) << text;
}

TEST(PartitionDigitsTest, TableLookupKeepsTablesWithoutAForm) {
  auto computation = std::make_unique<Computation>("main");
  NameUniquer names;
  HloBuilder b(computation.get(), &names);
  b.TableLookup({0, 0, 1, 5});
  EXPECT_NE(PrintComputation(*computation).find("s32[4]"), std::string::npos);
}

}  // namespace
}  // namespace gspmd
