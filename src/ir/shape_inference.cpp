// Shape inference: the dispatch by opcode, the comparison with the written result, the
// elementwise rules and the checks of called computations shared by the other rule files.
#include "ir/shape_inference.h"

#include "ir/shape_inference_util.h"
#include "support/allocation.h"

namespace gspmd {
namespace shape_rules {
namespace {

bool IsFloatOrComplex(ElementType type) { return IsFloatingPoint(type) || IsComplex(type); }
bool IsIntegerOrPred(ElementType type) { return IsInteger(type) || type == ElementType::kPred; }

// What element types a unary op takes, and its message.
struct TypeRule {
  bool (*accepts)(ElementType);
  std::string_view expected;
};

TypeRule UnaryTypeRule(Opcode opcode) {
  switch (opcode) {
    case Opcode::kNot: return {IsIntegerOrPred, "a pred or integer operand"};
    case Opcode::kPopulationCount: case Opcode::kClz: return {IsInteger, "an integer operand"};
    case Opcode::kAbs: case Opcode::kNegate: case Opcode::kSign:
      return {[](ElementType t) { return t != ElementType::kPred; }, "a numeric operand"};
    case Opcode::kCeil: case Opcode::kFloor: case Opcode::kRoundNearestAfz: case Opcode::kRoundNearestEven:
    case Opcode::kIsFinite: case Opcode::kErf: case Opcode::kLogistic: case Opcode::kCbrt:
      return {IsFloatingPoint, "a floating-point operand"};
    default:
      return {IsFloatOrComplex, "a floating-point or complex operand"};
  }
}

TypeRule BinaryTypeRule(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor: return {IsIntegerOrPred, "pred or integer operands"};
    case Opcode::kShiftLeft: case Opcode::kShiftRightArithmetic: case Opcode::kShiftRightLogical:
      return {IsInteger, "integer operands"};
    case Opcode::kAtan2: return {IsFloatOrComplex, "floating-point or complex operands"};
    case Opcode::kComplex: return {IsFloatingPoint, "f32 or f64 operands"};
    default: return {[](ElementType t) { return t != ElementType::kPred; }, "numeric operands"};
  }
}

InferredShape InferUnary(const Instruction& instruction) {
  const Shape& operand = OperandShape(instruction, 0);
  if (!operand.IsArray()) return Fail(OperandError(instruction, 0, "an array"));
  Opcode opcode = instruction.opcode();
  TypeRule rule = UnaryTypeRule(opcode);
  if (!rule.accepts(operand.element_type())) return Fail(OperandError(instruction, 0, rule.expected));
  Shape result(operand.element_type(), operand.dims());
  if (opcode == Opcode::kIsFinite) result.set_element_type(ElementType::kPred);
  if (opcode == Opcode::kAbs && IsComplex(operand.element_type()))
    result.set_element_type(ComplexComponentType(operand.element_type()));
  return Ok(result);
}

// Same dimensions for every operand (and same element type unless mixed is allowed).
std::string CheckSameDims(const Instruction& instruction, int64_t first, int64_t count, bool same_type) {
  const Shape& reference = OperandShape(instruction, first);
  for (int64_t i = first; i < first + count; ++i) {
    const Shape& operand = OperandShape(instruction, i);
    if (!operand.IsArray()) return OperandError(instruction, i, "an array");
    if (operand.dims() != reference.dims())
      return OperandError(instruction, i, StrCat("the dimensions of operand ", first, ", ", Text(reference)));
    if (same_type && operand.element_type() != reference.element_type())
      return OperandError(instruction, i, StrCat("element type ", ElementTypeName(reference.element_type()),
                                                 " like operand ", first));
  }
  return "";
}

InferredShape InferBinary(const Instruction& instruction) {
  if (std::string error = CheckSameDims(instruction, 0, 2, true); !error.empty()) return Fail(error);
  const Shape& lhs = OperandShape(instruction, 0);
  Opcode opcode = instruction.opcode();
  TypeRule rule = BinaryTypeRule(opcode);
  if (!rule.accepts(lhs.element_type())) return Fail(OperandError(instruction, 0, rule.expected));
  Shape result(lhs.element_type(), lhs.dims());
  if (opcode == Opcode::kComplex)
    result.set_element_type(lhs.element_type() == ElementType::kF64 ? ElementType::kC128 : ElementType::kC64);
  return Ok(result);
}

InferredShape InferCompare(const Instruction& instruction) {
  if (std::string error = CheckSameDims(instruction, 0, 2, true); !error.empty()) return Fail(error);
  const Shape& lhs = OperandShape(instruction, 0);
  ComparisonType type = instruction.comparison_type;
  ElementType element = lhs.element_type();
  bool type_fits = type == ComparisonType::kDefault ||
                   ((type == ComparisonType::kFloat || type == ComparisonType::kTotalOrder) &&
                    IsFloatOrComplex(element)) ||
                   ((type == ComparisonType::kSigned || type == ComparisonType::kUnsigned) &&
                    IsIntegerOrPred(element));
  if (!type_fits) return Fail(OperandError(instruction, 0, "an element type that fits the comparison type="));
  return Ok(Shape(ElementType::kPred, lhs.dims()));
}

// select(pred, on_true, on_false) / clamp(min, operand, max): the pred (or min/max) may be a
// scalar.
InferredShape InferSelectOrClamp(const Instruction& instruction) {
  bool is_select = instruction.opcode() == Opcode::kSelect;
  int64_t value_index = is_select ? 1 : 1;
  const Shape& value = OperandShape(instruction, value_index);
  if (!value.IsArray()) return Fail(OperandError(instruction, value_index, "an array"));
  for (int64_t i = 0; i < 3; ++i) {
    if (i == value_index) continue;
    const Shape& other = OperandShape(instruction, i);
    bool may_be_scalar = !is_select || i == 0;
    if (!other.IsArray()) return Fail(OperandError(instruction, i, "an array"));
    if (other.dims() != value.dims() && !(may_be_scalar && other.rank() == 0))
      return Fail(OperandError(instruction, i, StrCat("the dimensions of ", Text(value),
                                                      may_be_scalar ? " or a scalar" : "")));
    ElementType expected = (is_select && i == 0) ? ElementType::kPred : value.element_type();
    if (other.element_type() != expected)
      return Fail(OperandError(instruction, i, StrCat("element type ", ElementTypeName(expected))));
  }
  return Ok(Shape(value.element_type(), value.dims()));
}

bool Written(const Instruction& instruction) { return instruction.shape().element_type() != ElementType::kInvalid; }

// convert, bitcast-convert, stochastic-convert, reduce-precision, real, imag.
InferredShape InferConversion(const Instruction& instruction) {
  const Shape& operand = OperandShape(instruction, 0);
  if (!operand.IsArray()) return Fail(OperandError(instruction, 0, "an array"));
  const Shape& result = instruction.shape();
  switch (instruction.opcode()) {
    case Opcode::kReducePrecision:
      if (!IsFloatingPoint(operand.element_type())) return Fail(OperandError(instruction, 0, "a floating-point array"));
      if (instruction.exponent_bits < 1 || instruction.exponent_bits > 64 || instruction.mantissa_bits < 0 ||
          instruction.mantissa_bits > 64)
        return Fail(StrCat("reduce-precision has exponent_bits=", instruction.exponent_bits, " mantissa_bits=",
                           instruction.mantissa_bits, ", expected exponent_bits from 1 to 64 and mantissa_bits from 0 to 64"));
      return Ok(Shape(operand.element_type(), operand.dims()));
    case Opcode::kReal: case Opcode::kImag: {
      if (!IsFloatOrComplex(operand.element_type()))
        return Fail(OperandError(instruction, 0, "a floating-point or complex array"));
      ElementType type = IsComplex(operand.element_type()) ? ComplexComponentType(operand.element_type())
                                                           : operand.element_type();
      return Ok(Shape(type, operand.dims()));
    }
    case Opcode::kStochasticConvert: {
      const Shape& random = OperandShape(instruction, 1);
      if (!IsFloatingPoint(operand.element_type())) return Fail(OperandError(instruction, 0, "a floating-point array"));
      if (!random.IsArray() || random.dims() != operand.dims() || !IsUnsignedInteger(random.element_type()) ||
          ElementByteSize(random.element_type()) != ElementByteSize(operand.element_type()))
        return Fail(OperandError(instruction, 1, StrCat("unsigned random bits of the dimensions and width of ",
                                                        Text(operand))));
      if (!Written(instruction)) return MustBeWritten();
      if (!result.IsArray() || result.dims() != operand.dims())
        return Fail(StrCat("result ", Text(result), " must have the dimensions of the operand ", Text(operand)));
      return MustBeWritten();
    }
    case Opcode::kConvert:
      if (!Written(instruction)) return MustBeWritten();
      if (!result.IsArray() || result.dims() != operand.dims())
        return Fail(StrCat("result ", Text(result), " must have the dimensions of the operand ", Text(operand)));
      if (IsComplex(operand.element_type()) && !IsComplex(result.element_type()))
        return Fail(StrCat("convert from ", Text(operand), " to ", Text(result),
                           ": a complex value converts only to a complex type (use real or imag)"));
      return MustBeWritten();
    default: {  // bitcast-convert: the same bits, split or joined along a new minor dimension
      if (!Written(instruction)) return MustBeWritten();
      if (!result.IsArray()) return Fail(StrCat("result ", Text(result), " must be an array"));
      int64_t from = ElementByteSize(operand.element_type()), to = ElementByteSize(result.element_type());
      std::vector<int64_t> expected = operand.dims();
      if (from > to) expected.push_back(from / to);
      if (from < to) {
        if (expected.empty() || expected.back() != to / from)
          return Fail(OperandError(instruction, 0, StrCat("a last dimension of ", to / from, " to join into ",
                                                          ElementTypeName(result.element_type()))));
        expected.pop_back();
      }
      if (result.dims() != expected)
        return Fail(StrCat("result ", Text(result), " does not hold the bits of ", Text(operand), ": expected ",
                           Text(Shape(result.element_type(), expected))));
      return MustBeWritten();
    }
  }
}

// Shapes equal but for layout and dynamic-dimension flags (and the element type when
// `any_element_type`).
bool SameShape(const Shape& a, const Shape& b, bool any_element_type) {
  if (a.IsTuple() != b.IsTuple()) return false;
  if (a.IsTuple()) {
    if (a.tuple_size() != b.tuple_size()) return false;
    for (int64_t i = 0; i < a.tuple_size(); ++i)
      if (!SameShape(a.tuple_shape(i), b.tuple_shape(i), false)) return false;
    return true;
  }
  if (!any_element_type && a.element_type() != b.element_type()) return false;
  if (any_element_type && (!a.IsArray() || !b.IsArray())) return a.element_type() == b.element_type();
  return a.dims() == b.dims();
}

bool MayChooseElementType(Opcode opcode) {
  return opcode == Opcode::kDot || opcode == Opcode::kConvolution || opcode == Opcode::kRaggedDot ||
         opcode == Opcode::kScaledDot;
}

}  // namespace

InferredShape InferElementwise(const Instruction& instruction) {
  Opcode opcode = instruction.opcode();
  if (IsElementwiseUnary(opcode)) return InferUnary(instruction);
  if (IsElementwiseBinary(opcode) || opcode == Opcode::kComplex) return InferBinary(instruction);
  switch (opcode) {
    case Opcode::kCompare: return InferCompare(instruction);
    case Opcode::kSelect: case Opcode::kClamp: return InferSelectOrClamp(instruction);
    default: return InferConversion(instruction);
  }
}

std::optional<int64_t> WindowedSize(int64_t input, const WindowDim& window, std::string& error) {
  if (window.size <= 0 || window.stride <= 0 || window.window_dilation <= 0 || window.base_dilation <= 0) {
    error = StrCat("window has size=", window.size, " stride=", window.stride, " lhs_dilate=", window.base_dilation,
                   " rhs_dilate=", window.window_dilation, ", expected each of them positive");
    return std::nullopt;
  }
  auto overflow = [&] {
    error = StrCat("window size=", window.size, " pad=", window.padding_low, "_", window.padding_high,
                   " on a dimension of ", input, " overflows 64-bit sizes");
    return std::nullopt;
  };
  int64_t dilated = 0;
  if (input > 0) {
    std::optional<int64_t> spread = CheckedMul(input - 1, window.base_dilation);
    if (!spread) return overflow();
    dilated = *spread + 1;
  }
  std::optional<int64_t> padded = CheckedAdd(dilated, window.padding_low);
  if (padded) padded = CheckedAdd(*padded, window.padding_high);
  std::optional<int64_t> dilated_window = CheckedMul(window.size - 1, window.window_dilation);
  if (dilated_window) dilated_window = CheckedAdd(*dilated_window, 1);
  if (!padded || !dilated_window) return overflow();
  if (*padded < 0) {
    error = StrCat("window padding ", window.padding_low, "_", window.padding_high, " removes more than the ",
                   dilated, " elements of the dimension");
    return std::nullopt;
  }
  if (*padded < *dilated_window) return 0;
  return (*padded - *dilated_window) / window.stride + 1;
}

std::string CheckScalarReducer(const Instruction& instruction, const Computation& reducer, std::string_view role,
                               const std::vector<ElementType>& accumulator_types,
                               const std::vector<ElementType>& input_types) {
  size_t n = accumulator_types.size();
  std::string prefix = StrCat(role, " %", reducer.name(), " of ", Name(instruction));
  if (static_cast<size_t>(reducer.num_parameters()) != 2 * n)
    return StrCat(prefix, " takes ", reducer.num_parameters(), " parameters, expected ", 2 * n, " scalars");
  for (size_t i = 0; i < 2 * n; ++i) {
    const Shape& parameter = reducer.parameter(static_cast<int64_t>(i))->shape();
    ElementType expected = i < n ? accumulator_types[i] : input_types[i - n];
    if (!IsScalarShape(parameter) || !SameTypeIgnoringFpPrecision(parameter.element_type(), expected))
      return StrCat(prefix, ": parameter ", i, " is ", Text(parameter), ", expected a ", ElementTypeName(expected),
                    " scalar");
  }
  const Shape& root = reducer.root()->shape();
  auto scalar_of = [&](const Shape& shape, ElementType type) {
    return IsScalarShape(shape) && SameTypeIgnoringFpPrecision(shape.element_type(), type);
  };
  bool root_fits = n == 1 ? (scalar_of(root, accumulator_types[0]) ||
                             (root.IsTuple() && root.tuple_size() == 1 && scalar_of(root.tuple_shape(0), accumulator_types[0])))
                          : root.IsTuple() && static_cast<size_t>(root.tuple_size()) == n;
  for (size_t i = 0; root_fits && n > 1 && i < n; ++i) root_fits = scalar_of(root.tuple_shape(static_cast<int64_t>(i)), accumulator_types[i]);
  if (!root_fits) {
    std::string expected = n == 1 ? StrCat("a ", ElementTypeName(accumulator_types[0]), " scalar")
                                  : StrCat("a tuple of ", n, " scalars");
    return StrCat(prefix, " returns ", Text(root), ", expected ", expected);
  }
  return "";
}

std::string CheckScalarPredicate(const Instruction& instruction, const Computation& computation,
                                 std::string_view role, const std::vector<ElementType>& parameter_types) {
  std::string prefix = StrCat(role, " %", computation.name(), " of ", Name(instruction));
  if (static_cast<size_t>(computation.num_parameters()) != parameter_types.size())
    return StrCat(prefix, " takes ", computation.num_parameters(), " parameters, expected ", parameter_types.size(),
                  " scalars");
  for (size_t i = 0; i < parameter_types.size(); ++i) {
    const Shape& parameter = computation.parameter(static_cast<int64_t>(i))->shape();
    if (!IsScalarShape(parameter) || !SameTypeIgnoringFpPrecision(parameter.element_type(), parameter_types[i]))
      return StrCat(prefix, ": parameter ", i, " is ", Text(parameter), ", expected a ",
                    ElementTypeName(parameter_types[i]), " scalar");
  }
  const Shape& root = computation.root()->shape();
  if (!IsScalarShape(root) || root.element_type() != ElementType::kPred)
    return StrCat(prefix, " returns ", Text(root), ", expected pred[]");
  return "";
}

std::string CheckParametersMatch(const Instruction& instruction, const Computation& computation,
                                 std::string_view role, const std::vector<const Shape*>& operands) {
  std::string prefix = StrCat(role, " %", computation.name(), " of ", Name(instruction));
  if (static_cast<size_t>(computation.num_parameters()) != operands.size())
    return StrCat(prefix, " takes ", computation.num_parameters(), " parameters, expected ", operands.size(),
                  " (one per operand)");
  for (size_t i = 0; i < operands.size(); ++i) {
    const Shape& parameter = computation.parameter(static_cast<int64_t>(i))->shape();
    if (!parameter.Compatible(*operands[i]))
      return StrCat(prefix, ": parameter ", i, " is ", Text(parameter), ", expected ", Text(*operands[i]),
                    " (the shape passed to it)");
  }
  return "";
}

}  // namespace shape_rules

using namespace shape_rules;

InferredShape InferShape(const Instruction& instruction, const DeviceCounts& devices) {
  Opcode opcode = instruction.opcode();
  if (IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode)) return InferElementwise(instruction);
  switch (opcode) {
    case Opcode::kCompare: case Opcode::kSelect: case Opcode::kClamp: case Opcode::kComplex:
    case Opcode::kReal: case Opcode::kImag: case Opcode::kReducePrecision: case Opcode::kConvert:
    case Opcode::kBitcastConvert: case Opcode::kStochasticConvert:
      return InferElementwise(instruction);
    case Opcode::kDot: case Opcode::kRaggedDot: case Opcode::kScaledDot:
      return InferDot(instruction);
    case Opcode::kConvolution:
      return InferConvolution(instruction);
    case Opcode::kReduce: case Opcode::kReduceWindow: case Opcode::kSelectAndScatter: case Opcode::kMap:
    case Opcode::kSort: case Opcode::kTopK:
      return InferReduceFamily(instruction);
    case Opcode::kGather: case Opcode::kScatter: case Opcode::kDynamicSlice: case Opcode::kDynamicUpdateSlice:
      return InferIndexing(instruction);
    case Opcode::kAllGather: case Opcode::kAllReduce: case Opcode::kAllToAll: case Opcode::kReduceScatter:
    case Opcode::kCollectivePermute: case Opcode::kCollectiveBroadcast: case Opcode::kRaggedAllToAll:
      return InferCollective(instruction, devices);
    case Opcode::kWhile: case Opcode::kConditional: case Opcode::kCall: case Opcode::kFusion:
    case Opcode::kCustomCall: case Opcode::kScan:
      return InferControlFlow(instruction);
    case Opcode::kBroadcast: case Opcode::kTranspose: case Opcode::kReshape: case Opcode::kReverse:
    case Opcode::kSlice: case Opcode::kPad: case Opcode::kConcatenate: case Opcode::kIota: case Opcode::kCopy:
    case Opcode::kTuple: case Opcode::kGetTupleElement: case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize: case Opcode::kBitcast: case Opcode::kOptimizationBarrier: case Opcode::kDomain:
    case Opcode::kAddDependency: case Opcode::kAfterAll: case Opcode::kPartitionId: case Opcode::kReplicaId:
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kDynamicReshape:
      return InferShapeOp(instruction);
    default:
      return InferOther(instruction, devices);
  }
}

std::string CheckResultShape(const Instruction& instruction, const DeviceCounts& devices) {
  const Shape& result = instruction.shape();
  if (!result.CheckedByteSize())
    return StrCat("result ", Text(result), " has more bytes than a 64-bit size can count");
  InferredShape inferred = InferShape(instruction, devices);
  if (!inferred.error.empty()) return inferred.error;
  if (!inferred.shape) return "";
  if (SameShape(result, *inferred.shape, MayChooseElementType(instruction.opcode()))) return "";
  return StrCat("result ", Text(result), " does not match ", Text(*inferred.shape),
                ", the shape its operands and attributes give");
}

std::optional<int64_t> CollectiveGroupSize(const Instruction& instruction, const DeviceCounts& devices) {
  const ReplicaGroups& groups = instruction.replica_groups();
  // A channel without global device ids on an op that could have them: XLA reads the groups
  // as replica ids, each spanning every partition; this runtime reads partition ids. Do not
  // judge sizes in that mode.
  bool has_global_ids_field = instruction.opcode() != Opcode::kAllToAll;
  if (instruction.channel_id.has_value() && !instruction.use_global_device_ids && has_global_ids_field &&
      devices.partitions != 1)
    return std::nullopt;
  switch (groups.form()) {
    case ReplicaGroups::Form::kIota:
      if (groups.iota().num_dims() == 2) return groups.iota().dims()[1];
      return std::nullopt;
    case ReplicaGroups::Form::kMesh: {
      int64_t size = 1;
      for (const AxisRef& axis : groups.mesh_axes()) {
        int64_t axis_size = axis.is_sub_axis() ? axis.size : 0;
        if (!axis.is_sub_axis()) {
          int64_t index = groups.mesh().AxisIndex(axis.name);
          if (index < 0) return std::nullopt;
          axis_size = groups.mesh().axes[static_cast<size_t>(index)].size;
        }
        std::optional<int64_t> product = CheckedMul(size, axis_size);
        if (!product) return std::nullopt;
        size = *product;
      }
      return size;
    }
    case ReplicaGroups::Form::kExplicit:
      break;
  }
  if (!groups.empty()) {
    std::vector<std::vector<int64_t>> expanded = groups.Groups(1);
    return expanded.empty() ? std::nullopt : std::optional<int64_t>(static_cast<int64_t>(expanded[0].size()));
  }
  bool cross_partition = instruction.channel_id.has_value();
  int64_t count = cross_partition ? devices.partitions : devices.replicas;
  if (cross_partition && instruction.use_global_device_ids && devices.replicas > 0 && devices.partitions > 0)
    count = devices.partitions * devices.replicas;
  if (count <= 0) return std::nullopt;
  return count;
}

}  // namespace gspmd
