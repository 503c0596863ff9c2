// Compile (api/pipeline.h) + attribute collectives to global instructions, for lint and its fixes.
#include "lint/program_evaluation.h"

#include <algorithm>
#include <set>

#include "analysis/comm_report.h"
#include "api/pipeline.h"
#include "support/diagnostic.h"

namespace gspmd::lint {

Instruction* FindAnyInstruction(const Module& module, const std::string& name) {
  if (Instruction* found = module.entry()->FindInstruction(name)) return found;
  for (const auto& computation : module.computations())
    if (Instruction* found = computation->FindInstruction(name)) return found;
  return nullptr;
}

Evaluation Evaluate(const ProgramLoader& load, const std::vector<AnnotationEdit>& edits, int64_t devices) {
  Evaluation result;
  result.global = load();
  for (const AnnotationEdit& edit : edits) {
    Instruction* instruction = FindAnyInstruction(*result.global, edit.instruction);
    GSPMD_CHECK(instruction != nullptr, "lint edit names no instruction: ", edit.instruction);
    instruction->set_sharding(edit.sharding);
  }
  api::CompileOptions compile;
  compile.requested_devices = devices;
  compile.always_propagate = true;
  compile.record_origins = true;
  api::CompiledPartition compiled = api::PartitionGlobal(*result.global, /*file=*/"", compile);
  result.propagation = std::move(compiled.propagation);
  result.num_devices = compiled.num_devices;
  result.partitioned = std::move(compiled.partitioned);
  for (const auto& computation : result.global->computations())
    for (const auto& instruction : computation->instructions())
      if (instruction->source() != nullptr) result.global_names.emplace(instruction->source(), instruction->name());
  const Module& per_device = *result.partitioned.module;
  ForEachCollective(per_device, [&](const Instruction& collective, double times) {
    AttributedCollective entry;
    entry.collective = &collective;
    entry.source = result.GlobalName(collective);
    entry.bytes = times * CollectiveBytesPerDevice(collective, result.num_devices);
    result.comm_bytes_per_device += entry.bytes;
    result.collectives.push_back(entry);
  });
  result.peak_bytes_per_device = PeakLiveBytes(per_device);
  return result;
}

std::string Evaluation::GlobalName(const Instruction& per_device) const {
  if (per_device.source() == nullptr) return "";
  auto it = global_names.find(per_device.source());
  return it != global_names.end() ? it->second : per_device.source()->name;
}

double CommBytesAfter(const ProgramLoader& load, const std::vector<AnnotationEdit>& edits, int64_t devices) {
  return Evaluate(load, edits, devices).comm_bytes_per_device;
}

namespace {

void AddBoundaries(const Sharding& sharding, int64_t rank, int64_t num_devices, std::set<int64_t>& boundaries,
                   bool& compatible) {
  if (sharding.IsTuple()) return;  // leaves are visited through the tuple's elements' users
  if (!sharding.IsTiled()) return;
  std::optional<AxisSharding> axes = DecomposeSharding(sharding, rank, num_devices);
  if (!axes) {
    compatible = false;
    return;
  }
  for (const DeviceAxis& axis : axes->AllAxes()) {
    boundaries.insert(axis.stride);
    boundaries.insert(axis.stride * axis.size);
  }
}

}  // namespace

std::vector<DeviceAxis> ImpliedMeshAxes(const Module& module, int64_t num_devices) {
  std::set<int64_t> boundaries = {1, num_devices};
  std::set<std::string> seen;
  bool compatible = true;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (!instruction->sharding() || !instruction->shape().IsArray()) continue;
      if (!seen.insert(instruction->sharding()->ToString() + "/" + std::to_string(instruction->shape().rank())).second)
        continue;
      AddBoundaries(*instruction->sharding(), instruction->shape().rank(), num_devices, boundaries, compatible);
    }
  }
  std::vector<DeviceAxis> axes;
  if (!compatible || num_devices < 2) return axes;
  for (auto it = boundaries.begin(); std::next(it) != boundaries.end(); ++it) {
    const int64_t next = *std::next(it);
    if (next % *it != 0) return {};
    axes.push_back(DeviceAxis{*it, next / *it});
  }
  std::sort(axes.begin(), axes.end(), [](const DeviceAxis& a, const DeviceAxis& b) { return a.stride > b.stride; });
  return axes;
}

std::string MeshAxisName(const std::vector<DeviceAxis>& mesh, const DeviceAxis& axis) {
  for (size_t i = 0; i < mesh.size(); ++i)
    if (mesh[i] == axis) return StrCat("mesh axis ", i, " (size ", axis.size, ")");
  return StrCat("device axis of size ", axis.size, " and stride ", axis.stride);
}

}  // namespace gspmd::lint
