// Data-movement ops: constant, iota, broadcast_in_dim, broadcast, reshape, transpose, reverse,
// concatenate, slice, dynamic_slice, dynamic_update_slice, pad, tuple, get_tuple_element,
// get_dimension_size.
//   %0 = stablehlo.broadcast_in_dim %x, dims = [0, 2] : (tensor<4x1xf32>) -> tensor<4x8x3xf32>
//   %1 = stablehlo.slice %x [0:4:2, 1:3] : (tensor<8x4xf32>) -> tensor<2x2xf32>
#include <algorithm>

#include "frontend/stablehlo/op_helpers.h"
#include "frontend/stablehlo/op_table.h"
#include "frontend/stablehlo/types.h"

namespace gspmd::stablehlo {
namespace {

// The declared result type must have the dims the op computes.
void CheckResultDims(ModuleReader& reader, const OpSyntax& op, const std::vector<int64_t>& computed) {
  const Shape& result = SingleResultType(reader, op);
  if (result.IsArray() && result.dims() == computed) return;
  Shape expected(result.IsArray() ? result.element_type() : ElementType::kF32, computed);
  reader.Error(op.pos, StrCat(op.name, " computes ", MlirTypeName(expected), " but its result type is ", MlirTypeName(result)));
}

const Shape& ArrayOperand(ModuleReader& reader, const OpSyntax& op, size_t i) {
  const Shape& shape = op.operands.at(i)->shape();
  if (!shape.IsArray()) reader.Error(op.operand_pos.at(i), StrCat("operand ", i, " of ", op.name, " must be a tensor"));
  return shape;
}

// ---- constant, iota ----

// stablehlo.constant [attr-dict] dense<...> : T
void ParseConstant(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOptionalAttrDict(op);
  Cursor& cursor = reader.cursor();
  cursor.SkipSpace();
  size_t pos = cursor.pos();
  Attr value = ParseAttr(cursor, reader.env());
  if (value.kind != Attr::Kind::kDense) reader.Error(pos, "expected dense<...> : tensor<...> after stablehlo.constant");
  op.result_types = {value.type};
  NamedAttr& named = op.attributes.emplace_back();
  named.name = "value";
  named.pos = pos;
  named.value = std::move(value);
}

Converted ConvertConstant(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 0);
  const Attr& value = RequiredAttr(reader, op, "value");
  if (value.kind != Attr::Kind::kDense) reader.Error(value.pos, StrCat(op.name, ": expected value = dense<...>"));
  const Shape& result = SingleResultType(reader, op);
  if (!value.type.Compatible(result))
    reader.Error(value.pos, StrCat("the constant is ", MlirTypeName(value.type), " but the result type is ", MlirTypeName(result)));
  auto instruction = MakeInstruction(Opcode::kConstant, result, {});
  instruction->mutable_literal() = DenseLiteral(reader.cursor(), value);
  return Single(reader.Add(std::move(instruction)));
}

// stablehlo.iota dim = 1 : T
void ParseIota(ModuleReader& reader, OpSyntax& op) {
  ReadKeywordInt(reader, op, "dim", "iota_dimension");
  reader.ReadOptionalAttrDict(op);
  reader.cursor().Expect(':', "':' and the type of stablehlo.iota");
  op.result_types = {reader.ReadType()};
}

Converted ConvertIota(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 0);
  const Shape& result = SingleResultType(reader, op);
  int64_t dimension = IntAttr(reader, op, "iota_dimension");
  if (!result.IsArray() || dimension < 0 || dimension >= result.rank())
    reader.Error(op.pos, StrCat("iota dimension ", dimension, " is not a dimension of ", MlirTypeName(result)));
  auto instruction = MakeInstruction(Opcode::kIota, result, {});
  instruction->iota_dimension = dimension;
  return Single(reader.Add(std::move(instruction)));
}

// ---- broadcasts, reshape, transpose, reverse ----

// %x, KEYWORD = [...] [attr-dict] : signature
template <bool kSameType>
void ParseOperandsAndInts(ModuleReader& reader, OpSyntax& op, std::string_view keyword, std::string_view attr_name) {
  reader.ReadOperands(op);
  reader.cursor().Expect(',', Expected("', ", keyword, " = [...]' after the operands of ", op.name));
  ReadKeywordInts(reader, op, keyword, attr_name);
  reader.ReadOptionalAttrDict(op);
  if (kSameType) {
    ReadSameOperandsAndResultType(reader, op);
  } else {
    ReadFunctionSignature(reader, op);
  }
}

void ParseBroadcastInDim(ModuleReader& reader, OpSyntax& op) {
  ParseOperandsAndInts<false>(reader, op, "dims", "broadcast_dimensions");
}

// StableHLO's broadcast_in_dim may also expand size-1 dims and map dims out of order; HLO's
// broadcast only adds dims, in order. Size-1 dims that expand are reshaped away first and
// out-of-order dims transposed into order (as XLA's converter does).
Converted ConvertBroadcastInDim(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  CheckOperandTypes(reader, op);
  const Shape& operand = ArrayOperand(reader, op, 0);
  const Shape& result = SingleResultType(reader, op);
  std::vector<int64_t> dims = IntsAttr(reader, op, "broadcast_dimensions");
  if (static_cast<int64_t>(dims.size()) != operand.rank())
    reader.Error(op.pos, StrCat("broadcast_in_dim has ", dims.size(), " dims for an operand of rank ", operand.rank()));
  std::vector<bool> used(static_cast<size_t>(result.rank()), false);
  for (int64_t i = 0; i < operand.rank(); ++i) {
    int64_t d = dims[i];
    if (d < 0 || d >= result.rank() || used[d])
      reader.Error(op.pos, StrCat("broadcast_in_dim dims [", i, "] = ", d, " is not a distinct dimension of ", MlirTypeName(result)));
    used[d] = true;
    if (operand.dim(i) != 1 && operand.dim(i) != result.dim(d))
      reader.Error(op.pos, StrCat("broadcast_in_dim maps operand dim ", i, " of size ", operand.dim(i), " to result dim ", d,
                                  " of size ", result.dim(d), ": expected equal sizes or 1"));
  }
  Instruction* value = op.operands[0];
  std::vector<int64_t> kept;        // operand dims that stay
  std::vector<int64_t> kept_sizes;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (operand.dim(i) == 1 && result.dim(dims[i]) != 1) continue;
    kept.push_back(i);
    kept_sizes.push_back(operand.dim(i));
  }
  if (static_cast<int64_t>(kept.size()) != operand.rank())
    value = reader.AddOp(Opcode::kReshape, ArrayShape(operand.element_type(), kept_sizes), {value});
  // Order the kept dims by where they go.
  std::vector<int64_t> order(kept.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int64_t>(k);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return dims[kept[a]] < dims[kept[b]]; });
  bool sorted = true;
  for (size_t k = 0; k < order.size(); ++k) sorted = sorted && order[k] == static_cast<int64_t>(k);
  if (!sorted) {
    std::vector<int64_t> transposed;
    for (int64_t k : order) transposed.push_back(kept_sizes[k]);
    auto transpose = MakeInstruction(Opcode::kTranspose, ArrayShape(operand.element_type(), transposed), {value});
    transpose->dimensions = order;
    value = reader.Add(std::move(transpose));
  }
  auto broadcast = MakeInstruction(Opcode::kBroadcast, result, {value});
  for (int64_t k : order) broadcast->dimensions.push_back(dims[kept[k]]);
  return Single(AddChecked(reader, op, std::move(broadcast)));
}

void ParseBroadcast(ModuleReader& reader, OpSyntax& op) { ParseOperandsAndInts<false>(reader, op, "sizes", "broadcast_sizes"); }

Converted ConvertBroadcast(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  CheckOperandTypes(reader, op);
  const Shape& operand = ArrayOperand(reader, op, 0);
  std::vector<int64_t> sizes = IntsAttr(reader, op, "broadcast_sizes");
  std::vector<int64_t> dims = sizes;
  dims.insert(dims.end(), operand.dims().begin(), operand.dims().end());
  CheckResultDims(reader, op, dims);
  auto broadcast = MakeInstruction(Opcode::kBroadcast, TakeResultType(reader, op), op.operands);
  for (int64_t i = 0; i < operand.rank(); ++i) broadcast->dimensions.push_back(static_cast<int64_t>(sizes.size()) + i);
  return Single(AddChecked(reader, op, std::move(broadcast)));
}

void ParseReshape(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  reader.ReadOptionalAttrDict(op);
  ReadSameOperandsAndResultType(reader, op);
}

Converted ConvertReshape(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  CheckOperandTypes(reader, op);
  return Single(AddChecked(reader, op, MakeInstruction(Opcode::kReshape, TakeResultType(reader, op), op.operands)));
}

void ParseTranspose(ModuleReader& reader, OpSyntax& op) { ParseOperandsAndInts<false>(reader, op, "dims", "permutation"); }

Converted ConvertTranspose(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  CheckOperandTypes(reader, op);
  auto transpose = MakeInstruction(Opcode::kTranspose, TakeResultType(reader, op), op.operands);
  transpose->dimensions = IntsAttr(reader, op, "permutation");
  return Single(AddChecked(reader, op, std::move(transpose)));
}

void ParseReverse(ModuleReader& reader, OpSyntax& op) { ParseOperandsAndInts<true>(reader, op, "dims", "dimensions"); }

Converted ConvertReverse(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  CheckOperandTypes(reader, op);
  const Shape& operand = ArrayOperand(reader, op, 0);
  CheckResultDims(reader, op, operand.dims());
  auto reverse = MakeInstruction(Opcode::kReverse, TakeResultType(reader, op), op.operands);
  reverse->dimensions = IntsAttr(reader, op, "dimensions");
  for (int64_t d : reverse->dimensions)
    if (d < 0 || d >= operand.rank()) reader.Error(op.pos, StrCat("reverse dimension ", d, " is out of range for rank ", operand.rank()));
  return Single(AddChecked(reader, op, std::move(reverse)));
}

// ---- concatenate, slices, pad ----

// %a, %b, dim = 0 : signature
void ParseConcatenate(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  reader.cursor().Expect(',', "', dim = N' after the operands of stablehlo.concatenate");
  ReadKeywordInt(reader, op, "dim", "dimension");
  reader.ReadOptionalAttrDict(op);
  ReadSameOperandsAndResultType(reader, op);
}

Converted ConvertConcatenate(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1, /*at_least=*/true);
  CheckOperandTypes(reader, op);
  int64_t dimension = IntAttr(reader, op, "dimension");
  const Shape& first = ArrayOperand(reader, op, 0);
  if (dimension < 0 || dimension >= first.rank())
    reader.Error(op.pos, StrCat("concatenate dimension ", dimension, " is out of range for rank ", first.rank()));
  std::vector<int64_t> dims = first.dims();
  dims[dimension] = 0;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const Shape& shape = ArrayOperand(reader, op, i);
    for (int64_t d = 0; d < first.rank(); ++d) {
      if (shape.rank() != first.rank() || (d != dimension && shape.dim(d) != first.dim(d)))
        reader.Error(op.operand_pos[i], StrCat("operand ", i, " of stablehlo.concatenate is ", MlirTypeName(shape),
                                               ": expected the sizes of operand 0 outside dimension ", dimension));
    }
    dims[dimension] += shape.dim(dimension);
  }
  CheckResultDims(reader, op, dims);
  auto concatenate = MakeInstruction(Opcode::kConcatenate, TakeResultType(reader, op), op.operands);
  concatenate->dimensions = {dimension};
  return Single(AddChecked(reader, op, std::move(concatenate)));
}

// %x [0:4:2, 1:3] : signature
void ParseSlice(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  Cursor& cursor = reader.cursor();
  cursor.SkipSpace();
  size_t pos = cursor.pos();
  cursor.Expect('[', "'[' and the slice ranges start:limit[:stride]");
  std::vector<int64_t> starts, limits, strides;
  if (!cursor.TryConsume(']')) {
    do {
      starts.push_back(cursor.ReadInt("the start of a slice range"));
      cursor.Expect(':', "':' between the start and the limit of a slice range");
      limits.push_back(cursor.ReadInt("the limit of a slice range"));
      strides.push_back(cursor.TryConsume(':') ? cursor.ReadInt("the stride of a slice range") : 1);
    } while (cursor.TryConsume(','));
    cursor.Expect(']', "',' or ']' in the slice ranges");
  }
  for (auto [name, values] : {std::pair{"start_indices", &starts}, {"limit_indices", &limits}, {"strides", &strides}}) {
    Attr& attr = op.Add(name, pos);
    attr.kind = Attr::Kind::kIntList;
    attr.ints = std::move(*values);
  }
  reader.ReadOptionalAttrDict(op);
  ReadSameOperandsAndResultType(reader, op);
}

Converted ConvertSlice(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  CheckOperandTypes(reader, op);
  const Shape& operand = ArrayOperand(reader, op, 0);
  std::vector<int64_t> starts = IntsAttr(reader, op, "start_indices");
  std::vector<int64_t> limits = IntsAttr(reader, op, "limit_indices");
  std::vector<int64_t> strides = IntsAttrOr(reader, op, "strides", std::vector<int64_t>(starts.size(), 1));
  if (static_cast<int64_t>(starts.size()) != operand.rank() || limits.size() != starts.size() || strides.size() != starts.size())
    reader.Error(op.pos, StrCat("stablehlo.slice needs one range per dimension of ", MlirTypeName(operand)));
  std::vector<SliceDim> slice;
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (starts[d] < 0 || starts[d] > limits[d] || limits[d] > operand.dim(d) || strides[d] < 1)
      reader.Error(op.pos, StrCat("slice range ", starts[d], ":", limits[d], ":", strides[d], " does not fit dimension ", d,
                                  " of size ", operand.dim(d)));
    slice.push_back({starts[d], limits[d], strides[d]});
    dims.push_back((limits[d] - starts[d] + strides[d] - 1) / strides[d]);
  }
  CheckResultDims(reader, op, dims);
  auto instruction = MakeInstruction(Opcode::kSlice, TakeResultType(reader, op), op.operands);
  instruction->mutable_slice() = std::move(slice);
  return Single(AddChecked(reader, op, std::move(instruction)));
}

void ParseDynamicSlice(ModuleReader& reader, OpSyntax& op) {
  ParseOperandsAndInts<false>(reader, op, "sizes", "slice_sizes");
}

Converted ConvertDynamicSlice(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1, /*at_least=*/true);
  CheckOperandTypes(reader, op);
  const Shape& operand = ArrayOperand(reader, op, 0);
  std::vector<int64_t> sizes = IntsAttr(reader, op, "slice_sizes");
  if (static_cast<int64_t>(op.operands.size()) != operand.rank() + 1 || static_cast<int64_t>(sizes.size()) != operand.rank())
    reader.Error(op.pos, StrCat("stablehlo.dynamic_slice needs one start index and one size per dimension of ",
                                MlirTypeName(operand)));
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (sizes[d] < 0 || sizes[d] > operand.dim(d))
      reader.Error(op.pos, StrCat("dynamic_slice size ", sizes[d], " does not fit dimension ", d, " of size ", operand.dim(d)));
    const Shape& index = ArrayOperand(reader, op, d + 1);
    if (index.rank() != 0 || !IsInteger(index.element_type()))
      reader.Error(op.operand_pos[d + 1], StrCat("start index ", d, " of stablehlo.dynamic_slice must be an integer scalar"));
  }
  CheckResultDims(reader, op, sizes);
  auto instruction = MakeInstruction(Opcode::kDynamicSlice, TakeResultType(reader, op), op.operands);
  instruction->mutable_dynamic_slice_sizes() = std::move(sizes);
  return Single(AddChecked(reader, op, std::move(instruction)));
}

Converted ConvertDynamicUpdateSlice(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 2, /*at_least=*/true);
  CheckOperandTypes(reader, op);
  const Shape& operand = ArrayOperand(reader, op, 0);
  const Shape& update = ArrayOperand(reader, op, 1);
  if (static_cast<int64_t>(op.operands.size()) != operand.rank() + 2 || update.rank() != operand.rank())
    reader.Error(op.pos, StrCat("stablehlo.dynamic_update_slice needs an update of the operand's rank and one start index per "
                                "dimension of ", MlirTypeName(operand)));
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (update.dim(d) > operand.dim(d))
      reader.Error(op.operand_pos[1], StrCat("the update is larger than the operand in dimension ", d));
    const Shape& index = ArrayOperand(reader, op, d + 2);
    if (index.rank() != 0 || !IsInteger(index.element_type()))
      reader.Error(op.operand_pos[d + 2], StrCat("start index ", d, " of stablehlo.dynamic_update_slice must be an integer scalar"));
  }
  CheckResultDims(reader, op, operand.dims());
  return Single(AddChecked(reader, op, MakeInstruction(Opcode::kDynamicUpdateSlice, TakeResultType(reader, op), op.operands)));
}

// %x, %v, low = [..], high = [..], interior = [..] : signature
void ParsePad(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  Cursor& cursor = reader.cursor();
  cursor.Expect(',', "', low = [...]' after the operands of stablehlo.pad");
  ReadKeywordInts(reader, op, "low", "edge_padding_low");
  cursor.Expect(',', "', high = [...]'");
  ReadKeywordInts(reader, op, "high", "edge_padding_high");
  cursor.Expect(',', "', interior = [...]'");
  ReadKeywordInts(reader, op, "interior", "interior_padding");
  reader.ReadOptionalAttrDict(op);
  ReadSameOperandsAndResultType(reader, op);
}

Converted ConvertPad(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 2);
  CheckOperandTypes(reader, op);
  const Shape& operand = ArrayOperand(reader, op, 0);
  if (ArrayOperand(reader, op, 1).rank() != 0) reader.Error(op.operand_pos[1], "the padding value of stablehlo.pad must be a scalar");
  std::vector<int64_t> low = IntsAttr(reader, op, "edge_padding_low");
  std::vector<int64_t> high = IntsAttr(reader, op, "edge_padding_high");
  std::vector<int64_t> interior = IntsAttr(reader, op, "interior_padding");
  if (static_cast<int64_t>(low.size()) != operand.rank() || high.size() != low.size() || interior.size() != low.size())
    reader.Error(op.pos, StrCat("stablehlo.pad needs low, high and interior padding for each dimension of ", MlirTypeName(operand)));
  PaddingConfig padding;
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (interior[d] < 0) reader.Error(op.pos, "interior padding must not be negative");
    padding.push_back({low[d], high[d], interior[d]});
    int64_t size = operand.dim(d) == 0 ? 0 : operand.dim(d) + (operand.dim(d) - 1) * interior[d];
    dims.push_back(low[d] + size + high[d]);
    if (dims.back() < 0) reader.Error(op.pos, StrCat("padding makes dimension ", d, " negative"));
  }
  CheckResultDims(reader, op, dims);
  auto instruction = MakeInstruction(Opcode::kPad, TakeResultType(reader, op), op.operands);
  instruction->mutable_padding() = std::move(padding);
  return Single(AddChecked(reader, op, std::move(instruction)));
}

// ---- tuples, get_dimension_size ----

// %t[0] : signature
void ParseGetTupleElement(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  Cursor& cursor = reader.cursor();
  cursor.Expect('[', "'[' and the element index");
  cursor.SkipSpace();
  Attr& index = op.Add("index", cursor.pos());
  index.kind = Attr::Kind::kInt;
  index.integer = cursor.ReadInt("a tuple element index");
  cursor.Expect(']', "']' after the element index");
  reader.ReadOptionalAttrDict(op);
  ReadSameOperandsAndResultType(reader, op);
}

Converted ConvertGetTupleElement(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  CheckOperandTypes(reader, op);
  auto gte = MakeInstruction(Opcode::kGetTupleElement, TakeResultType(reader, op), op.operands);
  gte->tuple_index = IntAttr(reader, op, "index");
  return Single(AddChecked(reader, op, std::move(gte)));
}

// %a, %b : tuple<...>
void ParseTuple(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  reader.ReadOptionalAttrDict(op);
  reader.cursor().Expect(':', "':' and the tuple type");
  op.result_types = {reader.ReadType()};
  if (op.result_types[0].IsTuple()) op.operand_types = op.result_types[0].tuple_shapes();
}

Converted ConvertTuple(ModuleReader& reader, OpSyntax& op) {
  CheckOperandTypes(reader, op);
  return Single(AddChecked(reader, op, MakeInstruction(Opcode::kTuple, TakeResultType(reader, op), op.operands)));
}

void ParseGetDimensionSize(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  reader.cursor().Expect(',', "', dim = N'");
  ReadKeywordInt(reader, op, "dim", "dimension");
  reader.ReadOptionalAttrDict(op);
  ReadSameOperandsAndResultType(reader, op);
}

Converted ConvertGetDimensionSize(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  CheckOperandTypes(reader, op);
  const Shape& operand = ArrayOperand(reader, op, 0);
  int64_t dimension = IntAttr(reader, op, "dimension");
  if (dimension < 0 || dimension >= operand.rank())
    reader.Error(op.pos, StrCat("dimension ", dimension, " is out of range for ", MlirTypeName(operand)));
  // The size is static: a constant of the result's type.
  const Shape& result = SingleResultType(reader, op);
  auto constant = MakeInstruction(Opcode::kConstant, result, {});
  Literal literal(result);
  literal.SetFromInt64(0, operand.dim(dimension));
  constant->mutable_literal() = std::move(literal);
  return Single(reader.Add(std::move(constant)));
}

}  // namespace

void RegisterShapeOps(OpTable& table) {
  table.Add("stablehlo.constant", ParseConstant, ConvertConstant);
  table.Add("sdy.constant", ParseConstant, ConvertConstant);
  table.Add("stablehlo.iota", ParseIota, ConvertIota);
  table.Add("stablehlo.broadcast_in_dim", ParseBroadcastInDim, ConvertBroadcastInDim);
  table.Add("stablehlo.broadcast", ParseBroadcast, ConvertBroadcast);
  table.Add("stablehlo.reshape", ParseReshape, ConvertReshape);
  table.Add("stablehlo.transpose", ParseTranspose, ConvertTranspose);
  table.Add("stablehlo.reverse", ParseReverse, ConvertReverse);
  table.Add("stablehlo.concatenate", ParseConcatenate, ConvertConcatenate);
  table.Add("stablehlo.slice", ParseSlice, ConvertSlice);
  table.Add("stablehlo.dynamic_slice", ParseDynamicSlice, ConvertDynamicSlice);
  table.Add("stablehlo.dynamic_update_slice", ParseReshape, ConvertDynamicUpdateSlice);
  table.Add("stablehlo.pad", ParsePad, ConvertPad);
  table.Add("stablehlo.get_tuple_element", ParseGetTupleElement, ConvertGetTupleElement);
  table.Add("stablehlo.tuple", ParseTuple, ConvertTuple);
  table.Add("stablehlo.get_dimension_size", ParseGetDimensionSize, ConvertGetDimensionSize);
}

}  // namespace gspmd::stablehlo
