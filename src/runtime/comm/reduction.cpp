// Elementwise reduction kernels over raw buffers, one tight loop per (type, op).
#include "runtime/comm/reduction.h"

#include <type_traits>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

template <typename T>
constexpr bool kIsHalfLike = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

bool IsBitwise(BinaryReducer op) {
  return op == BinaryReducer::kAnd || op == BinaryReducer::kOr || op == BinaryReducer::kXor;
}

// Wrapping arithmetic for integers (signed overflow is UB in C++, wraps in HLO).
template <typename T>
T WrapAdd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename T>
T WrapMul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  // Promote narrow unsigned types to unsigned int so the product does not overflow int.
  using Wide = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  return static_cast<T>(static_cast<U>(static_cast<Wide>(a) * static_cast<Wide>(b)));
}

// Float max/min that propagate NaN (as HLO's maximum/minimum do).
template <typename F>
F NanMax(F a, F b) {
  if (a != a) return a;
  if (b != b) return b;
  return a > b ? a : b;
}
template <typename F>
F NanMin(F a, F b) {
  if (a != a) return a;
  if (b != b) return b;
  return a < b ? a : b;
}

template <typename T, BinaryReducer kOp>
void ReduceLoop(T* __restrict acc, const T* __restrict in, int64_t count) {
  if constexpr (std::is_same_v<T, bool>) {
    constexpr bool kIsOr = kOp == BinaryReducer::kAdd || kOp == BinaryReducer::kMaximum ||
                           kOp == BinaryReducer::kOr;
    constexpr bool kIsAnd = kOp == BinaryReducer::kMultiply || kOp == BinaryReducer::kMinimum ||
                            kOp == BinaryReducer::kAnd;
    // bools are bytes 0/1: operate on the bytes so the loop vectorizes.
    auto* a = reinterpret_cast<uint8_t*>(acc);
    const auto* b = reinterpret_cast<const uint8_t*>(in);
    for (int64_t i = 0; i < count; ++i) {
      if constexpr (kIsOr) a[i] = static_cast<uint8_t>(a[i] | b[i]);
      else if constexpr (kIsAnd) a[i] = static_cast<uint8_t>(a[i] & b[i]);
      else a[i] = static_cast<uint8_t>(a[i] ^ b[i]);
    }
  } else if constexpr (kIsHalfLike<T>) {
    for (int64_t i = 0; i < count; ++i) {
      float x = static_cast<float>(acc[i]);
      float y = static_cast<float>(in[i]);
      float r;
      if constexpr (kOp == BinaryReducer::kAdd) r = x + y;
      else if constexpr (kOp == BinaryReducer::kMultiply) r = x * y;
      else if constexpr (kOp == BinaryReducer::kMaximum) r = NanMax(x, y);
      else r = NanMin(x, y);
      acc[i] = T(r);
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    for (int64_t i = 0; i < count; ++i) {
      if constexpr (kOp == BinaryReducer::kAdd) acc[i] = acc[i] + in[i];
      else if constexpr (kOp == BinaryReducer::kMultiply) acc[i] = acc[i] * in[i];
      else if constexpr (kOp == BinaryReducer::kMaximum) acc[i] = NanMax(acc[i], in[i]);
      else acc[i] = NanMin(acc[i], in[i]);
    }
  } else {  // integers
    for (int64_t i = 0; i < count; ++i) {
      if constexpr (kOp == BinaryReducer::kAdd) acc[i] = WrapAdd(acc[i], in[i]);
      else if constexpr (kOp == BinaryReducer::kMultiply) acc[i] = WrapMul(acc[i], in[i]);
      else if constexpr (kOp == BinaryReducer::kMaximum) acc[i] = acc[i] > in[i] ? acc[i] : in[i];
      else if constexpr (kOp == BinaryReducer::kMinimum) acc[i] = acc[i] < in[i] ? acc[i] : in[i];
      else if constexpr (kOp == BinaryReducer::kAnd) acc[i] = static_cast<T>(acc[i] & in[i]);
      else if constexpr (kOp == BinaryReducer::kOr) acc[i] = static_cast<T>(acc[i] | in[i]);
      else acc[i] = static_cast<T>(acc[i] ^ in[i]);
    }
  }
}

template <typename T>
void ReduceTyped(BinaryReducer op, void* acc, const void* in, int64_t count) {
  T* a = static_cast<T*>(acc);
  const T* b = static_cast<const T*>(in);
  switch (op) {
    case BinaryReducer::kAdd: return ReduceLoop<T, BinaryReducer::kAdd>(a, b, count);
    case BinaryReducer::kMultiply: return ReduceLoop<T, BinaryReducer::kMultiply>(a, b, count);
    case BinaryReducer::kMaximum: return ReduceLoop<T, BinaryReducer::kMaximum>(a, b, count);
    case BinaryReducer::kMinimum: return ReduceLoop<T, BinaryReducer::kMinimum>(a, b, count);
    default: break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case BinaryReducer::kAnd: return ReduceLoop<T, BinaryReducer::kAnd>(a, b, count);
      case BinaryReducer::kOr: return ReduceLoop<T, BinaryReducer::kOr>(a, b, count);
      case BinaryReducer::kXor: return ReduceLoop<T, BinaryReducer::kXor>(a, b, count);
      default: break;
    }
  }
  GSPMD_CHECK(false, "ReduceInto without a native kernel");
}

}  // namespace

bool IsNativeReduction(BinaryReducer op, ElementType type) {
  if (op == BinaryReducer::kUnknown || !IsArrayType(type)) return false;
  if (IsBitwise(op)) return type == ElementType::kPred || IsInteger(type);
  return true;
}

void ReduceInto(ElementType type, BinaryReducer op, void* acc, const void* in, int64_t count) {
  GSPMD_CHECK(IsNativeReduction(op, type), "no native reduction for ", ElementTypeName(type));
  DispatchElementType(type, [&]<typename T>() { ReduceTyped<T>(op, acc, in, count); });
}

}  // namespace gspmd
