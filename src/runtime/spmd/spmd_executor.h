// Runs one per-device (SPMD) program on N simulated devices: splits global inputs by the
// entry parameters' shardings, runs every device, assembles global outputs by the root's.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ir/literal.h"
#include "ir/module.h"
#include "sharding/sharding.h"

namespace gspmd {

struct SpmdRunOptions {
  int64_t num_devices = 0;  // 0: the module's num_partitions
  // Shardings of the entry parameters and of the root (a tuple sharding for a tuple root).
  // Taken from the module where these are empty / absent.
  std::vector<Sharding> parameter_shardings;
  std::optional<Sharding> root_sharding;
  // Global shapes of the root's leaves (flattened). A per-device program does not know the
  // true size of unevenly sharded results; when empty, a tiled leaf's global dims are its
  // per-device dims times the tile counts (no cropping of padding).
  std::vector<Shape> global_result_shapes;
};

// Returns the global value of every leaf of the root, flattened in order. Bad inputs (wrong
// count, shape or type, a sharding that does not fit the device count) are UserErrors.
std::vector<Literal> RunSpmd(const Module& per_device_module, std::span<const Literal> global_arguments,
                             const SpmdRunOptions& options);

struct GlobalArgument;
struct SpmdPlan;

// The threads backend on argument sources (each device reads only its shards): every device's
// result leaves, per_device[d][i] for leaf i of device d.
struct SpmdDeviceResults {
  std::vector<std::vector<Literal>> per_device;
};
SpmdDeviceResults RunSpmdOnThreads(const Module& per_device_module, const SpmdPlan& plan,
                                   std::span<const GlobalArgument> arguments);

// The global value of every result leaf, assembled from the devices' shards.
std::vector<Literal> AssembleResults(const SpmdPlan& plan, const SpmdDeviceResults& results);

// Slices device `device`'s shard of a global array (padding with zeros past the end).
// Replicated, manual and maximal shardings give the whole value.
Literal ShardOfGlobal(const Literal& global, const Sharding& sharding, int64_t device);

// The inverse: builds the global array of shape `global_shape` from every device's shard
// (shards[d] of device d; with replication, the lowest device holding each tile is used).
Literal AssembleGlobal(std::span<const Literal* const> shards, const Sharding& sharding,
                       const Shape& global_shape);

}  // namespace gspmd
