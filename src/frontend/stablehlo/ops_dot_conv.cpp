// Contractions: dot_general, dot and convolution.
//   %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1],
//          precision = [DEFAULT, DEFAULT] : (tensor<2x4x8xf32>, tensor<2x8x3xf32>) -> tensor<2x4x3xf32>
//   %1 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
//          window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {feature_group_count = 1 : i64,
//          batch_group_count = 1 : i64} : (tensor<...>, tensor<...>) -> tensor<...>
#include <algorithm>

#include "frontend/stablehlo/op_helpers.h"
#include "frontend/stablehlo/op_table.h"
#include "frontend/stablehlo/types.h"

namespace gspmd::stablehlo {
namespace {

// precision_config as HLO's operand_precision (only when not all DEFAULT).
void SetPrecision(ModuleReader& reader, const OpSyntax& op, Instruction& instruction) {
  const Attr* precision = OptionalAttr(op, "precision_config");
  if (precision == nullptr || precision->kind != Attr::Kind::kArray) return;
  std::string text;
  bool all_default = true;
  for (const Attr& element : precision->elements) {
    std::string_view value = AttrEnum(reader.cursor(), element, "precision");
    if (value != "DEFAULT" && value != "HIGH" && value != "HIGHEST")
      reader.Error(element.pos, StrCat("unknown precision ", value, " (expected DEFAULT, HIGH or HIGHEST)"));
    all_default = all_default && value == "DEFAULT";
    std::string lower;
    for (char c : value) lower += static_cast<char>(c - 'A' + 'a');
    text += (text.empty() ? "" : ",") + lower;
  }
  if (!all_default) instruction.mutable_extra_attributes().emplace_back("operand_precision", "{" + text + "}");
}

// "[0, 1] x [2, 3]" -> two lists stored as `lhs_name`, `rhs_name`.
void ReadDimsPair(ModuleReader& reader, OpSyntax& op, std::string_view lhs_name, std::string_view rhs_name) {
  Cursor& cursor = reader.cursor();
  cursor.Expect('=', "'=' and [lhs dims] x [rhs dims]");
  cursor.SkipSpace();
  Attr& lhs = op.Add(lhs_name, cursor.pos());
  lhs.kind = Attr::Kind::kIntList;
  lhs.ints = ParseIntList(cursor, lhs_name);
  cursor.ExpectKeyword("x", "'x' between the lhs and rhs dims");
  cursor.SkipSpace();
  Attr& rhs = op.Add(rhs_name, cursor.pos());
  rhs.kind = Attr::Kind::kIntList;
  rhs.ints = ParseIntList(cursor, rhs_name);
}

// %a, %b, [batching_dims = [..] x [..],] contracting_dims = [..] x [..] [, precision = [..]]
// [, algorithm = <...>] [attr-dict] : signature
void ParseDotGeneral(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  Cursor& cursor = reader.cursor();
  while (cursor.TryConsume(',')) {
    if (cursor.TryKeyword("batching_dims")) {
      ReadDimsPair(reader, op, "lhs_batching_dimensions", "rhs_batching_dimensions");
    } else if (cursor.TryKeyword("contracting_dims")) {
      ReadDimsPair(reader, op, "lhs_contracting_dimensions", "rhs_contracting_dimensions");
    } else if (ReadOptionalPrecision(reader, op)) {
    } else if (cursor.TryKeyword("algorithm")) {
      cursor.Expect('=', "'=' after algorithm");
      cursor.ReadBalanced("'<' and the dot algorithm");
    } else {
      cursor.ErrorExpected("batching_dims, contracting_dims, precision or algorithm");
    }
  }
  reader.ReadOptionalAttrDict(op);
  ReadFunctionSignature(reader, op);
}

DotDimensionNumbers ReadDotDims(ModuleReader& reader, const OpSyntax& op) {
  DotDimensionNumbers dims;
  if (const Attr* attr = OptionalAttr(op, "dot_dimension_numbers")) {
    if (attr->kind != Attr::Kind::kDialect || attr->str != "stablehlo.dot")
      reader.Error(attr->pos, "dot_dimension_numbers: expected #stablehlo.dot<...>");
    ForEachBodyField(reader.cursor(), *attr, [&](std::string_view name, size_t pos, Cursor& cursor) {
      std::vector<int64_t> values = ParseIntList(cursor, name);
      if (name == "lhs_batching_dimensions") dims.lhs_batch_dims = values;
      else if (name == "rhs_batching_dimensions") dims.rhs_batch_dims = values;
      else if (name == "lhs_contracting_dimensions") dims.lhs_contracting_dims = values;
      else if (name == "rhs_contracting_dimensions") dims.rhs_contracting_dims = values;
      else cursor.ErrorAt(pos, StrCat("unknown field ", name, " of #stablehlo.dot"));
    });
    return dims;
  }
  dims.lhs_batch_dims = IntsAttrOr(reader, op, "lhs_batching_dimensions", {});
  dims.rhs_batch_dims = IntsAttrOr(reader, op, "rhs_batching_dimensions", {});
  dims.lhs_contracting_dims = IntsAttrOr(reader, op, "lhs_contracting_dimensions", {});
  dims.rhs_contracting_dims = IntsAttrOr(reader, op, "rhs_contracting_dimensions", {});
  return dims;
}

// The result dims of a dot: batch, lhs free, rhs free.
std::vector<int64_t> DotResultDims(ModuleReader& reader, const OpSyntax& op, const DotDimensionNumbers& dims) {
  const Shape& lhs = op.operands[0]->shape();
  const Shape& rhs = op.operands[1]->shape();
  auto check = [&](const std::vector<int64_t>& list, const Shape& shape, std::string_view what) {
    std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(shape.rank(), 0)), false);
    for (int64_t d : list) {
      if (d < 0 || d >= shape.rank() || seen[d]) reader.Error(op.pos, StrCat(op.name, ": ", what, " dimension ", d, " is out of range or repeated"));
      seen[d] = true;
    }
  };
  check(dims.lhs_batch_dims, lhs, "lhs batching");
  check(dims.rhs_batch_dims, rhs, "rhs batching");
  check(dims.lhs_contracting_dims, lhs, "lhs contracting");
  check(dims.rhs_contracting_dims, rhs, "rhs contracting");
  std::vector<int64_t> result;
  for (int64_t d : dims.lhs_batch_dims) result.push_back(lhs.dim(d));
  auto free = [&](const Shape& shape, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
    for (int64_t d = 0; d < shape.rank(); ++d) {
      bool used = std::find(batch.begin(), batch.end(), d) != batch.end() ||
                  std::find(contracting.begin(), contracting.end(), d) != contracting.end();
      if (!used) result.push_back(shape.dim(d));
    }
  };
  free(lhs, dims.lhs_batch_dims, dims.lhs_contracting_dims);
  free(rhs, dims.rhs_batch_dims, dims.rhs_contracting_dims);
  return result;
}

Converted MakeDot(ModuleReader& reader, OpSyntax& op, DotDimensionNumbers dims) {
  const Shape& result = SingleResultType(reader, op);
  std::vector<int64_t> expected = DotResultDims(reader, op, dims);
  if (!result.IsArray() || result.dims() != expected)
    reader.Error(op.pos, StrCat(op.name, " of ", MlirTypeName(op.operands[0]->shape()), " and ",
                                MlirTypeName(op.operands[1]->shape()), " gives dims [", [&] {
                                  std::string text;
                                  for (size_t i = 0; i < expected.size(); ++i) text += (i ? "x" : "") + std::to_string(expected[i]);
                                  return text;
                                }(), "] but the result type is ", MlirTypeName(result)));
  auto dot = MakeInstruction(Opcode::kDot, result, op.operands);
  dot->mutable_dot_dims() = std::move(dims);
  SetPrecision(reader, op, *dot);
  return Single(AddChecked(reader, op, std::move(dot)));
}

Converted ConvertDotGeneral(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 2);
  CheckOperandTypes(reader, op);
  return MakeDot(reader, op, ReadDotDims(reader, op));
}

// %a, %b [, precision = [...]] [attr-dict] : signature
void ParseDot(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  Cursor& cursor = reader.cursor();
  if (cursor.TryConsume(',') && !ReadOptionalPrecision(reader, op)) cursor.ErrorExpected("precision = [...]");
  reader.ReadOptionalAttrDict(op);
  ReadFunctionSignature(reader, op);
}

Converted ConvertDot(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 2);
  CheckOperandTypes(reader, op);
  const Shape& lhs = op.operands[0]->shape();
  const Shape& rhs = op.operands[1]->shape();
  if (lhs.rank() < 1 || lhs.rank() > 2 || rhs.rank() < 1 || rhs.rank() > 2)
    reader.Error(op.pos, "stablehlo.dot takes vectors or matrices (expected dot_general for higher ranks)");
  DotDimensionNumbers dims;
  dims.lhs_contracting_dims = {lhs.rank() - 1};
  dims.rhs_contracting_dims = {0};
  return MakeDot(reader, op, std::move(dims));
}

// ---- convolution ----

// "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]" at the cursor.
ConvDimensionNumbers ReadConvLabels(Cursor& cursor, size_t pos) {
  ConvDimensionNumbers dims;
  auto read_group = [&](char first, char second, int64_t* first_dim, int64_t* second_dim, std::vector<int64_t>& spatial,
                        std::string_view what) {
    cursor.Expect('[', Expected("'[' and the ", what, " dimension labels"));
    std::vector<std::pair<int64_t, int64_t>> numbered;  // (spatial index, position)
    bool saw_first = false, saw_second = false;
    int64_t position = 0;
    do {
      cursor.SkipSpace();
      size_t label_pos = cursor.pos();
      if (cursor.AtInteger()) {
        numbered.emplace_back(cursor.ReadInt("a spatial dimension number"), position);
      } else {
        std::string_view label = cursor.ReadBareId(Expected("a ", what, " dimension label (", std::string(1, first), ", ",
                                                          std::string(1, second), " or a spatial number)"));
        if (label.size() == 1 && label[0] == first && !saw_first) {
          *first_dim = position;
          saw_first = true;
        } else if (label.size() == 1 && label[0] == second && !saw_second) {
          *second_dim = position;
          saw_second = true;
        } else {
          cursor.ErrorAt(label_pos, StrCat("unexpected ", what, " dimension label '", label, "'"));
        }
      }
      ++position;
    } while (cursor.TryConsume(','));
    cursor.Expect(']', Expected("',' or ']' in the ", what, " dimension labels"));
    if (!saw_first || !saw_second)
      cursor.ErrorAt(pos, StrCat("the ", what, " labels need '", std::string(1, first), "' and '", std::string(1, second), "'"));
    spatial.assign(numbered.size(), -1);
    for (const auto& [index, where] : numbered) {
      if (index < 0 || index >= static_cast<int64_t>(numbered.size()) || spatial[index] >= 0)
        cursor.ErrorAt(pos, StrCat("the ", what, " spatial dimensions must be numbered 0..", numbered.size() - 1, " once each"));
      spatial[index] = where;
    }
  };
  read_group('b', 'f', &dims.input_batch_dim, &dims.input_feature_dim, dims.input_spatial_dims, "input");
  cursor.ExpectKeyword("x", "'x' between the input and kernel labels");
  read_group('i', 'o', &dims.kernel_input_feature_dim, &dims.kernel_output_feature_dim, dims.kernel_spatial_dims, "kernel");
  cursor.Expect("->", "'->' before the output labels");
  read_group('b', 'f', &dims.output_batch_dim, &dims.output_feature_dim, dims.output_spatial_dims, "output");
  if (dims.kernel_spatial_dims.size() != dims.input_spatial_dims.size() ||
      dims.output_spatial_dims.size() != dims.input_spatial_dims.size())
    cursor.ErrorAt(pos, "input, kernel and output must have the same number of spatial dimensions");
  return dims;
}

ConvDimensionNumbers ReadConvDims(ModuleReader& reader, const OpSyntax& op) {
  const Attr& attr = RequiredAttr(reader, op, "dimension_numbers");
  if (attr.kind != Attr::Kind::kDialect || attr.str != "stablehlo.conv")
    reader.Error(attr.pos, "dimension_numbers: expected #stablehlo.conv<...>");
  Cursor cursor(reader.cursor().text().substr(0, attr.body_pos + attr.body.size()), reader.cursor().filename());
  cursor.set_pos(attr.body_pos);
  if (!cursor.TryKeyword("raw")) {
    ConvDimensionNumbers dims = ReadConvLabels(cursor, attr.pos);
    if (!cursor.AtEnd()) cursor.ErrorExpected("the end of the convolution dimension numbers");
    return dims;
  }
  Attr fields = attr;
  fields.body_pos = cursor.pos();
  fields.body = attr.body.substr(cursor.pos() - attr.body_pos);
  ConvDimensionNumbers dims;
  ForEachBodyField(reader.cursor(), fields, [&](std::string_view name, size_t pos, Cursor& field) {
    if (name == "input_batch_dimension") dims.input_batch_dim = field.ReadInt(name);
    else if (name == "input_feature_dimension") dims.input_feature_dim = field.ReadInt(name);
    else if (name == "input_spatial_dimensions") dims.input_spatial_dims = ParseIntList(field, name);
    else if (name == "kernel_input_feature_dimension") dims.kernel_input_feature_dim = field.ReadInt(name);
    else if (name == "kernel_output_feature_dimension") dims.kernel_output_feature_dim = field.ReadInt(name);
    else if (name == "kernel_spatial_dimensions") dims.kernel_spatial_dims = ParseIntList(field, name);
    else if (name == "output_batch_dimension") dims.output_batch_dim = field.ReadInt(name);
    else if (name == "output_feature_dimension") dims.output_feature_dim = field.ReadInt(name);
    else if (name == "output_spatial_dimensions") dims.output_spatial_dims = ParseIntList(field, name);
    else field.ErrorAt(pos, StrCat("unknown field ", name, " of #stablehlo.conv"));
  });
  return dims;
}

// window = {stride = [..], pad = [[..], ..], lhs_dilate = [..], rhs_dilate = [..], reverse = [..]}
void ReadWindow(ModuleReader& reader, OpSyntax& op) {
  Cursor& cursor = reader.cursor();
  cursor.Expect('=', "'=' after window");
  cursor.Expect('{', "'{' to start the window");
  if (cursor.TryConsume('}')) return;
  do {
    cursor.SkipSpace();
    size_t pos = cursor.pos();
    std::string_view key = cursor.ReadBareId("stride, pad, lhs_dilate, rhs_dilate or reverse");
    cursor.Expect('=', Expected("'=' after ", key));
    if (key == "pad") {
      Attr& padding = op.Add("padding", pos);
      padding.kind = Attr::Kind::kArray;
      cursor.Expect('[', "'[' to start the padding");
      if (!cursor.TryConsume(']')) {
        do {
          Attr& row = padding.elements.emplace_back();
          row.kind = Attr::Kind::kIntList;
          row.pos = cursor.pos();
          row.ints = ParseIntList(cursor, "a [low, high] padding pair");
          if (row.ints.size() != 2) cursor.ErrorAt(row.pos, "expected a [low, high] padding pair");
        } while (cursor.TryConsume(','));
        cursor.Expect(']', "',' or ']' in the padding");
      }
    } else if (key == "reverse") {
      Attr& reverse = op.Add("window_reversal", pos);
      reverse.kind = Attr::Kind::kIntList;
      cursor.Expect('[', "'[' to start the reversal flags");
      if (!cursor.TryConsume(']')) {
        do {
          if (cursor.TryKeyword("true")) reverse.ints.push_back(1);
          else if (cursor.TryKeyword("false")) reverse.ints.push_back(0);
          else reverse.ints.push_back(cursor.ReadInt("true, false, 0 or 1") != 0);
        } while (cursor.TryConsume(','));
        cursor.Expect(']', "',' or ']' in the reversal flags");
      }
    } else {
      std::string_view name = key == "stride" ? "window_strides" : key == "lhs_dilate" ? "lhs_dilation"
                              : key == "rhs_dilate" ? "rhs_dilation" : std::string_view();
      if (name.empty()) cursor.ErrorAt(pos, StrCat("unknown window field ", key, " (expected stride, pad, lhs_dilate, rhs_dilate or reverse)"));
      Attr& values = op.Add(name, pos);
      values.kind = Attr::Kind::kIntList;
      values.ints = ParseIntList(cursor, key);
    }
  } while (cursor.TryConsume(','));
  cursor.Expect('}', "',' or '}' in the window");
}

// (%x, %k) dim_numbers = ..., window = {...} [attr-dict] : signature
void ParseConvolution(ModuleReader& reader, OpSyntax& op) {
  Cursor& cursor = reader.cursor();
  cursor.Expect('(', "'(' and the operands of stablehlo.convolution");
  reader.ReadOperands(op);
  cursor.Expect(')', "')' after the operands");
  cursor.SkipSpace();
  size_t pos = cursor.pos();
  cursor.ExpectKeyword("dim_numbers", "dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]");
  cursor.Expect('=', "'=' after dim_numbers");
  cursor.SkipSpace();
  size_t labels_pos = cursor.pos();
  ReadConvLabels(cursor, labels_pos);
  Attr& dims = op.Add("dimension_numbers", pos);
  dims.kind = Attr::Kind::kDialect;
  dims.str = "stablehlo.conv";
  dims.body = cursor.text().substr(labels_pos, cursor.pos() - labels_pos);
  dims.body_pos = labels_pos;
  while (cursor.TryConsume(',')) {
    if (!cursor.TryKeyword("window")) cursor.ErrorExpected("window = {...}");
    ReadWindow(reader, op);
  }
  reader.ReadOptionalAttrDict(op);
  ReadFunctionSignature(reader, op);
}

Converted ConvertConvolution(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 2);
  CheckOperandTypes(reader, op);
  ConvDimensionNumbers dims = ReadConvDims(reader, op);
  const Shape& input = op.operands[0]->shape();
  const Shape& kernel = op.operands[1]->shape();
  const Shape& result = SingleResultType(reader, op);
  const size_t spatial = dims.input_spatial_dims.size();
  if (input.rank() != static_cast<int64_t>(spatial) + 2 || kernel.rank() != input.rank() || result.rank() != input.rank())
    reader.Error(op.pos, StrCat("stablehlo.convolution: the dimension numbers describe rank ", spatial + 2,
                                " tensors but the input is ", MlirTypeName(input)));
  auto list = [&](std::string_view name, int64_t fallback) {
    std::vector<int64_t> values = IntsAttrOr(reader, op, name, std::vector<int64_t>(spatial, fallback));
    if (values.size() != spatial) reader.Error(op.pos, StrCat(name, " needs ", spatial, " entries (one per spatial dimension)"));
    return values;
  };
  std::vector<int64_t> strides = list("window_strides", 1);
  std::vector<int64_t> lhs_dilation = list("lhs_dilation", 1);
  std::vector<int64_t> rhs_dilation = list("rhs_dilation", 1);
  std::vector<std::vector<int64_t>> padding(spatial, {0, 0});
  if (const Attr* attr = OptionalAttr(op, "padding")) padding = AttrIntRows(reader.cursor(), *attr, "padding");
  if (padding.size() != spatial) reader.Error(op.pos, StrCat("padding needs ", spatial, " [low, high] pairs"));
  std::vector<bool> reversal(spatial, false);
  if (const Attr* attr = OptionalAttr(op, "window_reversal")) reversal = AttrBools(reader.cursor(), *attr, "window_reversal");
  if (reversal.size() != spatial) reader.Error(op.pos, StrCat("window_reversal needs ", spatial, " entries"));

  auto convolution = MakeInstruction(Opcode::kConvolution, result, op.operands);
  convolution->feature_group_count = IntAttrOr(reader, op, "feature_group_count", 1);
  convolution->batch_group_count = IntAttrOr(reader, op, "batch_group_count", 1);
  if (convolution->feature_group_count < 1 || convolution->batch_group_count < 1)
    reader.Error(op.pos, "feature_group_count and batch_group_count must be positive");
  Window window;
  for (size_t k = 0; k < spatial; ++k) {
    WindowDim dim;
    dim.size = kernel.dim(dims.kernel_spatial_dims[k]);
    dim.stride = strides[k];
    dim.padding_low = padding[k].at(0);
    dim.padding_high = padding[k].at(1);
    dim.base_dilation = lhs_dilation[k];
    dim.window_dilation = rhs_dilation[k];
    dim.reversal = reversal[k];
    if (dim.stride < 1 || dim.base_dilation < 1 || dim.window_dilation < 1)
      reader.Error(op.pos, "convolution strides and dilations must be positive");
    window.push_back(dim);
    // The output size this window gives.
    int64_t in = input.dim(dims.input_spatial_dims[k]);
    int64_t padded = (in == 0 ? 0 : (in - 1) * dim.base_dilation + 1) + dim.padding_low + dim.padding_high;
    int64_t span = (dim.size - 1) * dim.window_dilation + 1;
    int64_t out = padded < span ? 0 : (padded - span) / dim.stride + 1;
    if (result.dim(dims.output_spatial_dims[k]) != out)
      reader.Error(op.pos, StrCat("convolution spatial dimension ", k, " gives ", out, " outputs but the result type has ",
                                  result.dim(dims.output_spatial_dims[k])));
  }
  if (result.dim(dims.output_feature_dim) != kernel.dim(dims.kernel_output_feature_dim))
    reader.Error(op.pos, "the convolution's output features must equal the kernel's output features");
  convolution->mutable_window() = std::move(window);
  convolution->mutable_conv_dims() = std::move(dims);
  SetPrecision(reader, op, *convolution);
  return Single(AddChecked(reader, op, std::move(convolution)));
}

}  // namespace

void RegisterDotConvOps(OpTable& table) {
  table.Add("stablehlo.dot_general", ParseDotGeneral, ConvertDotGeneral);
  table.Add("stablehlo.dot", ParseDot, ConvertDot);
  table.Add("stablehlo.convolution", ParseConvolution, ConvertConvolution);
}

}  // namespace gspmd::stablehlo
