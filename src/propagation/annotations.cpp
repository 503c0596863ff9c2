// Reads the user's sharding annotations (sharding=, Sharding custom-calls, xla.sdy.*), the
// manual regions and the shard groups of a module, for the propagation driver.
#include "propagation/annotations.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <set>
#include <unordered_set>

#include "ir/sdy_custom_calls.h"
#include "partitioner/sdy_attributes.h"
#include "propagation/sharding_algebra.h"
#include "support/diagnostic.h"

namespace gspmd::propagation {
namespace {

std::string Where(const Instruction& instruction) { return StrCat("%", instruction.name()); }

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// Shardy targets ("xla.sdy.X") also match their "local_xla.sdy.X" spelling.
bool IsCustomCall(const Instruction& instruction, const std::string& target) {
  if (instruction.opcode() != Opcode::kCustomCall) return false;
  std::string_view sdy = SdyTargetName(target);
  if (!sdy.empty()) return SdyTargetName(instruction.custom_call_target) == sdy;
  return instruction.custom_call_target == target;
}

Sharding WithoutGroup(Sharding sharding) {
  sharding.set_shard_group(std::nullopt);
  for (Sharding& element : sharding.mutable_tuple_elements()) element = WithoutGroup(element);
  return sharding;
}

int64_t LeafCount(const Shape& shape) { return shape.IsTuple() ? shape.tuple_size() : 1; }

// The shardings a Shardy attribute text describes, one per value (#sdy.sharding is one value).
std::vector<NamedShardingView> SdyViews(const std::string& text, const std::map<std::string, Mesh>& meshes,
                                        const std::string& where) {
  if (StartsWith(text, "#sdy.sharding_per_value")) return ParseSdyShardingPerValue(text, meshes, where);
  return {ParseSdySharding(text, meshes, where)};
}

std::vector<NamedShardingView> SdyViewsOf(const Instruction& instruction, const std::string& key, int64_t count,
                                          const std::map<std::string, Mesh>& meshes) {
  std::string text = instruction.FrontendAttribute(key);
  if (text.empty()) {
    GSPMD_USER_ERROR(Where(instruction), ": ", instruction.custom_call_target, " has no frontend attribute ", key);
  }
  std::vector<NamedShardingView> views = SdyViews(text, meshes, Where(instruction));
  if (static_cast<int64_t>(views.size()) != count) {
    GSPMD_USER_ERROR(Where(instruction), ": ", key, " lists ", views.size(), " shardings for ", count, " values");
  }
  return views;
}

// The sharding inside a shard_map body of a value whose global sharding is `view`: the manual
// axes become a manual subgroup, the other axes keep splitting their dims.
Sharding LocalSharding(NamedShardingView view, const std::vector<std::string>& manual_axes, const std::string& where) {
  auto is_manual = [&](const AxisRef& ref) {
    return std::find(manual_axes.begin(), manual_axes.end(), ref.name) != manual_axes.end();
  };
  for (auto& dim : view.dim_axes) dim.erase(std::remove_if(dim.begin(), dim.end(), is_manual), dim.end());
  auto& replicated = view.replicated_axes;
  replicated.erase(std::remove_if(replicated.begin(), replicated.end(), is_manual), replicated.end());
  view.unreduced_axes.clear();
  view.manual_axes.clear();
  for (const std::string& name : manual_axes) {
    if (view.mesh.AxisIndex(name) < 0) GSPMD_USER_ERROR(where, ": manual axis '", name, "' is not in ", view.mesh.ToString());
    view.manual_axes.push_back(AxisRef{name});
  }
  bool all_manual = true;
  for (const Mesh::Axis& axis : view.mesh.axes) all_manual = all_manual && (axis.size == 1 || is_manual(AxisRef{axis.name}));
  if (all_manual) return Sharding::Manual();
  return ShardingFromSdyView(view, where);
}

Sharding PackLeaves(const Shape& shape, std::vector<Sharding> leaves) {
  if (!shape.IsTuple()) return leaves.at(0);
  return Sharding::Tuple(std::move(leaves));
}

// Adjacent axes (by stride) that together form one digit range are merged, so that two
// decompositions of the same device digits compare equal.
std::vector<DeviceAxis> NormalizeAxes(std::vector<DeviceAxis> axes) {
  std::sort(axes.begin(), axes.end());
  std::vector<DeviceAxis> merged;
  for (const DeviceAxis& axis : axes) {
    if (axis.size == 1) continue;
    if (!merged.empty() && merged.back().stride * merged.back().size == axis.stride) {
      merged.back().size *= axis.size;
      continue;
    }
    merged.push_back(axis);
  }
  return merged;
}

class AnnotationReader {
 public:
  AnnotationReader(const Module& module, int64_t num_devices)
      : module_(module), num_devices_(num_devices), meshes_(SdyMeshesOf(module)) {}

  Annotations Read() {
    for (const auto& computation : module_.computations()) {
      for (const auto& instruction : computation->instructions()) ReadInstruction(*instruction);
    }
    for (const auto& computation : module_.computations()) FoldConstraintsIntoOperands(*computation);
    for (auto& [key, members] : group_members_) {
      bool shard_like = key.rfind("like", 0) == 0;
      result_.groups.push_back(ShardGroupMembers{!shard_like, std::move(members)});
    }
    FindManualRegions();
    return std::move(result_);
  }

 private:
  void ReadInstruction(const Instruction& instruction) {
    if (IsCustomCall(instruction, "xla.sdy.ShardingGroup")) {
      ReadShardingGroup(instruction);
      return;
    }
    if (IsCustomCall(instruction, "xla.sdy.GlobalToLocalShape")) {
      ReadGlobalToLocal(instruction);
      return;
    }
    if (IsCustomCall(instruction, "xla.sdy.LocalToGlobalShape")) {
      ReadLocalToGlobal(instruction);
      return;
    }
    const std::optional<Sharding>& written = instruction.sharding();
    if (written && written->shard_group()) AddToGroup(*written->shard_group(), instruction);
    if (written && !written->IsUnknown()) {
      UserAnnotation annotation{WithoutGroup(*written), OpenDimsOf(instruction), true};
      annotation.dim_priorities = DimPrioritiesOf(instruction);
      result_.fixed.emplace(&instruction, std::move(annotation));
      return;
    }
    std::string sdy = instruction.FrontendAttribute("xla.sdy.sharding");
    if (sdy.empty()) return;
    std::vector<NamedShardingView> views = SdyViews(sdy, meshes_, Where(instruction));
    if (static_cast<int64_t>(views.size()) != LeafCount(instruction.shape())) {
      GSPMD_USER_ERROR(Where(instruction), ": xla.sdy.sharding lists ", views.size(), " shardings for ",
                       LeafCount(instruction.shape()), " values");
    }
    std::vector<Sharding> leaves;
    for (const NamedShardingView& view : views) leaves.push_back(ShardingFromSdyView(view, Where(instruction)));
    UserAnnotation annotation{PackLeaves(instruction.shape(), std::move(leaves)), OpenDimsOf(instruction), false};
    annotation.dim_priorities = DimPrioritiesOf(instruction);
    result_.fixed.emplace(&instruction, std::move(annotation));
  }

  // A fully specified Sharding custom-call also fixes its operand when nothing else does (the
  // last constraint in program order wins), so the value is computed in the layout the user
  // asked for rather than resharded afterwards. Not a loop's result: fixing it would fix the
  // loop's carry, which XLA lays out from the loop's init first (the constraint then reshards
  // once after the loop instead of inside every iteration).
  void FoldConstraintsIntoOperands(const Computation& computation) {
    std::vector<Instruction*> order = computation.MakePostOrder();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const Instruction& constraint = **it;
      if (!IsCustomCall(constraint, "Sharding") || !IsAnnotationCustomCall(constraint)) continue;
      auto annotation = result_.fixed.find(&constraint);
      if (annotation == result_.fixed.end() || !annotation->second.open_dims.empty()) continue;
      const Instruction* operand = constraint.operand(0);
      if (result_.fixed.count(operand) > 0 || IsLoopResult(*operand)) continue;
      UserAnnotation folded{annotation->second.sharding, {}, false, &constraint};
      folded.dim_priorities = annotation->second.dim_priorities;
      result_.fixed.emplace(operand, std::move(folded));
    }
  }

  static bool IsLoopResult(const Instruction& value) {
    return value.opcode() == Opcode::kGetTupleElement && value.operand(0)->opcode() == Opcode::kWhile;
  }

  // Open dims of an array-shaped annotation: unspecified_dims of a Sharding custom-call, "?"
  // dims of a Shardy sharding.
  std::vector<int64_t> OpenDimsOf(const Instruction& instruction) {
    if (!instruction.shape().IsArray()) return {};
    std::vector<int64_t> open = UnspecifiedDims(instruction);
    std::string sdy = instruction.FrontendAttribute("xla.sdy.sharding");
    if (!sdy.empty()) {
      std::vector<std::vector<int64_t>> per_value = SdyOpenDims(sdy);
      if (per_value.size() == 1) open.insert(open.end(), per_value[0].begin(), per_value[0].end());
    }
    std::sort(open.begin(), open.end());
    open.erase(std::unique(open.begin(), open.end()), open.end());
    for (int64_t dim : open) {
      if (dim < 0 || dim >= instruction.shape().rank()) {
        GSPMD_USER_ERROR(Where(instruction), ": unspecified dim ", dim, " is not a dim of ", instruction.shape().ToString());
      }
    }
    return open;
  }

  // Priorities of an array-shaped annotation's dims from its xla.sdy.sharding (empty when
  // all are 0).
  std::vector<int64_t> DimPrioritiesOf(const Instruction& instruction) {
    if (!instruction.shape().IsArray()) return {};
    std::string sdy = instruction.FrontendAttribute("xla.sdy.sharding");
    if (sdy.empty()) return {};
    std::vector<std::vector<int64_t>> per_value = SdyDimPriorities(sdy);
    if (per_value.size() != 1 || static_cast<int64_t>(per_value[0].size()) != instruction.shape().rank()) return {};
    for (int64_t priority : per_value[0]) {
      if (priority != 0) return per_value[0];
    }
    return {};
  }

  void AddToGroup(const Sharding::ShardGroup& group, const Instruction& instruction) {
    std::string key = StrCat(group.shard_as ? "as" : "like", group.id);
    group_members_[key].push_back(&instruction);
  }

  void ReadShardingGroup(const Instruction& instruction) {
    std::string id = instruction.FrontendAttribute("xla.sdy.sharding_group_id");
    if (instruction.operand_count() != 1) {
      GSPMD_USER_ERROR(Where(instruction), ": xla.sdy.ShardingGroup takes one operand, not ", instruction.operand_count());
    }
    group_members_["sdy" + id].push_back(instruction.operand(0));
    result_.fixed.emplace(&instruction, UserAnnotation{Sharding::Tuple({}), {}, false});
  }

  std::vector<std::string> ManualAxesOf(const Instruction& instruction) {
    return ParseSdyManualAxes(instruction.FrontendAttribute("xla.sdy.manual_axes"), Where(instruction));
  }

  // Result: the local (manual) shardings; operands are proposed the in_shardings.
  void ReadGlobalToLocal(const Instruction& instruction) {
    int64_t count = instruction.operand_count();
    if (count != LeafCount(instruction.shape())) {
      GSPMD_USER_ERROR(Where(instruction), ": xla.sdy.GlobalToLocalShape has ", count, " operands but ",
                       LeafCount(instruction.shape()), " results");
    }
    std::vector<NamedShardingView> views = SdyViewsOf(instruction, "xla.sdy.in_shardings", count, meshes_);
    std::vector<std::string> manual = ManualAxesOf(instruction);
    std::vector<Sharding> locals;
    for (int64_t i = 0; i < count; ++i) {
      locals.push_back(LocalSharding(views[i], manual, Where(instruction)));
      Sharding global = ShardingFromSdyView(views[i], Where(instruction));
      result_.seeds.push_back({instruction.operand(i), 0, global, &instruction, "shard_map in_sharding"});
    }
    result_.fixed.emplace(&instruction, UserAnnotation{PackLeaves(instruction.shape(), std::move(locals)), {}, false});
  }

  // Result: the global out_shardings; operands are proposed the local (manual) shardings.
  void ReadLocalToGlobal(const Instruction& instruction) {
    int64_t count = instruction.operand_count();
    if (count != LeafCount(instruction.shape())) {
      GSPMD_USER_ERROR(Where(instruction), ": xla.sdy.LocalToGlobalShape has ", count, " operands but ",
                       LeafCount(instruction.shape()), " results");
    }
    std::vector<NamedShardingView> views = SdyViewsOf(instruction, "xla.sdy.out_shardings", count, meshes_);
    std::vector<std::string> manual = ManualAxesOf(instruction);
    std::vector<Sharding> globals;
    for (int64_t i = 0; i < count; ++i) {
      globals.push_back(ShardingFromSdyView(views[i], Where(instruction)));
      Sharding local = LocalSharding(views[i], manual, Where(instruction));
      result_.seeds.push_back({instruction.operand(i), 0, local, &instruction, "shard_map out_sharding"});
    }
    result_.fixed.emplace(&instruction, UserAnnotation{PackLeaves(instruction.shape(), std::move(globals)), {}, false});
  }

  // ---- Manual regions ----

  // The manual sharding of leaf `leaf` of `value` when it is a fixed manual value (looking
  // through get-tuple-element).
  std::optional<Sharding> ManualShardingOf(const Instruction* value, int64_t leaf) {
    if (value->opcode() == Opcode::kGetTupleElement) return ManualShardingOf(value->operand(0), value->tuple_index);
    auto it = result_.fixed.find(value);
    if (it == result_.fixed.end()) return std::nullopt;
    const Sharding& sharding = it->second.sharding;
    const Sharding& element = sharding.IsTuple() && leaf < static_cast<int64_t>(sharding.tuple_elements().size())
                                  ? sharding.tuple_elements()[leaf]
                                  : sharding;
    if (element.IsTuple()) return std::nullopt;
    bool manual = element.IsManual();
    if (element.IsTiled()) {
      for (Sharding::SubgroupType type : element.subgroup_types()) manual |= type == Sharding::SubgroupType::kManual;
    }
    if (!manual) return std::nullopt;
    return element;
  }

  std::optional<ManualContext> ContextFrom(const Sharding& manual, int64_t rank, const std::string& source) {
    ManualContext context;
    context.num_devices = num_devices_;
    context.source = source;
    if (manual.IsManual()) return context;
    std::optional<AxisSharding> axes = DecomposeSharding(manual, rank, num_devices_);
    if (!axes) return std::nullopt;
    context.manual = NormalizeAxes(axes->manual);
    context.fully_manual = context.manual.size() == 1 && context.manual[0].size == num_devices_;
    if (context.fully_manual) context.manual.clear();
    return context;
  }

  // The manual context of a call's callee, from its operands or the users of its result.
  std::optional<ManualContext> CallContext(const Instruction& call) {
    for (const Instruction* operand : call.operands()) {
      if (!operand->shape().IsArray()) continue;
      std::optional<Sharding> manual = ManualShardingOf(operand, 0);
      if (manual) return ContextFrom(*manual, operand->shape().rank(), operand->name());
    }
    std::vector<const Instruction*> consumers;
    for (const Instruction* user : call.users()) {
      consumers.push_back(user);
      if (user->opcode() != Opcode::kGetTupleElement) continue;
      consumers.insert(consumers.end(), user->users().begin(), user->users().end());
    }
    for (const Instruction* consumer : consumers) {
      if (IsCustomCall(*consumer, "Sharding") && consumer->shape().IsArray()) {
        std::optional<Sharding> manual = ManualShardingOf(consumer, 0);
        if (manual) return ContextFrom(*manual, consumer->shape().rank(), consumer->name());
      }
      if (!IsCustomCall(*consumer, "xla.sdy.LocalToGlobalShape")) continue;
      // The consumer's own (global) sharding is not manual; the seeds for its operands are.
      for (const SeedProposal& seed : result_.seeds) {
        if (seed.from != consumer || !seed.instruction->shape().IsArray()) continue;
        return ContextFrom(seed.sharding, seed.instruction->shape().rank(), consumer->name());
      }
    }
    return std::nullopt;
  }

  void FindManualRegions() {
    std::deque<const Computation*> pending;
    for (const auto& computation : module_.computations()) {
      for (const auto& instruction : computation->instructions()) {
        if (instruction->opcode() != Opcode::kCall || instruction->to_apply() == nullptr) continue;
        std::optional<ManualContext> context = CallContext(*instruction);
        if (!context) continue;
        const Computation* callee = instruction->to_apply();
        if (result_.manual_computations.emplace(callee, *context).second) pending.push_back(callee);
      }
    }
    // Control flow inside a manual region is manual too.
    while (!pending.empty()) {
      const Computation* computation = pending.front();
      pending.pop_front();
      const ManualContext context = result_.manual_computations.at(computation);
      for (const auto& instruction : computation->instructions()) {
        Opcode opcode = instruction->opcode();
        if (opcode != Opcode::kWhile && opcode != Opcode::kConditional && opcode != Opcode::kCall) continue;
        for (const Computation* called : instruction->called_computations()) {
          if (result_.manual_computations.emplace(called, context).second) pending.push_back(called);
        }
      }
    }
  }

  const Module& module_;
  int64_t num_devices_;
  std::map<std::string, Mesh> meshes_;
  std::map<std::string, std::vector<const Instruction*>> group_members_;
  Annotations result_;
};

int64_t DevicesOf(const Sharding& sharding) {
  if (!sharding.IsTuple()) return sharding.RequiredDeviceCount();
  int64_t count = 0;
  for (const Sharding& element : sharding.tuple_elements()) count = std::max(count, DevicesOf(element));
  return count;
}

}  // namespace

Sharding ManualContext::Template(int64_t rank) const {
  if (fully_manual) return Sharding::Manual();
  AxisSharding axes;
  axes.dims.resize(rank);
  axes.manual = manual;
  // The other digits of the device id are replicated.
  std::vector<DeviceAxis> sorted = manual;
  std::sort(sorted.begin(), sorted.end());
  int64_t stride = 1;
  for (const DeviceAxis& axis : sorted) {
    if (axis.stride > stride) axes.replicated.push_back(DeviceAxis{stride, axis.stride / stride});
    stride = axis.stride * axis.size;
  }
  if (stride < num_devices) axes.replicated.push_back(DeviceAxis{stride, num_devices / stride});
  return axes.ToSharding();
}

bool ManualContext::Accepts(const Sharding& sharding, int64_t rank) const {
  if (fully_manual) return sharding.IsManual();
  if (!sharding.IsTiled()) return false;
  std::optional<AxisSharding> axes = DecomposeSharding(sharding, rank, num_devices);
  if (!axes) return false;
  return NormalizeAxes(axes->manual) == manual;
}

UserAnnotation UserAnnotation::ForRound(int64_t round) const {
  std::vector<int64_t> waiting;
  for (size_t d = 0; d < dim_priorities.size(); ++d)
    if (dim_priorities[d] > round) waiting.push_back(static_cast<int64_t>(d));
  if (waiting.empty()) return *this;
  UserAnnotation now = *this;
  if (sharding.IsTiled()) now.sharding = ReplicateDims(sharding, waiting);
  std::erase_if(now.open_dims, [&](int64_t d) { return dim_priorities[d] > round; });
  return now;
}

Annotations ReadAnnotations(const Module& module, int64_t num_devices) {
  Annotations annotations = AnnotationReader(module, num_devices).Read();
  annotations.required_devices = RequiredDeviceCount(module);
  std::set<int64_t> priorities;
  for (const auto& [instruction, annotation] : annotations.fixed)
    priorities.insert(annotation.dim_priorities.begin(), annotation.dim_priorities.end());
  if (!priorities.empty()) {
    priorities.insert(0);
    annotations.priority_rounds.assign(priorities.begin(), priorities.end());
  }
  return annotations;
}

int64_t RequiredDeviceCount(const Module& module) {
  int64_t count = 0;
  for (const auto& [name, mesh] : SdyMeshesOf(module)) count = std::max(count, mesh.num_devices());
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->sharding()) count = std::max(count, DevicesOf(*instruction->sharding()));
    }
  }
  return count;
}

std::vector<int64_t> UnspecifiedDims(const Instruction& instruction) {
  if (!instruction.backend_config) return {};
  const std::string& text = *instruction.backend_config;
  const std::string key = "unspecified_dims=[";
  size_t pos = text.find(key);
  if (pos == std::string::npos) return {};
  pos += key.size();
  std::vector<int64_t> dims;
  while (pos < text.size() && text[pos] != ']') {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == ',')) ++pos;
    if (pos < text.size() && text[pos] == ']') break;
    size_t start = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
    if (start == pos) {
      GSPMD_USER_ERROR(Where(instruction), ": bad backend_config ", text, ": expected unspecified_dims=[d, ...]");
    }
    dims.push_back(std::stoll(text.substr(start, pos - start)));
  }
  if (pos >= text.size()) {
    GSPMD_USER_ERROR(Where(instruction), ": bad backend_config ", text, ": unterminated unspecified_dims list");
  }
  return dims;
}

namespace {

// Per value of a Shardy sharding text, per dim: whether it is open ("?") and its priority
// (the N of "}pN" after the dim; 0 when unwritten).
struct SdyDim {
  bool open = false;
  int64_t priority = 0;
};

std::vector<std::vector<SdyDim>> SdyDims(const std::string& text) {
  std::vector<std::vector<SdyDim>> result;
  size_t pos = 0;
  while (true) {
    size_t at = text.find('@', pos);
    size_t inline_mesh = text.find("mesh<", pos);
    size_t start = std::min(at, inline_mesh);
    if (start == std::string::npos) break;
    if (start == inline_mesh) {
      start = text.find('>', start);  // the inline mesh's closing bracket
      if (start == std::string::npos) break;
    }
    size_t open = text.find('[', start);
    if (open == std::string::npos) break;
    std::vector<SdyDim> dims;
    int depth = 0;
    bool has_open = false;
    size_t i = open + 1;
    for (; i < text.size() && text[i] != ']'; ++i) {
      char c = text[i];
      if (c == '{') {
        ++depth;
        has_open = false;
      } else if (c == '}') {
        if (--depth != 0) continue;
        SdyDim dim{has_open, 0};
        if (i + 1 < text.size() && text[i + 1] == 'p') {
          size_t digits = i + 2;
          while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
          if (digits > i + 2) dim.priority = std::stoll(text.substr(i + 2, digits - i - 2));
        }
        dims.push_back(dim);
      } else if (c == '?' && depth > 0) {
        has_open = true;
      }
    }
    result.push_back(std::move(dims));
    pos = i;
  }
  return result;
}

}  // namespace

std::vector<std::vector<int64_t>> SdyOpenDims(const std::string& text) {
  std::vector<std::vector<int64_t>> result;
  for (const std::vector<SdyDim>& value : SdyDims(text)) {
    std::vector<int64_t>& open = result.emplace_back();
    for (size_t d = 0; d < value.size(); ++d)
      if (value[d].open) open.push_back(static_cast<int64_t>(d));
  }
  return result;
}

std::vector<std::vector<int64_t>> SdyDimPriorities(const std::string& text) {
  std::vector<std::vector<int64_t>> result;
  for (const std::vector<SdyDim>& value : SdyDims(text)) {
    std::vector<int64_t>& priorities = result.emplace_back();
    for (const SdyDim& dim : value) priorities.push_back(dim.priority);
  }
  return result;
}

bool IsAnnotationCustomCall(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kCustomCall) return false;
  if (instruction.operand_count() != 1 || !instruction.operand(0)->shape().Compatible(instruction.shape())) return false;
  const std::string& target = instruction.custom_call_target;
  if (target == "Sharding") return true;
  std::string_view sdy = SdyTargetName(target);
  if (sdy.empty()) return false;
  return sdy != "GlobalToLocalShape" && sdy != "LocalToGlobalShape" && sdy != "ShardingGroup";
}

}  // namespace gspmd::propagation
