// Shape kernels: broadcast, reshape, bitcast, transpose, copy, slice, dynamic-slice,
// dynamic-update-slice, pad, concatenate, reverse, iota. Data movement goes through
// CopyStrided (index_util.h).
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "runtime/interp/eval_elementwise.h"
#include "runtime/interp/index_util.h"
#include "runtime/interp/kernels.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

[[noreturn]] void BadShapeOp(const Instruction& instruction, const std::string& problem) {
  GSPMD_USER_ERROR(DescribeInstruction(instruction), ": ", problem);
}

void ExpectOperands(const Instruction& instruction, Operands operands, size_t minimum) {
  if (operands.size() < minimum)
    BadShapeOp(instruction, StrCat("expected at least ", minimum, " operands, got ", operands.size()));
  for (const Literal* operand : operands)
    if (!operand->shape().IsArray())
      BadShapeOp(instruction, StrCat("expected array operands, got ", operand->shape().ToString(false)));
}

// The array result the instruction declares; kernels check that what they compute agrees.
Literal MakeResult(const Instruction& instruction, ElementType type, const std::vector<int64_t>& dims) {
  const Shape& declared = instruction.shape();
  if (!declared.IsArray() || declared.dims() != dims || declared.element_type() != type) {
    BadShapeOp(instruction, StrCat("the result shape ", declared.ToString(false), " does not match the ",
                                   Shape(type, dims).ToString(false), " the operands imply"));
  }
  return Literal(Shape(type, dims));
}

int64_t ElementSize(const Literal& literal) { return ElementByteSize(literal.element_type()); }

Literal Broadcast(const Instruction& instruction, const Literal& operand) {
  const std::vector<int64_t>& out_dims = instruction.shape().dims();
  const std::vector<int64_t>& mapping = instruction.dimensions;
  if (static_cast<int64_t>(mapping.size()) != operand.shape().rank())
    BadShapeOp(instruction, StrCat("dimensions= must name one result dimension per operand dimension (",
                                   operand.shape().rank(), ")"));
  Literal result = MakeResult(instruction, operand.element_type(), out_dims);
  std::vector<int64_t> in_strides = RowMajorElementStrides(operand.shape().dims());
  std::vector<int64_t> out_strides = RowMajorElementStrides(out_dims);
  std::vector<StridedDim> dims(out_dims.size());
  for (size_t r = 0; r < out_dims.size(); ++r) dims[r] = {out_dims[r], 0, out_strides[r]};
  for (size_t i = 0; i < mapping.size(); ++i) {
    int64_t r = mapping[i];
    int64_t size = operand.shape().dim(i);
    bool valid = r >= 0 && r < static_cast<int64_t>(out_dims.size()) && (out_dims[r] == size || size == 1);
    if (!valid)
      BadShapeOp(instruction, StrCat("operand dimension ", i, " (size ", size, ") cannot map to result dimension ", r));
    // A size-1 operand dimension is repeated along its result dimension.
    dims[r].src_stride = size == 1 ? 0 : in_strides[i];
  }
  if (operand.element_count() == 1) {
    FillElements(result.raw(), operand.raw(), result.element_count(), ElementSize(operand));
    return result;
  }
  CopyStrided(operand.raw(), result.raw(), std::move(dims), ElementSize(operand));
  return result;
}

Literal Reshape(const Instruction& instruction, const Literal& operand) {
  const Shape& shape = instruction.shape();
  if (!shape.IsArray() || shape.element_count() != operand.element_count() ||
      shape.element_type() != operand.element_type()) {
    BadShapeOp(instruction, StrCat("cannot reshape ", operand.shape().ToString(false), " to ",
                                   shape.ToString(false)));
  }
  Literal result(Shape(shape.element_type(), shape.dims()));
  std::memcpy(result.raw(), operand.raw(), static_cast<size_t>(operand.byte_size()));
  return result;
}

// A reshape, or (as XLA's compiled programs write, e.g. the f32 -> s32 of a total-order
// comparator) a reinterpretation of the same bytes as another element type.
Literal Bitcast(const Instruction& instruction, const Literal& operand) {
  const Shape& shape = instruction.shape();
  if (shape.IsArray() && IsArrayType(operand.element_type()) && shape.element_type() != operand.element_type() &&
      shape.CheckedByteSize() == operand.shape().CheckedByteSize()) {
    Literal result(Shape(shape.element_type(), shape.dims()));
    std::memcpy(result.raw(), operand.raw(), static_cast<size_t>(operand.byte_size()));
    return result;
  }
  return Reshape(instruction, operand);
}

Literal Transpose(const Instruction& instruction, const Literal& operand) {
  const std::vector<int64_t>& perm = instruction.dimensions;
  int64_t rank = operand.shape().rank();
  std::vector<bool> seen(rank, false);
  bool valid = static_cast<int64_t>(perm.size()) == rank;
  for (int64_t d : perm) {
    valid = valid && d >= 0 && d < rank && !seen[d];
    if (valid) seen[d] = true;
  }
  if (!valid) BadShapeOp(instruction, "dimensions= must be a permutation of the operand dimensions");
  std::vector<int64_t> out_dims(rank);
  for (int64_t i = 0; i < rank; ++i) out_dims[i] = operand.shape().dim(perm[i]);
  Literal result = MakeResult(instruction, operand.element_type(), out_dims);
  std::vector<int64_t> in_strides = RowMajorElementStrides(operand.shape().dims());
  std::vector<int64_t> out_strides = RowMajorElementStrides(out_dims);
  std::vector<StridedDim> dims(rank);
  for (int64_t i = 0; i < rank; ++i) dims[i] = {out_dims[i], in_strides[perm[i]], out_strides[i]};
  CopyStrided(operand.raw(), result.raw(), std::move(dims), ElementSize(operand));
  return result;
}

Literal Copy(const Instruction& instruction, const Literal& operand) {
  Literal result = MakeResult(instruction, operand.element_type(), operand.shape().dims());
  std::memcpy(result.raw(), operand.raw(), static_cast<size_t>(operand.byte_size()));
  return result;
}

Literal Slice(const Instruction& instruction, const Literal& operand) {
  int64_t rank = operand.shape().rank();
  if (static_cast<int64_t>(instruction.slice().size()) != rank)
    BadShapeOp(instruction, StrCat("slice= needs one [start:limit:stride] per operand dimension (", rank, ")"));
  std::vector<int64_t> in_strides = RowMajorElementStrides(operand.shape().dims());
  std::vector<int64_t> out_dims(rank);
  int64_t offset = 0;
  for (int64_t d = 0; d < rank; ++d) {
    const SliceDim& s = instruction.slice()[d];
    bool valid = s.stride >= 1 && s.start >= 0 && s.start <= s.limit && s.limit <= operand.shape().dim(d);
    if (!valid)
      BadShapeOp(instruction, StrCat("slice dimension ", d, " [", s.start, ":", s.limit, ":", s.stride,
                                     "] is out of range for size ", operand.shape().dim(d)));
    out_dims[d] = (s.limit - s.start + s.stride - 1) / s.stride;
    offset += s.start * in_strides[d];
  }
  Literal result = MakeResult(instruction, operand.element_type(), out_dims);
  std::vector<int64_t> out_strides = RowMajorElementStrides(out_dims);
  std::vector<StridedDim> dims(rank);
  for (int64_t d = 0; d < rank; ++d)
    dims[d] = {out_dims[d], in_strides[d] * instruction.slice()[d].stride, out_strides[d]};
  int64_t element_size = ElementSize(operand);
  CopyStrided(operand.raw() + offset * element_size, result.raw(), std::move(dims), element_size);
  return result;
}

// Reads start indices (one scalar operand per dimension from `first`, or one rank-1 operand)
// and clamps them so that a window of `sizes` stays inside `dims`.
std::vector<int64_t> ClampedStarts(const Instruction& instruction, Operands operands, size_t first,
                                   const std::vector<int64_t>& dims, const std::vector<int64_t>& sizes) {
  size_t rank = dims.size();
  std::vector<int64_t> starts(rank, 0);
  bool vector_form = operands.size() == first + 1 && operands[first]->shape().rank() == 1 && rank != 1;
  if (vector_form) {
    const Literal& indices = *operands[first];
    if (indices.element_count() != static_cast<int64_t>(rank) || !IsInteger(indices.element_type()))
      BadShapeOp(instruction, StrCat("expected ", rank, " integer start indices"));
    for (size_t d = 0; d < rank; ++d) starts[d] = indices.GetAsInt64(static_cast<int64_t>(d));
  } else {
    if (operands.size() != first + rank)
      BadShapeOp(instruction, StrCat("expected ", rank, " start index operands, got ", operands.size() - first));
    for (size_t d = 0; d < rank; ++d) {
      const Literal& index = *operands[first + d];
      if (index.element_count() != 1 || !IsInteger(index.element_type()))
        BadShapeOp(instruction, StrCat("start index ", d, " must be an integer scalar, got ",
                                       index.shape().ToString(false)));
      starts[d] = index.GetAsInt64(0);
    }
  }
  for (size_t d = 0; d < rank; ++d) {
    if (sizes[d] < 0 || sizes[d] > dims[d])
      BadShapeOp(instruction, StrCat("slice size ", sizes[d], " of dimension ", d,
                                     " does not fit the operand size ", dims[d]));
    starts[d] = std::clamp<int64_t>(starts[d], 0, dims[d] - sizes[d]);
  }
  return starts;
}

Literal DynamicSlice(const Instruction& instruction, Operands operands) {
  const Literal& operand = *operands[0];
  const std::vector<int64_t>& dims = operand.shape().dims();
  std::vector<int64_t> sizes = instruction.dynamic_slice_sizes();
  if (sizes.empty() && instruction.shape().IsArray()) sizes = instruction.shape().dims();
  if (sizes.size() != dims.size())
    BadShapeOp(instruction, StrCat("dynamic_slice_sizes= needs one size per operand dimension (", dims.size(), ")"));
  std::vector<int64_t> starts = ClampedStarts(instruction, operands, 1, dims, sizes);
  Literal result = MakeResult(instruction, operand.element_type(), sizes);
  std::vector<int64_t> in_strides = RowMajorElementStrides(dims);
  std::vector<int64_t> out_strides = RowMajorElementStrides(sizes);
  std::vector<StridedDim> copy(dims.size());
  int64_t offset = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    copy[d] = {sizes[d], in_strides[d], out_strides[d]};
    offset += starts[d] * in_strides[d];
  }
  int64_t element_size = ElementSize(operand);
  CopyStrided(operand.raw() + offset * element_size, result.raw(), std::move(copy), element_size);
  return result;
}

Literal DynamicUpdateSlice(const Instruction& instruction, Operands operands) {
  const Literal& operand = *operands[0];
  const Literal& update = *operands[1];
  const std::vector<int64_t>& dims = operand.shape().dims();
  const std::vector<int64_t>& sizes = update.shape().dims();
  if (update.element_type() != operand.element_type() || sizes.size() != dims.size())
    BadShapeOp(instruction, StrCat("the update ", update.shape().ToString(false), " does not match the operand ",
                                   operand.shape().ToString(false)));
  std::vector<int64_t> starts = ClampedStarts(instruction, operands, 2, dims, sizes);
  Literal result = MakeResult(instruction, operand.element_type(), dims);
  std::memcpy(result.raw(), operand.raw(), static_cast<size_t>(operand.byte_size()));
  std::vector<int64_t> out_strides = RowMajorElementStrides(dims);
  std::vector<int64_t> update_strides = RowMajorElementStrides(sizes);
  std::vector<StridedDim> copy(dims.size());
  int64_t offset = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    copy[d] = {sizes[d], update_strides[d], out_strides[d]};
    offset += starts[d] * out_strides[d];
  }
  int64_t element_size = ElementSize(operand);
  CopyStrided(update.raw(), result.raw() + offset * element_size, std::move(copy), element_size);
  return result;
}

Literal Pad(const Instruction& instruction, Operands operands) {
  const Literal& operand = *operands[0];
  const Literal& value = *operands[1];
  int64_t rank = operand.shape().rank();
  if (value.element_count() != 1 || value.element_type() != operand.element_type())
    BadShapeOp(instruction, "the padding value must be a scalar of the operand's element type");
  if (static_cast<int64_t>(instruction.padding().size()) != rank)
    BadShapeOp(instruction, StrCat("padding= needs one low_high_interior per operand dimension (", rank, ")"));
  std::vector<int64_t> out_dims(rank);
  for (int64_t d = 0; d < rank; ++d) {
    const PaddingDim& p = instruction.padding()[d];
    int64_t n = operand.shape().dim(d);
    if (p.interior < 0) BadShapeOp(instruction, "interior padding must not be negative");
    out_dims[d] = p.low + p.high + n + std::max<int64_t>(n - 1, 0) * p.interior;
    if (out_dims[d] < 0) BadShapeOp(instruction, StrCat("padding dimension ", d, " gives a negative size"));
  }
  Literal result = MakeResult(instruction, operand.element_type(), out_dims);
  int64_t element_size = ElementSize(operand);
  FillElements(result.raw(), value.raw(), result.element_count(), element_size);
  std::vector<int64_t> in_strides = RowMajorElementStrides(operand.shape().dims());
  std::vector<int64_t> out_strides = RowMajorElementStrides(out_dims);
  std::vector<StridedDim> copy(rank);
  int64_t src_offset = 0;
  int64_t dst_offset = 0;
  for (int64_t d = 0; d < rank; ++d) {
    const PaddingDim& p = instruction.padding()[d];
    int64_t step = p.interior + 1;
    int64_t n = operand.shape().dim(d);
    // Operand indices i whose position low + i * step lies inside [0, out_dims[d]).
    int64_t first = p.low >= 0 ? 0 : (-p.low + step - 1) / step;
    int64_t room = out_dims[d] - p.low;
    int64_t end = room <= 0 ? 0 : std::min(n, (room + step - 1) / step);
    if (first >= end) return result;  // everything cropped: only padding remains
    copy[d] = {end - first, in_strides[d], out_strides[d] * step};
    src_offset += first * in_strides[d];
    dst_offset += (p.low + first * step) * out_strides[d];
  }
  CopyStrided(operand.raw() + src_offset * element_size, result.raw() + dst_offset * element_size,
              std::move(copy), element_size);
  return result;
}

Literal Concatenate(const Instruction& instruction, Operands operands) {
  if (instruction.dimensions.size() != 1) BadShapeOp(instruction, "dimensions= must name one dimension");
  int64_t axis = instruction.dimensions[0];
  const Literal& first = *operands[0];
  int64_t rank = first.shape().rank();
  if (axis < 0 || axis >= rank) BadShapeOp(instruction, StrCat("dimension ", axis, " is out of range"));
  std::vector<int64_t> out_dims = first.shape().dims();
  out_dims[axis] = 0;
  for (const Literal* operand : operands) {
    bool same = operand->element_type() == first.element_type() && operand->shape().rank() == rank;
    for (int64_t d = 0; same && d < rank; ++d) same = d == axis || operand->shape().dim(d) == first.shape().dim(d);
    if (!same)
      BadShapeOp(instruction, StrCat("operand ", operand->shape().ToString(false), " does not match ",
                                     first.shape().ToString(false), " outside dimension ", axis));
    out_dims[axis] += operand->shape().dim(axis);
  }
  Literal result = MakeResult(instruction, first.element_type(), out_dims);
  std::vector<int64_t> out_strides = RowMajorElementStrides(out_dims);
  int64_t element_size = ElementSize(first);
  int64_t position = 0;
  for (const Literal* operand : operands) {
    const std::vector<int64_t>& dims = operand->shape().dims();
    std::vector<int64_t> in_strides = RowMajorElementStrides(dims);
    std::vector<StridedDim> copy(rank);
    for (int64_t d = 0; d < rank; ++d) copy[d] = {dims[d], in_strides[d], out_strides[d]};
    CopyStrided(operand->raw(), result.raw() + position * out_strides[axis] * element_size, std::move(copy),
                element_size);
    position += dims[axis];
  }
  return result;
}

Literal Reverse(const Instruction& instruction, const Literal& operand) {
  const std::vector<int64_t>& dims = operand.shape().dims();
  int64_t rank = operand.shape().rank();
  Literal result = MakeResult(instruction, operand.element_type(), dims);
  std::vector<int64_t> strides = RowMajorElementStrides(dims);
  std::vector<StridedDim> copy(rank);
  for (int64_t d = 0; d < rank; ++d) copy[d] = {dims[d], strides[d], strides[d]};
  int64_t offset = 0;
  for (int64_t d : instruction.dimensions) {
    if (d < 0 || d >= rank) BadShapeOp(instruction, StrCat("dimension ", d, " is out of range"));
    if (dims[d] == 0) return result;
    copy[d].src_stride = -strides[d];
    offset += (dims[d] - 1) * strides[d];
  }
  int64_t element_size = ElementSize(operand);
  CopyStrided(operand.raw() + offset * element_size, result.raw(), std::move(copy), element_size);
  return result;
}

Literal Iota(const Instruction& instruction) {
  const Shape& shape = instruction.shape();
  if (!shape.IsArray()) BadShapeOp(instruction, "iota must produce an array");
  int64_t axis = instruction.iota_dimension;
  if (axis < 0 || axis >= shape.rank()) BadShapeOp(instruction, StrCat("iota_dimension ", axis, " is out of range"));
  Literal result(Shape(shape.element_type(), shape.dims()));
  int64_t outer = 1;
  int64_t inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape.dim(d);
  for (int64_t d = axis + 1; d < shape.rank(); ++d) inner *= shape.dim(d);
  int64_t size = shape.dim(axis);
  DispatchElementType(shape.element_type(), [&]<typename T>() {
    T* out = result.data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k = 0; k < size; ++k) {
        T value;
        if constexpr (kIsHalfLike<T>)
          value = T(static_cast<float>(k));
        else if constexpr (std::is_same_v<T, bool>)
          value = k != 0;
        else
          value = static_cast<T>(k);
        T* row = out + (o * size + k) * inner;
        for (int64_t j = 0; j < inner; ++j) row[j] = value;
      }
    }
  });
  return result;
}

}  // namespace

Literal EvaluateShapeOp(const Instruction& instruction, Operands operands) {
  switch (instruction.opcode()) {
    case Opcode::kIota: return Iota(instruction);
    case Opcode::kBroadcast: ExpectOperands(instruction, operands, 1); return Broadcast(instruction, *operands[0]);
    case Opcode::kReshape:
    case Opcode::kBitcast: ExpectOperands(instruction, operands, 1); return Bitcast(instruction, *operands[0]);
    case Opcode::kTranspose: ExpectOperands(instruction, operands, 1); return Transpose(instruction, *operands[0]);
    case Opcode::kCopy: ExpectOperands(instruction, operands, 1); return Copy(instruction, *operands[0]);
    case Opcode::kSlice: ExpectOperands(instruction, operands, 1); return Slice(instruction, *operands[0]);
    case Opcode::kDynamicSlice: ExpectOperands(instruction, operands, 1); return DynamicSlice(instruction, operands);
    case Opcode::kDynamicUpdateSlice:
      ExpectOperands(instruction, operands, 2);
      return DynamicUpdateSlice(instruction, operands);
    case Opcode::kPad: ExpectOperands(instruction, operands, 2); return Pad(instruction, operands);
    case Opcode::kConcatenate: ExpectOperands(instruction, operands, 1); return Concatenate(instruction, operands);
    case Opcode::kReverse: ExpectOperands(instruction, operands, 1); return Reverse(instruction, *operands[0]);
    default: break;
  }
  GSPMD_USER_ERROR(DescribeInstruction(instruction), " is not a shape operation");
}

}  // namespace gspmd
