// What running a per-device program on N devices means for its values: the device layout,
// each argument leaf's sharding with its global and per-device shape, and each result leaf's.
// Checked once, before any device runs, and the same on every process of an MPI job.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "io/array_source.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "runtime/interp/evaluator.h"
#include "runtime/spmd/spmd_executor.h"
#include "sharding/sharding.h"

namespace gspmd {

// One array of the program's inputs or outputs.
struct SpmdLeaf {
  Sharding sharding = Sharding::Replicated();
  Shape global;  // element type and global dims
  Shape local;   // the per-device (padded) shape
};

// A global argument: its shape (a tuple for a tuple parameter) and a source per array leaf.
struct GlobalArgument {
  Shape shape;
  std::vector<const ArraySource*> leaves;
};

struct SpmdPlan {
  int64_t num_devices = 1;
  bool devices_are_replicas = false;  // a replicated (pmap-style) program: one partition
  std::vector<Shape> parameter_shapes;           // per-device entry parameter shapes
  std::vector<std::vector<SpmdLeaf>> arguments;  // [parameter][leaf]
  std::vector<SpmdLeaf> results;                 // the root's leaves, flattened

  // Bytes of device d's arguments and results (what its shards hold).
  int64_t ArgumentBytes() const;
  int64_t ResultBytes() const;
};

// Checks the arguments against the per-device program and the options (count, shapes, types,
// shardings that fit the device count) and plans the run. Problems are UserErrors.
SpmdPlan PlanSpmdRun(const Module& per_device_module, std::span<const GlobalArgument> arguments,
                     const SpmdRunOptions& options);

// The partition/replica ids device d runs with.
DeviceContext ContextForDevice(const SpmdPlan& plan, int64_t device, Communicator* communicator);

// Device d's entry arguments, reading only its shards of each source.
std::vector<Literal> ReadDeviceArguments(const SpmdPlan& plan, std::span<const GlobalArgument> arguments,
                                         int64_t device);

// Device `device`'s shard of a global array of `global` shape (padding with zeros past the
// end); replicated, manual and maximal shardings give the whole value.
Literal ReadShard(const ArraySource& source, const Sharding& sharding, int64_t device);

// Where device d's shard of a leaf lies in the global array (the whole array when the
// sharding does not tile it), and its per-device (padded) dims.
Sharding::ShardRegion ShardRegionOf(const SpmdLeaf& leaf, int64_t device);

// The devices that write each distinct shard of a leaf: the lowest device holding each tile
// (for a maximal sharding, its device), in increasing order.
std::vector<int64_t> DistinctShardOwners(const SpmdLeaf& leaf, int64_t num_devices);

// The array leaves of a (tuple) value, flattened in order (moved out of `value`).
void AppendLeafLiterals(Literal value, std::vector<Literal>& leaves);

}  // namespace gspmd
