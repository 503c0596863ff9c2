// The lint driver: compiles the program once, runs the checks, formats the findings.
#include "lint/lint.h"

#include <algorithm>
#include <set>

#include "lint/checks.h"
#include "partitioner/sdy_attributes.h"
#include "sharding/partition_spec.h"

namespace gspmd::lint {

namespace {

// The device axes (stride, size) of a named mesh in iota order, major first; empty for an
// explicit device order (its axes are no strides of the device id).
std::vector<DeviceAxis> NamedAxes(const Mesh& mesh) {
  std::vector<DeviceAxis> axes(mesh.axes.size());
  if (!mesh.device_ids.empty()) return {};
  int64_t stride = 1;
  for (size_t i = mesh.axes.size(); i-- > 0;) {
    axes[i] = DeviceAxis{stride, mesh.axes[i].size};
    stride *= mesh.axes[i].size;
  }
  return axes;
}

// The implied axes cut further at the named axes' boundaries, so each named axis is one axis
// (or several, where shardings split it finer); `implied` unchanged when they do not nest.
std::vector<DeviceAxis> CutAtNamedAxes(const std::vector<DeviceAxis>& implied, const Mesh& named) {
  std::set<int64_t> boundaries;
  for (const DeviceAxis& axis : implied) boundaries.insert({axis.stride, axis.stride * axis.size});
  for (const DeviceAxis& axis : NamedAxes(named)) {
    if (axis.size < 2) continue;
    boundaries.insert({axis.stride, axis.stride * axis.size});
  }
  std::vector<DeviceAxis> axes;
  for (auto it = boundaries.begin(); std::next(it) != boundaries.end(); ++it) {
    if (*std::next(it) % *it != 0) return implied;
    axes.push_back(DeviceAxis{*it, *std::next(it) / *it});
  }
  std::sort(axes.begin(), axes.end(), [](const DeviceAxis& a, const DeviceAxis& b) { return a.stride > b.stride; });
  return axes;
}

}  // namespace

LintContext::LintContext(const ProgramLoader& load, const LintOptions& options)
    : load_(load), options_(options), base_(Evaluate(load, {}, options.devices)) {
  mesh_ = ImpliedMeshAxes(*base_.global, base_.num_devices);
  named_mesh_ = NamedMeshOf(*base_.global);
  if (named_mesh_ && named_mesh_->num_devices() != base_.num_devices) named_mesh_.reset();
  if (named_mesh_ && !mesh_.empty()) mesh_ = CutAtNamedAxes(mesh_, *named_mesh_);
}

std::string LintContext::ShardingText(const Sharding& sharding, int64_t rank) const {
  return "sharding=" + ShardingTextWithSpec(sharding, rank, named_mesh());
}

std::string LintContext::FixText(LintFinding& finding, const Sharding& sharding, int64_t rank) const {
  finding.fix_sharding = sharding.ToString();
  std::optional<std::string> spec;
  if (named_mesh_ && rank >= 0) spec = PartitionSpecOf(sharding, rank, *named_mesh_);
  finding.fix_spec = spec.value_or("");
  if (spec && options_.stablehlo_input) return *spec;
  return ShardingText(sharding, rank);
}

std::string LintContext::AxisName(const DeviceAxis& axis) const {
  if (named_mesh_) {
    const std::vector<DeviceAxis> named = NamedAxes(*named_mesh_);
    for (size_t i = 0; i < named.size(); ++i)
      if (named[i] == axis) return StrCat("mesh axis '", named_mesh_->axes[i].name, "' (size ", axis.size, ")");
  }
  return MeshAxisName(mesh_, axis);
}

bool LintContext::IsUserAnnotated(const Instruction& instruction) const {
  auto it = base_.propagation.origins.find(instruction.parent()->name() + "/" + instruction.name());
  return it != base_.propagation.origins.end() && it->second.user;
}

const Instruction* LintContext::ResponsibleAnnotation(const Instruction& instruction) const {
  auto it = base_.propagation.origins.find(instruction.parent()->name() + "/" + instruction.name());
  if (it == base_.propagation.origins.end()) return nullptr;
  if (it->second.user) return &instruction;
  if (it->second.source.empty()) return nullptr;
  return FindAnyInstruction(*base_.global, it->second.source);
}

bool LintContext::Spend() {
  if (evaluations_ >= options_.max_fix_evaluations) return false;
  ++evaluations_;
  return true;
}

std::optional<Sharding> LintContext::ShardingWithoutAnnotation(const std::string& name) {
  if (!Spend()) return std::nullopt;
  try {
    std::unique_ptr<Module> module = load_();
    Instruction* instruction = FindAnyInstruction(*module, name);
    if (instruction == nullptr) return std::nullopt;
    instruction->set_sharding(std::nullopt);
    PropagationOptions propagation;
    propagation.num_partitions = base_.num_devices;
    PropagateShardings(*module, propagation);
    return instruction->sharding();
  } catch (const UserError&) {
    return std::nullopt;
  }
}

std::optional<double> LintContext::CommAfter(const std::vector<AnnotationEdit>& edits) {
  if (!Spend()) return std::nullopt;
  try {
    return CommBytesAfter(load_, edits, base_.num_devices);
  } catch (const UserError&) {
    return std::nullopt;
  }
}

LintFinding LintContext::MakeFinding(const std::string& check, const Instruction& instruction) const {
  LintFinding finding;
  finding.check = check;
  finding.instruction = instruction.name();
  if (instruction.source()) finding.location = instruction.source()->location;
  finding.comm_before = base_.comm_bytes_per_device;
  return finding;
}

namespace {

std::vector<int64_t> MeshStrides(const std::vector<DeviceAxis>& mesh) {
  std::vector<int64_t> strides;
  for (const DeviceAxis& axis : mesh) strides.push_back(axis.stride);
  return strides;
}

}  // namespace

std::optional<AxisSharding> MeshAxesOf(const Sharding& sharding, int64_t rank, int64_t num_devices,
                                       const std::vector<DeviceAxis>& mesh) {
  if (sharding.IsReplicated() || (sharding.IsTiled() && sharding.tile_assignment().num_elements() == 1)) {
    AxisSharding axes;
    axes.dims.resize(rank);
    axes.replicated = mesh;
    std::sort(axes.replicated.begin(), axes.replicated.end());
    return axes;
  }
  if (!sharding.IsTiled()) return std::nullopt;
  std::optional<AxisSharding> axes = DecomposeSharding(sharding, rank, num_devices);
  if (!axes) return std::nullopt;
  return SplitAxesAt(*axes, MeshStrides(mesh));
}

int64_t PerDeviceBytes(const Shape& shape, const Sharding& sharding) {
  if (!shape.IsArray()) return shape.byte_size();
  return Shape(shape.element_type(), sharding.ShardDims(shape.dims())).byte_size();
}

std::vector<DeviceAxis> ReplicatedMeshAxes(const Sharding& sharding, int64_t rank, int64_t num_devices,
                                           const std::vector<DeviceAxis>& mesh) {
  std::vector<DeviceAxis> replicated;
  std::optional<AxisSharding> axes = MeshAxesOf(sharding, rank, num_devices, mesh);
  if (!axes) return replicated;
  for (const DeviceAxis& axis : axes->replicated)
    if (std::find(mesh.begin(), mesh.end(), axis) != mesh.end()) replicated.push_back(axis);
  return replicated;
}

std::optional<Sharding> SplitOverAxis(const Sharding& sharding, int64_t rank, int64_t num_devices,
                                      const std::vector<DeviceAxis>& mesh, const DeviceAxis& axis, int64_t dim) {
  std::optional<AxisSharding> axes = MeshAxesOf(sharding, rank, num_devices, mesh);
  if (!axes) return std::nullopt;
  auto it = std::find(axes->replicated.begin(), axes->replicated.end(), axis);
  if (it == axes->replicated.end()) return std::nullopt;
  axes->replicated.erase(it);
  axes->dims[dim].push_back(axis);
  return axes->ToSharding();
}

LintReport LintProgram(const ProgramLoader& load, const LintOptions& options) {
  LintContext context(load, options);
  LintReport report;
  report.comm_bytes_per_device = context.base().comm_bytes_per_device;
  report.peak_bytes_per_device = context.base().peak_bytes_per_device;
  report.num_devices = context.base().num_devices;
  CheckConflicts(context, report.findings);
  CheckFullRematerialization(context, report.findings);
  CheckUnevenPadding(context, report.findings);
  CheckReplicatedLarge(context, report.findings);
  CheckUnusedMeshAxes(context, report.findings);
  if (options.redundant) CheckRedundantAnnotations(context, report.findings);
  std::stable_sort(report.findings.begin(), report.findings.end(), [](const LintFinding& a, const LintFinding& b) {
    return std::make_pair(a.location.line, a.location.column) < std::make_pair(b.location.line, b.location.column);
  });
  return report;
}

std::string FormatLintReport(const LintReport& report) {
  std::string out;
  for (const LintFinding& finding : report.findings) {
    out += finding.location.ToString() + ": " + (finding.warning ? "warning: " : "note: ") + finding.message + " [" +
           finding.check + "]\n";
    if (!finding.fix.empty()) out += "  fix: " + finding.fix + "\n";
  }
  return out;
}

nlohmann::json LintReportToJson(const LintReport& report) {
  nlohmann::json findings = nlohmann::json::array();
  for (const LintFinding& finding : report.findings) {
    nlohmann::json entry = {{"file", finding.location.file},
                            {"line", finding.location.line},
                            {"column", finding.location.column},
                            {"severity", finding.warning ? "warning" : "note"},
                            {"check", finding.check},
                            {"instruction", finding.instruction},
                            {"annotation", finding.annotation},
                            {"message", finding.message},
                            {"bytes_per_device", finding.bytes_per_device}};
    if (!finding.fix.empty()) {
      entry["fix"] = {{"text", finding.fix},
                      {"instruction", finding.fix_instruction},
                      {"sharding", finding.fix_sharding},
                      {"bytes_per_device", finding.fix_bytes_per_device},
                      {"comm_bytes_per_device_before", finding.comm_before},
                      {"comm_bytes_per_device_after", finding.comm_after}};
      if (!finding.fix_spec.empty()) entry["fix"]["spec"] = finding.fix_spec;
    }
    if (finding.check == "plan") {
      entry["step_time_s_before"] = finding.step_time_before_s;
      entry["step_time_s_after"] = finding.step_time_after_s;
      nlohmann::json changes = nlohmann::json::array();
      for (const LintPlanChange& change : finding.changes) {
        nlohmann::json before = {{"sharding", change.before_sharding}, {"annotated", change.annotated}};
        nlohmann::json after = {{"sharding", change.after_sharding}};
        if (!change.before_spec.empty()) before["spec"] = change.before_spec;
        if (!change.after_spec.empty()) after["spec"] = change.after_spec;
        changes.push_back({{"parameter", change.parameter},
                           {"parameter_number", change.parameter_number},
                           {"file", change.location.file},
                           {"line", change.location.line},
                           {"column", change.location.column},
                           {"before", before},
                           {"after", after},
                           {"replicate", change.replicate}});
      }
      entry["changes"] = changes;
    }
    findings.push_back(entry);
  }
  nlohmann::json groups = nlohmann::json::array();
  for (const LintFindingGroup& group : GroupLintFindings(report.findings))
    groups.push_back({{"findings", group.members}, {"bytes_per_device", group.bytes_per_device}});
  const LintTotals totals = CountLintFindings(report.findings);
  return {{"num_devices", report.num_devices},
          {"comm_bytes_per_device", report.comm_bytes_per_device},
          {"peak_bytes_per_device", report.peak_bytes_per_device},
          {"findings", findings},
          {"groups", groups},
          {"summary",
           {{"warnings", totals.warnings},
            {"notes", totals.notes},
            {"by_kind", totals.by_kind},
            {"avoidable_bytes_per_device", totals.avoidable_bytes_per_device},
            {"text", LintSummary(report)}}},
          {"plan_search",
           {{"status", report.plan_search.status},
            {"message", report.plan_search.message},
            {"step_time_s_before", report.plan_search.step_time_before_s},
            {"step_time_s_after", report.plan_search.step_time_after_s}}}};
}

}  // namespace gspmd::lint
