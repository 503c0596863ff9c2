// Binary elementwise kernels: arithmetic, min/max, power, atan2, remainder, logic and shifts,
// with XLA's integer semantics (wrapping; x/0 = -1, x%0 = x, INT_MIN/-1 = INT_MIN).
#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/interp/eval_elementwise.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

[[noreturn]] void UnsupportedType(const Instruction& instruction, ElementType type) {
  GSPMD_USER_ERROR(DescribeInstruction(instruction), " does not support element type ",
                   ElementTypeName(type));
}

// out[i] = op(lhs[i], rhs[i]) computed in ComputeType<T>.
template <typename T, typename Op>
Literal MapBinary(const Literal& lhs, const Literal& rhs, Op op) {
  Literal result(Shape(lhs.element_type(), lhs.shape().dims()));
  const T* __restrict a = lhs.data<T>();
  const T* __restrict b = rhs.data<T>();
  T* __restrict out = result.data<T>();
  int64_t n = lhs.element_count();
  for (int64_t i = 0; i < n; ++i) out[i] = Narrow<T>(op(Widen(a[i]), Widen(b[i])));
  return result;
}

template <typename C>
inline C FloatMax(C a, C b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return a > b ? a : b;
}

template <typename C>
inline C FloatMin(C a, C b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  return a < b ? a : b;
}

template <typename T>
Literal FloatBinary(const Instruction& instruction, const Literal& x, const Literal& y) {
  using C = ComputeType<T>;
  switch (instruction.opcode()) {
    case Opcode::kAdd: return MapBinary<T>(x, y, [](C a, C b) { return a + b; });
    case Opcode::kSubtract: return MapBinary<T>(x, y, [](C a, C b) { return a - b; });
    case Opcode::kMultiply: return MapBinary<T>(x, y, [](C a, C b) { return a * b; });
    case Opcode::kDivide: return MapBinary<T>(x, y, [](C a, C b) { return a / b; });
    case Opcode::kRemainder: return MapBinary<T>(x, y, [](C a, C b) { return std::fmod(a, b); });
    case Opcode::kPower: return MapBinary<T>(x, y, [](C a, C b) { return std::pow(a, b); });
    case Opcode::kAtan2: return MapBinary<T>(x, y, [](C a, C b) { return std::atan2(a, b); });
    case Opcode::kMaximum: return MapBinary<T>(x, y, [](C a, C b) { return FloatMax(a, b); });
    case Opcode::kMinimum: return MapBinary<T>(x, y, [](C a, C b) { return FloatMin(a, b); });
    default: break;
  }
  UnsupportedType(instruction, x.element_type());
}

// base^exponent by repeated squaring, wrapping in the unsigned type U.
template <typename U>
U WrappingPower(U base, U exponent) {
  using W = std::conditional_t<(sizeof(U) < sizeof(uint32_t)), uint32_t, U>;
  W result = 1;
  W b = base;
  while (exponent != 0) {
    if (exponent & 1u) result = static_cast<U>(result * b);
    b = static_cast<U>(b * b);
    exponent = static_cast<U>(exponent >> 1);
  }
  return static_cast<U>(result);
}

template <typename T>
Literal IntegerBinary(const Instruction& instruction, const Literal& x, const Literal& y) {
  using U = std::make_unsigned_t<T>;
  using S = std::make_signed_t<T>;
  // Arithmetic is done in W so that it wraps instead of overflowing (no promotion to int).
  using W = std::conditional_t<(sizeof(T) < sizeof(uint32_t)), uint32_t, U>;
  constexpr U kBits = static_cast<U>(sizeof(T) * 8);
  constexpr T kMin = std::numeric_limits<T>::min();
  switch (instruction.opcode()) {
    case Opcode::kAdd:
      return MapBinary<T>(x, y, [](T a, T b) { return static_cast<T>(static_cast<W>(a) + static_cast<W>(b)); });
    case Opcode::kSubtract:
      return MapBinary<T>(x, y, [](T a, T b) { return static_cast<T>(static_cast<W>(a) - static_cast<W>(b)); });
    case Opcode::kMultiply:
      return MapBinary<T>(x, y, [](T a, T b) { return static_cast<T>(static_cast<W>(a) * static_cast<W>(b)); });
    case Opcode::kDivide:
      return MapBinary<T>(x, y, [](T a, T b) -> T {
        if (b == 0) return static_cast<T>(-1);
        if constexpr (std::is_signed_v<T>)
          if (a == kMin && b == -1) return kMin;
        return static_cast<T>(a / b);
      });
    case Opcode::kRemainder:
      return MapBinary<T>(x, y, [](T a, T b) -> T {
        if (b == 0) return a;
        if constexpr (std::is_signed_v<T>)
          if (a == kMin && b == -1) return 0;
        return static_cast<T>(a % b);
      });
    case Opcode::kPower:
      return MapBinary<T>(x, y, [](T a, T b) -> T {
        if constexpr (std::is_signed_v<T>)
          if (b < 0) return a == 1 ? 1 : 0;
        return static_cast<T>(WrappingPower<U>(static_cast<U>(a), static_cast<U>(b)));
      });
    case Opcode::kMaximum: return MapBinary<T>(x, y, [](T a, T b) { return a > b ? a : b; });
    case Opcode::kMinimum: return MapBinary<T>(x, y, [](T a, T b) { return a < b ? a : b; });
    case Opcode::kAnd: return MapBinary<T>(x, y, [](T a, T b) { return static_cast<T>(a & b); });
    case Opcode::kOr: return MapBinary<T>(x, y, [](T a, T b) { return static_cast<T>(a | b); });
    case Opcode::kXor: return MapBinary<T>(x, y, [](T a, T b) { return static_cast<T>(a ^ b); });
    case Opcode::kShiftLeft:
      return MapBinary<T>(x, y, [](T a, T b) -> T {
        if (static_cast<U>(b) >= kBits) return 0;
        return static_cast<T>(static_cast<W>(static_cast<U>(a)) << static_cast<U>(b));
      });
    case Opcode::kShiftRightLogical:
      return MapBinary<T>(x, y, [](T a, T b) -> T {
        if (static_cast<U>(b) >= kBits) return 0;
        return static_cast<T>(static_cast<U>(a) >> static_cast<U>(b));
      });
    case Opcode::kShiftRightArithmetic:
      return MapBinary<T>(x, y, [](T a, T b) -> T {
        S signed_a = static_cast<S>(a);
        if (static_cast<U>(b) >= kBits) return static_cast<T>(signed_a < 0 ? S(-1) : S(0));
        return static_cast<T>(static_cast<S>(signed_a >> static_cast<U>(b)));
      });
    default: break;
  }
  UnsupportedType(instruction, x.element_type());
}

Literal PredBinary(const Instruction& instruction, const Literal& x, const Literal& y) {
  switch (instruction.opcode()) {
    case Opcode::kAnd:
    case Opcode::kMultiply:
    case Opcode::kMinimum:
      return MapBinary<bool>(x, y, [](bool a, bool b) { return a && b; });
    case Opcode::kOr:
    case Opcode::kAdd:
    case Opcode::kMaximum:
      return MapBinary<bool>(x, y, [](bool a, bool b) { return a || b; });
    case Opcode::kXor:
    case Opcode::kSubtract:
      return MapBinary<bool>(x, y, [](bool a, bool b) { return a != b; });
    case Opcode::kPower:
      return MapBinary<bool>(x, y, [](bool a, bool b) { return a || !b; });
    default: break;
  }
  UnsupportedType(instruction, ElementType::kPred);
}

}  // namespace

Literal EvaluateBinaryOp(const Instruction& instruction, const Literal& lhs, const Literal& rhs) {
  ElementType type = lhs.element_type();
  if (!IsArrayType(type)) UnsupportedType(instruction, type);
  if (rhs.element_type() != type || lhs.shape().dims() != rhs.shape().dims()) {
    GSPMD_USER_ERROR(DescribeInstruction(instruction), ": operands must have the same shape, got ",
                     lhs.shape().ToString(false), " and ", rhs.shape().ToString(false));
  }
  return DispatchElementType(type, [&]<typename T>() -> Literal {
    if constexpr (std::is_same_v<T, bool>)
      return PredBinary(instruction, lhs, rhs);
    else if constexpr (kIsFloatLike<T>)
      return FloatBinary<T>(instruction, lhs, rhs);
    else
      return IntegerBinary<T>(instruction, lhs, rhs);
  });
}

}  // namespace gspmd
