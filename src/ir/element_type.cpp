// Names, sizes and classification of element types; f16 conversions.
#include "ir/element_type.h"

#include <cmath>

#include "ir/narrow_types.h"

namespace gspmd {
namespace {

struct TypeInfo {
  ElementType type;
  std::string_view name;
  int64_t bytes;
};

constexpr TypeInfo kTypes[] = {
    {ElementType::kPred, "pred", 1}, {ElementType::kS8, "s8", 1},   {ElementType::kS16, "s16", 2},
    {ElementType::kS32, "s32", 4},   {ElementType::kS64, "s64", 8}, {ElementType::kU8, "u8", 1},
    {ElementType::kU16, "u16", 2},   {ElementType::kU32, "u32", 4}, {ElementType::kU64, "u64", 8},
    {ElementType::kF16, "f16", 2},   {ElementType::kBF16, "bf16", 2}, {ElementType::kF32, "f32", 4},
    {ElementType::kF64, "f64", 8},   {ElementType::kC64, "c64", 8},   {ElementType::kC128, "c128", 16},
    {ElementType::kS1, "s1", 1}, {ElementType::kS2, "s2", 1}, {ElementType::kS4, "s4", 1},
    {ElementType::kU1, "u1", 1}, {ElementType::kU2, "u2", 1}, {ElementType::kU4, "u4", 1},
    {ElementType::kF8E5M2, "f8e5m2", 1}, {ElementType::kF8E4M3FN, "f8e4m3fn", 1},
    {ElementType::kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 1}, {ElementType::kF8E5M2FNUZ, "f8e5m2fnuz", 1},
    {ElementType::kF8E4M3FNUZ, "f8e4m3fnuz", 1}, {ElementType::kF8E4M3, "f8e4m3", 1},
    {ElementType::kF8E3M4, "f8e3m4", 1}, {ElementType::kF4E2M1FN, "f4e2m1fn", 1},
    {ElementType::kF8E8M0FNU, "f8e8m0fnu", 1},
    {ElementType::kToken, "token", 0},
};

}  // namespace

std::string_view ElementTypeName(ElementType type) {
  for (const TypeInfo& info : kTypes)
    if (info.type == type) return info.name;
  if (type == ElementType::kTuple) return "tuple";
  return "invalid";
}

std::optional<ElementType> ParseElementType(std::string_view name) {
  for (const TypeInfo& info : kTypes)
    if (info.name == name) return info.type;
  return std::nullopt;
}

int64_t ElementByteSize(ElementType type) {
  for (const TypeInfo& info : kTypes)
    if (info.type == type) return info.bytes;
  return 0;
}

bool IsFloatingPoint(ElementType type) {
  return type == ElementType::kF16 || type == ElementType::kBF16 || type == ElementType::kF32 ||
         type == ElementType::kF64 || IsNarrowFloat(type);
}

bool IsSignedInteger(ElementType type) {
  return type == ElementType::kS8 || type == ElementType::kS16 || type == ElementType::kS32 ||
         type == ElementType::kS64 || type == ElementType::kS1 || type == ElementType::kS2 || type == ElementType::kS4;
}

bool IsUnsignedInteger(ElementType type) {
  return type == ElementType::kU8 || type == ElementType::kU16 || type == ElementType::kU32 ||
         type == ElementType::kU64 || type == ElementType::kU1 || type == ElementType::kU2 || type == ElementType::kU4;
}

Half::Half(float value) {
  uint32_t f;
  std::memcpy(&f, &value, 4);
  uint32_t sign = (f >> 16) & 0x8000u;
  uint32_t abs = f & 0x7fffffffu;
  if (abs > 0x7f800000u) {  // NaN
    bits = static_cast<uint16_t>(sign | 0x7e00u);
    return;
  }
  if (abs >= 0x477ff000u) {  // overflows to infinity (after rounding)
    bits = static_cast<uint16_t>(sign | 0x7c00u);
    return;
  }
  if (abs < 0x38800000u) {  // subnormal half or zero: scale and round to nearest even
    float magnitude;
    std::memcpy(&magnitude, &abs, 4);
    float scaled = magnitude * 16777216.0f;  // 2^24: one unit = smallest half subnormal
    uint32_t mant = static_cast<uint32_t>(std::nearbyint(scaled));
    bits = static_cast<uint16_t>(sign | mant);
    return;
  }
  uint32_t exponent = ((abs >> 23) - 112u) << 10;
  uint32_t mantissa = abs & 0x7fffffu;
  uint32_t result = exponent | (mantissa >> 13);
  uint32_t remainder = mantissa & 0x1fffu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (result & 1u))) ++result;
  bits = static_cast<uint16_t>(sign | result);
}

Half::operator float() const {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  uint32_t f;
  if (exponent == 0) {
    float magnitude = static_cast<float>(mantissa) / 16777216.0f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) {
    f = sign | 0x7f800000u | (mantissa << 13);
  } else {
    f = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  }
  float value;
  std::memcpy(&value, &f, 4);
  return value;
}

}  // namespace gspmd
