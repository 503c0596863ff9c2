// The compile, as one list of steps: from a global program to a per-device one (device count,
// sharding propagation when the module is not fully sharded yet, checks, partitioning). Every
// front end (the CLI, lint, the Python package) reaches it through src/api/gspmd.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/literal.h"
#include "ir/module.h"
#include "partitioner/partitioner.h"
#include "propagation/propagation.h"

namespace gspmd::api {

// --devices must agree with a num_partitions the module states explicitly (UserError naming
// the file and both numbers).
void CheckDevicesMatchModule(const Module& module, const std::string& file, int64_t devices);

// Whether some instruction of the entry computation or of a computation it runs as control
// flow (while, conditional, call) lacks a sharding, scalars and tuple/get-tuple-element
// excepted (an unsharded scalar is replicated, which is what propagation would choose).
bool NeedsPropagation(const Module& module);

// --propagate-to-parameters / --propagate-to-outputs as written ("" when not given): "true",
// "false" or one value per parameter / result element ("true,false,true").
struct BoundaryFlags {
  std::string to_parameters;
  std::string to_outputs;
};

// A per-device program (partitioned already): the partitioner's output (an entry named
// "..._spmd", our global-result-shapes attribute), or a program with collectives or
// partition-id outside any manual (shard_map) region, so its shapes are shard shapes and its shardings describe the
// global values.
bool IsPerDeviceProgram(const Module& module);

// Assigns a sharding to every instruction (PropagateShardings); `devices` is the requested
// device count (0: from the module); `record_origins` fills what --explain prints. Errors name
// `file`; a bad boundary flag names its option (--propagate-to-parameters / -outputs).
PropagationResult Propagate(Module& module, const std::string& file, int64_t devices, bool record_origins = false,
                            const BoundaryFlags& boundary = {});

// The result of PartitionGlobal: the device count and the per-device program (the global
// module it came from was propagated in place).
struct CompiledPartition {
  int64_t num_devices = 0;
  PropagationResult propagation;  // when step 2 ran
  PartitionResult partitioned;
};

struct CompileOptions {
  int64_t requested_devices = 0;  // 0: from the module
  BoundaryFlags boundary;
  bool always_propagate = false;  // step 2 even when every instruction has a sharding
  bool record_origins = false;    // what --explain and lint read of propagation
  // Step 5: which all-gathers before dots (reduce-scatters after them) become loops; its
  // cost_check, when set, decides for auto (e.g. from the simulator's chip model).
  WindowedEinsumOptions windowed_einsum;
};

// --windowed-einsum as written: auto (also ""), off or always; a UserError otherwise. With a
// cost check, auto asks it about every loop it could emit instead of using the size threshold.
WindowedEinsumOptions ParseWindowedEinsum(const std::string& mode);
WindowedEinsumOptions ParseWindowedEinsum(const std::string& mode, WindowedEinsumCostCheck cost_check);

// The steps, in order:
//   1. the device count asked for must equal a num_partitions the module states;
//   2. propagate, when some instruction still lacks a sharding (NeedsPropagation);
//   3. choose the device count: requested, else the module's num_partitions, else what
//      propagation derived, else the largest device id in the shardings plus one;
//   4. every tiled sharding must tile over exactly that many devices;
//   5. partition (PartitionModule), keeping its warnings in the result.
// `module` is updated in place by propagation. Errors name `file`.
CompiledPartition PartitionGlobal(Module& module, const std::string& file, int64_t requested_devices,
                                  const BoundaryFlags& boundary = {},
                                  const WindowedEinsumOptions& windowed_einsum = {});
CompiledPartition PartitionGlobal(Module& module, const std::string& file, const CompileOptions& options);

// Whether the module has a manual (shard_map) region: per-device code that one device
// cannot run on its own (SPMDFullToShardShape, xla.sdy.GlobalToLocalShape).
bool HasManualRegion(const Module& module);

}  // namespace gspmd::api
