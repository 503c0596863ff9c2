// Runs some devices of an SPMD program, each on its own thread with its own Evaluator, over a
// shared Communicator: all N devices for the threads backend, one rank's K devices under MPI.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <span>
#include <vector>

#include "ir/literal.h"
#include "ir/module.h"
#include "runtime/comm/communicator.h"
#include "runtime/spmd/spmd_plan.h"

namespace gspmd {

struct DeviceRunHooks {
  // Builds device d's entry arguments; called on d's thread (so devices read in parallel).
  std::function<std::vector<Literal>(int64_t device)> arguments;
  // Called once, on the failing thread, with the first real error (a UserError is already
  // prefixed "device d: "), before the communicator is aborted. May not return (MPI ends the
  // job from here).
  std::function<void(std::exception_ptr)> on_first_error;
};

// Runs `devices` (ids < plan.num_devices) and returns, for each in order, the leaves of its
// result. The first real error (not a CommunicatorAborted caused by it) is rethrown once
// every thread has stopped.
std::vector<std::vector<Literal>> RunDevicesOnThreads(const Module& per_device_module, const SpmdPlan& plan,
                                                      Communicator& communicator, std::span<const int64_t> devices,
                                                      const DeviceRunHooks& hooks);

}  // namespace gspmd
