// The CLI's path from a global program to a per-device one: device count, sharding
// propagation when the module is not fully sharded yet, partitioning, warnings.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/literal.h"

#include "ir/module.h"
#include "partitioner/partitioner.h"
#include "propagation/propagation.h"

namespace gspmd::tools {

// Whether some instruction of the entry computation or of a computation it runs as control
// flow (while, conditional, call) lacks a sharding, scalars and tuple/get-tuple-element
// excepted (an unsharded scalar is replicated, which is what propagation would choose).
bool NeedsPropagation(const Module& module);

// Assigns a sharding to every instruction (PropagateShardings); `devices` is the requested
// device count (0: from the module); `record_origins` fills what --explain prints. Errors name `file`.
PropagationResult Propagate(Module& module, const std::string& file, int64_t devices, bool record_origins = false);

// The result of PartitionForCli: the module that was partitioned (after propagation) and the
// per-device program.
struct CliPartition {
  int64_t num_devices = 0;
  PartitionResult partitioned;
};

// Checks --devices against the module (requested > 0 must equal an explicit num_partitions),
// propagates when NeedsPropagation, then partitions onto the device count: --devices, else
// the module's num_partitions, else what propagation derived, else the largest device id in
// the shardings plus one. `module` is updated in place by propagation. Partitioner warnings
// are printed to stderr as "FILE: warning: ..." unless print_warnings is false (the ranks of
// an MPI job other than rank 0, which compile the same program).
CliPartition PartitionForCli(Module& module, const std::string& file, int64_t requested_devices,
                             bool print_warnings = true);

// PartitionForCli, then the per-device program run on the devices with the global program's
// shapes and shardings: global inputs in, global outputs out.
std::vector<Literal> PartitionAndRun(Module& module, const std::string& file, int64_t requested_devices,
                                     const std::vector<Literal>& inputs);

// Whether the module has a manual (shard_map) region: per-device code that one device
// cannot run on its own (SPMDFullToShardShape, xla.sdy.GlobalToLocalShape).
bool HasManualRegion(const Module& module);

}  // namespace gspmd::tools
