// NameUniquer: unused names come back as given, used ones get the smallest free suffix past the
// last one handed out, stepping over reserved base.N names.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ir/hlo_builder.h"

namespace gspmd {
namespace {

TEST(NameUniquer, StepsOverReservedSuffixes) {
  NameUniquer names;
  for (const char* name : {"add", "add.1", "add.2", "add.4", "add.03", "mul.x", "v.9"}) names.Reserve(name);
  EXPECT_EQ(names.Unique("add"), "add.3");
  EXPECT_EQ(names.Unique("add"), "add.5");  // 4 is reserved
  EXPECT_EQ(names.Unique("add"), "add.6");
  EXPECT_EQ(names.Unique("mul"), "mul");
  EXPECT_EQ(names.Unique("mul"), "mul.1");
  EXPECT_EQ(names.Unique("add.03"), "add.03.1");
  EXPECT_EQ(names.Unique("v"), "v");
  EXPECT_EQ(names.Unique("v"), "v.1");
}

TEST(NameUniquer, NamesHandedOutAsBasesAreNotReusedAsSuffixes) {
  NameUniquer names;
  names.Reserve("a");
  EXPECT_EQ(names.Unique("a.2"), "a.2");  // an unused base comes back as is
  EXPECT_EQ(names.Unique("a"), "a.1");
  EXPECT_EQ(names.Unique("a"), "a.3");
}

TEST(NameUniquer, ManyReservedSuffixesInARow) {
  NameUniquer names;
  names.Reserve("c");
  for (int i = 1; i <= 5000; ++i) names.Reserve("c." + std::to_string(i));
  EXPECT_EQ(names.Unique("c"), "c.5001");
  EXPECT_EQ(names.Unique("c"), "c.5002");
}

// Reserved suffixes are kept unsorted until a base is first asked for; the order names were
// reserved in (a module's text order) does not matter, nor do repeats.
TEST(NameUniquer, ReservedSuffixesInAnyOrder) {
  NameUniquer names;
  for (const char* name : {"b.7", "b", "b.3", "b.1", "b.2", "b.3", "b.5"}) names.Reserve(name);
  EXPECT_EQ(names.Unique("b"), "b.4");
  EXPECT_EQ(names.Unique("b"), "b.6");
  names.Reserve("b.8");  // reserved after the base was asked for
  EXPECT_EQ(names.Unique("b"), "b.9");
}

// The used names live in a table of hashes that grows: across many growths every name handed
// out stays distinct, and the partitioner's pattern (a clone asks for its source's reserved
// name, then for a fresh one of the same base) gets base.N.1.
TEST(NameUniquer, StaysDistinctAcrossTableGrowth) {
  NameUniquer names;
  for (int i = 0; i < 3000; ++i) names.Reserve("x." + std::to_string(i + 1));
  std::set<std::string> handed_out;
  for (int i = 0; i < 20000; ++i) {
    EXPECT_TRUE(handed_out.insert(names.Unique(i % 2 == 0 ? "x" : "y")).second);
    if (i < 3000) EXPECT_TRUE(handed_out.insert(names.Unique("x." + std::to_string(i + 1))).second);
  }
  EXPECT_EQ(handed_out.size(), 23000u);
  EXPECT_TRUE(handed_out.count("x.1.1"));
  EXPECT_TRUE(handed_out.count("x.3001"));  // the first x past the reserved ones
  EXPECT_FALSE(handed_out.count("x.1"));
}

}  // namespace
}  // namespace gspmd
