// Structural checks of instructions, shardings and modules.
#include "ir/verifier.h"

#include <algorithm>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

// How many operands an opcode takes: [min, max] (max -1: unbounded), and a parity rule for
// the variadic reductions.
struct Arity {
  int64_t min = 0;
  int64_t max = -1;
  enum class Parity { kAny, kEven, kOdd } parity = Parity::kAny;
};

Arity Exactly(int64_t n) { return Arity{n, n}; }
Arity AtLeast(int64_t n) { return Arity{n, -1}; }

Arity OperandArity(Opcode opcode) {
  if (IsElementwiseUnary(opcode)) return Exactly(1);
  if (IsElementwiseBinary(opcode)) return Exactly(2);
  switch (opcode) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kIota:
    case Opcode::kPartitionId: case Opcode::kReplicaId:
      return Exactly(0);
    case Opcode::kConvert: case Opcode::kBitcast: case Opcode::kBitcastConvert:
    case Opcode::kBroadcast: case Opcode::kCopy: case Opcode::kReshape: case Opcode::kTranspose:
    case Opcode::kReverse: case Opcode::kSlice: case Opcode::kGetTupleElement:
    case Opcode::kReducePrecision: case Opcode::kGetDimensionSize: case Opcode::kTopK:
    case Opcode::kWhile: case Opcode::kOptimizationBarrier: case Opcode::kDomain:
    case Opcode::kRngBitGenerator:
      return Exactly(1);
    case Opcode::kCompare: case Opcode::kDot: case Opcode::kPad: case Opcode::kAddDependency:
    case Opcode::kGather: case Opcode::kConvolution: case Opcode::kRng:
    case Opcode::kStochasticConvert:
      return Exactly(2);
    case Opcode::kSelect: case Opcode::kClamp: case Opcode::kSelectAndScatter:
      return Exactly(3);
    case Opcode::kAllGather: case Opcode::kAllReduce: case Opcode::kAllToAll:
    case Opcode::kReduceScatter: case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectivePermute: case Opcode::kConcatenate: case Opcode::kSort:
    case Opcode::kMap: case Opcode::kConditional: case Opcode::kDynamicSlice:
      return AtLeast(1);
    case Opcode::kDynamicUpdateSlice:
      return AtLeast(2);
    case Opcode::kReduce: case Opcode::kReduceWindow:
      return Arity{2, -1, Arity::Parity::kEven};
    case Opcode::kScatter:
      return Arity{3, -1, Arity::Parity::kOdd};
    default:  // tuple, call, custom-call, fusion, after-all
      return AtLeast(0);
  }
}

std::string Plural(int64_t n, std::string_view word) {
  return StrCat(n, " ", word, n == 1 ? "" : "s");
}

bool SameDims(const Shape& a, const Shape& b) { return a.IsArray() && b.IsArray() && a.dims() == b.dims(); }
bool IsScalar(const Shape& s) { return s.IsArray() && s.rank() == 0; }

std::string OperandShapeError(const Instruction& instruction, int64_t i, std::string_view expected) {
  return StrCat(OpcodeName(instruction.opcode()), " operand ", i, " has shape ",
                instruction.operand(i)->shape().ToString(false), ", expected ", expected);
}

std::string CheckElementwise(const Instruction& instruction) {
  const Shape& result = instruction.shape();
  if (!result.IsArray())
    return StrCat(OpcodeName(instruction.opcode()), " must produce an array, not ", result.ToString(false));
  bool is_compare = instruction.opcode() == Opcode::kCompare;
  bool pred_result = is_compare || instruction.opcode() == Opcode::kIsFinite;
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    const Shape& operand = instruction.operand(i)->shape();
    if (!SameDims(operand, result))
      return OperandShapeError(instruction, i, StrCat("the dimensions of the result ", result.ToString(false)));
    ElementType expected = pred_result ? instruction.operand(0)->shape().element_type() : result.element_type();
    if (operand.element_type() != expected)
      return OperandShapeError(instruction, i, StrCat("element type ", ElementTypeName(expected)));
  }
  if (pred_result && result.element_type() != ElementType::kPred)
    return StrCat(OpcodeName(instruction.opcode()), " must produce pred, not ", result.ToString(false));
  return "";
}

std::string CheckSelectLike(const Instruction& instruction) {
  const Shape& result = instruction.shape();
  if (!result.IsArray()) return "";
  bool is_select = instruction.opcode() == Opcode::kSelect;
  for (int64_t i = 0; i < 3; ++i) {
    const Shape& operand = instruction.operand(i)->shape();
    bool may_be_scalar = is_select ? i == 0 : i != 1;
    if (SameDims(operand, result) || (may_be_scalar && IsScalar(operand))) continue;
    return OperandShapeError(instruction, i, StrCat("the dimensions of the result ", result.ToString(false),
                                                    may_be_scalar ? " or a scalar" : ""));
  }
  if (is_select && instruction.operand(0)->shape().element_type() != ElementType::kPred)
    return OperandShapeError(instruction, 0, "a pred predicate");
  return "";
}

std::string CheckGetTupleElement(const Instruction& instruction) {
  const Shape& tuple = instruction.operand(0)->shape();
  if (!tuple.IsTuple()) return OperandShapeError(instruction, 0, "a tuple");
  if (instruction.tuple_index < 0 || instruction.tuple_index >= tuple.tuple_size())
    return StrCat("get-tuple-element index ", instruction.tuple_index, " is out of range for the ",
                  Plural(tuple.tuple_size(), "element"), " of ", tuple.ToString(false));
  const Shape& element = tuple.tuple_shape(instruction.tuple_index);
  if (!element.Compatible(instruction.shape()))
    return StrCat("get-tuple-element shape ", instruction.shape().ToString(false), " does not match element ",
                  instruction.tuple_index, " of the tuple, ", element.ToString(false));
  return "";
}

std::string CheckTuple(const Instruction& instruction) {
  const Shape& shape = instruction.shape();
  if (!shape.IsTuple() || shape.tuple_size() != instruction.operand_count())
    return StrCat("tuple of ", Plural(instruction.operand_count(), "operand"), " must have a tuple shape with ",
                  Plural(instruction.operand_count(), "element"), ", not ", shape.ToString(false));
  for (int64_t i = 0; i < instruction.operand_count(); ++i)
    if (!instruction.operand(i)->shape().Compatible(shape.tuple_shape(i)))
      return OperandShapeError(instruction, i, StrCat("element ", i, " of the tuple shape, ",
                                                      shape.tuple_shape(i).ToString(false)));
  return "";
}

std::string CheckBroadcast(const Instruction& instruction) {
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& result = instruction.shape();
  if (!operand.IsArray() || !result.IsArray()) return "";
  if (static_cast<int64_t>(instruction.dimensions.size()) != operand.rank())
    return StrCat("broadcast dimensions ", "has ", instruction.dimensions.size(), " entries, expected one per operand dimension (",
                  operand.rank(), ")");
  for (int64_t i = 0; i < operand.rank(); ++i) {
    int64_t d = instruction.dimensions[i];
    if (d < 0 || d >= result.rank() || result.dim(d) != operand.dim(i))
      return StrCat("broadcast dimension ", i, " maps operand size ", operand.dim(i), " to result dimension ", d,
                    " of ", result.ToString(false), ", expected a result dimension of the same size");
  }
  return "";
}

std::string CheckTranspose(const Instruction& instruction) {
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& result = instruction.shape();
  if (!operand.IsArray() || !result.IsArray()) return "";
  const std::vector<int64_t>& perm = instruction.dimensions;
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool is_permutation = static_cast<int64_t>(perm.size()) == operand.rank();
  for (int64_t i = 0; is_permutation && i < operand.rank(); ++i) is_permutation = sorted[i] == i;
  if (!is_permutation)
    return StrCat("transpose dimensions must be a permutation of the ", operand.rank(), " operand dimensions");
  for (int64_t i = 0; i < result.rank() && i < operand.rank(); ++i)
    if (result.dim(i) != operand.dim(perm[i]))
      return StrCat("transpose result ", result.ToString(false), " does not match operand ",
                    operand.ToString(false), " permuted by ", "the dimensions");
  return "";
}

std::string CheckDot(const Instruction& instruction) {
  const Shape& lhs = instruction.operand(0)->shape();
  const Shape& rhs = instruction.operand(1)->shape();
  if (!lhs.IsArray() || !rhs.IsArray()) return "";
  const DotDimensionNumbers& dims = instruction.dot_dims();
  auto check_pairs = [&](const std::vector<int64_t>& l, const std::vector<int64_t>& r,
                         std::string_view kind) -> std::string {
    if (l.size() != r.size())
      return StrCat("dot has ", l.size(), " lhs and ", r.size(), " rhs ", kind, " dims, expected the same number");
    for (size_t i = 0; i < l.size(); ++i) {
      if (l[i] < 0 || l[i] >= lhs.rank() || r[i] < 0 || r[i] >= rhs.rank())
        return StrCat("dot ", kind, " dim out of range for ", lhs.ToString(false), " x ", rhs.ToString(false));
      if (lhs.dim(l[i]) != rhs.dim(r[i]))
        return StrCat("dot ", kind, " dims have sizes ", lhs.dim(l[i]), " (lhs dim ", l[i], ") and ",
                      rhs.dim(r[i]), " (rhs dim ", r[i], "), expected equal sizes");
    }
    return "";
  };
  std::string error = check_pairs(dims.lhs_contracting_dims, dims.rhs_contracting_dims, "contracting");
  if (!error.empty()) return error;
  return check_pairs(dims.lhs_batch_dims, dims.rhs_batch_dims, "batch");
}

std::string CheckReshape(const Instruction& instruction) {
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& result = instruction.shape();
  if (!operand.IsArray() || !result.IsArray()) return "";
  if (operand.element_count() != result.element_count())
    return StrCat("reshape from ", operand.ToString(false), " to ", result.ToString(false),
                  " changes the element count");
  return "";
}

int64_t CountLeaves(const Shape& shape) {
  if (!shape.IsTuple()) return 1;
  int64_t count = 0;
  for (const Shape& element : shape.tuple_shapes()) count += CountLeaves(element);
  return count;
}

void CollectLeaves(const Shape& shape, std::vector<const Shape*>& leaves) {
  if (!shape.IsTuple()) {
    leaves.push_back(&shape);
    return;
  }
  for (const Shape& element : shape.tuple_shapes()) CollectLeaves(element, leaves);
}

std::string CheckLeafSharding(const Sharding& sharding, const Shape& shape, int64_t num_partitions) {
  if (sharding.IsTuple()) return StrCat("a tuple sharding cannot describe the non-tuple shape ", shape.ToString(false));
  if (num_partitions > 0) {
    if (sharding.IsMaximal() && sharding.maximal_device() >= num_partitions)
      return StrCat("sharding uses device ", sharding.maximal_device(),
                    ", expected device ids below num_partitions=", num_partitions);
    if (sharding.IsTiled() && sharding.RequiredDeviceCount() > num_partitions)
      return StrCat("sharding uses device ", sharding.RequiredDeviceCount() - 1,
                    ", expected device ids below num_partitions=", num_partitions);
  }
  if (sharding.IsTiled() && shape.IsArray() && sharding.TiledDataRank() != shape.rank())
    return StrCat("sharding tiles ", Plural(sharding.TiledDataRank(), "dimension"), ", expected ", shape.rank(),
                  " (the rank of ", shape.ToString(false), ")");
  return "";
}

}  // namespace

std::string CheckOperandCount(const Instruction& instruction) {
  Arity arity = OperandArity(instruction.opcode());
  int64_t n = instruction.operand_count();
  std::string_view name = OpcodeName(instruction.opcode());
  if (arity.min == arity.max && n != arity.min)
    return StrCat(name, " expects ", Plural(arity.min, "operand"), ", got ", n);
  if (n < arity.min) return StrCat(name, " expects at least ", Plural(arity.min, "operand"), ", got ", n);
  if (arity.max >= 0 && n > arity.max) return StrCat(name, " expects at most ", Plural(arity.max, "operand"), ", got ", n);
  if (arity.parity == Arity::Parity::kEven && n % 2 != 0)
    return StrCat(name, " expects an even number of operands (inputs then init values), got ", n);
  if (arity.parity == Arity::Parity::kOdd && n % 2 != 1)
    return StrCat(name, " expects an odd number of operands (inputs, indices, updates), got ", n);
  return "";
}

std::string CheckInstructionShapes(const Instruction& instruction) {
  Opcode opcode = instruction.opcode();
  if (IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode) || opcode == Opcode::kCompare)
    return CheckElementwise(instruction);
  switch (opcode) {
    case Opcode::kSelect: case Opcode::kClamp: return CheckSelectLike(instruction);
    case Opcode::kGetTupleElement: return CheckGetTupleElement(instruction);
    case Opcode::kTuple: return CheckTuple(instruction);
    case Opcode::kBroadcast: return CheckBroadcast(instruction);
    case Opcode::kTranspose: return CheckTranspose(instruction);
    case Opcode::kDot: return CheckDot(instruction);
    case Opcode::kReshape: return CheckReshape(instruction);
    case Opcode::kConvert: case Opcode::kCopy:
      if (!SameDims(instruction.operand(0)->shape(), instruction.shape()) && instruction.shape().IsArray())
        return OperandShapeError(instruction, 0, StrCat("the dimensions of the result ",
                                                        instruction.shape().ToString(false)));
      return "";
    case Opcode::kSlice:
      if (instruction.operand(0)->shape().IsArray() &&
          static_cast<int64_t>(instruction.slice().size()) != instruction.operand(0)->shape().rank())
        return StrCat("slice has ", instruction.slice().size(), " bounds, expected one per operand dimension (",
                      instruction.operand(0)->shape().rank(), ")");
      return "";
    default:
      return "";
  }
}

std::string CheckCalledComputations(const Instruction& instruction) {
  int64_t expected = -1;
  switch (instruction.opcode()) {
    case Opcode::kReduce: case Opcode::kReduceWindow: case Opcode::kMap: case Opcode::kSort:
    case Opcode::kCall: case Opcode::kAllReduce: case Opcode::kReduceScatter: case Opcode::kScatter:
    case Opcode::kFusion:
      expected = 1;
      break;
    case Opcode::kWhile: case Opcode::kSelectAndScatter:
      expected = 2;
      break;
    default:
      return "";
  }
  int64_t n = static_cast<int64_t>(instruction.called_computations().size());
  if (n == expected) return "";
  if (instruction.opcode() == Opcode::kWhile) return "while expects condition= and body= computations";
  if (instruction.opcode() == Opcode::kSelectAndScatter)
    return "select-and-scatter expects select= and scatter= computations";
  if (instruction.opcode() == Opcode::kFusion) return "fusion expects a calls= computation";
  return StrCat(OpcodeName(instruction.opcode()), " expects a to_apply= computation");
}

std::string CheckSharding(const Sharding& sharding, const Shape& shape, int64_t num_partitions) {
  if (!shape.IsTuple()) return CheckLeafSharding(sharding, shape, num_partitions);
  std::vector<const Shape*> leaves;
  CollectLeaves(shape, leaves);
  if (!sharding.IsTuple()) {
    for (const Shape* leaf : leaves) {
      std::string error = CheckLeafSharding(sharding, *leaf, num_partitions);
      if (!error.empty()) return error;
    }
    return "";
  }
  const auto& elements = sharding.tuple_elements();
  if (static_cast<int64_t>(elements.size()) != CountLeaves(shape))
    return StrCat("tuple sharding has ", Plural(static_cast<int64_t>(elements.size()), "element"), ", expected ",
                  CountLeaves(shape), " (one per leaf of ", shape.ToString(false), ")");
  for (size_t i = 0; i < elements.size(); ++i) {
    std::string error = CheckLeafSharding(elements[i], *leaves[i], num_partitions);
    if (!error.empty()) return StrCat("element ", i, " of the tuple sharding: ", error);
  }
  return "";
}

void VerifyModule(const Module& module) {
  int64_t num_partitions = module.Attribute("num_partitions").empty() ? 0 : module.num_partitions();
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      std::string error = CheckOperandCount(*instruction);
      if (error.empty()) error = CheckInstructionShapes(*instruction);
      if (error.empty()) error = CheckCalledComputations(*instruction);
      if (error.empty() && instruction->sharding())
        error = CheckSharding(*instruction->sharding(), instruction->shape(), num_partitions);
      if (!error.empty())
        GSPMD_USER_ERROR("in %", instruction->name(), " of computation %", computation->name(), ": ", error);
    }
    if (computation->root() == nullptr && computation->instruction_count() > 0)
      GSPMD_USER_ERROR("computation %", computation->name(), " has no root instruction");
  }
}

}  // namespace gspmd
