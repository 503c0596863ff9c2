// The SPMD partitioner: rewrites a module whose instructions all carry shardings into one
// per-device program with collectives.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/module.h"
#include "partitioner/windowed_einsum_options.h"
#include "propagation/partial_sums.h"

namespace gspmd {

struct PartitionOptions {
  int64_t num_partitions = 0;  // 0: the module's num_partitions
  // Keep the sums of dots, convolutions and reduces over split dims pending through the ops
  // linear in them, and reduce each where it is cheapest before a consumer needs it whole
  // (propagation/partial_sums.h). Shardings already unreduced are partial either way.
  bool partial_sums = true;
  // Whether an all-gather before a dot becomes a loop of partial dots passing the gathered
  // operand's windows around (collective matmul; handlers/dot_windowed.h).
  WindowedEinsumOptions windowed_einsum;
};

struct PartitionResult {
  std::unique_ptr<Module> module;
  // "involuntary full rematerialization of %x: {...} -> {...}" and similar.
  std::vector<std::string> warnings;
};

// Partitions `module` (every instruction should have a sharding; a missing one is taken as
// replicated). The result keeps the entry parameters' and root's shardings and the module's
// num_partitions. Bad shardings (devices beyond the partition count, tile ranks that do not
// fit) are UserErrors naming the instruction.
PartitionResult PartitionModule(const Module& module, const PartitionOptions& options = {});

// The partial-sum plan PartitionModule follows for `module` (propagation/partial_sums.h),
// with the dot handler's choices of where sums are left pending.
PartialSumPlan PlanPartialSumsForPartitioning(const Module& module, int64_t num_devices);

}  // namespace gspmd
