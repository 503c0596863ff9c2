// FormatBytes, FormatSeconds, FormatRatio, FormatPercent: units, rounding edges, odd values.
#include <gtest/gtest.h>

#include <clocale>
#include <limits>

#include "support/units.h"

namespace gspmd {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(FormatBytes, BinaryUnitsWithThreeSignificantDigits) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1), "1 B");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024), "1.00 KiB");
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatBytes(37124), "36.3 KiB");  // the figure (37124, 36.25 KiB, 37.1 KB)
  EXPECT_EQ(FormatBytes(163840), "160 KiB");
  EXPECT_EQ(FormatBytes(1000 * 1024.0), "1000 KiB");
  EXPECT_EQ(FormatBytes(1572864), "1.50 MiB");
  EXPECT_EQ(FormatBytes(2925763246.1), "2.72 GiB");
  EXPECT_EQ(FormatBytes(16.0 * (1LL << 30)), "16.0 GiB");
  EXPECT_EQ(FormatBytes(3.0 * (1LL << 40)), "3.00 TiB");
  EXPECT_EQ(FormatBytes(5.0 * (1LL << 60)), "5.00 EiB");
  EXPECT_EQ(FormatBytes(5000.0 * (1LL << 60)), "5000 EiB");  // no unit past EiB
}

TEST(FormatBytes, FractionalBytesRoundToWholeBytes) {
  EXPECT_EQ(FormatBytes(0.4), "0 B");
  EXPECT_EQ(FormatBytes(12.5), "13 B");
  EXPECT_EQ(FormatBytes(96.7), "97 B");
  EXPECT_EQ(FormatBytes(1023.4), "1023 B");
  EXPECT_EQ(FormatBytes(1023.6), "1.00 KiB");  // rounds to 1024 bytes
}

TEST(FormatBytes, RoundingUpMovesToTheNextUnit) {
  EXPECT_EQ(FormatBytes(1023.96 * 1024), "1.00 MiB");
  EXPECT_EQ(FormatBytes(1023.4 * 1024), "1023 KiB");
  EXPECT_EQ(FormatBytes(9.996 * 1024), "10.0 KiB");
  EXPECT_EQ(FormatBytes(99.96 * 1024), "100 KiB");
  EXPECT_EQ(FormatBytes(1023.7 * 1024 * 1024 * 1024), "1.00 TiB");
}

TEST(FormatBytes, NegativeAndNotFinite) {
  EXPECT_EQ(FormatBytes(-512), "-512 B");
  EXPECT_EQ(FormatBytes(-1572864), "-1.50 MiB");
  EXPECT_EQ(FormatBytes(-0.3), "0 B");
  EXPECT_EQ(FormatBytes(kNaN), "NaN B");
  EXPECT_EQ(FormatBytes(kInf), "inf B");
  EXPECT_EQ(FormatBytes(-kInf), "-inf B");
}

TEST(FormatSeconds, UnitsFromNanosecondsToHours) {
  EXPECT_EQ(FormatSeconds(0), "0 s");
  EXPECT_EQ(FormatSeconds(0.5e-9), "0.50 ns");
  EXPECT_EQ(FormatSeconds(850e-9), "850 ns");
  EXPECT_EQ(FormatSeconds(12.4e-6), "12.4 us");
  EXPECT_EQ(FormatSeconds(3.21e-3), "3.21 ms");
  EXPECT_EQ(FormatSeconds(0.047), "47.0 ms");
  EXPECT_EQ(FormatSeconds(1.5234), "1.52 s");
  EXPECT_EQ(FormatSeconds(42.26), "42.3 s");
  EXPECT_EQ(FormatSeconds(125), "2 min 5 s");
  EXPECT_EQ(FormatSeconds(3599.4), "59 min 59 s");
  EXPECT_EQ(FormatSeconds(4800), "1 h 20 min");
}

TEST(FormatSeconds, RoundingUpMovesToTheNextUnit) {
  EXPECT_EQ(FormatSeconds(999.7e-9), "1.00 us");
  EXPECT_EQ(FormatSeconds(999.96e-6), "1.00 ms");
  EXPECT_EQ(FormatSeconds(0.99996), "1.00 s");
  EXPECT_EQ(FormatSeconds(59.96), "1 min 0 s");
  EXPECT_EQ(FormatSeconds(3599.6), "1 h 0 min");
}

TEST(FormatSeconds, NegativeAndNotFinite) {
  EXPECT_EQ(FormatSeconds(-3.21e-3), "-3.21 ms");
  EXPECT_EQ(FormatSeconds(kNaN), "NaN s");
  EXPECT_EQ(FormatSeconds(kInf), "inf s");
  EXPECT_EQ(FormatSeconds(-kInf), "-inf s");
}

TEST(FormatRatio, AMultipleWithThreeSignificantDigits) {
  EXPECT_EQ(FormatRatio(0.75), "0.75x");
  EXPECT_EQ(FormatRatio(1), "1.00x");
  EXPECT_EQ(FormatRatio(0.9823), "0.98x");
  EXPECT_EQ(FormatRatio(9.996), "10.0x");
  EXPECT_EQ(FormatRatio(12.34), "12.3x");
  EXPECT_EQ(FormatRatio(1234), "1234x");
  EXPECT_EQ(FormatRatio(0), "0.00x");
  EXPECT_EQ(FormatRatio(-1.5), "-1.50x");
  EXPECT_EQ(FormatRatio(kNaN), "NaNx");
  EXPECT_EQ(FormatRatio(kInf), "infx");
}

TEST(FormatPercent, AFractionAsAPercentageWithOneDecimal) {
  EXPECT_EQ(FormatPercent(0.75), "75.0%");
  EXPECT_EQ(FormatPercent(0), "0.0%");
  EXPECT_EQ(FormatPercent(0.125), "12.5%");
  EXPECT_EQ(FormatPercent(0.99996), "100.0%");
  EXPECT_EQ(FormatPercent(1.5), "150.0%");
  EXPECT_EQ(FormatPercent(-0.02), "-2.0%");
  EXPECT_EQ(FormatPercent(-0.0001), "0.0%");
  EXPECT_EQ(FormatPercent(kNaN), "NaN%");
}

// A locale with a decimal comma (when the machine has one) changes nothing.
TEST(FormatBytes, TheLocaleChangesNothing) {
  const std::string before = std::setlocale(LC_NUMERIC, nullptr);
  const bool has_comma_locale = std::setlocale(LC_NUMERIC, "de_DE.UTF-8") != nullptr;
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatSeconds(3.21e-3), "3.21 ms");
  EXPECT_EQ(FormatPercent(0.125), "12.5%");
  std::setlocale(LC_NUMERIC, before.c_str());
  if (!has_comma_locale) GTEST_LOG_(INFO) << "no de_DE locale here: checked under the C locale only";
}

}  // namespace
}  // namespace gspmd
