// The StableHLO syntax of each opcode: the pretty form StableHLO prints where it has one
// (elementwise ops, constant, broadcast_in_dim, dot_general, reduce, while, ...), the generic
// form otherwise or when asked for.
#include <cinttypes>
#include <cstring>
#include <functional>

#include "frontend/stablehlo/types.h"
#include "frontend/stablehlo/writer_internal.h"
#include "support/diagnostic.h"

namespace gspmd::stablehlo {
namespace {

// One element of a literal: floats by their bits (exact), integers in decimal, true/false.
std::string Element(const Literal& literal, int64_t i) {
  ElementType type = literal.element_type();
  if (type == ElementType::kPred) return literal.data<bool>()[i] ? "true" : "false";
  if (IsFloatingPoint(type)) {
    const int64_t size = ElementByteSize(type);
    uint64_t bits = 0;
    std::memcpy(&bits, literal.raw() + i * size, static_cast<size_t>(size));
    char buffer[24];
    std::snprintf(buffer, sizeof(buffer), "0x%0*" PRIX64, static_cast<int>(size * 2), bits);
    return buffer;
  }
  if (IsUnsignedInteger(type)) return std::to_string(static_cast<uint64_t>(literal.GetAsInt64(i)));
  return std::to_string(literal.GetAsInt64(i));
}

std::string Dense(const Literal& literal) {
  const int64_t count = literal.element_count();
  std::string body;
  bool splat = count > 1;
  for (int64_t i = 1; splat && i < count; ++i) splat = Element(literal, i) == Element(literal, 0);
  if (count == 0) {
  } else if (splat || literal.shape().rank() == 0) {
    body = Element(literal, 0);
  } else if (count > 16) {
    // Big constants as hex data, the way MLIR prints them.
    static constexpr char kDigits[] = "0123456789ABCDEF";
    body = "\"0x";
    for (int64_t b = 0; b < literal.byte_size(); ++b) {
      uint8_t byte = literal.raw()[b];
      body += kDigits[byte >> 4];
      body += kDigits[byte & 15];
    }
    body += "\"";
  } else {
    const std::vector<int64_t>& dims = literal.shape().dims();
    int64_t next = 0;
    std::function<void(size_t)> level = [&](size_t d) {
      body += '[';
      for (int64_t k = 0; k < dims[d]; ++k) {
        if (k) body += ", ";
        if (d + 1 < dims.size()) level(d + 1);
        else body += Element(literal, next++);
      }
      body += ']';
    };
    level(0);
  }
  return StrCat("dense<", body, "> : ", MlirTypeName(literal.shape()));
}

std::string UnaryName(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAbs: return "stablehlo.abs";
    case Opcode::kCbrt: return "stablehlo.cbrt";
    case Opcode::kCeil: return "stablehlo.ceil";
    case Opcode::kClz: return "stablehlo.count_leading_zeros";
    case Opcode::kCosine: return "stablehlo.cosine";
    case Opcode::kExp: return "stablehlo.exponential";
    case Opcode::kExpm1: return "stablehlo.exponential_minus_one";
    case Opcode::kFloor: return "stablehlo.floor";
    case Opcode::kIsFinite: return "stablehlo.is_finite";
    case Opcode::kLog: return "stablehlo.log";
    case Opcode::kLog1p: return "stablehlo.log_plus_one";
    case Opcode::kLogistic: return "stablehlo.logistic";
    case Opcode::kNegate: return "stablehlo.negate";
    case Opcode::kNot: return "stablehlo.not";
    case Opcode::kPopulationCount: return "stablehlo.popcnt";
    case Opcode::kRoundNearestAfz: return "stablehlo.round_nearest_afz";
    case Opcode::kRoundNearestEven: return "stablehlo.round_nearest_even";
    case Opcode::kRsqrt: return "stablehlo.rsqrt";
    case Opcode::kSign: return "stablehlo.sign";
    case Opcode::kSine: return "stablehlo.sine";
    case Opcode::kSqrt: return "stablehlo.sqrt";
    case Opcode::kTan: return "stablehlo.tan";
    case Opcode::kTanh: return "stablehlo.tanh";
    case Opcode::kConvert: return "stablehlo.convert";
    case Opcode::kBitcastConvert: return "stablehlo.bitcast_convert";
    case Opcode::kErf: return "chlo.erf";
    default: return "";
  }
}

std::string BinaryName(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd: return "stablehlo.add";
    case Opcode::kSubtract: return "stablehlo.subtract";
    case Opcode::kMultiply: return "stablehlo.multiply";
    case Opcode::kDivide: return "stablehlo.divide";
    case Opcode::kRemainder: return "stablehlo.remainder";
    case Opcode::kMaximum: return "stablehlo.maximum";
    case Opcode::kMinimum: return "stablehlo.minimum";
    case Opcode::kPower: return "stablehlo.power";
    case Opcode::kAtan2: return "stablehlo.atan2";
    case Opcode::kAnd: return "stablehlo.and";
    case Opcode::kOr: return "stablehlo.or";
    case Opcode::kXor: return "stablehlo.xor";
    case Opcode::kShiftLeft: return "stablehlo.shift_left";
    case Opcode::kShiftRightArithmetic: return "stablehlo.shift_right_arithmetic";
    case Opcode::kShiftRightLogical: return "stablehlo.shift_right_logical";
    default: return "";
  }
}

std::string_view DirectionName(ComparisonDirection direction) {
  switch (direction) {
    case ComparisonDirection::kEq: return "EQ";
    case ComparisonDirection::kNe: return "NE";
    case ComparisonDirection::kLt: return "LT";
    case ComparisonDirection::kLe: return "LE";
    case ComparisonDirection::kGt: return "GT";
    case ComparisonDirection::kGe: return "GE";
  }
  return "EQ";
}

std::string_view ComparisonTypeName(ComparisonType type) {
  switch (type) {
    case ComparisonType::kFloat: return "FLOAT";
    case ComparisonType::kTotalOrder: return "TOTALORDER";
    case ComparisonType::kSigned: return "SIGNED";
    case ComparisonType::kUnsigned: return "UNSIGNED";
    default: return "";
  }
}

std::vector<Shape> OperandTypes(const Instruction& instruction) {
  std::vector<Shape> types;
  for (const Instruction* operand : instruction.operands()) types.push_back(operand->shape());
  return types;
}

// "[b, 0, 1, f]" for positions of `rank` dims.
std::string Labels(int64_t rank, int64_t first, char first_label, int64_t second, char second_label,
                   const std::vector<int64_t>& spatial) {
  std::vector<std::string> labels(static_cast<size_t>(rank));
  labels[first] = std::string(1, first_label);
  labels[second] = std::string(1, second_label);
  for (size_t k = 0; k < spatial.size(); ++k) labels[spatial[k]] = std::to_string(k);
  return "[" + JoinText(labels) + "]";
}

std::string ConvLabels(const Instruction& instruction) {
  const ConvDimensionNumbers& d = instruction.conv_dims();
  const int64_t rank = instruction.shape().rank();
  return Labels(rank, d.input_batch_dim, 'b', d.input_feature_dim, 'f', d.input_spatial_dims) + "x" +
         Labels(rank, d.kernel_input_feature_dim, 'i', d.kernel_output_feature_dim, 'o', d.kernel_spatial_dims) + "->" +
         Labels(rank, d.output_batch_dim, 'b', d.output_feature_dim, 'f', d.output_spatial_dims);
}

std::string Rows(const std::vector<std::vector<int64_t>>& rows, int64_t cols) {
  if (rows.empty()) return StrCat("dense<> : tensor<0x", cols, "xi64>");
  std::vector<std::string> parts;
  for (const auto& row : rows) parts.push_back(IntList(row));
  return StrCat("dense<[", JoinText(parts), "]> : tensor<", rows.size(), "x", cols, "xi64>");
}

std::vector<std::vector<int64_t>> WindowPadding(const Window& window) {
  std::vector<std::vector<int64_t>> rows;
  for (const WindowDim& dim : window) rows.push_back({dim.padding_low, dim.padding_high});
  return rows;
}

template <typename Field>
std::vector<int64_t> WindowField(const Window& window, Field field) {
  std::vector<int64_t> values;
  for (const WindowDim& dim : window) values.push_back(field(dim));
  return values;
}

// The explicit device groups of a collective (-1 pads short groups, as StableHLO writes them).
std::string GroupsText(const Instruction& instruction, int64_t devices) {
  std::vector<std::vector<int64_t>> groups = instruction.replica_groups().Groups(devices);
  size_t width = 0;
  for (const auto& group : groups) width = std::max(width, group.size());
  for (auto& group : groups) group.resize(width, -1);
  return Rows(groups, static_cast<int64_t>(width));
}

bool IsBinaryOfParameters(const Computation& computation, Opcode* opcode) {
  const Instruction* root = computation.root();
  if (computation.num_parameters() != 2 || BinaryName(root->opcode()).empty() || root->operand_count() != 2) return false;
  if (root->operand(0) != computation.parameter(0) || root->operand(1) != computation.parameter(1)) return false;
  *opcode = root->opcode();
  return true;
}

}  // namespace

std::string Writer::WriteOp(const Instruction& instruction, const std::string& def, int indent) {
  const Opcode opcode = instruction.opcode();
  const std::string lead = Indent(indent) + (def.empty() ? "" : def + " = ");
  const std::string loc = Location(instruction) + "\n";
  const std::vector<Shape> operand_types = OperandTypes(instruction);
  std::vector<Shape> result_types = Flattens(instruction) ? instruction.shape().tuple_shapes()
                                                          : std::vector<Shape>{instruction.shape()};
  const std::string signature = FunctionTypeText(operand_types, result_types);
  const std::string operands = Refs(instruction.operands());
  // The generic form: "name"(operands) <{properties}> (regions) {attributes} : signature.
  const bool as_generic = generic();
  auto generic_form = [&](std::string_view name, const std::vector<std::string>& properties,
                     const std::vector<std::string>& regions = {}, const std::string& signature_text = "") {
    std::string text = StrCat(lead, QuoteText(name), "(", operands, ")");
    if (!properties.empty()) text += " <{" + JoinText(properties) + "}>";
    if (!regions.empty()) text += " (" + JoinText(regions) + ")";
    return text + AttrDict(instruction) + " : " + (signature_text.empty() ? signature : signature_text) + loc;
  };
  const std::string attrs = AttrDict(instruction);

  if (std::string name = UnaryName(opcode); !name.empty()) {
    if (as_generic) return generic_form(name, {});
    if (name.starts_with("chlo.")) return StrCat(lead, name, " ", operands, attrs, " : ", MlirTypeName(operand_types[0]), " -> ", MlirTypeName(instruction.shape()), loc);
    bool same = operand_types[0] == instruction.shape();
    return StrCat(lead, name, " ", operands, attrs, " : ", same ? MlirTypeName(instruction.shape()) : signature, loc);
  }
  if (std::string name = BinaryName(opcode); !name.empty()) {
    if (as_generic) return generic_form(name, {});
    bool same = operand_types[0] == instruction.shape() && operand_types[1] == instruction.shape();
    return StrCat(lead, name, " ", operands, attrs, " : ", same ? MlirTypeName(instruction.shape()) : signature, loc);
  }

  switch (opcode) {
    case Opcode::kCompare: {
      std::string_view direction = DirectionName(instruction.comparison_direction);
      std::string_view type = ComparisonTypeName(instruction.comparison_type);
      if (as_generic) {
        std::vector<std::string> props = {StrCat("comparison_direction = #stablehlo<comparison_direction ", direction, ">")};
        if (!type.empty()) props.push_back(StrCat("compare_type = #stablehlo<comparison_type ", type, ">"));
        return generic_form("stablehlo.compare", props);
      }
      return StrCat(lead, "stablehlo.compare ", direction, ", ", operands, type.empty() ? "" : ", ", type, attrs, " : ",
                    signature, loc);
    }
    case Opcode::kSelect:
      if (as_generic) return generic_form("stablehlo.select", {});
      return StrCat(lead, "stablehlo.select ", operands, attrs, " : ", signature, loc);
    case Opcode::kClamp:
      if (as_generic) return generic_form("stablehlo.clamp", {});
      return StrCat(lead, "stablehlo.clamp ", operands, attrs, " : ", signature, loc);
    case Opcode::kReducePrecision:
      if (as_generic)
        return generic_form("stablehlo.reduce_precision", {StrCat("exponent_bits = ", instruction.exponent_bits, " : i32"),
                                                      StrCat("mantissa_bits = ", instruction.mantissa_bits, " : i32")});
      return StrCat(lead, "stablehlo.reduce_precision ", operands, ", format = e", instruction.exponent_bits, "m",
                    instruction.mantissa_bits, attrs, " : ", MlirTypeName(instruction.shape()), loc);
    case Opcode::kConstant: {
      std::string value = Dense(*instruction.literal());
      if (as_generic) return generic_form("stablehlo.constant", {"value = " + value});
      return StrCat(lead, "stablehlo.constant", attrs, " ", value, loc);
    }
    case Opcode::kIota:
      if (as_generic) return generic_form("stablehlo.iota", {StrCat("iota_dimension = ", instruction.iota_dimension, " : i64")});
      return StrCat(lead, "stablehlo.iota dim = ", instruction.iota_dimension, attrs, " : ", MlirTypeName(instruction.shape()), loc);
    case Opcode::kBroadcast:
      if (as_generic) return generic_form("stablehlo.broadcast_in_dim", {"broadcast_dimensions = " + DenseArray(instruction.dimensions)});
      return StrCat(lead, "stablehlo.broadcast_in_dim ", operands, ", dims = ", IntList(instruction.dimensions), attrs, " : ",
                    signature, loc);
    case Opcode::kReshape: case Opcode::kCopy: case Opcode::kBitcast:
      if (as_generic) return generic_form("stablehlo.reshape", {});
      return StrCat(lead, "stablehlo.reshape ", operands, attrs, " : ", signature, loc);
    case Opcode::kTranspose:
      if (as_generic) return generic_form("stablehlo.transpose", {"permutation = " + DenseArray(instruction.dimensions)});
      return StrCat(lead, "stablehlo.transpose ", operands, ", dims = ", IntList(instruction.dimensions), attrs, " : ", signature, loc);
    case Opcode::kReverse:
      if (as_generic) return generic_form("stablehlo.reverse", {"dimensions = " + DenseArray(instruction.dimensions)});
      return StrCat(lead, "stablehlo.reverse ", operands, ", dims = ", IntList(instruction.dimensions), attrs, " : ",
                    MlirTypeName(instruction.shape()), loc);
    case Opcode::kConcatenate:
      if (as_generic) return generic_form("stablehlo.concatenate", {StrCat("dimension = ", instruction.dimensions.at(0), " : i64")});
      return StrCat(lead, "stablehlo.concatenate ", operands, ", dim = ", instruction.dimensions.at(0), attrs, " : ", signature, loc);
    case Opcode::kSlice: {
      std::vector<int64_t> starts, limits, strides;
      std::vector<std::string> ranges;
      for (const SliceDim& dim : instruction.slice()) {
        starts.push_back(dim.start);
        limits.push_back(dim.limit);
        strides.push_back(dim.stride);
        ranges.push_back(dim.stride == 1 ? StrCat(dim.start, ":", dim.limit) : StrCat(dim.start, ":", dim.limit, ":", dim.stride));
      }
      if (as_generic)
        return generic_form("stablehlo.slice", {"start_indices = " + DenseArray(starts), "limit_indices = " + DenseArray(limits),
                                           "strides = " + DenseArray(strides)});
      return StrCat(lead, "stablehlo.slice ", operands, " [", JoinText(ranges), "]", attrs, " : ", signature, loc);
    }
    case Opcode::kDynamicSlice:
      if (as_generic) return generic_form("stablehlo.dynamic_slice", {"slice_sizes = " + DenseArray(instruction.dynamic_slice_sizes())});
      return StrCat(lead, "stablehlo.dynamic_slice ", operands, ", sizes = ", IntList(instruction.dynamic_slice_sizes()), attrs,
                    " : ", signature, loc);
    case Opcode::kDynamicUpdateSlice:
      if (as_generic) return generic_form("stablehlo.dynamic_update_slice", {});
      return StrCat(lead, "stablehlo.dynamic_update_slice ", operands, attrs, " : ", signature, loc);
    case Opcode::kPad: {
      std::vector<int64_t> low, high, interior;
      for (const PaddingDim& dim : instruction.padding()) {
        low.push_back(dim.low);
        high.push_back(dim.high);
        interior.push_back(dim.interior);
      }
      if (as_generic)
        return generic_form("stablehlo.pad", {"edge_padding_low = " + DenseArray(low), "edge_padding_high = " + DenseArray(high),
                                         "interior_padding = " + DenseArray(interior)});
      return StrCat(lead, "stablehlo.pad ", operands, ", low = ", IntList(low), ", high = ", IntList(high), ", interior = ",
                    IntList(interior), attrs, " : ", signature, loc);
    }
    case Opcode::kTuple:
      if (as_generic) return generic_form("stablehlo.tuple", {});
      return StrCat(lead, "stablehlo.tuple ", operands, attrs, " : ", MlirTypeName(instruction.shape()), loc);
    case Opcode::kGetTupleElement:
      if (as_generic) return generic_form("stablehlo.get_tuple_element", {StrCat("index = ", instruction.tuple_index, " : i32")});
      return StrCat(lead, "stablehlo.get_tuple_element ", operands, "[", instruction.tuple_index, "]", attrs, " : ", signature, loc);
    case Opcode::kGetDimensionSize:
      return generic_form("stablehlo.get_dimension_size", {StrCat("dimension = ", instruction.dimensions.at(0), " : i64")});
    case Opcode::kDot: {
      const DotDimensionNumbers& d = instruction.dot_dims();
      if (as_generic)
        return generic_form("stablehlo.dot_general",
                       {StrCat("dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = ", IntList(d.lhs_batch_dims),
                               ", rhs_batching_dimensions = ", IntList(d.rhs_batch_dims), ", lhs_contracting_dimensions = ",
                               IntList(d.lhs_contracting_dims), ", rhs_contracting_dimensions = ", IntList(d.rhs_contracting_dims), ">")});
      std::string dims;
      if (!d.lhs_batch_dims.empty()) dims += StrCat(", batching_dims = ", IntList(d.lhs_batch_dims), " x ", IntList(d.rhs_batch_dims));
      dims += StrCat(", contracting_dims = ", IntList(d.lhs_contracting_dims), " x ", IntList(d.rhs_contracting_dims));
      return StrCat(lead, "stablehlo.dot_general ", operands, dims, ", precision = [DEFAULT, DEFAULT]", attrs, " : ", signature, loc);
    }
    case Opcode::kConvolution: {
      const Window& window = instruction.window();
      std::vector<int64_t> strides = WindowField(window, [](const WindowDim& d) { return d.stride; });
      std::vector<int64_t> lhs = WindowField(window, [](const WindowDim& d) { return d.base_dilation; });
      std::vector<int64_t> rhs = WindowField(window, [](const WindowDim& d) { return d.window_dilation; });
      std::vector<std::string> reverse;
      for (const WindowDim& dim : window) reverse.push_back(dim.reversal ? "true" : "false");
      std::vector<std::string> groups = {StrCat("batch_group_count = ", instruction.batch_group_count, " : i64"),
                                         StrCat("feature_group_count = ", instruction.feature_group_count, " : i64")};
      if (as_generic) {
        std::vector<std::string> props = {"dimension_numbers = #stablehlo.conv<" + ConvLabels(instruction) + ">",
                                          "window_strides = " + DenseArray(strides),
                                          "padding = " + Rows(WindowPadding(window), 2), "lhs_dilation = " + DenseArray(lhs),
                                          "rhs_dilation = " + DenseArray(rhs),
                                          "window_reversal = array<i1" + (reverse.empty() ? "" : ": " + JoinText(reverse)) + ">"};
        props.insert(props.end(), groups.begin(), groups.end());
        return generic_form("stablehlo.convolution", props);
      }
      std::vector<std::string> pads;
      for (const auto& row : WindowPadding(window)) pads.push_back(IntList(row));
      return StrCat(lead, "stablehlo.convolution(", operands, ") dim_numbers = ", ConvLabels(instruction), ", window = {stride = ",
                    IntList(strides), ", pad = [", JoinText(pads), "], lhs_dilate = ", IntList(lhs), ", rhs_dilate = ", IntList(rhs),
                    ", reverse = [", JoinText(reverse), "]}", AttrDict(instruction, groups), " : ", signature, loc);
    }
    case Opcode::kReduce: {
      const Computation& reducer = *instruction.to_apply();
      const int64_t n = instruction.operand_count() / 2;
      Opcode binary;
      std::string dims = IntList(instruction.dimensions);
      if (!as_generic && n == 1 && IsBinaryOfParameters(reducer, &binary))
        return StrCat(lead, "stablehlo.reduce(", Ref(instruction.operand(0)), " init: ", Ref(instruction.operand(1)),
                      ") applies ", BinaryName(binary), " across dimensions = ", dims, attrs, " : ", signature, loc);
      if (as_generic)
        return generic_form("stablehlo.reduce", {"dimensions = " + DenseArray(instruction.dimensions)},
                       {Region(reducer, indent, true)});
      std::vector<std::string> inputs, pairs, names;
      for (int64_t i = 0; i < 2 * n; ++i) names.push_back(FreshName("arg"));
      for (int64_t i = 0; i < n; ++i) {
        inputs.push_back(StrCat("(", Ref(instruction.operand(i)), " init: ", Ref(instruction.operand(n + i)), ")"));
        std::string type = MlirTypeName(reducer.parameter(i)->shape());
        pairs.push_back(StrCat("(", names[i], ": ", type, ", ", names[n + i], ": ", type, ")"));
      }
      return StrCat(lead, "stablehlo.reduce", JoinText(inputs), " across dimensions = ", dims, attrs, " : ", signature, "\n",
                    Indent(indent + 2), "reducer", JoinText(pairs, " "), " ", Region(reducer, indent + 2, true, names), loc);
    }
    case Opcode::kReduceWindow: {
      const Window& window = instruction.window();
      return generic_form("stablehlo.reduce_window",
                     {"window_dimensions = " + DenseArray(WindowField(window, [](const WindowDim& d) { return d.size; })),
                      "window_strides = " + DenseArray(WindowField(window, [](const WindowDim& d) { return d.stride; })),
                      "base_dilations = " + DenseArray(WindowField(window, [](const WindowDim& d) { return d.base_dilation; })),
                      "window_dilations = " + DenseArray(WindowField(window, [](const WindowDim& d) { return d.window_dilation; })),
                      "padding = " + Rows(WindowPadding(window), 2)},
                     {Region(*instruction.to_apply(), indent, true)});
    }
    case Opcode::kSelectAndScatter: {
      const Window& window = instruction.window();
      return generic_form("stablehlo.select_and_scatter",
                     {"window_dimensions = " + DenseArray(WindowField(window, [](const WindowDim& d) { return d.size; })),
                      "window_strides = " + DenseArray(WindowField(window, [](const WindowDim& d) { return d.stride; })),
                      "padding = " + Rows(WindowPadding(window), 2)},
                     {Region(*instruction.called_computations()[0], indent, true),
                      Region(*instruction.called_computations()[1], indent, true)});
    }
    case Opcode::kSort:
      return generic_form("stablehlo.sort",
                     {StrCat("dimension = ", instruction.dimensions.at(0), " : i64"),
                      StrCat("is_stable = ", instruction.is_stable ? "true" : "false")},
                     {Region(*instruction.to_apply(), indent, true)});
    case Opcode::kMap:
      return generic_form("stablehlo.map", {"dimensions = " + DenseArray(instruction.dimensions)},
                     {Region(*instruction.to_apply(), indent, true)});
    case Opcode::kGather: {
      const GatherDimensionNumbers& d = instruction.gather_dims();
      return generic_form("stablehlo.gather",
                     {StrCat("dimension_numbers = #stablehlo.gather<offset_dims = ", IntList(d.offset_dims),
                             ", collapsed_slice_dims = ", IntList(d.collapsed_slice_dims), ", operand_batching_dims = ",
                             IntList(d.operand_batching_dims), ", start_indices_batching_dims = ",
                             IntList(d.start_indices_batching_dims), ", start_index_map = ", IntList(d.start_index_map),
                             ", index_vector_dim = ", d.index_vector_dim, ">"),
                      StrCat("indices_are_sorted = ", instruction.indices_are_sorted ? "true" : "false"),
                      "slice_sizes = " + DenseArray(instruction.gather_slice_sizes())});
    }
    case Opcode::kScatter: {
      const ScatterDimensionNumbers& d = instruction.scatter_dims();
      return generic_form("stablehlo.scatter",
                     {StrCat("scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = ", IntList(d.update_window_dims),
                             ", inserted_window_dims = ", IntList(d.inserted_window_dims), ", input_batching_dims = ",
                             IntList(d.input_batching_dims), ", scatter_indices_batching_dims = ",
                             IntList(d.scatter_indices_batching_dims), ", scatter_dims_to_operand_dims = ",
                             IntList(d.scatter_dims_to_operand_dims), ", index_vector_dim = ", d.index_vector_dim, ">"),
                      StrCat("indices_are_sorted = ", instruction.indices_are_sorted ? "true" : "false"),
                      StrCat("unique_indices = ", instruction.unique_indices ? "true" : "false")},
                     {Region(*instruction.to_apply(), indent, true)});
    }
    case Opcode::kWhile: {
      const std::string type = MlirTypeName(instruction.shape());
      if (as_generic)
        return generic_form("stablehlo.while", {}, {Region(*instruction.while_condition(), indent, false),
                                               Region(*instruction.while_body(), indent, false)});
      std::string arg = FreshName("iterArg");
      std::string attributes = attrs.empty() ? "" : " attributes" + attrs;
      return StrCat(lead, "stablehlo.while(", arg, " = ", operands, ") : ", type, attributes, "\n", Indent(indent), "cond ",
                    Region(*instruction.while_condition(), indent, false, {arg}), " do ",
                    Region(*instruction.while_body(), indent, false, {arg}), loc);
    }
    case Opcode::kConditional: {
      const std::vector<Computation*>& branches = instruction.called_computations();
      std::vector<std::string> regions;
      for (size_t k = 0; k < branches.size(); ++k) {
        std::vector<std::string> captured = {Ref(instruction.operand(static_cast<int64_t>(k) + 1))};
        regions.push_back(Region(*branches[k], indent, true, {}, &captured));
      }
      bool is_if = instruction.operand(0)->shape().element_type() == ElementType::kPred;
      std::vector<Shape> selector = {instruction.operand(0)->shape()};
      std::string text = StrCat(lead, QuoteText(is_if ? "stablehlo.if" : "stablehlo.case"), "(", Ref(instruction.operand(0)),
                                ") (", JoinText(regions), ")");
      return text + attrs + " : " + FunctionTypeText(selector, result_types) + loc;
    }
    case Opcode::kCall: {
      std::string callee = FunctionName(*instruction.to_apply());
      if (as_generic) return generic_form("func.call", {"callee = @" + callee});
      return StrCat(lead, "func.call @", callee, "(", operands, ")", attrs, " : ", signature, loc);
    }
    case Opcode::kCustomCall: {
      std::vector<std::string> more;
      if (instruction.custom_call_has_side_effect) more.push_back("has_side_effect = true");
      if (instruction.backend_config) {
        std::string config = *instruction.backend_config;
        if (config.size() >= 2 && config.front() == '"') {
          std::string unquoted;
          for (size_t i = 1; i + 1 < config.size(); ++i) {
            if (config[i] == '\\' && i + 2 < config.size()) ++i;
            unquoted += config[i];
          }
          config = unquoted;
        }
        more.push_back("backend_config = " + QuoteText(config));
      }
      std::vector<std::string> called;
      for (const Computation* computation : instruction.called_computations()) called.push_back("@" + FunctionName(*computation));
      if (!called.empty()) more.push_back("called_computations = [" + JoinText(called) + "]");
      return StrCat(lead, "stablehlo.custom_call @", QuoteText(instruction.custom_call_target), "(", operands, ")",
                    AttrDict(instruction, more), " : ", signature, loc);
    }
    case Opcode::kAllReduce: case Opcode::kAllGather: case Opcode::kReduceScatter: case Opcode::kAllToAll:
    case Opcode::kCollectiveBroadcast: case Opcode::kCollectivePermute: {
      std::vector<std::string> props;
      const int64_t devices = num_devices();
      if (instruction.channel_id) props.push_back(StrCat("channel_handle = #stablehlo.channel_handle<handle = ", *instruction.channel_id, ", type = 1>"));
      if (opcode == Opcode::kCollectivePermute) {
        std::vector<std::vector<int64_t>> pairs;
        for (const SourceTargetPair& pair : instruction.source_target_pairs()) pairs.push_back({pair.source, pair.target});
        props.push_back("source_target_pairs = " + Rows(pairs, 2));
        return generic_form("stablehlo.collective_permute", props);
      }
      props.push_back("replica_groups = " + GroupsText(instruction, devices));
      if (instruction.use_global_device_ids) props.push_back("use_global_device_ids");
      if (opcode == Opcode::kAllGather) props.push_back(StrCat("all_gather_dim = ", instruction.dimensions.at(0), " : i64"));
      if (opcode == Opcode::kReduceScatter) props.push_back(StrCat("scatter_dimension = ", instruction.dimensions.at(0), " : i64"));
      if (opcode == Opcode::kAllToAll) {
        int64_t d = instruction.dimensions.at(0);
        std::vector<std::vector<int64_t>> groups = instruction.replica_groups().Groups(devices);
        props.push_back(StrCat("split_dimension = ", d, " : i64"));
        props.push_back(StrCat("concat_dimension = ", d, " : i64"));
        props.push_back(StrCat("split_count = ", groups.empty() ? devices : static_cast<int64_t>(groups[0].size()), " : i64"));
      }
      std::vector<std::string> regions;
      if (opcode == Opcode::kAllReduce || opcode == Opcode::kReduceScatter) regions.push_back(Region(*instruction.to_apply(), indent, true));
      std::string_view name = opcode == Opcode::kAllReduce ? "stablehlo.all_reduce" : opcode == Opcode::kAllGather ? "stablehlo.all_gather"
                              : opcode == Opcode::kReduceScatter ? "stablehlo.reduce_scatter" : opcode == Opcode::kAllToAll
                              ? "stablehlo.all_to_all" : "stablehlo.collective_broadcast";
      return generic_form(name, props, regions);
    }
    case Opcode::kPartitionId:
      return StrCat(lead, "stablehlo.partition_id", attrs, " : tensor<ui32>", loc);
    case Opcode::kReplicaId:
      return StrCat(lead, "stablehlo.replica_id", attrs, " : tensor<ui32>", loc);
    case Opcode::kTopK: {
      const std::vector<Shape>& elements = instruction.shape().tuple_shapes();
      const std::string topk_type = StrCat(" : ", MlirTypeName(operand_types[0]), " -> (", TypeList(elements), ")");
      if (instruction.largest) return StrCat(lead, "chlo.top_k(", operands, ", k = ", instruction.k, ")", attrs, topk_type, loc);
      // chlo.top_k finds the largest: the smallest of x are the largest of -x (same indices,
      // ties to the lower index either way), negated back.
      std::string negated = FreshName(), top = FreshName(), values = FreshName();
      const std::string in_type = MlirTypeName(operand_types[0]), out_type = MlirTypeName(elements[0]);
      std::string text = StrCat(Indent(indent), negated, " = stablehlo.negate ", operands, " : ", in_type, "\n");
      text += StrCat(Indent(indent), top, ":2 = chlo.top_k(", negated, ", k = ", instruction.k, ")", topk_type, "\n");
      text += StrCat(Indent(indent), values, " = stablehlo.negate ", top, "#0 : ", out_type, "\n");
      return text + StrCat(lead, "stablehlo.tuple ", values, ", ", top, "#1", attrs, " : ", MlirTypeName(instruction.shape()), loc);
    }
    case Opcode::kRngBitGenerator: {
      std::string algorithm = "DEFAULT";
      for (const auto& [key, value] : instruction.extra_attributes())
        if (key == "algorithm") algorithm = value == "rng_three_fry" ? "THREE_FRY" : value == "rng_philox" ? "PHILOX" : "DEFAULT";
      return StrCat(lead, "stablehlo.rng_bit_generator ", operands, ", algorithm = ", algorithm, attrs, " : ", signature, loc);
    }
    case Opcode::kRng: {
      std::string shape = FreshName();
      std::vector<int64_t> dims = instruction.shape().dims();
      std::string shape_type = StrCat("tensor<", dims.size(), "xi64>");
      std::string constant = StrCat(Indent(indent), shape, " = stablehlo.constant dense<", IntList(dims), "> : ", shape_type, "\n");
      std::string distribution = instruction.rng_distribution() == "rng_normal" ? "NORMAL" : "UNIFORM";
      std::vector<Shape> types = operand_types;
      types.push_back(ArrayShape(ElementType::kS64, {static_cast<int64_t>(dims.size())}));
      return constant + StrCat(lead, "stablehlo.rng ", operands, ", ", shape, ", distribution = ", distribution, attrs, " : ",
                               FunctionTypeText(types, result_types), loc);
    }
    case Opcode::kOptimizationBarrier:
      return StrCat(lead, "stablehlo.optimization_barrier ", operands, attrs, " : ", TypeList(operand_types), loc);
    case Opcode::kAfterAll:
      return StrCat(lead, "stablehlo.after_all ", operands, attrs, " : !stablehlo.token", loc);
    default:
      GSPMD_USER_ERROR("%", instruction.name(), ": ", OpcodeName(opcode), " has no StableHLO form");
  }
}

}  // namespace gspmd::stablehlo
