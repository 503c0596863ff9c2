// Shape inference for ops that move data without computing on it: broadcast, transpose,
// reshape, reverse, slice, pad, concatenate, iota, tuples, get/set-dimension-size, bitcast,
// pass-through ops, ids, parameters and constants.
#include "ir/shape_inference_util.h"
#include "support/allocation.h"

namespace gspmd::shape_rules {
namespace {

bool Written(const Instruction& instruction) { return instruction.shape().element_type() != ElementType::kInvalid; }

std::string ExpectArrayOperand(const Instruction& instruction, int64_t i) {
  return OperandShape(instruction, i).IsArray() ? "" : OperandError(instruction, i, "an array");
}

InferredShape InferBroadcast(const Instruction& instruction) {
  const Shape& operand = OperandShape(instruction, 0);
  if (std::string error = ExpectArrayOperand(instruction, 0); !error.empty()) return Fail(error);
  const std::vector<int64_t>& dims = instruction.dimensions;
  if (!Written(instruction)) {
    // XLA's short form: the dimensions are sizes put in front of the operand's.
    std::vector<int64_t> result = dims;
    result.insert(result.end(), operand.dims().begin(), operand.dims().end());
    for (int64_t size : dims)
      if (size < 0) return Fail(StrCat("broadcast size ", size, " is negative"));
    return Ok(Shape(operand.element_type(), result));
  }
  const Shape& result = instruction.shape();
  if (!result.IsArray()) return Fail(StrCat("broadcast result ", Text(result), " must be an array"));
  if (static_cast<int64_t>(dims.size()) != operand.rank())
    return Fail(StrCat("broadcast dimensions has ", dims.size(), " entries, expected one per dimension of the operand ",
                       Text(operand), " (", operand.rank(), ")"));
  if (std::string error = CheckDimensionList("broadcast dimensions", dims, result.rank(), true, result); !error.empty())
    return Fail(error);
  for (int64_t i = 0; i < operand.rank(); ++i)
    if (result.dim(dims[i]) != operand.dim(i))
      return Fail(StrCat("broadcast maps operand dimension ", i, " (size ", operand.dim(i), ") to result dimension ",
                         dims[i], " of ", Text(result), " (size ", result.dim(dims[i]), "), expected equal sizes"));
  return Ok(Shape(operand.element_type(), result.dims()));
}

InferredShape InferTranspose(const Instruction& instruction) {
  const Shape& operand = OperandShape(instruction, 0);
  if (std::string error = ExpectArrayOperand(instruction, 0); !error.empty()) return Fail(error);
  const std::vector<int64_t>& perm = instruction.dimensions;
  if (static_cast<int64_t>(perm.size()) != operand.rank())
    return Fail(StrCat("transpose dimensions has ", perm.size(), " entries, expected a permutation of the ",
                       operand.rank(), " dimensions of ", Text(operand)));
  if (std::string error = CheckDimensionList("transpose dimensions", perm, operand.rank(), true, operand); !error.empty())
    return Fail(error);
  std::vector<int64_t> dims;
  for (int64_t d : perm) dims.push_back(operand.dim(d));
  return Ok(Shape(operand.element_type(), dims));
}

InferredShape InferReshape(const Instruction& instruction) {
  const Shape& operand = OperandShape(instruction, 0);
  if (std::string error = ExpectArrayOperand(instruction, 0); !error.empty()) return Fail(error);
  if (!Written(instruction)) return MustBeWritten();
  const Shape& result = instruction.shape();
  if (!result.IsArray() || result.element_type() != operand.element_type())
    return Fail(StrCat("reshape result ", Text(result), " must be an array of the operand's element type ",
                       ElementTypeName(operand.element_type())));
  if (result.CheckedElementCount() != operand.CheckedElementCount())
    return Fail(StrCat("reshape from ", Text(operand), " to ", Text(result), " changes the element count from ",
                       operand.element_count(), " to ", result.element_count(), ", expected the same count"));
  return MustBeWritten();
}

InferredShape InferSlice(const Instruction& instruction) {
  const Shape& operand = OperandShape(instruction, 0);
  if (std::string error = ExpectArrayOperand(instruction, 0); !error.empty()) return Fail(error);
  const std::vector<SliceDim>& slice = instruction.slice();
  if (static_cast<int64_t>(slice.size()) != operand.rank())
    return Fail(StrCat("slice has ", slice.size(), " bounds, expected one per dimension of ", Text(operand), " (",
                       operand.rank(), ")"));
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const SliceDim& s = slice[static_cast<size_t>(d)];
    if (s.stride <= 0 || s.start < 0 || s.start > s.limit || s.limit > operand.dim(d))
      return Fail(StrCat("slice [", s.start, ":", s.limit, ":", s.stride, "] of dimension ", d, " does not fit ",
                         Text(operand), ": expected 0 <= start <= limit <= ", operand.dim(d), " and stride > 0"));
    dims.push_back((s.limit - s.start + s.stride - 1) / s.stride);
  }
  return Ok(Shape(operand.element_type(), dims));
}

InferredShape InferPad(const Instruction& instruction) {
  const Shape& operand = OperandShape(instruction, 0);
  const Shape& value = OperandShape(instruction, 1);
  if (std::string error = ExpectArrayOperand(instruction, 0); !error.empty()) return Fail(error);
  if (!IsScalarShape(value) || value.element_type() != operand.element_type())
    return Fail(OperandError(instruction, 1, StrCat("a ", ElementTypeName(operand.element_type()), " scalar")));
  const PaddingConfig& padding = instruction.padding();
  if (static_cast<int64_t>(padding.size()) != operand.rank())
    return Fail(StrCat("padding has ", padding.size(), " entries, expected one per dimension of ", Text(operand),
                       " (", operand.rank(), ")"));
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const PaddingDim& p = padding[static_cast<size_t>(d)];
    int64_t n = operand.dim(d);
    std::optional<int64_t> interior = p.interior < 0 ? std::nullopt : CheckedMul(std::max<int64_t>(n - 1, 0), p.interior);
    std::optional<int64_t> size = interior ? CheckedAdd(n, *interior) : std::nullopt;
    if (size) size = CheckedAdd(*size, p.low);
    if (size) size = CheckedAdd(*size, p.high);
    if (p.interior < 0) return Fail(StrCat("padding of dimension ", d, " has interior ", p.interior, ", expected >= 0"));
    if (!size || *size < 0)
      return Fail(StrCat("padding ", p.low, "_", p.high, "_", p.interior, " of dimension ", d, " (size ", n,
                         ") gives ", size ? StrCat("size ", *size) : std::string("an overflowing size"),
                         ", expected a size >= 0"));
    dims.push_back(*size);
  }
  return Ok(Shape(operand.element_type(), dims));
}

InferredShape InferConcatenate(const Instruction& instruction) {
  const Shape& first = OperandShape(instruction, 0);
  if (std::string error = ExpectArrayOperand(instruction, 0); !error.empty()) return Fail(error);
  if (instruction.dimensions.size() != 1)
    return Fail(StrCat("concatenate dimensions has ", instruction.dimensions.size(), " entries, expected one"));
  int64_t dim = instruction.dimensions[0];
  if (dim < 0 || dim >= first.rank())
    return Fail(StrCat("concatenate dimension ", dim, " is out of range for ", Text(first)));
  std::vector<int64_t> dims = first.dims();
  for (int64_t i = 1; i < instruction.operand_count(); ++i) {
    const Shape& operand = OperandShape(instruction, i);
    bool fits = operand.IsArray() && operand.rank() == first.rank() && operand.element_type() == first.element_type();
    for (int64_t d = 0; fits && d < first.rank(); ++d) fits = d == dim || operand.dim(d) == first.dim(d);
    if (!fits)
      return Fail(OperandError(instruction, i, StrCat("the element type and dimensions of operand 0, ", Text(first),
                                                      ", except dimension ", dim)));
    std::optional<int64_t> sum = CheckedAdd(dims[static_cast<size_t>(dim)], operand.dim(dim));
    if (!sum) return Fail("concatenate result size overflows 64 bits");
    dims[static_cast<size_t>(dim)] = *sum;
  }
  return Ok(Shape(first.element_type(), dims));
}

InferredShape InferGetTupleElement(const Instruction& instruction) {
  const Shape& tuple = OperandShape(instruction, 0);
  if (!tuple.IsTuple()) return Fail(OperandError(instruction, 0, "a tuple"));
  if (instruction.tuple_index < 0 || instruction.tuple_index >= tuple.tuple_size())
    return Fail(StrCat("get-tuple-element index=", instruction.tuple_index, " is out of range for ", Text(tuple),
                       ", expected 0 to ", tuple.tuple_size() - 1));
  return Ok(tuple.tuple_shape(instruction.tuple_index));
}

InferredShape InferDimensionSize(const Instruction& instruction) {
  const Shape& operand = OperandShape(instruction, 0);
  if (std::string error = ExpectArrayOperand(instruction, 0); !error.empty()) return Fail(error);
  if (instruction.dimensions.size() != 1)
    return Fail(StrCat(Name(instruction), " dimensions has ", instruction.dimensions.size(), " entries, expected one"));
  int64_t d = instruction.dimensions[0];
  if (d < 0 || d >= operand.rank())
    return Fail(StrCat(Name(instruction), " dimension ", d, " is out of range for ", Text(operand)));
  if (instruction.opcode() == Opcode::kGetDimensionSize) return Ok(Shape(ElementType::kS32, {}));
  const Shape& size = OperandShape(instruction, 1);
  if (!IsScalarShape(size) || size.element_type() != ElementType::kS32)
    return Fail(OperandError(instruction, 1, "an s32 scalar"));
  Shape result(operand.element_type(), operand.dims());
  result.set_dynamic_dim(d, true);
  return Ok(result);
}

InferredShape InferConstant(const Instruction& instruction) {
  if (!Written(instruction)) return MustBeWritten();
  if (!instruction.literal()) return MustBeWritten();  // elided in the text ({...})
  if (!instruction.literal()->shape().Compatible(instruction.shape()))
    return Fail(StrCat("constant value is ", Text(instruction.literal()->shape()), ", expected ",
                       Text(instruction.shape())));
  return MustBeWritten();
}

InferredShape InferIota(const Instruction& instruction) {
  const Shape& result = instruction.shape();
  if (!result.IsArray() || result.rank() == 0 || result.element_type() == ElementType::kPred)
    return Fail(StrCat("iota result ", Text(result), " must be a numeric array of rank 1 or more"));
  if (instruction.iota_dimension < 0 || instruction.iota_dimension >= result.rank())
    return Fail(StrCat("iota_dimension=", instruction.iota_dimension, " is out of range for ", Text(result),
                       ", expected 0 to ", result.rank() - 1));
  return MustBeWritten();
}

InferredShape InferBitcast(const Instruction& instruction) {
  if (!Written(instruction)) return MustBeWritten();
  const Shape& operand = OperandShape(instruction, 0);
  const Shape& result = instruction.shape();
  if (operand.IsArray() && result.IsArray() && operand.CheckedByteSize() != result.CheckedByteSize())
    return Fail(StrCat("bitcast from ", Text(operand), " to ", Text(result), " changes the size in bytes, expected ",
                       Text(result), " to hold as many bytes as the operand"));
  return MustBeWritten();
}

InferredShape InferDynamicReshape(const Instruction& instruction) {
  const Shape& operand = OperandShape(instruction, 0);
  if (std::string error = ExpectArrayOperand(instruction, 0); !error.empty()) return Fail(error);
  if (!Written(instruction)) return MustBeWritten();
  const Shape& result = instruction.shape();
  if (!result.IsArray() || result.rank() != instruction.operand_count() - 1 ||
      result.element_type() != operand.element_type())
    return Fail(StrCat("dynamic-reshape result ", Text(result), " must be a ", ElementTypeName(operand.element_type()),
                       " array with one dimension per size operand (", instruction.operand_count() - 1, ")"));
  for (int64_t i = 1; i < instruction.operand_count(); ++i)
    if (!IsScalarShape(OperandShape(instruction, i)) || !IsInteger(OperandShape(instruction, i).element_type()))
      return Fail(OperandError(instruction, i, "an integer scalar size"));
  return MustBeWritten();
}

}  // namespace

InferredShape InferShapeOp(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kBroadcast: return InferBroadcast(instruction);
    case Opcode::kTranspose: return InferTranspose(instruction);
    case Opcode::kReshape: return InferReshape(instruction);
    case Opcode::kReverse: {
      const Shape& operand = OperandShape(instruction, 0);
      if (std::string error = ExpectArrayOperand(instruction, 0); !error.empty()) return Fail(error);
      if (std::string error = CheckDimensionList("reverse dimensions", instruction.dimensions, operand.rank(), true,
                                                 operand);
          !error.empty())
        return Fail(error);
      return Ok(Shape(operand.element_type(), operand.dims()));
    }
    case Opcode::kSlice: return InferSlice(instruction);
    case Opcode::kPad: return InferPad(instruction);
    case Opcode::kConcatenate: return InferConcatenate(instruction);
    case Opcode::kIota: return Written(instruction) ? InferIota(instruction) : MustBeWritten();
    case Opcode::kTuple: {
      std::vector<Shape> elements;
      for (const Instruction* operand : instruction.operands()) elements.push_back(operand->shape());
      return Ok(Shape::Tuple(std::move(elements)));
    }
    case Opcode::kGetTupleElement: return InferGetTupleElement(instruction);
    case Opcode::kGetDimensionSize: case Opcode::kSetDimensionSize: return InferDimensionSize(instruction);
    case Opcode::kBitcast: return InferBitcast(instruction);
    case Opcode::kCopy: case Opcode::kOptimizationBarrier: case Opcode::kDomain: case Opcode::kAddDependency:
      return Ok(OperandShape(instruction, 0));
    case Opcode::kAfterAll:  // operands of any shape: it orders after them
      return Ok(Shape::Token());
    case Opcode::kPartitionId: case Opcode::kReplicaId:
      return Ok(Shape(ElementType::kU32, {}));
    case Opcode::kConstant: return InferConstant(instruction);
    case Opcode::kDynamicReshape: return InferDynamicReshape(instruction);
    default:  // parameter: any shape
      return MustBeWritten();
  }
}

}  // namespace gspmd::shape_rules
