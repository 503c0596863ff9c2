// Shardy ops in the representation JAX's HLO export uses, so propagation reads them as it
// reads pre.hlo:
//   sdy.sharding_constraint %x <@mesh, [{"x"}, {}]>   -> custom-call "Sharding" with
//                                                        xla.sdy.sharding (a constraint)
//   sdy.reshard %x <@mesh, [...]>                      -> custom-call "xla.sdy.Sharding"
//   sdy.sharding_group %x group_id=3                   -> custom-call "xla.sdy.ShardingGroup"
//   sdy.propagation_barrier %x allowed_direction=NONE  -> custom-call "xla.sdy.PropagationBarrier"
//   sdy.manual_computation(%a) in_shardings=[...] out_shardings=[...] manual_axes={"x"} (%l: T) {...}
//       -> xla.sdy.GlobalToLocalShape, a call of the body, xla.sdy.LocalToGlobalShape
//   sdy.named_computation<"f">(%a) (%l: T) {...}       -> a call of the body
#include <algorithm>

#include "frontend/stablehlo/op_helpers.h"
#include "frontend/stablehlo/op_table.h"
#include "frontend/stablehlo/regions.h"
#include "frontend/stablehlo/shardings.h"
#include "frontend/stablehlo/types.h"
#include "partitioner/sdy_attributes.h"

namespace gspmd::stablehlo {
namespace {

// An attribute holding raw Shardy text (#name<body>), as the pretty parsers store it.
Attr& AddRawSdy(OpSyntax& op, std::string_view attr_name, std::string_view dialect, std::string_view body, size_t body_pos) {
  Attr& attr = op.Add(attr_name, body_pos);
  attr.kind = Attr::Kind::kDialect;
  attr.str = std::string(dialect);
  attr.body = body;
  attr.body_pos = body_pos;
  return attr;
}

// A stripped sharding "<@mesh, [...]>" at the cursor, stored as #sdy.sharding<...>.
void ReadStrippedSharding(ModuleReader& reader, OpSyntax& op, std::string_view attr_name) {
  Cursor& cursor = reader.cursor();
  cursor.SkipSpace();
  size_t pos = cursor.pos();
  std::string_view group = cursor.ReadBalanced("a sharding such as <@mesh, [{\"x\"}, {}]>");
  if (group.front() != '<') reader.Error(pos, "expected a sharding such as <@mesh, [{\"x\"}, {}]>");
  AddRawSdy(op, attr_name, "sdy.sharding", group.substr(1, group.size() - 2), pos + 1);
}

// "KEY=<...>" or "KEY=[<...>, ...]" (the per-value form).
void ReadKeyedShardings(ModuleReader& reader, OpSyntax& op, std::string_view key) {
  Cursor& cursor = reader.cursor();
  cursor.ExpectKeyword(key, Expected(key, "=[...]"));
  cursor.Expect('=', Expected("'=' after ", key));
  cursor.SkipSpace();
  size_t pos = cursor.pos();
  std::string_view group = cursor.ReadBalanced(Expected("the ", key, " list [<@mesh, ...>, ...]"));
  if (group.front() != '[') reader.Error(pos, StrCat("expected the ", key, " list [<@mesh, ...>, ...]"));
  AddRawSdy(op, key, "sdy.sharding_per_value", group, pos);
}

// The text of a Shardy sharding-valued attribute, as #sdy.sharding<...> or
// #sdy.sharding_per_value<[...]>.
std::string SdyText(const Attr& attr) { return StrCat("#", attr.str, "<", attr.body, ">"); }

// ---- sharding_constraint, reshard ----

void ParseShardingOp(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  ReadStrippedSharding(reader, op, "sharding");
  reader.ReadOptionalAttrDict(op);
  ReadSameOperandsAndResultType(reader, op);
}

Converted ConvertShardingOp(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  CheckOperandTypes(reader, op);
  const Shape& shape = op.operands[0]->shape();
  if (!SingleResultType(reader, op).Compatible(shape)) reader.Error(op.pos, StrCat(op.name, " keeps its operand's type"));
  const Attr& sharding = RequiredAttr(reader, op, "sharding");
  std::string text = SdyShardingText(reader, sharding, shape);
  auto call = MakeInstruction(Opcode::kCustomCall, shape, op.operands);
  call->custom_call_target = op.name == "sdy.reshard" ? "xla.sdy.Sharding" : "Sharding";
  AddFrontendAttribute(*call, "xla.sdy.sharding", StrCat("#sdy.sharding_per_value<[", text.substr(13), "]>"));
  return Single(reader.Add(std::move(call)));
}

// ---- sharding_group, propagation_barrier ----

// %x KEY=VALUE [attr-dict] : T
void ParseKeyedOp(ModuleReader& reader, OpSyntax& op, std::string_view key, bool integer) {
  reader.ReadOperands(op);
  Cursor& cursor = reader.cursor();
  cursor.SkipSpace();
  size_t pos = cursor.pos();
  cursor.ExpectKeyword(key, Expected(key, "=..."));
  cursor.Expect('=', Expected("'=' after ", key));
  Attr& attr = op.Add(key, pos);
  if (integer) {
    attr.kind = Attr::Kind::kInt;
    attr.integer = cursor.ReadInt(Expected("an integer after ", key, "="));
  } else {
    attr.kind = Attr::Kind::kEnum;
    attr.str = std::string(cursor.ReadBareId(Expected("a value after ", key, "=")));
  }
  reader.ReadOptionalAttrDict(op);
  cursor.Expect(':', Expected("':' and the type of ", op.name));
  op.operand_types = {reader.ReadType()};
  if (op.name == "sdy.propagation_barrier") op.result_types = op.operand_types;
}

void ParseShardingGroup(ModuleReader& reader, OpSyntax& op) { ParseKeyedOp(reader, op, "group_id", true); }
void ParseBarrier(ModuleReader& reader, OpSyntax& op) { ParseKeyedOp(reader, op, "allowed_direction", false); }

Converted ConvertShardingGroup(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  CheckOperandTypes(reader, op);
  int64_t id = IntAttr(reader, op, "group_id");
  auto call = MakeInstruction(Opcode::kCustomCall, Shape::Tuple({}), op.operands);
  call->custom_call_target = "xla.sdy.ShardingGroup";
  call->custom_call_has_side_effect = true;
  AddFrontendAttribute(*call, "xla.sdy.sharding_group_id", std::to_string(id));
  reader.Add(std::move(call));
  return Converted{};
}

Converted ConvertBarrier(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  CheckOperandTypes(reader, op);
  std::string_view direction = EnumAttr(reader, op, "allowed_direction");
  if (direction != "NONE" && direction != "FORWARD" && direction != "BACKWARD")
    reader.Error(op.pos, StrCat("allowed_direction ", direction, ": expected NONE, FORWARD or BACKWARD"));
  auto call = MakeInstruction(Opcode::kCustomCall, op.operands[0]->shape(), op.operands);
  call->custom_call_target = "xla.sdy.PropagationBarrier";
  AddFrontendAttribute(*call, "xla.sdy.allowed_direction", direction);
  return Single(reader.Add(std::move(call)));
}

// ---- manual_computation, named_computation ----

// (%a, ...) in_shardings=[...] out_shardings=[...] manual_axes={"x"} (%l: T, ...) {...} [attr-dict] : sig
void ParseManualComputation(ModuleReader& reader, OpSyntax& op) {
  Cursor& cursor = reader.cursor();
  cursor.Expect('(', "'(' and the operands of sdy.manual_computation");
  reader.ReadOperands(op);
  cursor.Expect(')', "')' after the operands");
  ReadKeyedShardings(reader, op, "in_shardings");
  ReadKeyedShardings(reader, op, "out_shardings");
  cursor.ExpectKeyword("manual_axes", "manual_axes={...}");
  cursor.Expect('=', "'=' after manual_axes");
  cursor.SkipSpace();
  size_t pos = cursor.pos();
  std::string_view axes = cursor.ReadBalanced("the manual axes {\"x\", ...}");
  if (axes.front() != '{') reader.Error(pos, "expected the manual axes {\"x\", ...}");
  AddRawSdy(op, "manual_axes", "sdy", axes, pos);
  op.regions.push_back(reader.ReadRegion(reader.ReadRegionArgs(), /*isolated=*/true));
  reader.ReadOptionalAttrDict(op);
  ReadFunctionSignature(reader, op);
}

// The manual axes' names: from {"x", "y"} (pretty) or #sdy<manual_axes{"x", "y"}>.
std::vector<std::string> ManualAxes(ModuleReader& reader, const Attr& attr, std::string* text) {
  std::string_view body = attr.body;
  if (body.front() == '{') {
    *text = StrCat("#sdy<manual_axes", body, ">");
  } else {
    *text = SdyText(attr);
  }
  try {
    return ParseSdyManualAxes(*text, "manual_axes");
  } catch (const UserError& error) {
    reader.Error(attr.pos, error.what());
  }
}

// Per-value shardings for `shapes`, checked; returns the #sdy.sharding_per_value text.
std::string PerValueText(ModuleReader& reader, const Attr& attr, const std::vector<Shape>& shapes) {
  return SdyShardingText(reader, attr, shapes.size() == 1 ? shapes[0] : Shape::Tuple(shapes));
}

// The local shape of a value of `global` shape under `view`: dims divided by their manual axes.
std::vector<int64_t> LocalDims(const NamedShardingView& view, const std::vector<std::string>& manual, const Shape& global) {
  std::vector<int64_t> dims = global.dims();
  for (size_t d = 0; d < view.dim_axes.size() && d < dims.size(); ++d) {
    for (const AxisRef& ref : view.dim_axes[d]) {
      if (std::find(manual.begin(), manual.end(), ref.name) == manual.end()) continue;
      int64_t size = ref.is_sub_axis() ? ref.size : view.mesh.axes[view.mesh.AxisIndex(ref.name)].size;
      dims[d] = size > 0 ? dims[d] / size : dims[d];
    }
  }
  return dims;
}

Instruction* AnnotationCall(ModuleReader& reader, std::string_view target, const std::vector<Instruction*>& operands,
                            std::vector<Shape> shapes) {
  auto call = MakeInstruction(Opcode::kCustomCall, shapes.size() == 1 ? shapes[0] : Shape::Tuple(std::move(shapes)), operands);
  call->custom_call_target = std::string(target);
  call->custom_call_has_side_effect = true;
  return reader.Add(std::move(call));
}

std::vector<Instruction*> Elements(ModuleReader& reader, Instruction* value, size_t count) {
  if (count == 1) return {value};
  std::vector<Instruction*> elements;
  for (size_t i = 0; i < count; ++i) elements.push_back(reader.Gte(value, static_cast<int64_t>(i)));
  return elements;
}

Converted ConvertManualComputation(ModuleReader& reader, OpSyntax& op) {
  CheckOperandTypes(reader, op);
  ExpectRegionCount(reader, op, 1);
  Region& body = *op.regions[0];
  std::string axes_text;
  std::vector<std::string> manual = ManualAxes(reader, RequiredAttr(reader, op, "manual_axes"), &axes_text);
  std::vector<Shape> globals_in, locals_in, locals_out;
  for (Instruction* operand : op.operands) globals_in.push_back(operand->shape());
  const Attr& in_attr = RequiredAttr(reader, op, "in_shardings");
  const Attr& out_attr = RequiredAttr(reader, op, "out_shardings");
  std::string in_text = op.operands.empty() ? "#sdy.sharding_per_value<[]>" : PerValueText(reader, in_attr, globals_in);
  std::string out_text = op.result_types.empty() ? "#sdy.sharding_per_value<[]>" : PerValueText(reader, out_attr, op.result_types);
  std::vector<NamedShardingView> in_views = ParseSdyShardingPerValue(in_text, reader.meshes(), "in_shardings");
  std::vector<NamedShardingView> out_views = ParseSdyShardingPerValue(out_text, reader.meshes(), "out_shardings");
  for (size_t i = 0; i < globals_in.size(); ++i) {
    Shape local = ArrayShape(globals_in[i].element_type(), LocalDims(in_views[i], manual, globals_in[i]));
    locals_in.push_back(local);
  }
  for (size_t i = 0; i < op.result_types.size(); ++i) {
    Shape local = ArrayShape(op.result_types[i].element_type(), LocalDims(out_views[i], manual, op.result_types[i]));
    locals_out.push_back(local);
  }
  CheckRegionArgs(reader, op, body, locals_in, "body (local shapes)");
  CheckRegionResults(reader, op, body, locals_out, "body (local shapes)");

  std::vector<Instruction*> locals;
  if (!op.operands.empty()) {
    Instruction* to_local = AnnotationCall(reader, "xla.sdy.GlobalToLocalShape", op.operands, locals_in);
    AddFrontendAttribute(*to_local, "xla.sdy.in_shardings", in_text);
    AddFrontendAttribute(*to_local, "xla.sdy.manual_axes", axes_text);
    locals = Elements(reader, to_local, op.operands.size());
  }
  Computation* computation = FlatComputation(reader, body, op, "xla.sdy.manual_computation_body",
                                             /*always_tuple_root=*/locals_out.size() != 1);
  auto call = MakeInstruction(Opcode::kCall, locals_out.size() == 1 ? locals_out[0] : Shape::Tuple(locals_out), locals);
  call->set_called_computations({computation});
  AddFrontendAttribute(*call, "inlineable", "xla_late");
  Instruction* body_call = reader.Add(std::move(call));
  if (op.result_types.empty()) return Converted{{}, nullptr};
  Instruction* to_global = AnnotationCall(reader, "xla.sdy.LocalToGlobalShape", Elements(reader, body_call, locals_out.size()),
                                          op.result_types);
  AddFrontendAttribute(*to_global, "xla.sdy.manual_axes", axes_text);
  AddFrontendAttribute(*to_global, "xla.sdy.out_shardings", out_text);
  Converted converted;
  converted.results = Elements(reader, to_global, op.result_types.size());
  converted.primary = nullptr;  // the op's own attributes do not apply to the border calls
  return converted;
}

// <"name">(%a, ...) [in_shardings=...] [out_shardings=...] (%l: T, ...) {...} [attr-dict] : sig
void ParseNamedComputation(ModuleReader& reader, OpSyntax& op) {
  Cursor& cursor = reader.cursor();
  cursor.Expect('<', "'<' and the computation's name");
  cursor.SkipSpace();
  Attr& name = op.Add("name", cursor.pos());
  name.kind = Attr::Kind::kString;
  name.str = cursor.ReadString("the computation's name");
  cursor.Expect('>', "'>' after the name");
  cursor.Expect('(', "'(' and the operands");
  reader.ReadOperands(op);
  cursor.Expect(')', "')' after the operands");
  cursor.SkipSpace();
  std::string_view text = cursor.text();
  if (text.compare(cursor.pos(), 12, "in_shardings") == 0) ReadKeyedShardings(reader, op, "in_shardings");
  cursor.SkipSpace();
  if (text.compare(cursor.pos(), 13, "out_shardings") == 0) ReadKeyedShardings(reader, op, "out_shardings");
  op.regions.push_back(reader.ReadRegion(reader.ReadRegionArgs(), /*isolated=*/true));
  reader.ReadOptionalAttrDict(op);
  ReadFunctionSignature(reader, op);
}

Converted ConvertNamedComputation(ModuleReader& reader, OpSyntax& op) {
  CheckOperandTypes(reader, op);
  ExpectRegionCount(reader, op, 1);
  Region& body = *op.regions[0];
  std::vector<Shape> inputs;
  for (Instruction* operand : op.operands) inputs.push_back(operand->shape());
  CheckRegionArgs(reader, op, body, inputs, "body");
  CheckRegionResults(reader, op, body, op.result_types, "body");
  const std::string& name = AttrString(reader.cursor(), RequiredAttr(reader, op, "name"), "name");
  Computation* computation = FlatComputation(reader, body, op, name, /*always_tuple_root=*/op.result_types.size() != 1);
  auto call = MakeInstruction(Opcode::kCall, op.result_types.size() == 1 ? op.result_types[0] : Shape::Tuple(op.result_types),
                              op.operands);
  call->set_called_computations({computation});
  if (const Attr* out = OptionalAttr(op, "out_shardings"); out != nullptr && !op.result_types.empty())
    AddFrontendAttribute(*call, "xla.sdy.sharding", PerValueText(reader, *out, op.result_types));
  Instruction* result = reader.Add(std::move(call));
  if (op.result_types.empty()) return Converted{{}, result};
  if (op.result_types.size() == 1) return Single(result);
  return reader.Results(op, result);
}

// sdy.data_flow_edge %x [sharding=<...>] : T — an identity (with a sharding when given).
void ParseDataFlowEdge(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOperands(op);
  Cursor& cursor = reader.cursor();
  if (cursor.TryKeyword("sharding")) {
    cursor.Expect('=', "'=' after sharding");
    ReadStrippedSharding(reader, op, "sharding");
  }
  reader.ReadOptionalAttrDict(op);
  ReadSameOperandsAndResultType(reader, op);
}

Converted ConvertDataFlowEdge(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  if (OptionalAttr(op, "sharding") == nullptr) return Converted{{op.operands[0]}, nullptr};
  OpSyntax reshard = std::move(op);
  reshard.name = "sdy.reshard";
  return ConvertShardingOp(reader, reshard);
}

}  // namespace

void RegisterSdyOps(OpTable& table) {
  table.Add("sdy.sharding_constraint", ParseShardingOp, ConvertShardingOp);
  table.Add("sdy.reshard", ParseShardingOp, ConvertShardingOp);
  table.Add("sdy.sharding_group", ParseShardingGroup, ConvertShardingGroup);
  table.Add("sdy.propagation_barrier", ParseBarrier, ConvertBarrier);
  table.Add("sdy.manual_computation", ParseManualComputation, ConvertManualComputation);
  table.Add("sdy.named_computation", ParseNamedComputation, ConvertNamedComputation);
  table.Add("sdy.data_flow_edge", ParseDataFlowEdge, ConvertDataFlowEdge);
}

}  // namespace gspmd::stablehlo
