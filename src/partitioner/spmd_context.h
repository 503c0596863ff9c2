// The state of one partitioning run, and the partitioned-value type handlers work with.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/hlo_builder.h"
#include "ir/module.h"
#include "partitioner/collective_factory.h"
#include "partitioner/device_axes.h"
#include "partitioner/reshard_plan.h"

namespace gspmd {

// A value of the partitioned program: each device's piece, and what the piece is of.
//   hlo            the per-device instruction (shape = sharding.ShardDims(global dims);
//                  trailing shards of uneven dims are padded and the padding holds
//                  unspecified values until a handler masks it)
//   global_shape   the shape in the original program
//   sharding       how the global value is laid out
struct PartitionedValue {
  Instruction* hlo = nullptr;
  Shape global_shape;
  Sharding sharding;
};

// Shared state: the output module, names, collectives, warnings and caches.
class SpmdContext {
 public:
  SpmdContext(Module* output, int64_t num_devices);

  Module* output() const { return output_; }
  int64_t num_devices() const { return num_devices_; }
  NameUniquer& names() { return names_; }
  CollectiveFactory& collectives() { return collectives_; }

  // The sharding as device axes over all devices (cached); nullopt when not decomposable.
  const std::optional<AxisSharding>& Axes(const Sharding& sharding, int64_t rank);
  // Reshard plans are cached by problem, since models repeat the same transitions.
  const std::optional<ReshardPlan>& Plan(const ReshardProblem& problem);

  void Warn(std::string message) { warnings_.push_back(std::move(message)); }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  Module* output_;
  int64_t num_devices_;
  NameUniquer names_;
  CollectiveFactory collectives_;
  std::vector<std::string> warnings_;
  std::map<std::string, std::optional<AxisSharding>> axes_cache_;
  std::map<std::string, std::optional<ReshardPlan>> plan_cache_;
};

// Per-device dims of a value of `global_dims` under `sharding` (maximal and manual: whole).
std::vector<int64_t> ShardDimsOf(const Sharding& sharding, const std::vector<int64_t>& global_dims);
// The per-device shape (element type and layout of `global_shape`, shard dims).
Shape ShardShapeOf(const Sharding& sharding, const Shape& global_shape);

}  // namespace gspmd
