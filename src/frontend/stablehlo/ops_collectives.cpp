// Collectives (what shard_map bodies use): all_reduce, all_gather, reduce_scatter,
// all_to_all, collective_permute, collective_broadcast, and partition_id / replica_id.
//   %0 = "stablehlo.all_reduce"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
//          replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
//          ^bb0(%a: tensor<f32>, %b: tensor<f32>): ... }) : (tensor<8xf32>) -> tensor<8xf32>
// Replica groups come as a dense 2-D list (-1 pads short groups) or, with Shardy, as
// #stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = "x">]>.
// Variadic collectives become one HLO collective per operand.
#include <algorithm>

#include "frontend/stablehlo/op_helpers.h"
#include "frontend/stablehlo/op_table.h"
#include "frontend/stablehlo/regions.h"
#include "frontend/stablehlo/types.h"

namespace gspmd::stablehlo {
namespace {

// #stablehlo.axis_ref<name = "x"> or <name = "x", sub_axis_info = #stablehlo.sub_axis_info<pre_size = 1, size = 2>>.
AxisRef ReadAxisRef(ModuleReader& reader, const Attr& attr) {
  if (attr.kind != Attr::Kind::kDialect || attr.str != "stablehlo.axis_ref")
    reader.Error(attr.pos, "expected #stablehlo.axis_ref<name = \"...\">");
  AxisRef ref;
  ForEachBodyField(reader.cursor(), attr, [&](std::string_view name, size_t pos, Cursor& cursor) {
    if (name == "name") {
      ref.name = cursor.ReadString("the axis name");
      return;
    }
    if (name != "sub_axis_info") cursor.ErrorAt(pos, StrCat("unknown field ", name, " of #stablehlo.axis_ref"));
    Attr info = ParseAttr(cursor, reader.env());
    if (info.kind != Attr::Kind::kDialect) cursor.ErrorAt(info.pos, "expected #stablehlo.sub_axis_info<pre_size = N, size = M>");
    ForEachBodyField(cursor, info, [&](std::string_view field, size_t field_pos, Cursor& values) {
      if (field == "pre_size") ref.pre_size = values.ReadInt(field);
      else if (field == "size") ref.size = values.ReadInt(field);
      else values.ErrorAt(field_pos, StrCat("unknown field ", field, " of the sub-axis info"));
    });
  });
  if (ref.name.empty()) reader.Error(attr.pos, "#stablehlo.axis_ref needs a name");
  return ref;
}

ReplicaGroups ReadReplicaGroups(ModuleReader& reader, const OpSyntax& op) {
  const Attr* attr = OptionalAttr(op, "replica_groups");
  if (attr == nullptr) return ReplicaGroups();
  if (attr->kind == Attr::Kind::kDialect && attr->str == "stablehlo.replica_group_mesh_axes") {
    std::string mesh_name;
    std::vector<AxisRef> axes;
    size_t mesh_pos = attr->pos;
    ForEachBodyField(reader.cursor(), *attr, [&](std::string_view name, size_t pos, Cursor& cursor) {
      Attr value = ParseAttr(cursor, reader.env());
      if (name == "mesh") {
        if (value.kind != Attr::Kind::kSymbol) cursor.ErrorAt(value.pos, "mesh: expected @mesh_name");
        mesh_name = value.str;
        mesh_pos = value.pos;
      } else if (name == "axes") {
        if (value.kind != Attr::Kind::kArray) cursor.ErrorAt(value.pos, "axes: expected [#stablehlo.axis_ref<...>, ...]");
        for (const Attr& element : value.elements) axes.push_back(ReadAxisRef(reader, element));
      } else {
        cursor.ErrorAt(pos, StrCat("unknown field ", name, " of #stablehlo.replica_group_mesh_axes"));
      }
    });
    auto mesh = reader.meshes().find(mesh_name);
    if (mesh == reader.meshes().end()) reader.Error(mesh_pos, StrCat("unknown mesh @", mesh_name, " (expected an sdy.mesh)"));
    for (const AxisRef& axis : axes)
      if (mesh->second.AxisIndex(axis.name) < 0) reader.Error(mesh_pos, StrCat("mesh @", mesh_name, " has no axis '", axis.name, "'"));
    return ReplicaGroups::FromMesh(mesh->second, std::move(axes));
  }
  std::vector<std::vector<int64_t>> rows = AttrIntRows(reader.cursor(), *attr, "replica_groups");
  for (auto& row : rows) {
    std::erase(row, -1);
    for (int64_t id : row)
      if (id < 0) reader.Error(attr->pos, StrCat("replica group id ", id, " is negative"));
  }
  std::erase_if(rows, [](const std::vector<int64_t>& row) { return row.empty(); });
  return ReplicaGroups::Explicit(std::move(rows));
}

// channel_handle, replica_groups and use_global_device_ids on `instruction`.
void SetCollectiveAttributes(ModuleReader& reader, const OpSyntax& op, Instruction& instruction, bool groups) {
  if (const Attr* channel = OptionalAttr(op, "channel_handle")) {
    if (channel->kind != Attr::Kind::kDialect) reader.Error(channel->pos, "channel_handle: expected #stablehlo.channel_handle<handle = N, type = M>");
    ForEachBodyField(reader.cursor(), *channel, [&](std::string_view name, size_t pos, Cursor& cursor) {
      int64_t value = cursor.ReadInt(name);
      if (name == "handle") instruction.channel_id = value;
      else if (name != "type") cursor.ErrorAt(pos, StrCat("unknown field ", name, " of #stablehlo.channel_handle"));
    });
  }
  if (groups) {
    instruction.mutable_replica_groups() = ReadReplicaGroups(reader, op);
    instruction.has_replica_groups = true;
  }
  instruction.use_global_device_ids = BoolAttrOr(reader, op, "use_global_device_ids", false);
}

// One collective per operand; results in operand order.
template <typename Make>
Converted PerOperand(ModuleReader& reader, const OpSyntax& op, Make&& make) {
  ExpectOperandCount(reader, op, 1, /*at_least=*/true);
  CheckOperandTypes(reader, op);
  if (op.result_types.size() != op.operands.size())
    reader.Error(op.pos, StrCat(op.name, " has one result per operand"));
  Converted converted;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    auto instruction = make(i);
    SetCollectiveAttributes(reader, op, *instruction, /*groups=*/true);
    converted.results.push_back(AddChecked(reader, op, std::move(instruction)));
  }
  converted.primary = converted.results.size() == 1 ? converted.results[0] : nullptr;
  return converted;
}

Computation* ReductionComputation(ModuleReader& reader, OpSyntax& op) {
  ExpectRegionCount(reader, op, 1);
  Region& region = *op.regions[0];
  Shape element = ArrayShape(op.operands[0]->shape().element_type(), {});
  for (Instruction* operand : op.operands)
    if (operand->shape().element_type() != element.element_type())
      reader.Error(op.pos, StrCat(op.name, " with several operands needs one element type"));
  CheckRegionArgs(reader, op, region, {element, element}, "reduction");
  CheckRegionResults(reader, op, region, {element}, "reduction");
  return FlatComputation(reader, region, op, "region");
}

Converted ConvertAllReduce(ModuleReader& reader, OpSyntax& op) {
  Computation* reduction = ReductionComputation(reader, op);
  return PerOperand(reader, op, [&](size_t i) {
    if (!op.result_types[i].Compatible(op.operands[i]->shape())) reader.Error(op.pos, "all_reduce keeps its operand's type");
    auto instruction = MakeInstruction(Opcode::kAllReduce, op.result_types[i], {op.operands[i]});
    instruction->set_called_computations({reduction});
    return instruction;
  });
}

// Result dims of an all-gather/reduce-scatter along `dim`: that dim scaled by `factor` (or divided).
void CheckScaled(ModuleReader& reader, const OpSyntax& op, size_t i, int64_t dim, bool gather) {
  const Shape& operand = op.operands[i]->shape();
  const Shape& result = op.result_types[i];
  if (dim < 0 || dim >= operand.rank()) reader.Error(op.pos, StrCat(op.name, ": dimension ", dim, " is out of range"));
  bool ok = result.IsArray() && result.rank() == operand.rank();
  for (int64_t d = 0; ok && d < operand.rank(); ++d) {
    if (d == dim) ok = gather ? result.dim(d) % std::max<int64_t>(operand.dim(d), 1) == 0 : operand.dim(d) % std::max<int64_t>(result.dim(d), 1) == 0;
    else ok = result.dim(d) == operand.dim(d);
  }
  if (!ok) reader.Error(op.pos, StrCat("result ", i, " of ", op.name, " (", MlirTypeName(result), ") does not fit operand ",
                                       MlirTypeName(operand), " along dimension ", dim));
}

Converted ConvertAllGather(ModuleReader& reader, OpSyntax& op) {
  int64_t dim = IntAttr(reader, op, "all_gather_dim");
  return PerOperand(reader, op, [&](size_t i) {
    CheckScaled(reader, op, i, dim, /*gather=*/true);
    auto instruction = MakeInstruction(Opcode::kAllGather, op.result_types[i], {op.operands[i]});
    instruction->dimensions = {dim};
    return instruction;
  });
}

Converted ConvertReduceScatter(ModuleReader& reader, OpSyntax& op) {
  int64_t dim = IntAttr(reader, op, "scatter_dimension");
  Computation* reduction = ReductionComputation(reader, op);
  return PerOperand(reader, op, [&](size_t i) {
    CheckScaled(reader, op, i, dim, /*gather=*/false);
    auto instruction = MakeInstruction(Opcode::kReduceScatter, op.result_types[i], {op.operands[i]});
    instruction->dimensions = {dim};
    instruction->set_called_computations({reduction});
    return instruction;
  });
}

// HLO's all-to-all splits and concatenates along one dimension. With split != concat the
// split dimension is cut into [count, size / count], the all-to-all exchanges the count
// dimension, and a transpose and reshape move the received pieces into the concat dimension.
Converted ConvertAllToAll(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1, /*at_least=*/true);
  CheckOperandTypes(reader, op);
  int64_t split = IntAttr(reader, op, "split_dimension");
  int64_t concat = IntAttr(reader, op, "concat_dimension");
  int64_t count = IntAttr(reader, op, "split_count");
  if (op.result_types.size() != op.operands.size()) reader.Error(op.pos, "stablehlo.all_to_all has one result per operand");
  Converted converted;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const Shape& operand = op.operands[i]->shape();
    const Shape& result = op.result_types[i];
    const int64_t rank = operand.rank();
    if (split < 0 || split >= rank || concat < 0 || concat >= rank || count < 1 || operand.dim(split) % count != 0)
      reader.Error(op.pos, StrCat("all_to_all cannot split dimension ", split, " of ", MlirTypeName(operand), " into ", count,
                                  " parts along concat dimension ", concat));
    std::vector<int64_t> expected = operand.dims();
    expected[split] /= count;
    expected[concat] *= count;
    if (!result.IsArray() || result.dims() != expected)
      reader.Error(op.pos, StrCat("result ", i, " of stablehlo.all_to_all should have dims of ", MlirTypeName(operand),
                                  " with dimension ", split, " divided and ", concat, " multiplied by ", count));
    Instruction* value = op.operands[i];
    auto exchange = [&](Instruction* input, const Shape& shape, int64_t dim) {
      auto instruction = MakeInstruction(Opcode::kAllToAll, shape, {input});
      instruction->dimensions = {dim};
      SetCollectiveAttributes(reader, op, *instruction, /*groups=*/true);
      return AddChecked(reader, op, std::move(instruction));
    };
    if (split == concat) {
      converted.results.push_back(exchange(value, result, split));
      continue;
    }
    // [.., count * s, ..] -> [.., count, s, ..]: the pieces along a new dim at `split`.
    std::vector<int64_t> pieces = operand.dims();
    pieces[split] /= count;
    pieces.insert(pieces.begin() + split, count);
    Shape pieces_shape = ArrayShape(operand.element_type(), pieces);
    Instruction* reshaped = reader.AddOp(Opcode::kReshape, pieces_shape, {value});
    Instruction* exchanged = exchange(reshaped, pieces_shape, split);
    // Move the piece dim just before the concat dim, then merge them.
    const int64_t concat_in_pieces = concat < split ? concat : concat + 1;
    std::vector<int64_t> perm;
    for (int64_t d = 0; d <= rank; ++d) {
      if (d == split) continue;
      if (d == concat_in_pieces) perm.push_back(split);
      perm.push_back(d);
    }
    std::vector<int64_t> permuted;
    for (int64_t d : perm) permuted.push_back(pieces[d]);
    Shape permuted_shape = ArrayShape(operand.element_type(), permuted);
    auto transpose = MakeInstruction(Opcode::kTranspose, permuted_shape, {exchanged});
    transpose->dimensions = perm;
    Instruction* moved = reader.Add(std::move(transpose));
    converted.results.push_back(reader.AddOp(Opcode::kReshape, result, {moved}));
  }
  converted.primary = converted.results.size() == 1 ? converted.results[0] : nullptr;
  return converted;
}

Converted ConvertCollectivePermute(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  CheckOperandTypes(reader, op);
  const Shape& result = SingleResultType(reader, op);
  if (!result.Compatible(op.operands[0]->shape())) reader.Error(op.pos, "collective_permute keeps its operand's type");
  auto instruction = MakeInstruction(Opcode::kCollectivePermute, result, op.operands);
  std::vector<SourceTargetPair> pairs;
  for (const std::vector<int64_t>& row : AttrIntRows(reader.cursor(), RequiredAttr(reader, op, "source_target_pairs"), "source_target_pairs")) {
    if (row.size() != 2 || row[0] < 0 || row[1] < 0) reader.Error(op.pos, "source_target_pairs needs [source, target] pairs of ids");
    pairs.push_back({row[0], row[1]});
  }
  instruction->mutable_source_target_pairs() = std::move(pairs);
  SetCollectiveAttributes(reader, op, *instruction, /*groups=*/false);
  return Single(AddChecked(reader, op, std::move(instruction)));
}

Converted ConvertCollectiveBroadcast(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1);
  CheckOperandTypes(reader, op);
  const Shape& result = SingleResultType(reader, op);
  auto instruction = MakeInstruction(Opcode::kCollectiveBroadcast, result, op.operands);
  SetCollectiveAttributes(reader, op, *instruction, /*groups=*/true);
  return Single(AddChecked(reader, op, std::move(instruction)));
}

// stablehlo.partition_id : tensor<ui32>
void ParseNullary(ModuleReader& reader, OpSyntax& op) {
  reader.ReadOptionalAttrDict(op);
  reader.cursor().Expect(':', Expected("':' and the type of ", op.name));
  op.result_types = {reader.ReadType()};
}

Converted ConvertPartitionId(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 0);
  const Shape& result = SingleResultType(reader, op);
  if (!result.IsArray() || result.rank() != 0 || result.element_type() != ElementType::kU32)
    reader.Error(op.pos, StrCat(op.name, " produces tensor<ui32>"));
  Opcode opcode = op.name == "stablehlo.partition_id" ? Opcode::kPartitionId : Opcode::kReplicaId;
  return Single(AddChecked(reader, op, MakeInstruction(opcode, result, {})));
}

}  // namespace

void RegisterCollectiveOps(OpTable& table) {
  table.Add("stablehlo.all_reduce", nullptr, ConvertAllReduce);
  table.Add("stablehlo.all_gather", nullptr, ConvertAllGather);
  table.Add("stablehlo.reduce_scatter", nullptr, ConvertReduceScatter);
  table.Add("stablehlo.all_to_all", nullptr, ConvertAllToAll);
  table.Add("stablehlo.collective_permute", nullptr, ConvertCollectivePermute);
  table.Add("stablehlo.collective_broadcast", nullptr, ConvertCollectiveBroadcast);
  table.Add("stablehlo.partition_id", ParseNullary, ConvertPartitionId);
  table.Add("stablehlo.replica_id", ParseNullary, ConvertPartitionId);
}

}  // namespace gspmd::stablehlo
