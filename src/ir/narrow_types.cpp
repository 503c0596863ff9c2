// Codecs of the storage-only element types (see narrow_types.h). Each float format is
// decoded from its bit fields once into a table; encoding searches the sorted table, so
// rounding is exactly round-to-nearest-even over the representable values.
#include "ir/narrow_types.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

namespace gspmd {
namespace {

enum class Specials { kIeee, kFiniteNanAllOnes, kFnuz, kFiniteOnly, kExponentOnly };

struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Specials specials;
};

FloatFormat FormatOf(ElementType type) {
  switch (type) {
    case ElementType::kF8E5M2: return {5, 2, 15, Specials::kIeee};
    case ElementType::kF8E4M3FN: return {4, 3, 7, Specials::kFiniteNanAllOnes};
    case ElementType::kF8E4M3B11FNUZ: return {4, 3, 11, Specials::kFnuz};
    case ElementType::kF8E5M2FNUZ: return {5, 2, 16, Specials::kFnuz};
    case ElementType::kF8E4M3FNUZ: return {4, 3, 8, Specials::kFnuz};
    case ElementType::kF8E4M3: return {4, 3, 7, Specials::kIeee};
    case ElementType::kF8E3M4: return {3, 4, 3, Specials::kIeee};
    case ElementType::kF4E2M1FN: return {2, 1, 1, Specials::kFiniteOnly};
    default: return {8, 0, 127, Specials::kExponentOnly};  // f8e8m0fnu
  }
}

int CodeCount(const FloatFormat& f) {
  int bits = f.exponent_bits + f.mantissa_bits + (f.specials == Specials::kExponentOnly ? 0 : 1);
  return 1 << bits;
}

double DecodeBits(const FloatFormat& f, int code) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (f.specials == Specials::kExponentOnly) return code == 0xFF ? nan : std::ldexp(1.0, code - f.bias);
  int sign_shift = f.exponent_bits + f.mantissa_bits;
  bool negative = (code >> sign_shift) & 1;
  int exponent = (code >> f.mantissa_bits) & ((1 << f.exponent_bits) - 1);
  int mantissa = code & ((1 << f.mantissa_bits) - 1);
  int max_exponent = (1 << f.exponent_bits) - 1;
  if (f.specials == Specials::kFnuz && negative && exponent == 0 && mantissa == 0) return nan;
  if (f.specials == Specials::kIeee && exponent == max_exponent)
    return mantissa == 0 ? (negative ? -INFINITY : INFINITY) : nan;
  if (f.specials == Specials::kFiniteNanAllOnes && exponent == max_exponent && mantissa == (1 << f.mantissa_bits) - 1)
    return nan;
  double magnitude = exponent == 0 ? std::ldexp(mantissa, 1 - f.bias - f.mantissa_bits)
                                   : std::ldexp(1.0 + std::ldexp(mantissa, -f.mantissa_bits), exponent - f.bias);
  return negative ? -magnitude : magnitude;
}

// The positive finite values of a format in increasing order with their codes.
struct Table {
  std::vector<std::pair<double, uint8_t>> positive;  // value, code (includes +0 when it exists)
  uint8_t nan_code = 0;
  std::optional<uint8_t> inf_code;
  int sign_shift = 0;
  bool has_sign = true;
};

Table BuildTable(ElementType type) {
  FloatFormat f = FormatOf(type);
  Table table;
  table.has_sign = f.specials != Specials::kExponentOnly;
  table.sign_shift = f.exponent_bits + f.mantissa_bits;
  for (int code = 0; code < CodeCount(f); ++code) {
    double value = DecodeBits(f, code);
    if (std::isnan(value)) {
      if (table.nan_code == 0 || code < table.nan_code) table.nan_code = static_cast<uint8_t>(code);
      continue;
    }
    if (std::isinf(value)) {
      if (value > 0) table.inf_code = static_cast<uint8_t>(code);
      continue;
    }
    if (value > 0 || (value == 0 && !std::signbit(value))) table.positive.emplace_back(value, static_cast<uint8_t>(code));
  }
  // Prefer the quiet NaN with the sign clear where there is one (0x7F/0x7E... forms).
  for (int code = 0; code < CodeCount(f); ++code)
    if (std::isnan(DecodeBits(f, code)) && !(table.has_sign && ((code >> table.sign_shift) & 1))) {
      table.nan_code = static_cast<uint8_t>(code);
      break;
    }
  std::sort(table.positive.begin(), table.positive.end());
  return table;
}

const Table& TableOf(ElementType type) {
  static const std::array<Table, 9> tables = [] {
    std::array<Table, 9> all;
    const ElementType types[] = {ElementType::kF8E5M2, ElementType::kF8E4M3FN, ElementType::kF8E4M3B11FNUZ,
                                 ElementType::kF8E5M2FNUZ, ElementType::kF8E4M3FNUZ, ElementType::kF8E4M3,
                                 ElementType::kF8E3M4, ElementType::kF4E2M1FN, ElementType::kF8E8M0FNU};
    for (int i = 0; i < 9; ++i) all[i] = BuildTable(types[i]);
    return all;
  }();
  switch (type) {
    case ElementType::kF8E5M2: return tables[0];
    case ElementType::kF8E4M3FN: return tables[1];
    case ElementType::kF8E4M3B11FNUZ: return tables[2];
    case ElementType::kF8E5M2FNUZ: return tables[3];
    case ElementType::kF8E4M3FNUZ: return tables[4];
    case ElementType::kF8E4M3: return tables[5];
    case ElementType::kF8E3M4: return tables[6];
    case ElementType::kF4E2M1FN: return tables[7];
    default: return tables[8];
  }
}

}  // namespace

bool IsNarrowInteger(ElementType type) {
  switch (type) {
    case ElementType::kS1: case ElementType::kS2: case ElementType::kS4: case ElementType::kU1:
    case ElementType::kU2: case ElementType::kU4:
      return true;
    default:
      return false;
  }
}

bool IsNarrowFloat(ElementType type) {
  switch (type) {
    case ElementType::kF8E5M2: case ElementType::kF8E4M3FN: case ElementType::kF8E4M3B11FNUZ:
    case ElementType::kF8E5M2FNUZ: case ElementType::kF8E4M3FNUZ: case ElementType::kF8E4M3:
    case ElementType::kF8E3M4: case ElementType::kF4E2M1FN: case ElementType::kF8E8M0FNU:
      return true;
    default:
      return false;
  }
}

int64_t NarrowIntegerMin(ElementType type) {
  switch (type) {
    case ElementType::kS1: return -1;
    case ElementType::kS2: return -2;
    case ElementType::kS4: return -8;
    default: return 0;
  }
}

int64_t NarrowIntegerMax(ElementType type) {
  switch (type) {
    case ElementType::kS1: return 0;
    case ElementType::kS2: return 1;
    case ElementType::kS4: return 7;
    case ElementType::kU1: return 1;
    case ElementType::kU2: return 3;
    default: return 15;  // u4
  }
}

double DecodeNarrowFloat(ElementType type, uint8_t code) { return DecodeBits(FormatOf(type), code); }

uint8_t EncodeNarrowFloat(ElementType type, double value, bool* in_range) {
  const Table& table = TableOf(type);
  if (in_range) *in_range = true;
  if (std::isnan(value)) return table.nan_code;
  bool negative = std::signbit(value);
  double magnitude = std::fabs(value);
  auto with_sign = [&](uint8_t code) -> uint8_t {
    if (!negative || !table.has_sign) return code;
    if (code == table.positive.front().second && table.positive.front().first == 0) {
      // -0: fnuz formats have none (their 0x80 is NaN), so it is +0.
      if (std::isnan(DecodeNarrowFloat(type, static_cast<uint8_t>(code | (1u << table.sign_shift))))) return code;
    }
    return static_cast<uint8_t>(code | (1u << table.sign_shift));
  };
  const auto& values = table.positive;
  double largest = values.back().first;
  if (std::isinf(magnitude) || magnitude > largest) {
    // Beyond the largest finite value: round to it only within half of the last gap.
    double gap = values.size() > 1 ? largest - values[values.size() - 2].first : largest;
    if (!std::isinf(magnitude) && magnitude < largest + gap / 2) return with_sign(values.back().second);
    if (in_range) *in_range = false;
    if (table.inf_code) return with_sign(*table.inf_code);
    return table.nan_code;
  }
  if (!table.has_sign && negative && magnitude > 0) {
    if (in_range) *in_range = false;
    return table.nan_code;
  }
  auto above = std::lower_bound(values.begin(), values.end(), std::make_pair(magnitude, uint8_t{0}));
  if (above == values.begin()) return with_sign(above->second);
  auto below = above - 1;
  if (above == values.end()) return with_sign(below->second);
  double to_below = magnitude - below->first, to_above = above->first - magnitude;
  if (to_below < to_above) return with_sign(below->second);
  if (to_above < to_below) return with_sign(above->second);
  return with_sign((below->second & 1) == 0 ? below->second : above->second);  // tie: even mantissa
}

double NarrowToDouble(ElementType type, const uint8_t* bytes, int64_t i) {
  if (IsNarrowFloat(type)) return DecodeNarrowFloat(type, bytes[i]);
  if (NarrowIntegerMin(type) < 0) return static_cast<int8_t>(bytes[i]);
  return bytes[i];
}

void NarrowFromDouble(ElementType type, uint8_t* bytes, int64_t i, double value) {
  if (IsNarrowFloat(type)) {
    bytes[i] = EncodeNarrowFloat(type, value);
    return;
  }
  double clamped = std::isnan(value) ? 0.0 : std::clamp(value, static_cast<double>(NarrowIntegerMin(type)),
                                                         static_cast<double>(NarrowIntegerMax(type)));
  int64_t integer = static_cast<int64_t>(clamped);
  bytes[i] = static_cast<uint8_t>(static_cast<int8_t>(integer));
}

std::string FormatNarrowFloat(ElementType type, uint8_t code) {
  double value = DecodeNarrowFloat(type, code);
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buffer[64];
  for (int digits = 3; digits <= 17; ++digits) {  // from 3 significant digits, like f16
    std::snprintf(buffer, sizeof(buffer), "%.*g", digits, value);
    if (EncodeNarrowFloat(type, std::strtod(buffer, nullptr)) == code) return buffer;
  }
  return buffer;
}

}  // namespace gspmd
