// The compile as one list of steps (see pipeline.h): device count, propagation when needed,
// checks, partitioning; and the predicates that say what kind of program a module is.
#include "api/pipeline.h"

#include <algorithm>
#include <set>
#include <vector>

#include "ir/opcode.h"
#include "ir/sdy_custom_calls.h"
#include "partitioner/constant_folds.h"
#include "partitioner/reshape_folds.h"
#include "partitioner/slice_folds.h"
#include "partitioner/simplify.h"
#include "propagation/boundary.h"
#include "support/diagnostic.h"
#include "api/file_context.h"

namespace gspmd::api {
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

// A tuple inside a computation (not its root) without a sharding: partitioned as it stands it
// would be replicated, so its elements would be gathered; propagation gives it its operands'
// and users' layouts (the StableHLO reader's result tuple, read back by a get-tuple-element root:
// oracle seed 112828, an all-gather of 8 B where XLA sends nothing).
bool UnannotatedInnerTuple(const Instruction& instruction, const Computation& computation) {
  return instruction.opcode() == Opcode::kTuple && computation.root() != &instruction;
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

void CheckDevicesMatchModule(const Module& module, const std::string& file, int64_t devices) {
  if (module.Attribute("num_partitions").empty() || module.num_partitions() == devices) return;
  ThrowUserErrorAt(SourceLocation{file, 0, 0},
                   StrCat("--devices ", devices, " does not match the module's num_partitions=",
                          module.num_partitions(), " (expected --devices ", module.num_partitions(),
                          " or no --devices)"));
}

bool NeedsPropagation(const Module& module) {
  for (const Computation* computation : ProgramComputations(module))
    for (const auto& instruction : computation->instructions())
      if (!instruction->sharding().has_value() &&
          (!MayLackSharding(*instruction) || UnannotatedInnerTuple(*instruction, *computation)))
        return true;
  return false;
}

namespace {

// An instruction of a global program that runs per device: sharded {manual}, or manual in a
// subgroup (XLA's whole-graph manual programs put collectives and partition-id there).
bool IsManualSharded(const Instruction& instruction) {
  if (!instruction.sharding()) return false;
  const Sharding& sharding = *instruction.sharding();
  if (sharding.IsManual()) return true;
  for (Sharding::SubgroupType type : sharding.subgroup_types())
    if (type == Sharding::SubgroupType::kManual) return true;
  return false;
}

}  // namespace

bool IsPerDeviceProgram(const Module& module) {
  if (module.entry() == nullptr) return false;
  // The SPMD partitioner's output: ours and XLA's name the entry "..._spmd"; ours records the
  // global result shapes.
  if (module.entry()->name().ends_with("_spmd")) return true;
  if (module.Attribute("frontend_attributes").find("gspmd.global_result_shapes") != std::string::npos) return true;
  for (const auto& computation : module.computations())
    for (const auto& instruction : computation->instructions())
      if ((IsCollective(instruction->opcode()) || instruction->opcode() == Opcode::kPartitionId) &&
          !IsManualSharded(*instruction))
        return !HasManualRegion(module);
  return false;
}

PropagationResult Propagate(Module& module, const std::string& file, int64_t devices, bool record_origins,
                            const BoundaryFlags& boundary) {
  PropagationOptions options;
  options.num_partitions = devices;
  options.record_origins = record_origins;
  if (!boundary.to_parameters.empty())
    options.propagate_to_parameters = propagation::ParseBoundaryFlags(boundary.to_parameters, "--propagate-to-parameters");
  if (!boundary.to_outputs.empty())
    options.propagate_to_outputs = propagation::ParseBoundaryFlags(boundary.to_outputs, "--propagate-to-outputs");
  // What XLA's pipeline does before its propagation, so that `partition --propagate-only
  // --explain` shows the shardings partitioning uses.
  InlineCallsBeforePropagation(module);       // shardings flow through JAX's helper calls, as in XLA
  FoldConstantExpressionsBeforePropagation(module);  // ops of constants, as JAX folds its StableHLO
  ZeroWholeDimUpdateStartsBeforePropagation(module);  // a start an update covering its dim clamps to 0
  FoldConstantDynamicSlicesBeforePropagation(module);  // x[2:6] written as a dynamic-slice, as XLA folds it
  FoldFlatSlicesBeforePropagation(module);    // whole rows cut from a flattened array
  FoldPlainSlicesBeforePropagation(module);   // a slice of all of a value, or within one concatenated operand
  FoldReshapesBeforePropagation(module);      // reshape round trips, as XLA's simplifier folds them
  FoldReshapedBroadcastsBeforePropagation(module);  // a broadcast reshaped without touching its operand's dims
  FoldTrivialSortsBeforePropagation(module);  // sorts along a dim of one element
  RemoveDeadCodeBeforePropagation(module);    // dead values must not steer live shardings
  return WithFileContext(file, [&] { return PropagateShardings(module, options); });
}

WindowedEinsumOptions ParseWindowedEinsum(const std::string& mode) {
  WindowedEinsumOptions options;
  if (mode.empty()) return options;
  std::optional<WindowedEinsumMode> parsed = ParseWindowedEinsumMode(mode);
  if (!parsed) GSPMD_USER_ERROR("--windowed-einsum '", mode, "' (expected auto, off or always)");
  options.mode = *parsed;
  return options;
}

WindowedEinsumOptions ParseWindowedEinsum(const std::string& mode, WindowedEinsumCostCheck cost_check) {
  WindowedEinsumOptions options = ParseWindowedEinsum(mode);
  options.cost_check = std::move(cost_check);
  return options;
}

CompiledPartition PartitionGlobal(Module& module, const std::string& file, int64_t requested_devices,
                                  const BoundaryFlags& boundary, const WindowedEinsumOptions& windowed_einsum) {
  CompileOptions options;
  options.requested_devices = requested_devices;
  options.boundary = boundary;
  options.windowed_einsum = windowed_einsum;
  return PartitionGlobal(module, file, options);
}

namespace {

// Whether the flags let propagation choose some parameter's or result's sharding: then it runs
// even on a module whose every value is annotated (a StableHLO result JAX left free reads as
// replicated, and --propagate-to-outputs true is how the user frees it).
bool AllowsBoundaryPropagation(const BoundaryFlags& boundary) {
  auto any_true = [](const std::string& text, const char* what) {
    if (text.empty()) return false;
    const std::vector<bool> flags = propagation::ParseBoundaryFlags(text, what);
    return std::find(flags.begin(), flags.end(), true) != flags.end();
  };
  return any_true(boundary.to_parameters, "--propagate-to-parameters") ||
         any_true(boundary.to_outputs, "--propagate-to-outputs");
}

}  // namespace

CompiledPartition PartitionGlobal(Module& module, const std::string& file, const CompileOptions& options) {
  if (options.requested_devices > 0) CheckDevicesMatchModule(module, file, options.requested_devices);
  const bool states_device_count = !module.Attribute("num_partitions").empty();
  CompiledPartition result;
  result.num_devices = options.requested_devices > 0 ? options.requested_devices
                                                     : (states_device_count ? module.num_partitions() : 0);
  if (options.always_propagate || NeedsPropagation(module) || AllowsBoundaryPropagation(options.boundary)) {
    result.propagation = Propagate(module, file, result.num_devices, options.record_origins, options.boundary);
    if (result.num_devices == 0) result.num_devices = result.propagation.num_partitions;
  }
  if (result.num_devices < 1) result.num_devices = DevicesNamedByShardings(module);

  CheckShardingsUseAllDevices(module, file, result.num_devices);

  PartitionOptions partition;
  partition.num_partitions = result.num_devices;
  partition.windowed_einsum = options.windowed_einsum;
  result.partitioned = WithFileContext(file, [&] { return PartitionModule(module, partition); });
  return result;
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

}  // namespace gspmd::api
