// RunSpmd: every simulated device on its own thread with a shared LocalCommunicator, reading
// its shards of the arguments and contributing its shards of the global results.
#include "runtime/spmd/spmd_executor.h"

#include "runtime/comm/local_communicator.h"
#include "runtime/spmd/device_runner.h"
#include "runtime/spmd/spmd_plan.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

void AppendLeafValues(const Literal& value, std::vector<const Literal*>& leaves) {
  if (!value.shape().IsTuple()) {
    leaves.push_back(&value);
    return;
  }
  for (const Literal& element : value.tuple_elements()) AppendLeafValues(element, leaves);
}

}  // namespace

SpmdDeviceResults RunSpmdOnThreads(const Module& module, const SpmdPlan& plan,
                                   std::span<const GlobalArgument> arguments) {
  LocalCommunicator communicator(plan.num_devices);
  std::vector<int64_t> devices;
  for (int64_t d = 0; d < plan.num_devices; ++d) devices.push_back(d);
  DeviceRunHooks hooks;
  hooks.arguments = [&](int64_t device) { return ReadDeviceArguments(plan, arguments, device); };
  SpmdDeviceResults results;
  results.per_device = RunDevicesOnThreads(module, plan, communicator, devices, hooks);
  return results;
}

std::vector<Literal> AssembleResults(const SpmdPlan& plan, const SpmdDeviceResults& results) {
  std::vector<Literal> outputs;
  for (size_t i = 0; i < plan.results.size(); ++i) {
    std::vector<const Literal*> shards;
    for (const std::vector<Literal>& leaves : results.per_device) shards.push_back(&leaves[i]);
    outputs.push_back(AssembleGlobal(shards, plan.results[i].sharding, plan.results[i].global));
  }
  return outputs;
}

std::vector<Literal> RunSpmd(const Module& module, std::span<const Literal> global_arguments,
                             const SpmdRunOptions& options) {
  // Every argument leaf is read in place through a literal source.
  std::vector<std::vector<const Literal*>> leaf_values(global_arguments.size());
  std::vector<std::unique_ptr<ArraySource>> sources;
  std::vector<GlobalArgument> arguments;
  for (size_t p = 0; p < global_arguments.size(); ++p) {
    AppendLeafValues(global_arguments[p], leaf_values[p]);
    GlobalArgument argument;
    argument.shape = global_arguments[p].shape();
    for (const Literal* leaf : leaf_values[p]) {
      sources.push_back(MakeLiteralSource(*leaf));
      argument.leaves.push_back(sources.back().get());
    }
    arguments.push_back(std::move(argument));
  }
  const SpmdPlan plan = PlanSpmdRun(module, arguments, options);
  return AssembleResults(plan, RunSpmdOnThreads(module, plan, arguments));
}

}  // namespace gspmd
