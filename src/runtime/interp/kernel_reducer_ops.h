// The binary reducers kernels run without calling the evaluator (add, multiply, max, min,
// and, or, xor), typed and dispatched at compile time so inner loops stay branch-free.
#pragma once

#include <cmath>
#include <type_traits>

#include "ir/element_type.h"
#include "runtime/interp/kernel_util.h"
#include "runtime/interp/kernels.h"

namespace gspmd::kernel {

// Applies the reducer to accumulator-typed values (float for 16-bit floats). Integer add and
// multiply wrap around; float max/min propagate NaN; on pred, add is or and multiply is and.
template <BinaryReducer kOp, typename A>
inline A ApplyReducer(A a, A b) {
  if constexpr (std::is_same_v<A, bool>) {
    if constexpr (kOp == BinaryReducer::kAdd || kOp == BinaryReducer::kOr || kOp == BinaryReducer::kMaximum)
      return a || b;
    if constexpr (kOp == BinaryReducer::kMultiply || kOp == BinaryReducer::kAnd || kOp == BinaryReducer::kMinimum)
      return a && b;
    if constexpr (kOp == BinaryReducer::kXor) return a != b;
  } else if constexpr (std::is_floating_point_v<A>) {
    if constexpr (kOp == BinaryReducer::kAdd) return a + b;
    if constexpr (kOp == BinaryReducer::kMultiply) return a * b;
    if constexpr (kOp == BinaryReducer::kMaximum) return (a > b || a != a) ? a : b;
    if constexpr (kOp == BinaryReducer::kMinimum) return (a < b || a != a) ? a : b;
  } else {
    // Wrap-around arithmetic in an unsigned type at least as wide as unsigned int.
    using U = std::conditional_t<(sizeof(A) <= 4), uint32_t, uint64_t>;
    if constexpr (kOp == BinaryReducer::kAdd) return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
    if constexpr (kOp == BinaryReducer::kMultiply) return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
    if constexpr (kOp == BinaryReducer::kMaximum) return a > b ? a : b;
    if constexpr (kOp == BinaryReducer::kMinimum) return a < b ? a : b;
    if constexpr (kOp == BinaryReducer::kAnd) return a & b;
    if constexpr (kOp == BinaryReducer::kOr) return a | b;
    if constexpr (kOp == BinaryReducer::kXor) return a ^ b;
  }
  return a;  // unreachable for supported combinations (see FastReducerSupported)
}

// Whether ApplyReducer implements op on this element type (bitwise ops need integers or pred).
inline bool FastReducerSupported(BinaryReducer op, ElementType type) {
  if (op == BinaryReducer::kUnknown || !IsArrayType(type)) return false;
  bool bitwise = op == BinaryReducer::kAnd || op == BinaryReducer::kOr || op == BinaryReducer::kXor;
  return !(bitwise && IsFloatingPoint(type));
}

// Calls fn.template operator()<kOp>() with the reducer as a compile-time constant.
template <typename Fn>
decltype(auto) DispatchReducer(BinaryReducer op, Fn&& fn) {
  switch (op) {
    case BinaryReducer::kAdd: return fn.template operator()<BinaryReducer::kAdd>();
    case BinaryReducer::kMultiply: return fn.template operator()<BinaryReducer::kMultiply>();
    case BinaryReducer::kMaximum: return fn.template operator()<BinaryReducer::kMaximum>();
    case BinaryReducer::kMinimum: return fn.template operator()<BinaryReducer::kMinimum>();
    case BinaryReducer::kAnd: return fn.template operator()<BinaryReducer::kAnd>();
    case BinaryReducer::kOr: return fn.template operator()<BinaryReducer::kOr>();
    case BinaryReducer::kXor: return fn.template operator()<BinaryReducer::kXor>();
    default: break;
  }
  GSPMD_CHECK(false, "DispatchReducer on an unknown reducer");
}

}  // namespace gspmd::kernel
