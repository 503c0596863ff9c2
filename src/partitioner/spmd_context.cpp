// SpmdContext caches, and per-device shapes of sharded values.
#include "partitioner/spmd_context.h"

#include "support/diagnostic.h"

namespace gspmd {

SpmdContext::SpmdContext(Module* output, int64_t num_devices)
    : output_(output), num_devices_(num_devices), collectives_(output, &names_, num_devices) {}

const std::optional<AxisSharding>& SpmdContext::Axes(const Sharding& sharding, int64_t rank) {
  std::string key = StrCat(rank, "|", sharding.ToString());
  auto it = axes_cache_.find(key);
  if (it != axes_cache_.end()) return it->second;
  return axes_cache_[key] = DecomposeSharding(sharding, rank, num_devices_);
}

const std::optional<ReshardPlan>& SpmdContext::Plan(const ReshardProblem& problem) {
  std::string key;
  for (int64_t d : problem.global_dims) key += std::to_string(d) + ",";
  key += StrCat("|", problem.element_bytes, "|", problem.source.ToString(), "|",
                problem.target.ToString(), "|");
  for (const DeviceAxis& axis : problem.partial_axes) key += StrCat(axis.stride, "x", axis.size, ",");
  auto it = plan_cache_.find(key);
  if (it != plan_cache_.end()) return it->second;
  return plan_cache_[key] = PlanReshard(problem);
}

std::vector<int64_t> ShardDimsOf(const Sharding& sharding, const std::vector<int64_t>& global_dims) {
  if (!sharding.IsTiled()) return global_dims;
  return sharding.ShardDims(global_dims);
}

Shape ShardShapeOf(const Sharding& sharding, const Shape& global_shape) {
  GSPMD_CHECK(!global_shape.IsTuple(), "ShardShapeOf on a tuple shape");
  Shape shape = global_shape;
  if (shape.IsArray()) shape.set_dims(ShardDimsOf(sharding, global_shape.dims()));
  if (global_shape.layout()) shape.set_layout(global_shape.layout());
  return shape;
}

}  // namespace gspmd
