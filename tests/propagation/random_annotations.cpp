// Sparse random annotations for the randomized propagation test (see random_annotations.h): the
// choice of annotations, their GSPMD and Shardy texts, and the check that propagation kept them.
#include "propagation/random_annotations.h"

#include <algorithm>
#include <cctype>
#include <random>
#include <set>
#include <sstream>

#include "partitioner/device_axes.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd::random_propagation {
namespace {

using random_program::RandomProgram;

constexpr char kConstraintSuffix[] = ".constraint";

// Computations whose values may carry a Sharding custom-call: the entry, while bodies and
// conditions, conditional branches and called computations (not reducers or comparators).
std::set<std::string> ConstrainableComputations(const Module& module) {
  std::set<std::string> names = {module.entry()->name()};
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      Opcode opcode = instruction->opcode();
      if (opcode != Opcode::kWhile && opcode != Opcode::kConditional && opcode != Opcode::kCall) continue;
      for (const Computation* called : instruction->called_computations()) names.insert(called->name());
    }
  }
  return names;
}

// `sharding` with the axes of `open_dims` moved to replication (what a with_sharding_constraint
// with unconstrained dims writes). nullopt when the device order is not a product of axes.
std::optional<Sharding> OpenDims(const Sharding& sharding, int64_t rank, int64_t num_devices,
                                 const std::vector<int64_t>& open_dims) {
  if (sharding.IsReplicated()) return sharding;
  std::optional<AxisSharding> axes = DecomposeSharding(sharding, rank, num_devices);
  if (!axes || !axes->manual.empty()) return std::nullopt;
  for (int64_t dim : open_dims) {
    for (const DeviceAxis& axis : axes->dims[dim]) axes->replicated.push_back(axis);
    axes->dims[dim].clear();
  }
  std::sort(axes->replicated.begin(), axes->replicated.end());
  return axes->ToSharding();
}

// A random sharding of a rank-`rank` value over the program's mesh: every mesh axis splits a
// random dim (in random order) or replicates.
Sharding RandomMeshSharding(const RandomProgram& program, int64_t rank, std::mt19937_64& random) {
  AxisSharding axes;
  axes.dims.resize(rank);
  std::vector<DeviceAxis> mesh_axes;
  int64_t stride = 1;
  for (auto size = program.mesh.rbegin(); size != program.mesh.rend(); ++size) {
    if (*size > 1) mesh_axes.push_back({stride, *size});
    stride *= *size;
  }
  std::shuffle(mesh_axes.begin(), mesh_axes.end(), random);
  for (const DeviceAxis& axis : mesh_axes) {
    int64_t dim = std::uniform_int_distribution<int64_t>(-1, rank - 1)(random);
    if (dim < 0) {
      axes.replicated.push_back(axis);
    } else {
      axes.dims[dim].push_back(axis);
    }
  }
  std::sort(axes.replicated.begin(), axes.replicated.end());
  return axes.ToSharding();
}

// Which later uses of an annotated value InsertAfter makes use the inserted custom-call.
enum class Rewire { kAllUses, kFirstUse, kRootOnly, kNone };

// 2-3 unannotated entry arrays of one shape (not the root, not constrained, not results when the
// root is annotated) for a shard_as group; empty when there are none.
std::vector<std::string> ShardAsGroup(const Module& module, const KeptAnnotations& kept, std::mt19937_64& random) {
  const Computation* entry = module.entry();
  std::set<std::string> excluded;
  for (const Constraint& constraint : kept.constraints) excluded.insert(constraint.target);
  if (kept.root)
    for (const Instruction* operand : entry->root()->operands()) excluded.insert(operand->name());
  std::map<std::vector<int64_t>, std::vector<std::string>> by_dims;
  for (const auto& instruction : entry->instructions()) {
    if (instruction.get() == entry->root() || !instruction->shape().IsArray() || instruction->shape().rank() == 0) continue;
    if (instruction->sharding() || excluded.count(instruction->name())) continue;
    by_dims[instruction->shape().dims()].push_back(instruction->name());
  }
  std::vector<std::vector<std::string>> buckets;
  for (const auto& [dims, names] : by_dims)
    if (names.size() >= 2) buckets.push_back(names);
  if (buckets.empty()) return {};
  std::vector<std::string> group = buckets[std::uniform_int_distribution<size_t>(0, buckets.size() - 1)(random)];
  std::shuffle(group.begin(), group.end(), random);
  group.resize(std::min<size_t>(group.size(), std::uniform_int_distribution<size_t>(2, 3)(random)));
  return group;
}

// Writes `line` (a custom-call of `target`, named `name`) after the line defining `target` in
// `computation`, and makes the later uses of `target` in that computation (as `rewire` says) use
// it. A root target hands ROOT to the new line.
std::string InsertAfter(const std::string& text, const std::string& computation, const std::string& target,
                        const std::string& name, const std::string& line_body, Rewire rewire) {
  std::istringstream lines(text);
  std::string line, out, current;
  bool inserted = false;
  const std::string old_ref = "%" + target, new_ref = "%" + name;
  bool renamed_any = false;
  auto rename_uses = [&](std::string& s) {
    if (rewire == Rewire::kNone || (rewire == Rewire::kFirstUse && renamed_any)) return;
    if (rewire == Rewire::kRootOnly && s.rfind("  ROOT ", 0) != 0) return;
    for (size_t pos = s.find(old_ref); pos != std::string::npos; pos = s.find(old_ref, pos + 1)) {
      size_t end = pos + old_ref.size();
      bool whole = end >= s.size() || !(std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '.' ||
                                        s[end] == '_' || s[end] == '-');
      if (!whole) continue;
      s.replace(pos, old_ref.size(), new_ref);
      pos += new_ref.size() - 1;
      renamed_any = true;
    }
  };
  while (std::getline(lines, line)) {
    if (!line.empty() && line[0] == '%') current = line.substr(1, line.find_first_of(" (") - 1);
    if (line.rfind("ENTRY %", 0) == 0) current = line.substr(7, line.find_first_of(" (", 7) - 7);
    if (line == "}") inserted = false;
    if (inserted) rename_uses(line);
    bool is_target = current == computation &&
                     (line.rfind("  " + old_ref + " = ", 0) == 0 || line.rfind("  ROOT " + old_ref + " = ", 0) == 0);
    if (!is_target) {
      out += line + "\n";
      continue;
    }
    bool was_root = line.rfind("  ROOT ", 0) == 0 && rewire != Rewire::kNone;
    if (was_root) line = "  " + line.substr(7);
    out += line + "\n" + (was_root ? "  ROOT " : "  ") + new_ref + " = " + line_body + "\n";
    inserted = true;
  }
  return out;
}

// The Shardy mesh that expresses every kept annotation: one axis per run of device-id digits
// between the digit boundaries the annotations use (major first). nullopt when some annotation
// is not a product of digit axes or two disagree on the boundaries.
std::optional<std::vector<DeviceAxis>> ShardyMeshFor(const std::vector<std::pair<Sharding, int64_t>>& shardings,
                                                     int64_t num_devices) {
  std::set<int64_t> boundaries = {1, num_devices};
  for (const auto& [sharding, rank] : shardings) {
    std::optional<AxisSharding> axes = DecomposeSharding(sharding, rank, num_devices);
    if (!axes || !axes->manual.empty()) return std::nullopt;
    for (const DeviceAxis& axis : axes->AllAxes()) {
      boundaries.insert(axis.stride);
      boundaries.insert(axis.stride * axis.size);
    }
  }
  std::vector<DeviceAxis> mesh;
  for (auto it = boundaries.begin(); std::next(it) != boundaries.end(); ++it) {
    int64_t next = *std::next(it);
    if (next % *it != 0) return std::nullopt;
    mesh.push_back({*it, next / *it});
  }
  std::reverse(mesh.begin(), mesh.end());
  return mesh;
}

std::string ShardyMeshText(const std::vector<DeviceAxis>& mesh) {
  std::string text = "mesh = #sdy.mesh<[";
  for (size_t i = 0; i < mesh.size(); ++i)
    text += (i ? ", " : "") + std::string("\"a") + std::to_string(i) + "\"=" + std::to_string(mesh[i].size);
  return text + "]>";
}

// "<@mesh, [{\"a0\"}, {?}]>" (quotes escaped as inside a frontend attribute value).
std::string ShardyShardingBody(const Sharding& sharding, int64_t rank, int64_t num_devices,
                               const std::vector<DeviceAxis>& mesh, const std::vector<int64_t>& open_dims) {
  std::vector<int64_t> boundaries;
  for (const DeviceAxis& axis : mesh) boundaries.push_back(axis.stride);
  std::sort(boundaries.begin(), boundaries.end());  // SplitAxesAt wants them ascending
  AxisSharding axes = SplitAxesAt(*DecomposeSharding(sharding, rank, num_devices), boundaries);
  std::string text = "<@mesh, [";
  for (int64_t dim = 0; dim < rank; ++dim) {
    text += dim ? ", {" : "{";
    for (size_t i = 0; i < axes.dims[dim].size(); ++i) {
      int64_t index = std::find(mesh.begin(), mesh.end(), axes.dims[dim][i]) - mesh.begin();
      text += (i ? ", " : "") + std::string("\\\"a") + std::to_string(index) + "\\\"";
    }
    if (std::find(open_dims.begin(), open_dims.end(), dim) != open_dims.end())
      text += axes.dims[dim].empty() ? "?" : ", ?";
    text += "}";
  }
  return text + "]>";
}

// Does every device hold the same part of every fixed (not open) dim under both shardings?
bool KeepsFixedDims(const Sharding& annotated, const Sharding& propagated, const Shape& shape,
                    const std::vector<int64_t>& open_dims, int64_t num_devices) {
  if (!propagated.IsTiled() && !propagated.IsReplicated()) return false;
  for (int64_t device = 0; device < num_devices; ++device) {
    Sharding::ShardRegion want = annotated.RegionForDevice(shape, device);
    Sharding::ShardRegion got = propagated.RegionForDevice(shape, device);
    for (int64_t dim = 0; dim < shape.rank(); ++dim) {
      if (std::find(open_dims.begin(), open_dims.end(), dim) != open_dims.end()) continue;
      if (want.offsets[dim] != got.offsets[dim] || want.sizes[dim] != got.sizes[dim]) return false;
    }
  }
  return true;
}

std::string ShardingText(const std::optional<Sharding>& sharding) {
  return sharding ? sharding->ToString() : std::string("(none)");
}

}  // namespace

// See random_annotations.h.
std::string SparseAnnotations(const RandomProgram& program, const SparseOptions& options, KeptAnnotations* kept) {
  std::unique_ptr<Module> module = ParseModule(program.text, "random.hlo");
  std::mt19937_64 random(program.seed * 0x9E3779B97F4A7C15ull + 0x5851F42D4C957F2Dull);
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(random) < p; };
  auto uniform = [&](int64_t low, int64_t high) { return std::uniform_int_distribution<int64_t>(low, high)(random); };
  const int64_t n = program.num_devices;

  // Candidates for Sharding custom-calls: non-root, non-parameter arrays of the constrainable
  // computations.
  std::set<std::string> constrainable = ConstrainableComputations(*module);
  std::vector<const Instruction*> candidates;
  for (const auto& computation : module->computations()) {
    if (!constrainable.count(computation->name())) continue;
    for (const auto& instruction : computation->instructions()) {
      if (instruction.get() == computation->root() || instruction->opcode() == Opcode::kParameter) continue;
      if (instruction->shape().IsTuple() || !instruction->sharding()) continue;
      candidates.push_back(instruction.get());
    }
  }
  std::shuffle(candidates.begin(), candidates.end(), random);
  int64_t constraint_count =
      std::min<int64_t>(uniform(0, options.max_constraints), static_cast<int64_t>(candidates.size()));
  for (int64_t c = 0; c < constraint_count; ++c) {
    const Instruction* target = candidates[c];
    Constraint constraint;
    constraint.computation = target->parent()->name();
    constraint.target = target->name();
    constraint.name = target->name() + kConstraintSuffix;
    constraint.shape = target->shape().ToString(/*print_layout=*/false);
    constraint.sharding = *target->sharding();
    if (chance(options.random_constraint_percent / 100.0))
      constraint.sharding = RandomMeshSharding(program, target->shape().rank(), random);
    int64_t rank = target->shape().rank();
    if (rank > 0 && chance(0.35)) {
      for (int64_t dim = 0; dim < rank; ++dim)
        if (chance(0.5)) constraint.open_dims.push_back(dim);
      if (constraint.open_dims.empty()) constraint.open_dims.push_back(uniform(0, rank - 1));
      std::optional<Sharding> open = OpenDims(constraint.sharding, rank, n, constraint.open_dims);
      if (open) {
        constraint.sharding = *open;
      } else {
        constraint.open_dims.clear();
      }
    }
    kept->constraints.push_back(std::move(constraint));
  }

  Computation* entry = module->entry();
  for (const auto& computation : module->computations()) {
    for (const auto& instruction : computation->instructions()) {
      bool keep = false;
      if (computation.get() == entry && instruction->opcode() == Opcode::kParameter && chance(0.6)) {
        keep = true;
        kept->parameters.emplace(instruction->parameter_number, *instruction->sharding());
      }
      if (computation.get() == entry && instruction.get() == entry->root() && chance(0.35)) {
        keep = true;
        kept->root = *instruction->sharding();
      }
      if (!keep) instruction->set_sharding(std::nullopt);
    }
  }

  Instruction* root = entry->root();
  if (chance(options.group_percent / 100.0)) kept->group = ShardAsGroup(*module, *kept, random);

  // Shardy form when every annotation is expressible over one mesh of named axes.
  std::optional<std::vector<DeviceAxis>> mesh;
  bool root_expressible = !kept->root || root->opcode() == Opcode::kTuple || !root->shape().IsTuple();
  if (root->opcode() == Opcode::kTuple) {
    // One FuncResultSharding per result: each result an array, none twice (it could not carry
    // two annotations).
    std::set<const Instruction*> distinct(root->operands().begin(), root->operands().end());
    root_expressible = root_expressible && distinct.size() == root->operands().size();
    for (const Instruction* operand : root->operands()) root_expressible = root_expressible && !operand->shape().IsTuple();
  }
  if (n > 1 && root_expressible && chance(options.shardy_percent / 100.0)) {
    std::vector<std::pair<Sharding, int64_t>> all;
    for (const auto& [number, sharding] : kept->parameters) all.emplace_back(sharding, entry->parameter(number)->shape().rank());
    for (const Constraint& constraint : kept->constraints)
      all.emplace_back(constraint.sharding, module->FindComputation(constraint.computation)->FindInstruction(constraint.target)->shape().rank());
    if (kept->root && root->opcode() == Opcode::kTuple) {
      for (int64_t i = 0; i < root->operand_count(); ++i)
        all.emplace_back(kept->root->tuple_elements().at(i), root->operand(i)->shape().rank());
    } else if (kept->root) {
      all.emplace_back(*kept->root, root->shape().rank());
    }
    mesh = ShardyMeshFor(all, n);
  }
  kept->shardy = mesh.has_value();
  if (!kept->shardy) module->set_num_partitions(n);
  std::vector<std::string> root_operands;  // names, to wrap in FuncResultSharding
  if (kept->shardy) {
    module->SetAttribute("frontend_attributes", "{xla.sdy.meshes={" + ShardyMeshText(*mesh) + "}}");
    for (const auto& [number, sharding] : kept->parameters) {
      Instruction* parameter = entry->parameter(number);
      parameter->frontend_attributes = "xla.sdy.sharding=\"#sdy.sharding" +
                                       ShardyShardingBody(sharding, parameter->shape().rank(), n, *mesh, {}) + "\"";
      if (chance(0.5)) parameter->set_sharding(std::nullopt);  // JAX writes both; accept either
    }
    if (kept->root) {
      root->set_sharding(std::nullopt);
      if (root->opcode() == Opcode::kTuple) {
        for (const Instruction* operand : root->operands()) root_operands.push_back(operand->name());
      } else {
        root_operands.push_back(root->name());
      }
    }
  }
  if (!kept->shardy) {
    for (const std::string& member : kept->group) {
      Sharding as = Sharding::Unknown();
      as.set_shard_group(Sharding::ShardGroup{0, true});
      entry->FindInstruction(member)->set_sharding(as);
    }
  }
  std::string text = PrintModule(*module);

  for (const Constraint& constraint : kept->constraints) {
    std::string body = constraint.shape + " custom-call(%" + constraint.target + "), custom_call_target=\"Sharding\"";
    if (!kept->shardy || chance(0.3)) body += ", sharding=" + constraint.sharding.ToString();
    if (!kept->shardy && !constraint.open_dims.empty()) {
      body += ", backend_config=\"unspecified_dims=[";
      for (size_t i = 0; i < constraint.open_dims.size(); ++i)
        body += (i ? "," : "") + std::to_string(constraint.open_dims[i]);
      body += "]\"";
    }
    if (kept->shardy) {
      int64_t rank = module->FindComputation(constraint.computation)->FindInstruction(constraint.target)->shape().rank();
      body += ", frontend_attributes={xla.sdy.sharding=\"#sdy.sharding_per_value<[" +
              ShardyShardingBody(constraint.sharding, rank, n, *mesh, constraint.open_dims) + "]>\"}";
    }
    // Usually every later use goes through the constraint (with_sharding_constraint); sometimes
    // only the first, so that other users of the value may want other shardings.
    text = InsertAfter(text, constraint.computation, constraint.target, constraint.name, body,
                       chance(0.25) ? Rewire::kFirstUse : Rewire::kAllUses);
  }
  if (kept->shardy) {
    for (const std::string& member : kept->group) {
      text = InsertAfter(text, entry->name(), member, member + ".group",
                         "() custom-call(%" + member +
                             "), custom_call_target=\"xla.sdy.ShardingGroup\", custom_call_has_side_effect=true, "
                             "frontend_attributes={xla.sdy.sharding_group_id=\"0\"}",
                         Rewire::kNone);
    }
  }
  if (root_operands.empty()) return text;

  // Shardy results: each root tuple operand (or the root itself) through a FuncResultSharding.
  // The names are those after the constraints were inserted (a constrained result is used
  // through its constraint).
  std::unique_ptr<Module> constrained = ParseModule(text, "annotated.hlo");
  const Instruction* new_root = constrained->entry()->root();
  std::vector<const Instruction*> results;
  if (new_root->opcode() == Opcode::kTuple) {
    results.assign(new_root->operands().begin(), new_root->operands().end());
  } else {
    results.push_back(new_root);
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const Instruction* result = results[i];
    Constraint annotation;
    annotation.computation = constrained->entry()->name();
    annotation.target = result->name();
    annotation.name = result->name() + ".result";
    annotation.sharding = kept->root->IsTuple() ? kept->root->tuple_elements().at(i) : *kept->root;
    annotation.result = true;
    std::string body = result->shape().ToString(/*print_layout=*/false) + " custom-call(%" + result->name() +
                       "), custom_call_target=\"xla.sdy.FuncResultSharding\", custom_call_has_side_effect=true, "
                       "frontend_attributes={xla.sdy.sharding=\"#sdy.sharding_per_value<[" +
                       ShardyShardingBody(annotation.sharding, result->shape().rank(), n, *mesh, {}) + "]>\"}";
    text = InsertAfter(text, annotation.computation, annotation.target, annotation.name, body, Rewire::kRootOnly);
    kept->constraints.push_back(std::move(annotation));
  }
  return text;
}

// See random_annotations.h.
std::string CheckAnnotations(const Module& propagated, const KeptAnnotations& kept, int64_t num_devices) {
  // A value nothing reached keeps no sharding (as in XLA); the partitioner replicates it.
  const Computation* entry = propagated.entry();
  for (const auto& [number, sharding] : kept.parameters) {
    const Instruction* parameter = entry->parameter(number);
    if (!parameter->sharding() || !(*parameter->sharding() == sharding))
      return "entry parameter " + std::to_string(number) + " annotated " + sharding.ToString() + " became " +
             ShardingText(parameter->sharding());
  }
  if (kept.root && (!entry->root()->sharding() || !(*entry->root()->sharding() == *kept.root)))
    return "root annotated " + kept.root->ToString() + " became " + ShardingText(entry->root()->sharding());
  std::optional<Sharding> group_sharding;
  for (const std::string& member : kept.group) {
    Sharding sharding = entry->FindInstruction(member)->sharding().value_or(Sharding::Replicated());
    sharding.set_shard_group(std::nullopt);
    if (!group_sharding) group_sharding = sharding;
    if (!(sharding == *group_sharding))
      return "shard_as group member %" + member + " has " + sharding.ToString() + ", %" + kept.group.front() +
             " has " + group_sharding->ToString();
  }
  for (const Constraint& constraint : kept.constraints) {
    const Computation* computation = propagated.FindComputation(constraint.computation);
    const Instruction* call = computation ? computation->FindInstruction(constraint.name) : nullptr;
    if (call == nullptr) return "annotation custom-call %" + constraint.name + " disappeared";
    if (!call->sharding()) return "annotation custom-call %" + constraint.name + " lost its sharding";
    const Sharding& got = *call->sharding();
    bool same = constraint.open_dims.empty()
                    ? got == constraint.sharding
                    : KeepsFixedDims(constraint.sharding, got, call->shape(), constraint.open_dims, num_devices);
    if (!same)
      return "annotation %" + constraint.name + " on %" + constraint.target + " annotated " + constraint.sharding.ToString() +
             (constraint.open_dims.empty() ? "" : " (with unspecified dims)") + " became " + got.ToString();
  }
  return "";
}

}  // namespace gspmd::random_propagation
