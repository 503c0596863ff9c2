// Control flow and calls: while, if, case, func.call, composite (inlined), the region
// terminators (stablehlo.return, func.return, sdy.return) and optimization_barrier.
//   %0:2 = stablehlo.while(%i = %c0, %x = %arg0) : tensor<i32>, tensor<4xf32>
//     cond { ... stablehlo.return %p : tensor<i1> } do { ... stablehlo.return %i1, %x1 : ... }
//   %1 = "stablehlo.if"(%pred) ({ stablehlo.return %a : ... }, { stablehlo.return %b : ... })
//          : (tensor<i1>) -> tensor<4xf32>
// HLO's while and conditional computations take one parameter, so the carried values and
// the values a region uses from outside are passed in one tuple.
#include <algorithm>

#include "frontend/stablehlo/op_helpers.h"
#include "frontend/stablehlo/op_table.h"
#include "frontend/stablehlo/regions.h"
#include "frontend/stablehlo/types.h"

namespace gspmd::stablehlo {
namespace {

// The single results of an op producing `value` for `op.result_types`.
Converted ResultsOf(ModuleReader& reader, const OpSyntax& op, Instruction* value) {
  if (op.result_types.size() == 1) return Single(value);
  Converted converted;
  converted.primary = value;
  for (size_t i = 0; i < op.result_types.size(); ++i) converted.results.push_back(reader.Gte(value, static_cast<int64_t>(i)));
  return converted;
}

// ---- while ----

// (%a = %x, %b = %y) : T1, T2 [attributes {...}] cond { ... } do { ... }
void ParseWhile(ModuleReader& reader, OpSyntax& op) {
  Cursor& cursor = reader.cursor();
  cursor.Expect('(', "'(' and the loop values (%iterArg = %init, ...)");
  std::vector<RegionArg> args;
  if (!cursor.TryConsume(')')) {
    do {
      RegionArg& arg = args.emplace_back();
      cursor.SkipSpace();
      arg.pos = cursor.pos();
      arg.name = cursor.ReadValueName("a loop value name such as %iterArg");
      cursor.Expect('=', "'=' and the loop value's initial value");
      reader.ReadOperand(op);
    } while (cursor.TryConsume(','));
    cursor.Expect(')', "',' or ')' after a loop value");
  }
  if (!args.empty()) {
    cursor.Expect(':', "':' and the loop value types");
    for (size_t i = 0; i < args.size(); ++i) {
      if (i > 0) cursor.Expect(',', "',' and the next loop value type");
      args[i].type = reader.ReadType();
      op.operand_types.push_back(args[i].type);
    }
  }
  op.result_types = op.operand_types;
  if (cursor.TryKeyword("attributes")) reader.ReadOptionalAttrDict(op);
  cursor.ExpectKeyword("cond", "'cond' and the condition region");
  op.regions.push_back(reader.ReadRegion(args));
  cursor.ExpectKeyword("do", "'do' and the body region");
  op.regions.push_back(reader.ReadRegion(args));
}

// The values of enclosing regions that any of `regions` uses, each once, in first-use order.
std::vector<Instruction*> CaptureUnion(const std::vector<Region*>& regions) {
  std::vector<Instruction*> outer;
  for (const Region* region : regions)
    for (const Region::Capture& capture : region->captures)
      if (std::find(outer.begin(), outer.end(), capture.outer) == outer.end()) outer.push_back(capture.outer);
  return outer;
}

// Placeholders of `region` for tuple elements: its block arguments, then its capture of each
// value in `outer` (null where it does not use one).
std::vector<Instruction*> ElementPlaceholders(const Region& region, const std::vector<Instruction*>& outer) {
  std::vector<Instruction*> placeholders(region.args.begin(), region.args.end());
  for (Instruction* value : outer) {
    Instruction* placeholder = nullptr;
    for (const Region::Capture& capture : region.captures)
      if (capture.outer == value) placeholder = capture.placeholder;
    placeholders.push_back(placeholder);
  }
  return placeholders;
}

Converted ConvertWhile(ModuleReader& reader, OpSyntax& op) {
  CheckOperandTypes(reader, op);
  ExpectRegionCount(reader, op, 2);
  Region& cond = *op.regions[0];
  Region& body = *op.regions[1];
  std::vector<Shape> types;
  for (Instruction* operand : op.operands) types.push_back(operand->shape());
  if (op.result_types.size() != types.size()) reader.Error(op.pos, "stablehlo.while has one result per loop value");
  for (size_t i = 0; i < types.size(); ++i)
    if (!op.result_types[i].Compatible(types[i])) reader.Error(op.pos, StrCat("result ", i, " of stablehlo.while must have its loop value's type"));
  CheckRegionArgs(reader, op, cond, types, "cond");
  CheckRegionArgs(reader, op, body, types, "body");
  CheckRegionResults(reader, op, cond, {ArrayShape(ElementType::kPred, {})}, "cond");
  CheckRegionResults(reader, op, body, types, "body");

  std::vector<Instruction*> outer = CaptureUnion({&cond, &body});
  if (types.size() == 1 && outer.empty()) {
    // One loop value and nothing from outside: the loop carries the value itself.
    Computation* condition = FlatComputation(reader, cond, op, "region");
    Computation* step = FlatComputation(reader, body, op, "region");
    auto loop = MakeInstruction(Opcode::kWhile, types[0], op.operands);
    loop->set_called_computations({condition, step});
    return Single(AddChecked(reader, op, std::move(loop)));
  }
  std::vector<Shape> shapes = types;
  for (Instruction* value : outer) shapes.push_back(value->shape());
  std::vector<Instruction*> init_values = op.operands;
  init_values.insert(init_values.end(), outer.begin(), outer.end());
  Instruction* init = reader.Tuple(init_values);

  Computation* condition = reader.NewComputation("region");
  std::vector<std::unique_ptr<Instruction>> cond_prefix;
  UnpackTupleParameter(reader, shapes, ElementPlaceholders(cond, outer), cond, cond_prefix);
  DefineFromRegion(reader, condition, std::move(cond_prefix), cond, cond.returned[0]);

  Computation* step = reader.NewComputation("region");
  std::vector<std::unique_ptr<Instruction>> body_prefix;
  std::vector<Instruction*> elements = UnpackTupleParameter(reader, shapes, ElementPlaceholders(body, outer), body, body_prefix);
  // The body passes the outside values through unchanged.
  body.returned.insert(body.returned.end(), elements.begin() + static_cast<long>(types.size()), elements.end());
  Instruction* root = RegionRoot(reader, body, /*always_tuple=*/true);
  DefineFromRegion(reader, step, std::move(body_prefix), body, root);

  auto loop = MakeInstruction(Opcode::kWhile, init->shape(), {init});
  loop->set_called_computations({condition, step});
  Instruction* result = AddChecked(reader, op, std::move(loop));
  Converted converted;
  converted.primary = result;
  for (size_t i = 0; i < types.size(); ++i) converted.results.push_back(reader.Gte(result, static_cast<int64_t>(i)));
  return converted;
}

// ---- if, case ----

// stablehlo.if %pred -> (T...) { ... } else { ... }
void ParseIf(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  Cursor& cursor = reader.cursor();
  if (cursor.TryConsume("->")) op.result_types = ParseResultTypes(cursor, *reader.env().type_aliases);
  op.regions.push_back(reader.ReadRegion({}));
  cursor.ExpectKeyword("else", "'else' and the false branch");
  op.regions.push_back(reader.ReadRegion({}));
  reader.ReadOptionalAttrDict(op);
  for (Instruction* operand : op.operands) op.operand_types.push_back(operand->shape());
}

// stablehlo.case %index -> (T...) { ... }, { ... }
void ParseCase(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  Cursor& cursor = reader.cursor();
  if (cursor.TryConsume("->")) op.result_types = ParseResultTypes(cursor, *reader.env().type_aliases);
  do op.regions.push_back(reader.ReadRegion({}));
  while (cursor.TryConsume(','));
  reader.ReadOptionalAttrDict(op);
  for (Instruction* operand : op.operands) op.operand_types.push_back(operand->shape());
}

Converted ConvertConditional(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  CheckOperandTypes(reader, op);
  const bool is_if = op.name == "stablehlo.if";
  if (is_if) ExpectRegionCount(reader, op, 2);
  if (op.regions.empty()) reader.Error(op.pos, "stablehlo.case needs at least one branch");
  const Shape& selector = op.operands[0]->shape();
  ElementType selector_type = is_if ? ElementType::kPred : ElementType::kS32;
  if (!selector.IsArray() || selector.rank() != 0 || selector.element_type() != selector_type)
    reader.Error(op.operand_pos[0], StrCat("the ", is_if ? "predicate of stablehlo.if must be tensor<i1>" : "index of stablehlo.case must be tensor<i32>",
                                           ", not ", MlirTypeName(selector)));
  std::vector<Instruction*> operands = {op.operands[0]};
  std::vector<Computation*> branches;
  for (size_t b = 0; b < op.regions.size(); ++b) {
    Region& region = *op.regions[b];
    if (!region.args.empty()) reader.Error(region.pos, StrCat("the branches of ", op.name, " take no arguments"));
    CheckRegionResults(reader, op, region, op.result_types, is_if ? (b == 0 ? "then" : "else") : "branch");
    std::vector<Instruction*> outer = CaptureUnion({&region});
    std::vector<Shape> shapes;
    for (Instruction* value : outer) shapes.push_back(value->shape());
    operands.push_back(reader.Tuple(outer));
    Computation* branch = reader.NewComputation("region");
    std::vector<std::unique_ptr<Instruction>> prefix;
    UnpackTupleParameter(reader, shapes, ElementPlaceholders(region, outer), region, prefix);
    Instruction* root = RegionRoot(reader, region, /*always_tuple=*/op.result_types.size() != 1);
    DefineFromRegion(reader, branch, std::move(prefix), region, root);
    branches.push_back(branch);
  }
  auto conditional = MakeInstruction(Opcode::kConditional, ResultShapeOf(op.result_types), operands);
  conditional->set_called_computations(std::move(branches));
  conditional->conditional_uses_branch_list = !is_if;
  Instruction* result = AddChecked(reader, op, std::move(conditional));
  if (op.result_types.empty()) return Converted{{}, result};
  return ResultsOf(reader, op, result);
}

// ---- calls ----

// call @f(%a, %b) [attr-dict] : (T...) -> R
void ParseCall(ModuleReader& reader, OpSyntax& op) {
  Cursor& cursor = reader.cursor();
  cursor.SkipSpace();
  Attr& callee = op.Add("callee", cursor.pos());
  callee.kind = Attr::Kind::kSymbol;
  callee.str = cursor.ReadSymbol("the callee such as @f");
  cursor.Expect('(', "'(' and the call's operands");
  reader.ReadOperands(op);
  cursor.Expect(')', "',' or ')' after a call operand");
  reader.ReadOptionalAttrDict(op);
  ReadFunctionSignature(reader, op);
}

Instruction* AddCall(ModuleReader& reader, OpSyntax& op, std::string_view callee_attr) {
  CheckOperandTypes(reader, op);
  const Attr& callee = RequiredAttr(reader, op, callee_attr);
  if (callee.kind != Attr::Kind::kSymbol) reader.Error(callee.pos, StrCat(callee_attr, ": expected a function such as @f"));
  std::vector<Shape> operand_shapes;
  for (Instruction* operand : op.operands) operand_shapes.push_back(operand->shape());
  Computation* computation = reader.FunctionFor(callee.str, op.pos, operand_shapes, op.result_types);
  auto call = MakeInstruction(Opcode::kCall, ResultShapeOf(op.result_types), op.operands);
  call->set_called_computations({computation});
  return reader.Add(std::move(call));
}

Converted ConvertCall(ModuleReader& reader, OpSyntax& op) {
  Instruction* call = AddCall(reader, op, "callee");
  if (op.result_types.empty()) return Converted{{}, call};
  return ResultsOf(reader, op, call);
}

// stablehlo.composite "name" %a, %b {decomposition = @impl, ...} : (T...) -> R
void ParseComposite(ModuleReader& reader, OpSyntax& op) {
  Cursor& cursor = reader.cursor();
  cursor.SkipSpace();
  Attr& name = op.Add("name", cursor.pos());
  name.kind = Attr::Kind::kString;
  name.str = cursor.ReadString("the composite's name");
  reader.ReadOperands(op);
  reader.ReadOptionalAttrDict(op);
  ReadFunctionSignature(reader, op);
}

Converted ConvertComposite(ModuleReader& reader, OpSyntax& op) {
  Instruction* call = AddCall(reader, op, "decomposition");
  reader.InlineAtAssembly(call);
  if (op.result_types.empty()) return Converted{{}, call};
  return ResultsOf(reader, op, call);
}

// ---- terminators, optimization_barrier ----

// [%a, %b] [attr-dict] [: T, T]
void ParseReturn(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  reader.ReadOptionalAttrDict(op);
  if (op.operands.empty()) return;
  reader.cursor().Expect(':', Expected("':' and the types of the values ", op.name, " returns"));
  for (size_t i = 0; i < op.operands.size(); ++i) {
    if (i > 0) reader.cursor().Expect(',', "',' and the next type");
    op.operand_types.push_back(reader.ReadType());
  }
}

Converted ConvertReturn(ModuleReader& reader, OpSyntax& op) {
  CheckOperandTypes(reader, op);
  reader.SetReturn(op);
  return Converted{};
}

// %a, %b : T1, T2
void ParseOptimizationBarrier(ModuleReader& reader, OpSyntax& op) {
  ParseReturn(reader, op);
  op.result_types = op.operand_types;
}

Converted ConvertOptimizationBarrier(ModuleReader& reader, OpSyntax& op) {
  CheckOperandTypes(reader, op);
  if (op.operands.empty()) return Converted{};
  if (op.operands.size() == 1 && op.operands[0]->shape().IsTuple())  // one tuple value: barrier it as is
    return Single(AddChecked(reader, op, MakeInstruction(Opcode::kOptimizationBarrier, op.operands[0]->shape(), op.operands)));
  Instruction* tuple = reader.Tuple(op.operands);
  Instruction* barrier = AddChecked(reader, op, MakeInstruction(Opcode::kOptimizationBarrier, tuple->shape(), {tuple}));
  Converted converted;
  converted.primary = barrier;
  for (size_t i = 0; i < op.operands.size(); ++i) converted.results.push_back(reader.Gte(barrier, static_cast<int64_t>(i)));
  return converted;
}

}  // namespace

void RegisterControlFlowOps(OpTable& table) {
  table.Add("stablehlo.while", ParseWhile, ConvertWhile);
  table.Add("stablehlo.if", ParseIf, ConvertConditional);
  table.Add("stablehlo.case", ParseCase, ConvertConditional);
  table.Add("func.call", ParseCall, ConvertCall);
  table.Add("stablehlo.composite", ParseComposite, ConvertComposite);
  table.Add("stablehlo.return", ParseReturn, ConvertReturn);
  table.Add("func.return", ParseReturn, ConvertReturn);
  table.Add("sdy.return", ParseReturn, ConvertReturn);
  table.Add("stablehlo.optimization_barrier", ParseOptimizationBarrier, ConvertOptimizationBarrier);
}

}  // namespace gspmd::stablehlo
