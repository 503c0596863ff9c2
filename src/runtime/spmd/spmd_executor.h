// Runs one per-device (SPMD) program on N simulated devices: splits global inputs by the
// entry parameters' shardings, runs every device, assembles global outputs by the root's.
#pragma once

#include <cstdint>
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
};

// Returns the global value of every leaf of the root, flattened in order. Bad inputs (wrong
// count, shape or type, a sharding that does not fit the device count) are UserErrors.
std::vector<Literal> RunSpmd(const Module& per_device_module, std::span<const Literal> global_arguments,
                             const SpmdRunOptions& options);

// Slices device `device`'s shard of a global array (padding with zeros past the end).
Literal ShardOfGlobal(const Literal& global, const Sharding& sharding, int64_t device);

}  // namespace gspmd
