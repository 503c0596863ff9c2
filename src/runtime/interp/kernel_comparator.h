// Comparator computations that are a single compare of two parameters (sort comparators,
// select-and-scatter's select), recognized so kernels compare values directly.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ir/attributes.h"
#include "ir/computation.h"
#include "runtime/interp/kernel_util.h"

namespace gspmd::kernel {

//   %cmp (p0: f32[], p1: f32[]) -> pred[] { ROOT %lt = pred[] compare(%p0, %p1), direction=LT }
// gives {recognized, kLt, total_order=false, lhs_parameter=0, rhs_parameter=1}.
struct SimpleComparison {
  bool recognized = false;
  ComparisonDirection direction = ComparisonDirection::kLt;
  bool total_order = false;  // type=TOTALORDER on floats
  int64_t lhs_parameter = 0;
  int64_t rhs_parameter = 0;
};

// Whether compare's type= is what comparing `type` values natively does (the default, the
// matching FLOAT/SIGNED/UNSIGNED, or TOTALORDER).
bool IsNaturalComparisonType(ComparisonType comparison, ElementType type);

// Recognizes ROOT = compare(parameter(i), parameter(j)) on scalars of `type` whose comparison
// type is the natural one for `type` (or TOTALORDER).
SimpleComparison RecognizeComparison(const Computation& computation, ElementType type);

// Float total order (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN) as a signed integer key.
template <typename T>
inline auto TotalOrderKey(T value) {
  if constexpr (kIsHalfFloat<T>) {
    int16_t bits;
    std::memcpy(&bits, &value.bits, 2);
    return static_cast<int16_t>(bits < 0 ? bits ^ 0x7fff : bits);
  } else if constexpr (std::is_same_v<T, float>) {
    int32_t bits;
    std::memcpy(&bits, &value, 4);
    return bits < 0 ? bits ^ 0x7fffffff : bits;
  } else if constexpr (std::is_same_v<T, double>) {
    int64_t bits;
    std::memcpy(&bits, &value, 8);
    return bits < 0 ? bits ^ 0x7fffffffffffffffLL : bits;
  } else {
    return value;
  }
}

template <typename V>
inline bool CompareWith(V a, V b, ComparisonDirection direction) {
  switch (direction) {
    case ComparisonDirection::kEq: return a == b;
    case ComparisonDirection::kNe: return a != b;
    case ComparisonDirection::kLt: return a < b;
    case ComparisonDirection::kLe: return a <= b;
    case ComparisonDirection::kGt: return a > b;
    case ComparisonDirection::kGe: return a >= b;
  }
  return false;
}

// compare(a, b) with HLO semantics: IEEE for floats unless total_order.
template <typename T>
inline bool CompareValues(T a, T b, ComparisonDirection direction, bool total_order) {
  if constexpr (kIsHalfFloat<T> || std::is_floating_point_v<T>) {
    if (total_order) return CompareWith(TotalOrderKey(a), TotalOrderKey(b), direction);
    return CompareWith(Widen(a), Widen(b), direction);
  } else {
    return CompareWith(a, b, direction);
  }
}

}  // namespace gspmd::kernel
