// ScalarProgram: compiling scalar computations into typed steps, and the step functions.
#include "runtime/interp/kernel_scalar_program.h"

#include <cmath>
#include <limits>
#include <type_traits>
#include <unordered_map>

#include "ir/literal.h"
#include "ir/narrow_types.h"
#include "runtime/interp/kernel_comparator.h"
#include "runtime/interp/kernel_util.h"

namespace gspmd::kernel {
namespace {

using Step = ScalarProgram::Step;
using StepFn = void (*)(const Step&, ScalarRegister*);

template <typename T>
inline T Load(const ScalarRegister& r) {
  T value;
  std::memcpy(&value, r.bytes, sizeof(T));
  return value;
}

template <typename T>
inline void Store(ScalarRegister& r, T value) {
  std::memcpy(r.bytes, &value, sizeof(T));
}

template <typename T>
inline constexpr bool kIsFloatLike = kIsHalfFloat<T> || std::is_floating_point_v<T>;

template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// ---- values ----

// op(a, b) on T; returns false in `supported` (at compile time) for combinations the program
// does not implement.
template <typename T, Opcode kOp>
constexpr bool BinarySupported() {
  if constexpr (std::is_same_v<T, bool>)
    return kOp == Opcode::kAnd || kOp == Opcode::kOr || kOp == Opcode::kXor;
  else if constexpr (kIsFloatLike<T>)
    return kOp == Opcode::kAdd || kOp == Opcode::kSubtract || kOp == Opcode::kMultiply || kOp == Opcode::kDivide ||
           kOp == Opcode::kMaximum || kOp == Opcode::kMinimum;
  else
    return kOp == Opcode::kAdd || kOp == Opcode::kSubtract || kOp == Opcode::kMultiply || kOp == Opcode::kDivide ||
           kOp == Opcode::kMaximum || kOp == Opcode::kMinimum || kOp == Opcode::kAnd || kOp == Opcode::kOr ||
           kOp == Opcode::kXor;
}

template <typename T, Opcode kOp>
inline T BinaryValue(T x, T y) {
  if constexpr (std::is_same_v<T, bool>) {
    if constexpr (kOp == Opcode::kAnd) return x && y;
    if constexpr (kOp == Opcode::kOr) return x || y;
    if constexpr (kOp == Opcode::kXor) return x != y;
  } else if constexpr (kIsFloatLike<T>) {
    auto a = Widen(x), b = Widen(y);
    using C = decltype(a);
    C r{};
    if constexpr (kOp == Opcode::kAdd) r = a + b;
    if constexpr (kOp == Opcode::kSubtract) r = a - b;
    if constexpr (kOp == Opcode::kMultiply) r = a * b;
    if constexpr (kOp == Opcode::kDivide) r = a / b;
    if constexpr (kOp == Opcode::kMaximum) r = std::isnan(a) ? a : std::isnan(b) ? b : (a > b ? a : b);
    if constexpr (kOp == Opcode::kMinimum) r = std::isnan(a) ? a : std::isnan(b) ? b : (a < b ? a : b);
    return Narrow<T>(r);
  } else {
    using W = std::conditional_t<(sizeof(T) < sizeof(uint32_t)), uint32_t, std::make_unsigned_t<T>>;
    if constexpr (kOp == Opcode::kAdd) return static_cast<T>(static_cast<W>(x) + static_cast<W>(y));
    if constexpr (kOp == Opcode::kSubtract) return static_cast<T>(static_cast<W>(x) - static_cast<W>(y));
    if constexpr (kOp == Opcode::kMultiply) return static_cast<T>(static_cast<W>(x) * static_cast<W>(y));
    if constexpr (kOp == Opcode::kDivide) {
      if (y == 0) return static_cast<T>(-1);
      if constexpr (std::is_signed_v<T>)
        if (x == std::numeric_limits<T>::min() && y == -1) return x;
      return static_cast<T>(x / y);
    }
    if constexpr (kOp == Opcode::kMaximum) return x > y ? x : y;
    if constexpr (kOp == Opcode::kMinimum) return x < y ? x : y;
    if constexpr (kOp == Opcode::kAnd) return static_cast<T>(x & y);
    if constexpr (kOp == Opcode::kOr) return static_cast<T>(x | y);
    if constexpr (kOp == Opcode::kXor) return static_cast<T>(x ^ y);
  }
  return x;
}

template <typename T, Opcode kOp>
constexpr bool UnarySupported() {
  if constexpr (std::is_same_v<T, bool>) return kOp == Opcode::kNot;
  else if constexpr (kIsFloatLike<T>) return kOp == Opcode::kNegate || kOp == Opcode::kAbs;
  else return kOp == Opcode::kNegate || kOp == Opcode::kAbs || kOp == Opcode::kNot;
}

template <typename T, Opcode kOp>
inline T UnaryValue(T x) {
  if constexpr (std::is_same_v<T, bool>) {
    return !x;
  } else if constexpr (kIsFloatLike<T>) {
    auto a = Widen(x);
    if constexpr (kOp == Opcode::kNegate) return Narrow<T>(-a);
    return Narrow<T>(std::fabs(a));
  } else {
    using W = std::conditional_t<(sizeof(T) < sizeof(uint32_t)), uint32_t, std::make_unsigned_t<T>>;
    if constexpr (kOp == Opcode::kNegate) return static_cast<T>(W{0} - static_cast<W>(x));
    if constexpr (kOp == Opcode::kNot) return static_cast<T>(~x);
    if constexpr (std::is_signed_v<T>) return x < 0 ? static_cast<T>(W{0} - static_cast<W>(x)) : x;
    return x;
  }
}

// ---- steps ----

template <typename T, Opcode kOp>
void BinaryStep(const Step& s, ScalarRegister* r) {
  Store<T>(r[s.out], BinaryValue<T, kOp>(Load<T>(r[s.a]), Load<T>(r[s.b])));
}

template <typename T, Opcode kOp>
void UnaryStep(const Step& s, ScalarRegister* r) {
  Store<T>(r[s.out], UnaryValue<T, kOp>(Load<T>(r[s.a])));
}

template <typename T, bool kTotalOrder>
void CompareStep(const Step& s, ScalarRegister* r) {
  Store<bool>(r[s.out], CompareValues(Load<T>(r[s.a]), Load<T>(r[s.b]), s.direction, kTotalOrder));
}

void SelectStep(const Step& s, ScalarRegister* r) { r[s.out] = Load<bool>(r[s.a]) ? r[s.b] : r[s.c]; }
void CopyStep(const Step& s, ScalarRegister* r) { r[s.out] = r[s.a]; }
void ConvertStep(const Step& s, ScalarRegister* r) { ConvertElements(s.from, r[s.a].bytes, s.to, r[s.out].bytes, 1); }
void BitcastConvertStep(const Step& s, ScalarRegister* r) {
  r[s.out] = ScalarRegister{};
  std::memcpy(r[s.out].bytes, r[s.a].bytes, static_cast<size_t>(ElementByteSize(s.to)));
}

template <Opcode kOp>
StepFn BinaryFor(ElementType type) {
  return DispatchElementType(type, [&]<typename T>() -> StepFn {
    if constexpr (BinarySupported<T, kOp>()) return &BinaryStep<T, kOp>;
    return nullptr;
  });
}

template <Opcode kOp>
StepFn UnaryFor(ElementType type) {
  return DispatchElementType(type, [&]<typename T>() -> StepFn {
    if constexpr (UnarySupported<T, kOp>()) return &UnaryStep<T, kOp>;
    return nullptr;
  });
}

StepFn ArithmeticFor(Opcode opcode, ElementType type) {
  switch (opcode) {
    case Opcode::kAdd: return BinaryFor<Opcode::kAdd>(type);
    case Opcode::kSubtract: return BinaryFor<Opcode::kSubtract>(type);
    case Opcode::kMultiply: return BinaryFor<Opcode::kMultiply>(type);
    case Opcode::kDivide: return BinaryFor<Opcode::kDivide>(type);
    case Opcode::kMaximum: return BinaryFor<Opcode::kMaximum>(type);
    case Opcode::kMinimum: return BinaryFor<Opcode::kMinimum>(type);
    case Opcode::kAnd: return BinaryFor<Opcode::kAnd>(type);
    case Opcode::kOr: return BinaryFor<Opcode::kOr>(type);
    case Opcode::kXor: return BinaryFor<Opcode::kXor>(type);
    case Opcode::kNegate: return UnaryFor<Opcode::kNegate>(type);
    case Opcode::kAbs: return UnaryFor<Opcode::kAbs>(type);
    case Opcode::kNot: return UnaryFor<Opcode::kNot>(type);
    default: return nullptr;
  }
}

StepFn CompareFor(ElementType type, bool total_order) {
  return DispatchElementType(type, [&]<typename T>() -> StepFn {
    return total_order ? &CompareStep<T, true> : &CompareStep<T, false>;
  });
}

bool IsScalarArray(const Shape& shape) { return shape.IsArray() && shape.rank() == 0; }

}  // namespace

std::optional<ScalarProgram> ScalarProgram::Compile(const Computation& computation) {
  ScalarProgram program;
  std::unordered_map<const Instruction*, int32_t> registers;
  int32_t next = 0;
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    const Instruction* parameter = computation.parameter(i);
    if (parameter == nullptr || !IsScalarArray(parameter->shape())) return std::nullopt;
    registers[parameter] = next;
    program.parameter_registers_.push_back(next++);
  }
  const Instruction* root = computation.root();
  if (root == nullptr) return std::nullopt;
  for (const Instruction* instruction : computation.MakePostOrder()) {
    if (instruction->opcode() == Opcode::kParameter) continue;
    std::vector<int32_t> operands;
    for (const Instruction* operand : instruction->operands()) {
      auto it = registers.find(operand);
      if (it == registers.end() || !IsScalarArray(operand->shape())) return std::nullopt;
      operands.push_back(it->second);
    }
    if (instruction->opcode() == Opcode::kTuple) {
      if (instruction != root) return std::nullopt;
      program.result_registers_ = operands;
      continue;
    }
    const Shape& shape = instruction->shape();
    if (!IsScalarArray(shape)) return std::nullopt;
    const ElementType type = shape.element_type();
    for (const Instruction* operand : instruction->operands())
      if (IsComplex(operand->shape().element_type()) || IsStorageOnly(operand->shape().element_type()))
        return std::nullopt;
    if (IsComplex(type) || IsStorageOnly(type)) return std::nullopt;
    auto operand_type = [&](int64_t i) { return instruction->operand(i)->shape().element_type(); };
    Step step;
    step.out = next++;
    registers[instruction] = step.out;
    switch (instruction->opcode()) {
      case Opcode::kConstant: {
        const std::optional<Literal>& literal = instruction->literal();
        if (!literal || !IsScalarArray(literal->shape()) || literal->element_type() != type) return std::nullopt;
        program.initial_registers_.resize(static_cast<size_t>(next));
        std::memcpy(program.initial_registers_[step.out].bytes, literal->raw(), static_cast<size_t>(ElementByteSize(type)));
        continue;
      }
      case Opcode::kCopy:
        if (operands.size() != 1 || operand_type(0) != type) return std::nullopt;
        step.run = &CopyStep;
        break;
      case Opcode::kCompare:
        if (operands.size() != 2 || type != ElementType::kPred || operand_type(0) != operand_type(1)) return std::nullopt;
        if (!IsNaturalComparisonType(instruction->comparison_type, operand_type(0))) return std::nullopt;
        step.direction = instruction->comparison_direction;
        step.run = CompareFor(operand_type(0), instruction->comparison_type == ComparisonType::kTotalOrder);
        break;
      case Opcode::kSelect:
        if (operands.size() != 3 || operand_type(0) != ElementType::kPred || operand_type(1) != type ||
            operand_type(2) != type)
          return std::nullopt;
        step.run = &SelectStep;
        break;
      case Opcode::kConvert:
        if (operands.size() != 1) return std::nullopt;
        step.from = operand_type(0);
        step.to = type;
        step.run = &ConvertStep;
        break;
      case Opcode::kBitcastConvert:  // same width only (scalars)
        if (operands.size() != 1 || ElementByteSize(operand_type(0)) != ElementByteSize(type)) return std::nullopt;
        step.from = operand_type(0);
        step.to = type;
        step.run = &BitcastConvertStep;
        break;
      default:
        for (size_t i = 0; i < operands.size(); ++i)
          if (operand_type(static_cast<int64_t>(i)) != type) return std::nullopt;
        if (operands.size() != (IsElementwiseBinary(instruction->opcode()) ? 2u : 1u)) return std::nullopt;
        step.run = ArithmeticFor(instruction->opcode(), type);
        break;
    }
    if (step.run == nullptr) return std::nullopt;
    step.a = operands.size() > 0 ? operands[0] : 0;
    step.b = operands.size() > 1 ? operands[1] : 0;
    step.c = operands.size() > 2 ? operands[2] : 0;
    program.steps_.push_back(step);
  }
  if (root->opcode() != Opcode::kTuple) {
    auto it = registers.find(root);
    if (it == registers.end()) return std::nullopt;
    program.result_registers_ = {it->second};
  }
  program.initial_registers_.resize(static_cast<size_t>(next));
  return program;
}

}  // namespace gspmd::kernel
