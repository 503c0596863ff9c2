// Elementwise ops: unary and binary arithmetic, compare, select, clamp, convert,
// bitcast_convert, reduce_precision, and the CHLO elementwise ops HLO has (erf, tan).
//   %0 = stablehlo.add %a, %b : tensor<4xf32>
//   %1 = stablehlo.compare LT, %a, %b, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
//   %2 = stablehlo.select %p, %a, %b : tensor<4xi1>, tensor<4xf32>
#include "frontend/stablehlo/op_helpers.h"
#include "frontend/stablehlo/op_table.h"

namespace gspmd::stablehlo {
namespace {

struct NamedOpcode {
  std::string_view name;
  Opcode opcode;
};

constexpr NamedOpcode kUnary[] = {
    {"stablehlo.abs", Opcode::kAbs},
    {"stablehlo.cbrt", Opcode::kCbrt},
    {"stablehlo.ceil", Opcode::kCeil},
    {"stablehlo.count_leading_zeros", Opcode::kClz},
    {"stablehlo.cosine", Opcode::kCosine},
    {"stablehlo.exponential", Opcode::kExp},
    {"stablehlo.exponential_minus_one", Opcode::kExpm1},
    {"stablehlo.floor", Opcode::kFloor},
    {"stablehlo.is_finite", Opcode::kIsFinite},
    {"stablehlo.log", Opcode::kLog},
    {"stablehlo.log_plus_one", Opcode::kLog1p},
    {"stablehlo.logistic", Opcode::kLogistic},
    {"stablehlo.negate", Opcode::kNegate},
    {"stablehlo.not", Opcode::kNot},
    {"stablehlo.popcnt", Opcode::kPopulationCount},
    {"stablehlo.round_nearest_afz", Opcode::kRoundNearestAfz},
    {"stablehlo.round_nearest_even", Opcode::kRoundNearestEven},
    {"stablehlo.rsqrt", Opcode::kRsqrt},
    {"stablehlo.sign", Opcode::kSign},
    {"stablehlo.sine", Opcode::kSine},
    {"stablehlo.sqrt", Opcode::kSqrt},
    {"stablehlo.tan", Opcode::kTan},
    {"stablehlo.tanh", Opcode::kTanh},
    {"stablehlo.convert", Opcode::kConvert},
    {"stablehlo.bitcast_convert", Opcode::kBitcastConvert},
    {"chlo.erf", Opcode::kErf},
    {"chlo.tan", Opcode::kTan},
};

constexpr NamedOpcode kBinary[] = {
    {"stablehlo.add", Opcode::kAdd},
    {"stablehlo.subtract", Opcode::kSubtract},
    {"stablehlo.multiply", Opcode::kMultiply},
    {"stablehlo.divide", Opcode::kDivide},
    {"stablehlo.remainder", Opcode::kRemainder},
    {"stablehlo.maximum", Opcode::kMaximum},
    {"stablehlo.minimum", Opcode::kMinimum},
    {"stablehlo.power", Opcode::kPower},
    {"stablehlo.atan2", Opcode::kAtan2},
    {"stablehlo.and", Opcode::kAnd},
    {"stablehlo.or", Opcode::kOr},
    {"stablehlo.xor", Opcode::kXor},
    {"stablehlo.shift_left", Opcode::kShiftLeft},
    {"stablehlo.shift_right_arithmetic", Opcode::kShiftRightArithmetic},
    {"stablehlo.shift_right_logical", Opcode::kShiftRightLogical},
};

Opcode OpcodeOf(const OpSyntax& op) {
  for (const NamedOpcode& entry : kUnary)
    if (entry.name == op.name) return entry.opcode;
  for (const NamedOpcode& entry : kBinary)
    if (entry.name == op.name) return entry.opcode;
  GSPMD_CHECK(false, "no opcode for ", op.name);
}

// %a, %b [attr-dict] : type-or-function-type  (CHLO: ": T -> T")
void ParseElementwise(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  reader.ReadOptionalAttrDict(op);
  if (op.name.starts_with("chlo.")) {
    ReadLooseSignature(reader, op);
    return;
  }
  ReadSameOperandsAndResultType(reader, op);
}

Converted ConvertUnary(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  CheckOperandTypes(reader, op);
  Opcode opcode = OpcodeOf(op);
  return Single(AddChecked(reader, op, MakeInstruction(opcode, TakeResultType(reader, op), op.operands)));
}

Converted ConvertBinary(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 2);
  CheckOperandTypes(reader, op);
  return Single(AddChecked(reader, op, MakeInstruction(OpcodeOf(op), TakeResultType(reader, op), op.operands)));
}

// stablehlo.compare LT, %a, %b [, SIGNED] [attr-dict] : (T, T) -> R
void ParseCompare(ModuleReader& reader, OpSyntax& op) {
  Cursor& cursor = reader.cursor();
  cursor.SkipSpace();
  Attr& direction = op.Add("comparison_direction", cursor.pos());
  direction.kind = Attr::Kind::kEnum;
  direction.str = std::string(cursor.ReadBareId("a comparison direction (EQ, NE, LT, LE, GT, GE)"));
  cursor.Expect(',', "',' after the comparison direction");
  reader.ReadOperands(op);
  if (cursor.TryConsume(',')) {
    cursor.SkipSpace();
    Attr& type = op.Add("compare_type", cursor.pos());
    type.kind = Attr::Kind::kEnum;
    type.str = std::string(cursor.ReadBareId("a comparison type (FLOAT, TOTALORDER, SIGNED, UNSIGNED, NOTYPE)"));
  }
  reader.ReadOptionalAttrDict(op);
  ReadSameOperandsAndResultType(reader, op);
}

Converted ConvertCompare(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 2);
  CheckOperandTypes(reader, op);
  auto instruction = MakeInstruction(Opcode::kCompare, TakeResultType(reader, op), op.operands);
  const NamedAttr* direction_attr = op.Find("comparison_direction");
  if (direction_attr == nullptr) reader.Error(op.pos, "stablehlo.compare needs comparison_direction");
  std::string_view direction = AttrEnum(reader.cursor(), direction_attr->value, "comparison_direction");
  static constexpr std::pair<std::string_view, ComparisonDirection> kDirections[] = {
      {"EQ", ComparisonDirection::kEq}, {"NE", ComparisonDirection::kNe}, {"LT", ComparisonDirection::kLt},
      {"LE", ComparisonDirection::kLe}, {"GT", ComparisonDirection::kGt}, {"GE", ComparisonDirection::kGe}};
  bool known = false;
  for (const auto& [name, value] : kDirections) {
    if (name != direction) continue;
    instruction->comparison_direction = value;
    known = true;
  }
  if (!known)
    reader.Error(direction_attr->pos, StrCat("unknown comparison direction ", direction, " (expected EQ, NE, LT, LE, GT or GE)"));
  if (const NamedAttr* type_attr = op.Find("compare_type")) {
    std::string_view type = AttrEnum(reader.cursor(), type_attr->value, "compare_type");
    if (type == "FLOAT") {
      instruction->comparison_type = ComparisonType::kFloat;
    } else if (type == "TOTALORDER") {
      instruction->comparison_type = ComparisonType::kTotalOrder;
    } else if (type == "SIGNED") {
      instruction->comparison_type = ComparisonType::kSigned;
    } else if (type == "UNSIGNED") {
      instruction->comparison_type = ComparisonType::kUnsigned;
    } else if (type != "NOTYPE") {
      reader.Error(type_attr->pos, StrCat("unknown comparison type ", type,
                                          " (expected FLOAT, TOTALORDER, SIGNED, UNSIGNED or NOTYPE)"));
    }
  }
  return Single(AddChecked(reader, op, std::move(instruction)));
}

// A scalar operand of an op whose other operands have `shape`, broadcast to it (StableHLO
// allows a scalar predicate in select and scalar bounds in clamp).
Instruction* BroadcastScalarTo(ModuleReader& reader, Instruction* scalar, const Shape& shape) {
  if (scalar->shape().rank() == shape.rank()) return scalar;
  Shape result = ArrayShape(scalar->shape().element_type(), shape.dims());
  return reader.AddOp(Opcode::kBroadcast, std::move(result), {scalar});
}

// stablehlo.select %p, %a, %b : T_pred, T  or a function type.
void ParseSelect(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  reader.ReadOptionalAttrDict(op);
  Cursor& cursor = reader.cursor();
  cursor.Expect(':', "':' and the types of stablehlo.select");
  if (cursor.Peek() == '(') {
    FunctionType type = ParseFunctionType(cursor, *reader.env().type_aliases);
    op.operand_types = std::move(type.inputs);
    op.result_types = std::move(type.results);
    return;
  }
  Shape pred = reader.ReadType();
  cursor.Expect(',', "',' and the result type after the predicate type of stablehlo.select");
  Shape value = reader.ReadType();
  op.operand_types = {pred, value, value};
  op.result_types = {value};
}

Converted ConvertSelect(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 3);
  CheckOperandTypes(reader, op);
  const Shape& result = SingleResultType(reader, op);
  Instruction* pred = BroadcastScalarTo(reader, op.operands[0], result);
  return Single(AddChecked(reader, op, MakeInstruction(Opcode::kSelect, result, {pred, op.operands[1], op.operands[2]})));
}

Converted ConvertClamp(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 3);
  CheckOperandTypes(reader, op);
  const Shape& result = SingleResultType(reader, op);
  Instruction* low = BroadcastScalarTo(reader, op.operands[0], result);
  Instruction* high = BroadcastScalarTo(reader, op.operands[2], result);
  return Single(AddChecked(reader, op, MakeInstruction(Opcode::kClamp, result, {low, op.operands[1], high})));
}

// stablehlo.reduce_precision %x, format = e8m10 : T
void ParseReducePrecision(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  Cursor& cursor = reader.cursor();
  cursor.Expect(',', "', format = eNmM' in stablehlo.reduce_precision");
  cursor.SkipSpace();
  size_t pos = cursor.pos();
  cursor.ExpectKeyword("format", "'format = eNmM'");
  cursor.Expect('=', "'=' after format");
  cursor.SkipSpace();
  size_t value_pos = cursor.pos();
  std::string_view format = cursor.ReadBareId("a format such as e8m10");
  size_t m = format.find('m');
  if (format.size() < 4 || format[0] != 'e' || m == std::string_view::npos)
    reader.Error(value_pos, "expected a format such as e8m10 (exponent and mantissa bits)");
  int64_t exponent_bits = 0, mantissa_bits = 0;
  try {
    exponent_bits = std::stoll(std::string(format.substr(1, m - 1)));
    mantissa_bits = std::stoll(std::string(format.substr(m + 1)));
  } catch (const std::exception&) {
    reader.Error(value_pos, "expected a format such as e8m10 (exponent and mantissa bits)");
  }
  for (auto [name, value] : {std::pair{"exponent_bits", exponent_bits}, {"mantissa_bits", mantissa_bits}}) {
    Attr& attr = op.Add(name, pos);
    attr.kind = Attr::Kind::kInt;
    attr.integer = value;
  }
  reader.ReadOptionalAttrDict(op);
  ReadSameOperandsAndResultType(reader, op);
}

Converted ConvertReducePrecision(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  CheckOperandTypes(reader, op);
  auto instruction = MakeInstruction(Opcode::kReducePrecision, TakeResultType(reader, op), op.operands);
  instruction->exponent_bits = IntAttr(reader, op, "exponent_bits");
  instruction->mantissa_bits = IntAttr(reader, op, "mantissa_bits");
  if (instruction->exponent_bits < 1 || instruction->mantissa_bits < 0)
    reader.Error(op.pos, "stablehlo.reduce_precision needs exponent_bits >= 1 and mantissa_bits >= 0");
  return Single(AddChecked(reader, op, std::move(instruction)));
}

}  // namespace

std::optional<Opcode> BinaryOpcodeFor(std::string_view name) {
  for (const NamedOpcode& entry : kBinary)
    if (entry.name == name) return entry.opcode;
  return std::nullopt;
}

void RegisterElementwiseOps(OpTable& table) {
  for (const NamedOpcode& entry : kUnary) table.Add(entry.name, ParseElementwise, ConvertUnary);
  for (const NamedOpcode& entry : kBinary) table.Add(entry.name, ParseElementwise, ConvertBinary);
  table.Add("stablehlo.compare", ParseCompare, ConvertCompare);
  table.Add("stablehlo.select", ParseSelect, ConvertSelect);
  table.Add("stablehlo.clamp", ParseElementwise, ConvertClamp);
  table.Add("stablehlo.reduce_precision", ParseReducePrecision, ConvertReducePrecision);
}

}  // namespace gspmd::stablehlo
