// Private to the interpreter's elementwise kernels: the per-family entry points and the
// element-type traits they share.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ir/element_type.h"
#include "ir/instruction.h"
#include "ir/literal.h"

namespace gspmd {

template <typename T>
inline constexpr bool kIsHalfLike = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <typename T>
inline constexpr bool kIsFloatLike = kIsHalfLike<T> || std::is_floating_point_v<T>;

template <typename T>
inline constexpr bool kIsIntegerLike = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The type arithmetic is done in: float for f16/bf16 (rounded back per element), the type
// itself otherwise.
template <typename T>
struct ComputeTypeOf {
  using type = T;
};
template <>
struct ComputeTypeOf<Half> {
  using type = float;
};
template <>
struct ComputeTypeOf<BFloat16> {
  using type = float;
};
template <typename T>
using ComputeType = typename ComputeTypeOf<T>::type;

template <typename T>
inline ComputeType<T> Widen(T value) {
  if constexpr (kIsHalfLike<T>)
    return static_cast<float>(value);
  else
    return value;
}

template <typename T>
inline T Narrow(ComputeType<T> value) {
  if constexpr (kIsHalfLike<T>)
    return T(value);
  else
    return value;
}

// "the instruction %name (opcode)" for error messages.
std::string DescribeInstruction(const Instruction& instruction);

// elementwise_unary.cpp
Literal EvaluateUnaryOp(const Instruction& instruction, const Literal& operand);
// elementwise_binary.cpp
Literal EvaluateBinaryOp(const Instruction& instruction, const Literal& lhs, const Literal& rhs);
// elementwise_compare.cpp: compare, select, clamp.
Literal EvaluateCompare(const Instruction& instruction, const Literal& lhs, const Literal& rhs);
Literal EvaluateSelect(const Instruction& instruction, const Literal& pred, const Literal& on_true,
                       const Literal& on_false);
Literal EvaluateClamp(const Instruction& instruction, const Literal& low, const Literal& operand,
                      const Literal& high);

}  // namespace gspmd
