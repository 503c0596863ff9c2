// HLO element types (pred, s8..s64, u8..u64, f16, bf16, f32, f64, c64, c128, the narrow
// storage-only types s4/u4/f8e4m3fn/..., tuple, token) and the 16-bit float storage types.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace gspmd {

enum class ElementType : uint8_t {
  kInvalid,
  kPred,
  kS8,
  kS16,
  kS32,
  kS64,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kC64,   // complex: two f32 (real, imaginary)
  kC128,  // complex: two f64
  // Storage-only types (ir/narrow_types.h): one byte per element, moved and converted only.
  kS1, kS2, kS4, kU1, kU2, kU4,
  kF8E5M2, kF8E4M3FN, kF8E4M3B11FNUZ, kF8E5M2FNUZ, kF8E4M3FNUZ, kF8E4M3, kF8E3M4, kF4E2M1FN, kF8E8M0FNU,
  kTuple,
  kToken,
};

std::string_view ElementTypeName(ElementType type);  // "f32", "pred", "(tuple)", ...
std::optional<ElementType> ParseElementType(std::string_view name);
int64_t ElementByteSize(ElementType type);  // 0 for tuple/token
bool IsFloatingPoint(ElementType type);
bool IsSignedInteger(ElementType type);
bool IsUnsignedInteger(ElementType type);
inline bool IsInteger(ElementType type) { return IsSignedInteger(type) || IsUnsignedInteger(type); }
inline bool IsComplex(ElementType type) { return type == ElementType::kC64 || type == ElementType::kC128; }
// The type of the real and imaginary parts of a complex type (f32 for c64, f64 for c128).
inline ElementType ComplexComponentType(ElementType type) {
  return type == ElementType::kC128 ? ElementType::kF64 : ElementType::kF32;
}
inline bool IsArrayType(ElementType type) {
  return type != ElementType::kInvalid && type != ElementType::kTuple && type != ElementType::kToken;
}

// IEEE half precision, stored as bits. Arithmetic goes through float.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  explicit Half(float value);
  explicit operator float() const;
};

// bfloat16: the upper 16 bits of an f32, rounded to nearest even.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float value) {
    uint32_t u;
    std::memcpy(&u, &value, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep it a quiet NaN
      bits = static_cast<uint16_t>((u >> 16) | 0x40);
      return;
    }
    uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
    bits = static_cast<uint16_t>((u + rounding) >> 16);
  }
  explicit operator float() const {
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &u, 4);
    return value;
  }
};

// Calls fn.template operator()<T>() with the C++ type of an array element type. The caller
// handles tuple/token/invalid before calling. pred maps to bool. Complex types have no
// arithmetic kernels here: they raise a UserError saying so (callers that only move bytes
// handle them by ElementByteSize before dispatching).
template <typename Fn>
decltype(auto) DispatchElementType(ElementType type, Fn&& fn);

}  // namespace gspmd

#include "ir/element_type_dispatch.h"
