// The CLI's path from a global program to a per-device one: device count, sharding
// propagation when the module is not fully sharded yet, partitioning, warnings.
#include "tools/partition_pipeline.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <vector>

#include "ir/sdy_custom_calls.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"
#include "support/diagnostic.h"
#include "tools/tool_util.h"

namespace gspmd::tools {
namespace {

bool RunsAsControlFlow(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kWhile || instruction.opcode() == Opcode::kConditional ||
         instruction.opcode() == Opcode::kCall;
}

// The entry and every computation it runs as while/conditional/call, transitively (not the
// scalar reducers and comparators of reduce, sort, all-reduce, ...).
std::vector<const Computation*> ProgramComputations(const Module& module) {
  std::vector<const Computation*> order;
  std::set<const Computation*> seen;
  std::vector<const Computation*> stack;
  if (module.entry() != nullptr) stack.push_back(module.entry());
  while (!stack.empty()) {
    const Computation* computation = stack.back();
    stack.pop_back();
    if (!seen.insert(computation).second) continue;
    order.push_back(computation);
    for (const auto& instruction : computation->instructions())
      if (RunsAsControlFlow(*instruction))
        for (const Computation* called : instruction->called_computations()) stack.push_back(called);
  }
  return order;
}

bool IsScalar(const Shape& shape) { return shape.IsArray() && shape.rank() == 0; }

// Instructions that need no sharding of their own: scalars (replicated is what propagation
// would choose) and tuple plumbing, whose layout follows its operands (the parser makes an
// unsharded get-tuple-element of every inline %t#1 reference).
bool MayLackSharding(const Instruction& instruction) {
  return IsScalar(instruction.shape()) || instruction.opcode() == Opcode::kGetTupleElement ||
         instruction.opcode() == Opcode::kTuple;
}

// One more than the largest device id any sharding of the module names (1 when none does).
int64_t DevicesNamedByShardings(const Module& module) {
  int64_t devices = 1;
  for (const auto& computation : module.computations())
    for (const auto& instruction : computation->instructions())
      if (instruction->sharding()) devices = std::max(devices, instruction->sharding()->RequiredDeviceCount());
  return devices;
}

// A tiled sharding must tile over exactly the program's devices (as XLA requires).
void CheckTilesCoverDevices(const Instruction& instruction, const Sharding& sharding, const std::string& file,
                            int64_t devices) {
  if (sharding.IsTuple()) {
    for (const Sharding& element : sharding.tuple_elements()) CheckTilesCoverDevices(instruction, element, file, devices);
    return;
  }
  if (!sharding.IsTiled() || sharding.tile_assignment().num_elements() == devices) return;
  ThrowUserErrorAt(SourceLocation{file, 0, 0},
                   StrCat("sharding ", sharding.ToString(), " of %", instruction.name(), " tiles over ",
                          sharding.tile_assignment().num_elements(), " devices but the program is partitioned onto ",
                          devices, " (expected every tiled sharding to use all ", devices, " devices)"));
}

void CheckShardingsUseAllDevices(const Module& module, const std::string& file, int64_t devices) {
  for (const auto& computation : module.computations())
    for (const auto& instruction : computation->instructions())
      if (instruction->sharding()) CheckTilesCoverDevices(*instruction, *instruction->sharding(), file, devices);
}

}  // namespace

bool NeedsPropagation(const Module& module) {
  for (const Computation* computation : ProgramComputations(module))
    for (const auto& instruction : computation->instructions())
      if (!instruction->sharding().has_value() && !MayLackSharding(*instruction)) return true;
  return false;
}

PropagationResult Propagate(Module& module, const std::string& file, int64_t devices, bool record_origins) {
  PropagationOptions options;
  options.num_partitions = devices;
  options.record_origins = record_origins;
  return WithFileContext(file, [&] { return PropagateShardings(module, options); });
}

CliPartition PartitionForCli(Module& module, const std::string& file, int64_t requested_devices, bool print_warnings) {
  if (requested_devices > 0) CheckDevicesMatchModule(module, file, requested_devices);
  const bool states_device_count = !module.Attribute("num_partitions").empty();
  CliPartition result;
  result.num_devices = requested_devices > 0 ? requested_devices : (states_device_count ? module.num_partitions() : 0);
  if (NeedsPropagation(module)) {
    PropagationResult propagation = Propagate(module, file, result.num_devices);
    if (result.num_devices == 0) result.num_devices = propagation.num_partitions;
  }
  if (result.num_devices < 1) result.num_devices = DevicesNamedByShardings(module);

  CheckShardingsUseAllDevices(module, file, result.num_devices);

  PartitionOptions options;
  options.num_partitions = result.num_devices;
  result.partitioned = WithFileContext(file, [&] { return PartitionModule(module, options); });
  std::fflush(stdout);
  for (const std::string& warning : result.partitioned.warnings)
    if (print_warnings) std::fprintf(stderr, "%s: warning: %s\n", file.c_str(), warning.c_str());
  return result;
}

std::vector<Literal> PartitionAndRun(Module& module, const std::string& file, int64_t requested_devices,
                                     const std::vector<Literal>& inputs) {
  CliPartition partition = PartitionForCli(module, file, requested_devices);
  const Module& per_device = *partition.partitioned.module;
  SpmdRunOptions run_options = WithFileContext(file, [&] { return OptionsFromLikeModule(per_device, &module); });
  run_options.num_devices = partition.num_devices;
  return WithFileContext(file, [&] { return RunSpmd(per_device, inputs, run_options); });
}

bool HasManualRegion(const Module& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() != Opcode::kCustomCall) continue;
      const std::string& target = instruction->custom_call_target;
      if (target == "SPMDFullToShardShape" || SdyTargetName(target) == "GlobalToLocalShape") return true;
    }
  }
  return false;
}

}  // namespace gspmd::tools
