// Unary elementwise kernels: abs ... erf, not, popcnt, count-leading-zeros, is-finite.
#include <bit>
#include <cmath>
#include <type_traits>

#include "runtime/interp/eval_elementwise.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

[[noreturn]] void UnsupportedType(const Instruction& instruction, ElementType type) {
  GSPMD_USER_ERROR(DescribeInstruction(instruction), " does not support element type ",
                   ElementTypeName(type));
}

// out[i] = op(in[i]) computed in ComputeType<In>, stored as Out.
template <typename In, typename Out, typename Op>
Literal MapUnary(const Literal& operand, ElementType out_type, Op op) {
  Shape shape(out_type, operand.shape().dims());
  Literal result(std::move(shape));
  const In* in = operand.data<In>();
  Out* out = result.data<Out>();
  int64_t n = operand.element_count();
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<In, Out>)
      out[i] = Narrow<Out>(op(Widen(in[i])));
    else
      out[i] = op(Widen(in[i]));
  }
  return result;
}

template <typename T>
Literal FloatUnary(const Instruction& instruction, const Literal& x) {
  using C = ComputeType<T>;
  ElementType type = x.element_type();
  switch (instruction.opcode()) {
    case Opcode::kAbs: return MapUnary<T, T>(x, type, [](C v) { return std::fabs(v); });
    case Opcode::kNegate: return MapUnary<T, T>(x, type, [](C v) { return -v; });
    case Opcode::kSign:
      return MapUnary<T, T>(x, type, [](C v) -> C {
        if (std::isnan(v) || v == C(0)) return v;
        return v > C(0) ? C(1) : C(-1);
      });
    case Opcode::kExp: return MapUnary<T, T>(x, type, [](C v) { return std::exp(v); });
    case Opcode::kExpm1: return MapUnary<T, T>(x, type, [](C v) { return std::expm1(v); });
    case Opcode::kLog: return MapUnary<T, T>(x, type, [](C v) { return std::log(v); });
    case Opcode::kLog1p: return MapUnary<T, T>(x, type, [](C v) { return std::log1p(v); });
    case Opcode::kSqrt: return MapUnary<T, T>(x, type, [](C v) { return std::sqrt(v); });
    case Opcode::kRsqrt: return MapUnary<T, T>(x, type, [](C v) { return C(1) / std::sqrt(v); });
    case Opcode::kCbrt: return MapUnary<T, T>(x, type, [](C v) { return std::cbrt(v); });
    case Opcode::kTanh: return MapUnary<T, T>(x, type, [](C v) { return std::tanh(v); });
    case Opcode::kLogistic:
      return MapUnary<T, T>(x, type, [](C v) { return C(1) / (C(1) + std::exp(-v)); });
    case Opcode::kSine: return MapUnary<T, T>(x, type, [](C v) { return std::sin(v); });
    case Opcode::kCosine: return MapUnary<T, T>(x, type, [](C v) { return std::cos(v); });
    case Opcode::kTan: return MapUnary<T, T>(x, type, [](C v) { return std::tan(v); });
    case Opcode::kFloor: return MapUnary<T, T>(x, type, [](C v) { return std::floor(v); });
    case Opcode::kCeil: return MapUnary<T, T>(x, type, [](C v) { return std::ceil(v); });
    case Opcode::kRoundNearestAfz: return MapUnary<T, T>(x, type, [](C v) { return std::round(v); });
    case Opcode::kRoundNearestEven:
      return MapUnary<T, T>(x, type, [](C v) { return std::nearbyint(v); });
    case Opcode::kErf: return MapUnary<T, T>(x, type, [](C v) { return std::erf(v); });
    case Opcode::kIsFinite:
      return MapUnary<T, bool>(x, ElementType::kPred, [](C v) { return std::isfinite(v); });
    default: break;
  }
  UnsupportedType(instruction, type);
}

template <typename T>
Literal IntegerUnary(const Instruction& instruction, const Literal& x) {
  using U = std::make_unsigned_t<T>;
  ElementType type = x.element_type();
  switch (instruction.opcode()) {
    case Opcode::kAbs:
      return MapUnary<T, T>(x, type, [](T v) -> T {
        if constexpr (std::is_signed_v<T>) return v < 0 ? static_cast<T>(U(0) - static_cast<U>(v)) : v;
        return v;
      });
    case Opcode::kNegate:
      return MapUnary<T, T>(x, type, [](T v) { return static_cast<T>(U(0) - static_cast<U>(v)); });
    case Opcode::kSign:
      return MapUnary<T, T>(x, type, [](T v) -> T {
        if constexpr (std::is_signed_v<T>) return static_cast<T>((v > 0) - (v < 0));
        return static_cast<T>(v != 0);
      });
    case Opcode::kNot: return MapUnary<T, T>(x, type, [](T v) { return static_cast<T>(~v); });
    case Opcode::kPopulationCount:
      return MapUnary<T, T>(x, type, [](T v) { return static_cast<T>(std::popcount(static_cast<U>(v))); });
    case Opcode::kClz:
      return MapUnary<T, T>(x, type, [](T v) { return static_cast<T>(std::countl_zero(static_cast<U>(v))); });
    default: break;
  }
  UnsupportedType(instruction, type);
}

Literal PredUnary(const Instruction& instruction, const Literal& x) {
  switch (instruction.opcode()) {
    case Opcode::kNot:
      return MapUnary<bool, bool>(x, ElementType::kPred, [](bool v) { return !v; });
    case Opcode::kAbs:
    case Opcode::kSign:
    case Opcode::kNegate:
      return MapUnary<bool, bool>(x, ElementType::kPred, [](bool v) { return v; });
    default: break;
  }
  UnsupportedType(instruction, ElementType::kPred);
}

}  // namespace

Literal EvaluateUnaryOp(const Instruction& instruction, const Literal& operand) {
  ElementType type = operand.element_type();
  if (!IsArrayType(type)) UnsupportedType(instruction, type);
  return DispatchElementType(type, [&]<typename T>() -> Literal {
    if constexpr (std::is_same_v<T, bool>)
      return PredUnary(instruction, operand);
    else if constexpr (kIsFloatLike<T>)
      return FloatUnary<T>(instruction, operand);
    else
      return IntegerUnary<T>(instruction, operand);
  });
}

}  // namespace gspmd
