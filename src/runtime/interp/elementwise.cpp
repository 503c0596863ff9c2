// Elementwise kernel entry point: dispatches unary/binary/compare/select/clamp and implements
// convert, bitcast-convert and reduce-precision.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "runtime/interp/eval_elementwise.h"
#include "runtime/interp/kernels.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

void ExpectOperandCount(const Instruction& instruction, Operands operands, size_t count) {
  if (operands.size() == count) return;
  GSPMD_USER_ERROR(DescribeInstruction(instruction), " expects ", count, " operands, got ",
                   operands.size());
}

void ExpectArray(const Instruction& instruction, const Literal& operand) {
  if (operand.shape().IsArray()) return;
  GSPMD_USER_ERROR(DescribeInstruction(instruction), " expects array operands, got ",
                   operand.shape().ToString(false));
}

Literal EvaluateConvert(const Instruction& instruction, const Literal& operand) {
  ElementType to = instruction.shape().element_type();
  if (!IsArrayType(to)) {
    GSPMD_USER_ERROR(DescribeInstruction(instruction), " must produce an array, not ",
                     instruction.shape().ToString(false));
  }
  Literal result(Shape(to, operand.shape().dims()));
  ConvertElements(operand.element_type(), operand.raw(), to, result.raw(), operand.element_count());
  return result;
}

// Same bytes, reinterpreted. Different element widths add or remove a minor dimension.
bool BitcastDimsFit(const Shape& from, const Shape& to) {
  int64_t from_size = ElementByteSize(from.element_type());
  int64_t to_size = ElementByteSize(to.element_type());
  std::vector<int64_t> expected = from.dims();
  if (from_size > to_size) {
    expected.push_back(from_size / to_size);
  } else if (from_size < to_size) {
    if (expected.empty() || expected.back() != to_size / from_size) return false;
    expected.pop_back();
  }
  return expected == to.dims();
}

Literal EvaluateBitcastConvert(const Instruction& instruction, const Literal& operand) {
  const Shape& shape = instruction.shape();
  if (!shape.IsArray() || shape.byte_size() != operand.byte_size() || !BitcastDimsFit(operand.shape(), shape)) {
    GSPMD_USER_ERROR(DescribeInstruction(instruction), ": cannot bitcast ",
                     operand.shape().ToString(false), " to ", shape.ToString(false),
                     " (same-width types keep the dims; a narrower result adds a minor dimension of the "
                     "width ratio, a wider one removes it)");
  }
  Literal result(Shape(shape.element_type(), shape.dims()));
  std::memcpy(result.raw(), operand.raw(), static_cast<size_t>(operand.byte_size()));
  return result;
}

// Rounds the bits of an IEEE value with kMantissa/kExponent bits to a format with fewer
// mantissa/exponent bits (round to nearest even; overflow to inf, underflow to zero).
template <typename UInt, int kMantissa, int kExponent>
UInt ReducePrecisionBits(UInt bits, int64_t exponent_bits, int64_t mantissa_bits) {
  constexpr UInt kSignMask = UInt(1) << (kMantissa + kExponent);
  constexpr UInt kExponentMask = ((UInt(1) << kExponent) - 1) << kMantissa;
  const UInt original = bits;
  bool is_nan = (bits & ~kSignMask) > kExponentMask;
  if (mantissa_bits < kMantissa) {
    int shift = kMantissa - static_cast<int>(mantissa_bits);
    UInt last_kept = UInt(1) << shift;
    UInt bias = (last_kept >> 1) - 1 + ((bits >> shift) & 1);
    bits = (bits + bias) & ~(last_kept - 1);
  }
  if (exponent_bits < kExponent) {
    int64_t source_bias = (int64_t(1) << (kExponent - 1)) - 1;
    int64_t reduced_bias = (int64_t(1) << (exponent_bits - 1)) - 1;
    int64_t exponent = static_cast<int64_t>((bits & kExponentMask) >> kMantissa);
    if (exponent > source_bias + reduced_bias)
      bits = (bits & kSignMask) | kExponentMask;
    else if (exponent <= source_bias - reduced_bias)
      bits = bits & kSignMask;
  }
  if (is_nan) return mantissa_bits > 0 ? original : ((original & kSignMask) | kExponentMask);
  return bits;
}

template <typename T>
T ReducePrecisionValue(T value, int64_t exponent_bits, int64_t mantissa_bits) {
  if constexpr (std::is_same_v<T, double>) {
    uint64_t bits;
    std::memcpy(&bits, &value, 8);
    bits = ReducePrecisionBits<uint64_t, 52, 11>(bits, exponent_bits, mantissa_bits);
    std::memcpy(&value, &bits, 8);
    return value;
  } else {
    float f = Widen(value);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bits = ReducePrecisionBits<uint32_t, 23, 8>(bits, exponent_bits, mantissa_bits);
    std::memcpy(&f, &bits, 4);
    return Narrow<T>(f);
  }
}

Literal EvaluateReducePrecision(const Instruction& instruction, const Literal& operand) {
  ElementType type = operand.element_type();
  int64_t exponent_bits = instruction.exponent_bits;
  int64_t mantissa_bits = instruction.mantissa_bits;
  if (!IsFloatingPoint(type) || exponent_bits < 1 || mantissa_bits < 0) {
    GSPMD_USER_ERROR(DescribeInstruction(instruction),
                     " expects a floating-point operand, exponent_bits >= 1 and mantissa_bits >= 0");
  }
  Literal result(Shape(type, operand.shape().dims()));
  int64_t n = operand.element_count();
  DispatchElementType(type, [&]<typename T>() {
    if constexpr (kIsFloatLike<T>) {
      const T* in = operand.data<T>();
      T* out = result.data<T>();
      for (int64_t i = 0; i < n; ++i) out[i] = ReducePrecisionValue(in[i], exponent_bits, mantissa_bits);
    }
  });
  return result;
}

}  // namespace

std::string DescribeInstruction(const Instruction& instruction) {
  // The evaluator prefixes errors with the instruction's location and name (as the user wrote
  // them); this says which operation it is.
  std::string text(OpcodeName(instruction.opcode()));
  if (instruction.opcode() == Opcode::kCustomCall) text += StrCat(" \"", instruction.custom_call_target, "\"");
  return text;
}

Literal EvaluateElementwise(const Instruction& instruction, Operands operands) {
  for (const Literal* operand : operands) ExpectArray(instruction, *operand);
  Opcode opcode = instruction.opcode();
  switch (opcode) {
    case Opcode::kCompare:
      ExpectOperandCount(instruction, operands, 2);
      return EvaluateCompare(instruction, *operands[0], *operands[1]);
    case Opcode::kSelect:
      ExpectOperandCount(instruction, operands, 3);
      return EvaluateSelect(instruction, *operands[0], *operands[1], *operands[2]);
    case Opcode::kClamp:
      ExpectOperandCount(instruction, operands, 3);
      return EvaluateClamp(instruction, *operands[0], *operands[1], *operands[2]);
    case Opcode::kConvert:
      ExpectOperandCount(instruction, operands, 1);
      return EvaluateConvert(instruction, *operands[0]);
    case Opcode::kBitcastConvert:
      ExpectOperandCount(instruction, operands, 1);
      return EvaluateBitcastConvert(instruction, *operands[0]);
    case Opcode::kReducePrecision:
      ExpectOperandCount(instruction, operands, 1);
      return EvaluateReducePrecision(instruction, *operands[0]);
    default: break;
  }
  if (IsElementwiseUnary(opcode)) {
    ExpectOperandCount(instruction, operands, 1);
    return EvaluateUnaryOp(instruction, *operands[0]);
  }
  if (IsElementwiseBinary(opcode)) {
    ExpectOperandCount(instruction, operands, 2);
    return EvaluateBinaryOp(instruction, *operands[0], *operands[1]);
  }
  GSPMD_USER_ERROR(DescribeInstruction(instruction), " is not an elementwise operation");
}

}  // namespace gspmd
