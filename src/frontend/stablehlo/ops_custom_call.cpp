// custom_call (including the GSPMD annotations @Sharding, @SPMDFullToShardShape and
// @SPMDShardToFullShape), chlo.top_k, rng, rng_bit_generator and tokens.
//   %0 = stablehlo.custom_call @Sharding(%x) {backend_config = "", mhlo.sharding = "{devices=[8,1]<=[8]}"}
//          : (tensor<16x32xf32>) -> tensor<16x32xf32>
//   %values, %indices = chlo.top_k(%x, k = 2) : tensor<8x16xf32> -> (tensor<8x2xf32>, tensor<8x2xi32>)
#include "frontend/stablehlo/op_helpers.h"
#include "frontend/stablehlo/op_table.h"
#include "frontend/stablehlo/types.h"

namespace gspmd::stablehlo {
namespace {

std::string Quoted(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

// @target(%a, %b) [attr-dict] : (T...) -> R
void ParseCustomCall(ModuleReader& reader, OpSyntax& op) {
  Cursor& cursor = reader.cursor();
  cursor.SkipSpace();
  Attr& target = op.Add("call_target_name", cursor.pos());
  target.kind = Attr::Kind::kString;
  target.str = cursor.ReadSymbol("the custom call target such as @Sharding");
  cursor.Expect('(', "'(' and the custom call's operands");
  reader.ReadOperands(op);
  cursor.Expect(')', "',' or ')' after an operand");
  reader.ReadOptionalAttrDict(op);
  ReadFunctionSignature(reader, op);
}

Converted ConvertCustomCall(ModuleReader& reader, OpSyntax& op) {
  CheckOperandTypes(reader, op);
  const std::string& target = AttrString(reader.cursor(), RequiredAttr(reader, op, "call_target_name"), "call_target_name");
  auto call = MakeInstruction(Opcode::kCustomCall, ResultShapeOf(op.result_types), op.operands);
  if (op.result_types.empty()) call->set_shape(Shape::Tuple({}));
  call->custom_call_target = target;
  call->custom_call_has_side_effect = BoolAttrOr(reader, op, "has_side_effect", false);
  if (const Attr* config = OptionalAttr(op, "backend_config")) {
    if (config->kind == Attr::Kind::kString) {
      if (!config->str.empty()) call->backend_config = Quoted(config->str);
    } else if (config->kind != Attr::Kind::kDict) {
      reader.Error(config->pos, "backend_config: expected a string or a dictionary");
    }
  }
  if (const Attr* called = OptionalAttr(op, "called_computations")) {
    if (called->kind != Attr::Kind::kArray) reader.Error(called->pos, "called_computations: expected [@f, ...]");
    std::vector<Computation*> computations;
    for (const Attr& symbol : called->elements) {
      if (symbol.kind != Attr::Kind::kSymbol) reader.Error(symbol.pos, "called_computations: expected @function names");
      computations.push_back(reader.FunctionFor(symbol.str, symbol.pos, {}, {}, /*check_signature=*/false));
    }
    call->set_called_computations(std::move(computations));
  }
  const bool annotation = target == "Sharding" || target == "SPMDFullToShardShape" || target == "SPMDShardToFullShape";
  if (annotation && (op.operands.size() != 1 || op.result_types.size() != 1))
    reader.Error(op.pos, StrCat("@", target, " takes one operand and has one result"));
  if (target == "Sharding" && !op.result_types[0].Compatible(op.operands[0]->shape()))
    reader.Error(op.pos, "@Sharding keeps its operand's type");
  Instruction* result = reader.Add(std::move(call));
  if (op.result_types.size() <= 1) {
    Converted converted{{}, result};
    if (op.result_types.size() == 1) converted.results = {result};
    return converted;
  }
  return reader.Results(op, result);
}

// chlo.top_k(%x, k = 2) [attr-dict] : T -> (T, T)
void ParseTopK(ModuleReader& reader, OpSyntax& op) {
  Cursor& cursor = reader.cursor();
  cursor.Expect('(', "'(' and the operand of chlo.top_k");
  reader.ReadOperands(op);
  cursor.Expect(',', "', k = N'");
  ReadKeywordInt(reader, op, "k", "k");
  cursor.Expect(')', "')' after k");
  reader.ReadOptionalAttrDict(op);
  ReadLooseSignature(reader, op);
}

Converted ConvertTopK(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  CheckOperandTypes(reader, op);
  const Shape& operand = op.operands[0]->shape();
  int64_t k = IntAttr(reader, op, "k");
  if (!operand.IsArray() || operand.rank() < 1 || k < 0 || k > operand.dim(operand.rank() - 1))
    reader.Error(op.pos, StrCat("chlo.top_k: k = ", k, " does not fit the last dimension of ", MlirTypeName(operand)));
  if (op.result_types.size() != 2) reader.Error(op.pos, "chlo.top_k has two results (values, indices)");
  std::vector<int64_t> dims = operand.dims();
  dims.back() = k;
  if (op.result_types[0].dims() != dims || op.result_types[0].element_type() != operand.element_type() ||
      op.result_types[1].dims() != dims || op.result_types[1].element_type() != ElementType::kS32)
    reader.Error(op.pos, "chlo.top_k's results should be the operand with the last dimension k, and its i32 indices");
  auto topk = MakeInstruction(Opcode::kTopK, Shape::Tuple(op.result_types), op.operands);
  topk->k = k;
  topk->largest = true;
  topk->is_stable = true;
  return reader.Results(op, AddChecked(reader, op, std::move(topk)));
}

// stablehlo.rng %a, %b, %shape, distribution = NORMAL : (...) -> T
void ParseRng(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  if (!ReadOptionalKeywordEnum(reader, op, "distribution", "rng_distribution"))
    reader.cursor().ErrorExpected("', distribution = UNIFORM or NORMAL'");
  reader.ReadOptionalAttrDict(op);
  ReadFunctionSignature(reader, op);
}

Converted ConvertRng(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 3);
  CheckOperandTypes(reader, op);
  std::string_view distribution = EnumAttr(reader, op, "rng_distribution");
  if (distribution != "UNIFORM" && distribution != "NORMAL")
    reader.Error(op.pos, StrCat("unknown rng distribution ", distribution, " (expected UNIFORM or NORMAL)"));
  auto rng = MakeInstruction(Opcode::kRng, TakeResultType(reader, op), {op.operands[0], op.operands[1]});
  rng->mutable_rng_distribution() = distribution == "UNIFORM" ? "rng_uniform" : "rng_normal";
  return Single(AddChecked(reader, op, std::move(rng)));
}

// stablehlo.rng_bit_generator %state, algorithm = PHILOX : (T) -> (T, R)
void ParseRngBitGenerator(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  if (!ReadOptionalKeywordEnum(reader, op, "algorithm", "rng_algorithm"))
    reader.cursor().ErrorExpected("', algorithm = DEFAULT, THREE_FRY or PHILOX'");
  reader.ReadOptionalAttrDict(op);
  ReadFunctionSignature(reader, op);
}

Converted ConvertRngBitGenerator(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  CheckOperandTypes(reader, op);
  if (op.result_types.size() != 2) reader.Error(op.pos, "rng_bit_generator has two results (new state, bits)");
  std::string_view algorithm = EnumAttr(reader, op, "rng_algorithm");
  std::string name = algorithm == "DEFAULT" ? "rng_default" : algorithm == "THREE_FRY" ? "rng_three_fry"
                     : algorithm == "PHILOX" ? "rng_philox" : "";
  if (name.empty()) reader.Error(op.pos, StrCat("unknown rng algorithm ", algorithm, " (expected DEFAULT, THREE_FRY or PHILOX)"));
  auto rng = MakeInstruction(Opcode::kRngBitGenerator, Shape::Tuple(op.result_types), op.operands);
  rng->mutable_extra_attributes().emplace_back("algorithm", name);
  return reader.Results(op, AddChecked(reader, op, std::move(rng)));
}

// stablehlo.after_all %a, %b : !stablehlo.token / stablehlo.create_token : !stablehlo.token
void ParseToken(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  reader.ReadOptionalAttrDict(op);
  ReadLooseSignature(reader, op);
}

Converted ConvertToken(ModuleReader& reader, OpSyntax& op) {
  for (size_t i = 0; i < op.operands.size(); ++i)
    if (!op.operands[i]->shape().IsToken()) reader.Error(op.operand_pos[i], StrCat(op.name, " takes tokens"));
  return Single(reader.AddOp(Opcode::kAfterAll, Shape::Token(), op.operands));
}

}  // namespace

void RegisterCustomCallOps(OpTable& table) {
  table.Add("stablehlo.custom_call", ParseCustomCall, ConvertCustomCall);
  table.Add("chlo.top_k", ParseTopK, ConvertTopK);
  table.Add("stablehlo.rng", ParseRng, ConvertRng);
  table.Add("stablehlo.rng_bit_generator", ParseRngBitGenerator, ConvertRngBitGenerator);
  table.Add("stablehlo.after_all", ParseToken, ConvertToken);
  table.Add("stablehlo.create_token", ParseToken, ConvertToken);
}

}  // namespace gspmd::stablehlo
