// api::Propagate and api::Partition: the compile of a global program, as pipeline.h lists its
// steps, over api::Program values.
#include "api/error_kinds.h"
#include "api/gspmd.h"
#include "api/pipeline.h"
#include "api/windowed_auto.h"
#include "simulate/topology.h"
#include "text/printer.h"

namespace gspmd::api {
namespace {

BoundaryFlags FlagsOf(const BoundaryOptions& boundary) { return BoundaryFlags{boundary.to_parameters, boundary.to_outputs}; }

// A per-device program would be partitioned a second time: its shard shapes taken as global.
void RefusePerDevice(const Program& program, const char* what) {
  if (!program.IsPerDevice()) return;
  throw UserError(StrCat(program.name(), ": error: ", what,
                         " needs a global program; this one is per-device already (it has collectives or partition-id, "
                         "or is the partitioner's output)"),
                  UserErrorKind::kInput);
}

}  // namespace

std::string Propagated::Text(bool explain) const {
  if (explain) return PrintModuleWithOrigins(program.module(), result);
  return program.Text();
}

Propagated Propagate(Program program, const PropagateOptions& options) {
  const std::string name = program.name();
  std::unique_ptr<Module> module = std::move(program).TakeModule();
  PropagationResult result = WithErrorKind(UserErrorKind::kSharding, [&] {
    if (options.devices > 0) CheckDevicesMatchModule(*module, name, options.devices);
    return api::Propagate(*module, name, options.devices, options.explain, FlagsOf(options.boundary));
  });
  return Propagated{Program::FromModule(std::move(module), name), std::move(result)};
}

Partitioned Partition(Program program, const PartitionOptions& options) {
  RefusePerDevice(program, "partitioning");
  if (!options.chip.empty() && !options.windowed_cost_check &&
      ParseWindowedEinsum(options.windowed_einsum).mode == WindowedEinsumMode::kAuto) {
    const simulate::ChipSpec chip = simulate::LoadChipSpec(options.chip);
    SimulateOptions simulate;
    simulate.chip = options.chip;
    simulate.devices = options.devices;
    const WindowedAutoChoice choice =
        ChooseWindowedLoops(program, simulate, options.boundary, chip, std::nullopt, [&](Module& per_device) {
          const simulate::Topology topology = simulate::Topology::Build(chip, per_device.num_partitions());
          return simulate::Simulate(per_device, chip, topology);
        });
    PartitionOptions chosen = options;
    chosen.chip.clear();
    chosen.windowed_cost_check = choice.check;
    Partitioned result = Partition(std::move(program), chosen);
    result.windowed_einsum = choice.report.windowed_einsum;
    return result;
  }
  const std::string name = program.name();
  std::unique_ptr<Module> module = std::move(program).TakeModule();
  CompiledPartition compiled = WithErrorKind(UserErrorKind::kSharding, [&] {
    return PartitionGlobal(*module, name, options.devices, FlagsOf(options.boundary),
                           ParseWindowedEinsum(options.windowed_einsum, options.windowed_cost_check));
  });
  compiled.partitioned.module->set_num_partitions(compiled.num_devices);
  Partitioned result{Program::FromModule(std::move(module), name),
                     Program::FromModule(std::move(compiled.partitioned.module), name), compiled.num_devices,
                     std::move(compiled.partitioned.warnings)};
  return result;
}

}  // namespace gspmd::api
