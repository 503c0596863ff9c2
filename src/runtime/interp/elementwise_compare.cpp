// Elementwise compare (every direction; default, FLOAT, TOTALORDER, SIGNED, UNSIGNED types),
// select (array or scalar predicate) and clamp (array or scalar bounds).
#include <cmath>
#include <cstring>
#include <type_traits>

#include "runtime/interp/eval_elementwise.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// Loops out[i] = cmp(key(a[i]), key(b[i])) for the given direction; the switch is outside
// the loop so each loop is tight.
template <typename T, typename Key>
Literal CompareWith(const Literal& x, const Literal& y, ComparisonDirection direction, Key key) {
  Literal result(Shape(ElementType::kPred, x.shape().dims()));
  const T* a = x.data<T>();
  const T* b = y.data<T>();
  bool* out = result.data<bool>();
  int64_t n = x.element_count();
  switch (direction) {
    case ComparisonDirection::kEq:
      for (int64_t i = 0; i < n; ++i) out[i] = key(a[i]) == key(b[i]);
      break;
    case ComparisonDirection::kNe:
      for (int64_t i = 0; i < n; ++i) out[i] = key(a[i]) != key(b[i]);
      break;
    case ComparisonDirection::kLt:
      for (int64_t i = 0; i < n; ++i) out[i] = key(a[i]) < key(b[i]);
      break;
    case ComparisonDirection::kLe:
      for (int64_t i = 0; i < n; ++i) out[i] = key(a[i]) <= key(b[i]);
      break;
    case ComparisonDirection::kGt:
      for (int64_t i = 0; i < n; ++i) out[i] = key(a[i]) > key(b[i]);
      break;
    case ComparisonDirection::kGe:
      for (int64_t i = 0; i < n; ++i) out[i] = key(a[i]) >= key(b[i]);
      break;
  }
  return result;
}

// The bits of a float as a signed integer ordered like XLA's total order:
// -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
template <typename T>
auto TotalOrderKey(T value) {
  if constexpr (kIsHalfLike<T>) {
    int16_t bits;
    std::memcpy(&bits, &value.bits, 2);
    return static_cast<int16_t>(bits < 0 ? bits ^ 0x7fff : bits);
  } else if constexpr (std::is_same_v<T, float>) {
    int32_t bits;
    std::memcpy(&bits, &value, 4);
    return bits < 0 ? bits ^ 0x7fffffff : bits;
  } else {
    int64_t bits;
    std::memcpy(&bits, &value, 8);
    return bits < 0 ? bits ^ 0x7fffffffffffffffLL : bits;
  }
}

template <typename T>
Literal CompareTyped(const Instruction& instruction, const Literal& x, const Literal& y) {
  ComparisonDirection direction = instruction.comparison_direction;
  ComparisonType type = instruction.comparison_type;
  if constexpr (kIsFloatLike<T>) {
    if (type == ComparisonType::kTotalOrder)
      return CompareWith<T>(x, y, direction, [](T v) { return TotalOrderKey(v); });
    return CompareWith<T>(x, y, direction, [](T v) { return Widen(v); });
  } else if constexpr (std::is_same_v<T, bool>) {
    return CompareWith<T>(x, y, direction, [](bool v) { return static_cast<uint8_t>(v); });
  } else {
    if (type == ComparisonType::kSigned)
      return CompareWith<T>(x, y, direction, [](T v) { return static_cast<std::make_signed_t<T>>(v); });
    if (type == ComparisonType::kUnsigned)
      return CompareWith<T>(x, y, direction, [](T v) { return static_cast<std::make_unsigned_t<T>>(v); });
    return CompareWith<T>(x, y, direction, [](T v) { return v; });
  }
}

template <typename C>
inline C ClampValue(C low, C value, C high) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(value)) return value;
    if (std::isnan(low)) return low;
    if (std::isnan(high)) return high;
  }
  C raised = value < low ? low : value;
  return raised > high ? high : raised;
}

template <int kBytes>
struct Word;
template <>
struct Word<1> { using type = uint8_t; };
template <>
struct Word<2> { using type = uint16_t; };
template <>
struct Word<4> { using type = uint32_t; };
template <>
struct Word<8> { using type = uint64_t; };

template <typename W>
void SelectWords(const bool* pred, bool scalar_pred, const W* on_true, const W* on_false, W* out,
                 int64_t n) {
  if (scalar_pred) {
    const W* chosen = pred[0] ? on_true : on_false;
    std::memcpy(out, chosen, sizeof(W) * static_cast<size_t>(n));
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = pred[i] ? on_true[i] : on_false[i];
}

}  // namespace

Literal EvaluateCompare(const Instruction& instruction, const Literal& lhs, const Literal& rhs) {
  ElementType type = lhs.element_type();
  if (!IsArrayType(type) || rhs.element_type() != type || lhs.shape().dims() != rhs.shape().dims()) {
    GSPMD_USER_ERROR(DescribeInstruction(instruction),
                     ": compare operands must be arrays of the same shape, got ",
                     lhs.shape().ToString(false), " and ", rhs.shape().ToString(false));
  }
  return DispatchElementType(type, [&]<typename T>() { return CompareTyped<T>(instruction, lhs, rhs); });
}

Literal EvaluateSelect(const Instruction& instruction, const Literal& pred, const Literal& on_true,
                       const Literal& on_false) {
  bool scalar_pred = pred.shape().rank() == 0;
  bool shapes_ok = pred.element_type() == ElementType::kPred && IsArrayType(on_true.element_type()) &&
                   on_true.shape().Compatible(on_false.shape()) &&
                   (scalar_pred || pred.shape().dims() == on_true.shape().dims());
  if (!shapes_ok) {
    GSPMD_USER_ERROR(DescribeInstruction(instruction),
                     ": expected a pred (scalar or same-shape) and two operands of one shape, got ",
                     pred.shape().ToString(false), ", ", on_true.shape().ToString(false), ", ",
                     on_false.shape().ToString(false));
  }
  Literal result(Shape(on_true.element_type(), on_true.shape().dims()));
  int64_t n = result.element_count();
  const bool* p = pred.data<bool>();
  switch (ElementByteSize(on_true.element_type())) {
    case 1:
      SelectWords(p, scalar_pred, on_true.data<uint8_t>(), on_false.data<uint8_t>(), result.data<uint8_t>(), n);
      break;
    case 2:
      SelectWords(p, scalar_pred, on_true.data<uint16_t>(), on_false.data<uint16_t>(), result.data<uint16_t>(), n);
      break;
    case 4:
      SelectWords(p, scalar_pred, on_true.data<uint32_t>(), on_false.data<uint32_t>(), result.data<uint32_t>(), n);
      break;
    default:
      SelectWords(p, scalar_pred, on_true.data<uint64_t>(), on_false.data<uint64_t>(), result.data<uint64_t>(), n);
      break;
  }
  return result;
}

Literal EvaluateClamp(const Instruction& instruction, const Literal& low, const Literal& operand,
                      const Literal& high) {
  ElementType type = operand.element_type();
  auto bound_ok = [&](const Literal& bound) {
    return bound.element_type() == type &&
           (bound.shape().rank() == 0 || bound.shape().dims() == operand.shape().dims());
  };
  if (!IsArrayType(type) || !bound_ok(low) || !bound_ok(high)) {
    GSPMD_USER_ERROR(DescribeInstruction(instruction),
                     ": expected bounds that are scalars or of the operand's shape ",
                     operand.shape().ToString(false), ", got ", low.shape().ToString(false), " and ",
                     high.shape().ToString(false));
  }
  Literal result(Shape(type, operand.shape().dims()));
  int64_t n = operand.element_count();
  int64_t low_step = low.shape().rank() == 0 ? 0 : 1;
  int64_t high_step = high.shape().rank() == 0 ? 0 : 1;
  DispatchElementType(type, [&]<typename T>() {
    const T* lo = low.data<T>();
    const T* x = operand.data<T>();
    const T* hi = high.data<T>();
    T* out = result.data<T>();
    for (int64_t i = 0; i < n; ++i)
      out[i] = Narrow<T>(ClampValue(Widen(lo[i * low_step]), Widen(x[i]), Widen(hi[i * high_step])));
  });
  return result;
}

}  // namespace gspmd
