// Bytes, times, ratios and fractions as text (the conventions are in units.h).
#include "support/units.h"

#include <charconv>
#include <cmath>
#include <iterator>

namespace gspmd {
namespace {

// `value` with `decimals` digits after the point, correctly rounded, whatever the locale.
std::string Fixed(double value, int decimals) {
  char text[64];
  const auto result = std::to_chars(text, text + sizeof text, value, std::chars_format::fixed, decimals);
  return std::string(text, result.ptr);
}

// The value the text reads as (the text came from Fixed, so it parses).
double ValueOf(const std::string& text) {
  double value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// A non-negative value with three significant digits: "1.23", "12.3", "123", "1234". `*shown`
// is what the text reads as after rounding (9.996 -> "10.0" shows 10), so callers can move to
// the next unit when rounding reached it.
std::string ThreeDigits(double value, double* shown) {
  for (int decimals = 2; decimals > 0; --decimals) {
    std::string text = Fixed(value, decimals);
    *shown = ValueOf(text);
    if (*shown < std::pow(10.0, 3 - decimals)) return text;
  }
  std::string text = Fixed(value, 0);
  *shown = ValueOf(text);
  return text;
}

// "NaN", "inf", "-inf" for the values that are not finite; empty for the others.
std::string NotFinite(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  return "";
}

// Whole minutes and seconds, or hours and minutes from an hour on: "2 min 5 s", "1 h 20 min".
std::string LongSeconds(double seconds) {
  const long long whole = std::llround(seconds);
  if (whole < 3600) return std::to_string(whole / 60) + " min " + std::to_string(whole % 60) + " s";
  const long long minutes = std::llround(seconds / 60);
  return std::to_string(minutes / 60) + " h " + std::to_string(minutes % 60) + " min";
}

}  // namespace

std::string FormatBytes(double bytes) {
  if (std::string text = NotFinite(bytes); !text.empty()) return text + " B";
  const double whole = std::round(bytes);
  const std::string sign = whole < 0 ? "-" : "";
  double value = std::fabs(whole);
  if (value < 1024) return sign + Fixed(value, 0) + " B";
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  size_t unit = 0;
  value /= 1024;
  for (;;) {
    double shown = 0;
    std::string text = ThreeDigits(value, &shown);
    if (shown < 1024 || unit + 1 == std::size(kUnits)) return sign + text + " " + kUnits[unit];
    value /= 1024;
    ++unit;
  }
}

std::string FormatSeconds(double seconds) {
  if (std::string text = NotFinite(seconds); !text.empty()) return text + " s";
  if (seconds == 0) return "0 s";
  const std::string sign = seconds < 0 ? "-" : "";
  const double value = std::fabs(seconds);
  // Each unit with the largest value it holds before the next one takes over.
  struct Unit {
    const char* name;
    double seconds;
    double next_at;
  };
  static const Unit kUnits[] = {{"ns", 1e-9, 1000}, {"us", 1e-6, 1000}, {"ms", 1e-3, 1000}, {"s", 1, 60}};
  size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && value >= kUnits[unit + 1].seconds) ++unit;
  for (; unit < std::size(kUnits); ++unit) {
    double shown = 0;
    std::string text = ThreeDigits(value / kUnits[unit].seconds, &shown);
    if (shown < kUnits[unit].next_at) return sign + text + " " + kUnits[unit].name;
  }
  return sign + LongSeconds(value);
}

std::string FormatRatio(double ratio) {
  if (std::string text = NotFinite(ratio); !text.empty()) return text + "x";
  double shown = 0;
  std::string text = ThreeDigits(std::fabs(ratio), &shown);
  return (ratio < 0 && shown != 0 ? "-" : "") + text + "x";
}

std::string FormatPercent(double fraction) {
  if (std::string text = NotFinite(fraction); !text.empty()) return text + "%";
  std::string text = Fixed(std::fabs(100 * fraction), 1);
  return (fraction < 0 && ValueOf(text) != 0 ? "-" : "") + text + "%";
}

}  // namespace gspmd
