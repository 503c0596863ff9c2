// Custom-calls the partitioner understands: sharding annotations (Sharding,
// xla.sdy.FuncResultSharding and other xla.sdy.* markers), custom-calls that pass their data
// through, shard barriers (the identity) and the manual-region boundaries
// (SPMDFullToShardShape / SPMDShardToFullShape, xla.sdy.GlobalToLocalShape /
// xla.sdy.LocalToGlobalShape). Other targets are left to the replicate fallback (or to the
// handler that knows them).
#include <algorithm>
#include <map>
#include <string>

#include "ir/known_custom_calls.h"
#include "ir/module.h"
#include "ir/sdy_custom_calls.h"
#include "partitioner/computation_partitioner.h"
#include "partitioner/manual.h"
#include "partitioner/op_context.h"
#include "partitioner/sdy_attributes.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {


std::string Where(const Instruction& instruction) { return StrCat("%", instruction.name()); }

std::map<std::string, Mesh> MeshesFor(const Instruction& instruction) {
  const Computation* computation = instruction.parent();
  const Module* module = computation ? computation->parent() : nullptr;
  if (module == nullptr) return {};
  return SdyMeshesOf(*module);
}

// The named views of the values a Shardy attribute describes (one per leaf).
std::vector<NamedShardingView> SdyViewsOf(const Instruction& instruction, const std::string& key,
                                          int64_t count) {
  std::string text = instruction.FrontendAttribute(key);
  if (text.empty()) GSPMD_USER_ERROR(Where(instruction), ": ", instruction.custom_call_target,
                                     " has no frontend attribute ", key);
  std::vector<NamedShardingView> views = ParseSdyShardingPerValue(text, MeshesFor(instruction), Where(instruction));
  if (static_cast<int64_t>(views.size()) != count)
    GSPMD_USER_ERROR(Where(instruction), ": ", key, " lists ", views.size(), " shardings for ", count, " values");
  return views;
}

// The local (inside the region) sharding of a value whose global sharding is `view`: its
// manual axes become a manual subgroup, the other axes keep splitting their dims.
Sharding LocalShardingOf(NamedShardingView view, const std::vector<std::string>& manual_axes,
                         const std::string& where) {
  auto is_manual = [&](const AxisRef& ref) {
    return std::find(manual_axes.begin(), manual_axes.end(), ref.name) != manual_axes.end();
  };
  for (auto& dim : view.dim_axes) dim.erase(std::remove_if(dim.begin(), dim.end(), is_manual), dim.end());
  auto& replicated = view.replicated_axes;
  replicated.erase(std::remove_if(replicated.begin(), replicated.end(), is_manual), replicated.end());
  view.manual_axes.clear();
  for (const std::string& name : manual_axes) {
    if (view.mesh.AxisIndex(name) < 0) GSPMD_USER_ERROR(where, ": manual axis '", name, "' is not in ", view.mesh.ToString());
    view.manual_axes.push_back(AxisRef{name});
  }
  bool all_manual = true;
  for (const Mesh::Axis& axis : view.mesh.axes)
    all_manual = all_manual && (axis.size == 1 || is_manual(AxisRef{axis.name}));
  if (all_manual) return Sharding::Manual();
  return ShardingFromSdyView(view, where);
}

// The local sharding of a value every device of a manual group holds whole.
Sharding WholeLocalSharding(NamedShardingView view, const std::vector<std::string>& manual_axes,
                            const std::string& where) {
  for (auto& dim : view.dim_axes) dim.clear();
  view.replicated_axes.clear();
  view.unreduced_axes.clear();
  return LocalShardingOf(std::move(view), manual_axes, where);
}

int64_t LeafCount(const Shape& shape) { return shape.IsTuple() ? shape.tuple_size() : 1; }
const Shape& Leaf(const Shape& shape, int64_t i) { return shape.IsTuple() ? shape.tuple_shape(i) : shape; }
Sharding LeafSharding(const Sharding& sharding, int64_t i) {
  return sharding.IsTuple() ? sharding.tuple_elements().at(i) : sharding;
}

// Sets the result from per-leaf values (a tuple when the instruction's shape is one).
void SetLeaves(OpContext& op, const std::vector<Instruction*>& leaves, const std::vector<Sharding>& shardings) {
  if (!op.instruction().shape().IsTuple()) {
    op.SetResult(leaves.at(0), shardings.at(0));
    return;
  }
  op.SetResult(op.builder().Tuple(leaves), Sharding::Tuple(shardings));
}

// Sharding / xla.sdy.FuncResultSharding / other identity markers: the operand in the
// annotated sharding (the driver's reshard moves it there).
bool PartitionAnnotation(OpContext& op) {
  const Instruction& instruction = op.instruction();
  if (instruction.operand_count() != 1) return false;
  if (!instruction.operand(0)->shape().Compatible(instruction.shape())) return false;  // layouts may differ
  Sharding target = op.sharding();
  if (!instruction.sharding()) {
    std::string text = instruction.FrontendAttribute("xla.sdy.sharding");
    if (!text.empty() && instruction.shape().IsArray()) {
      auto views = ParseSdyShardingPerValue(text, MeshesFor(instruction), Where(instruction));
      if (views.size() == 1) target = ShardingFromSdyView(views[0], Where(instruction));
    }
  }
  op.SetResult(op.OperandValueWith(0, target));
  return true;
}

// SPMDFullToShardShape: the operand's piece on each device becomes the manual value.
bool PartitionFullToShard(OpContext& op) {
  const Instruction& instruction = op.instruction();
  if (instruction.operand_count() != 1 || !instruction.shape().IsArray()) return false;
  const Sharding& local = op.sharding();
  Sharding preferred = EffectiveSharding(*instruction.operand(0));
  op.SetResult(EnterManualRegion(op, 0, preferred, local, instruction.shape()), local);
  return true;
}

// SPMDShardToFullShape: each device's manual value is its piece of the result.
bool PartitionShardToFull(OpContext& op) {
  const Instruction& instruction = op.instruction();
  if (instruction.operand_count() != 1 || !instruction.shape().IsArray()) return false;
  op.SetResult(LeaveManualRegion(op, op.Operand(0), instruction.shape(), op.sharding()));
  return true;
}

// xla.sdy.GlobalToLocalShape(x1, ..., xn): in_shardings give each operand's global layout,
// manual_axes which mesh axes the body runs manually over.
bool PartitionGlobalToLocal(OpContext& op) {
  const Instruction& instruction = op.instruction();
  int64_t count = instruction.operand_count();
  if (count != LeafCount(instruction.shape())) {
    GSPMD_USER_ERROR(Where(instruction), ": xla.sdy.GlobalToLocalShape has ", count, " operands but ",
                     LeafCount(instruction.shape()), " results");
  }
  std::vector<NamedShardingView> views = SdyViewsOf(instruction, "xla.sdy.in_shardings", count);
  std::vector<std::string> manual_axes =
      ParseSdyManualAxes(instruction.FrontendAttribute("xla.sdy.manual_axes"), Where(instruction));
  std::vector<Instruction*> leaves;
  std::vector<Sharding> shardings;
  for (int64_t i = 0; i < count; ++i) {
    Sharding own = LeafSharding(op.sharding(), i);
    Sharding local = HasManualAxes(own) ? own : LocalShardingOf(views[i], manual_axes, Where(instruction));
    Sharding global = ShardingFromSdyView(views[i], Where(instruction));
    leaves.push_back(EnterManualRegion(op, i, global, local, Leaf(instruction.shape(), i)));
    shardings.push_back(local);
  }
  SetLeaves(op, leaves, shardings);
  return true;
}

// xla.sdy.LocalToGlobalShape(y1, ..., yn): out_shardings give each result's global layout.
bool PartitionLocalToGlobal(OpContext& op) {
  const Instruction& instruction = op.instruction();
  int64_t count = instruction.operand_count();
  if (count != LeafCount(instruction.shape())) {
    GSPMD_USER_ERROR(Where(instruction), ": xla.sdy.LocalToGlobalShape has ", count, " operands but ",
                     LeafCount(instruction.shape()), " results");
  }
  std::vector<NamedShardingView> views = SdyViewsOf(instruction, "xla.sdy.out_shardings", count);
  std::vector<std::string> manual_axes =
      ParseSdyManualAxes(instruction.FrontendAttribute("xla.sdy.manual_axes"), Where(instruction));
  std::vector<Instruction*> leaves;
  std::vector<Sharding> shardings;
  for (int64_t i = 0; i < count; ++i) {
    Sharding local = LocalShardingOf(views[i], manual_axes, Where(instruction));
    PartitionedValue value = op.Operand(i);
    // A partially manual value may sit in another layout of its free axes: move it.
    if (HasManualAxes(value.sharding) && !(value.sharding == local)) value = op.OperandValueWith(i, local);
    // A value computed without manual shardings holds its group's whole local value.
    if (!HasManualAxes(value.sharding)) value.sharding = WholeLocalSharding(views[i], manual_axes, Where(instruction));
    Sharding wanted = ShardingFromSdyView(views[i], Where(instruction));
    PartitionedValue global = LeaveManualRegion(op, value, Leaf(instruction.shape(), i), wanted);
    leaves.push_back(global.hlo);
    shardings.push_back(global.sharding);
  }
  SetLeaves(op, leaves, shardings);
  return true;
}

// Custom-calls whose result is their operands' data position by position (MoveToHost,
// LayoutConstraint, X64Combine, ...): each device runs them on its own pieces.
bool PartitionDataPassThrough(OpContext& op) {
  const Instruction& instruction = op.instruction();
  const Sharding& target = op.sharding();
  if (target.IsTuple()) return false;
  std::vector<Instruction*> operands;
  for (int64_t i = 0; i < instruction.operand_count(); ++i) operands.push_back(op.OperandWith(i, target));
  op.SetResult(op.Clone(ShardShapeOf(target, instruction.shape()), operands), target);
  return true;
}

// xla.sdy.ShardingGroup ties values' shardings together for propagation; it has no value.
bool PartitionShardingGroup(OpContext& op) {
  if (!op.instruction().shape().IsTuple() || op.instruction().shape().tuple_size() != 0) return false;
  op.SetResult(op.builder().Tuple({}), Sharding::Tuple({}));
  return true;
}

}  // namespace

bool PartitionCustomCall(OpContext& op) {
  const Instruction& instruction = op.instruction();
  if (instruction.opcode() != Opcode::kCustomCall) return false;
  const std::string& target = instruction.custom_call_target;
  if (target == "Sharding") return PartitionAnnotation(op);
  // Propagation removes the barriers; in a module sharded by hand they are the identity.
  if (IsShardBarrier(instruction)) {
    op.SetResult(op.Operand(0));
    return true;
  }
  if (IsDataPassThroughCustomCall(instruction)) return PartitionDataPassThrough(op);
  if (target == "SPMDFullToShardShape") return PartitionFullToShard(op);
  if (target == "SPMDShardToFullShape") return PartitionShardToFull(op);
  const std::string_view sdy = SdyTargetName(target);  // also the local_xla.sdy.* spelling
  if (sdy.empty()) return false;
  if (sdy == "GlobalToLocalShape") return PartitionGlobalToLocal(op);
  if (sdy == "LocalToGlobalShape") return PartitionLocalToGlobal(op);
  if (sdy == "ShardingGroup") return PartitionShardingGroup(op);
  // xla.sdy.FuncResultSharding, xla.sdy.PropagationBarrier, ...: annotations of a value.
  return PartitionAnnotation(op);
}

}  // namespace gspmd
