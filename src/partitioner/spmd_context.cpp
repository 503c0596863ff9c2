// SpmdContext caches, and per-device shapes of sharded values.
#include "partitioner/spmd_context.h"

#include <algorithm>
#include <mutex>

#include "ir/partition_digits.h"
#include "support/diagnostic.h"

namespace gspmd {

SpmdContext::SpmdContext(Module* output, int64_t num_devices)
    : output_(output), num_devices_(num_devices), collectives_(output, &names_, num_devices) {}

namespace {

// Binary cache keys: raw int64s, with lengths before lists (cheaper than printing text).
void AppendInt(std::string& key, int64_t value) { key.append(reinterpret_cast<const char*>(&value), sizeof(value)); }

void AppendInts(std::string& key, const std::vector<int64_t>& values) {
  AppendInt(key, static_cast<int64_t>(values.size()));
  key.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t));
}

void AppendAxes(std::string& key, const std::vector<DeviceAxis>& axes) {
  AppendInt(key, static_cast<int64_t>(axes.size()));
  for (const DeviceAxis& axis : axes) {
    AppendInt(key, axis.stride);
    AppendInt(key, axis.size);
  }
}

void AppendAxisSharding(std::string& key, const AxisSharding& sharding) {
  AppendInt(key, sharding.rank());
  for (const auto& dim : sharding.dims) AppendAxes(key, dim);
  AppendAxes(key, sharding.replicated);
  AppendAxes(key, sharding.manual);
  AppendAxes(key, sharding.unreduced);
  AppendInt(key, static_cast<int64_t>(sharding.reduction));
}

// What DecomposeSharding reads of a sharding: kind, tile array and subgroup types.
void AppendShardingLayout(std::string& key, const Sharding& sharding) {
  AppendInt(key, static_cast<int64_t>(sharding.kind()));
  if (sharding.IsMaximal()) AppendInt(key, sharding.maximal_device());
  if (sharding.IsTuple()) {
    AppendInt(key, static_cast<int64_t>(sharding.tuple_elements().size()));
    for (const Sharding& element : sharding.tuple_elements()) AppendShardingLayout(key, element);
    return;
  }
  if (!sharding.IsTiled()) return;
  const TileAssignment& tiles = sharding.tile_assignment();
  AppendInts(key, tiles.dims());
  AppendInt(key, tiles.is_iota() ? 1 : 0);
  if (tiles.is_iota()) {
    AppendInts(key, tiles.iota_reshape_dims());
    AppendInts(key, tiles.iota_transpose_perm());
  } else {
    AppendInts(key, tiles.Devices());
  }
  AppendInt(key, static_cast<int64_t>(sharding.subgroup_types().size()));
  for (Sharding::SubgroupType type : sharding.subgroup_types()) AppendInt(key, static_cast<int64_t>(type));
  if (sharding.HasUnreduced()) AppendInt(key, static_cast<int64_t>(sharding.partial_reduction()));
}

}  // namespace

std::string SpmdContext::MemoKey(const Computation* computation, const char* tag, const Sharding& sharding,
                                 const std::vector<int64_t>& values) {
  std::string key;
  AppendInt(key, static_cast<int64_t>(reinterpret_cast<std::uintptr_t>(computation)));
  key += tag;
  key.push_back('\0');
  AppendShardingLayout(key, sharding);
  AppendInts(key, values);
  return key;
}

void AppendKey(std::string& key, int64_t value) { AppendInt(key, value); }
void AppendKey(std::string& key, const std::vector<int64_t>& values) { AppendInts(key, values); }
void AppendKey(std::string& key, const AxisSharding& sharding) { AppendAxisSharding(key, sharding); }

const std::optional<AxisSharding>& SpmdContext::Axes(const Sharding& sharding, int64_t rank) {
  key_.clear();
  AppendInt(key_, rank);
  AppendShardingLayout(key_, sharding);
  auto it = axes_cache_.find(key_);
  if (it != axes_cache_.end()) return it->second;
  return axes_cache_.emplace(key_, DecomposeSharding(sharding, rank, num_devices_)).first->second;
}

const std::optional<ReshardPlan>& SpmdContext::Plan(const ReshardProblem& problem) {
  key_.clear();
  AppendInts(key_, problem.global_dims);
  AppendInt(key_, problem.element_bytes);
  AppendAxisSharding(key_, problem.source);
  AppendAxisSharding(key_, problem.target);
  AppendAxes(key_, problem.partial_axes);
  AppendInt(key_, problem.exact_sums ? 1 : 0);
  auto it = plan_cache_.find(key_);
  if (it != plan_cache_.end()) return it->second;
  return plan_cache_.emplace(key_, SharedPlan(key_, problem)).first->second;
}

// Plans are a function of their key alone, and the searches that partition one program many
// times over (`--windowed-einsum auto`, autoshard) ask for the same ones in every run: they
// are kept for the process, under a lock, as a bounded map emptied when full.
std::optional<ReshardPlan> SpmdContext::SharedPlan(const std::string& key, const ReshardProblem& problem) {
  constexpr size_t kMaxSharedPlans = 1 << 16;
  static std::mutex mutex;
  static std::unordered_map<std::string, std::optional<ReshardPlan>> plans;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = plans.find(key);
    if (it != plans.end()) return it->second;
  }
  std::optional<ReshardPlan> plan = PlanReshard(problem);
  std::lock_guard<std::mutex> lock(mutex);
  if (plans.size() >= kMaxSharedPlans) plans.clear();
  plans.emplace(key, plan);
  return plan;
}

Instruction* AxisOffset(HloBuilder& b, const std::vector<DeviceAxis>& axes, int64_t piece, int64_t num_devices) {
  PartitionDigitForm form;
  form.num_partitions = num_devices;
  int64_t weight = piece;
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
    form.terms.push_back({it->stride, it->size, weight});
    weight *= it->size;
  }
  std::sort(form.terms.begin(), form.terms.end(),
            [](const auto& x, const auto& y) { return x.stride < y.stride; });
  // Adjacent digits whose weights continue each other are one digit.
  std::vector<PartitionDigitForm::Term> merged;
  for (const PartitionDigitForm::Term& term : form.terms) {
    bool continues = !merged.empty() && merged.back().stride * merged.back().size == term.stride &&
                     merged.back().weight * merged.back().size == term.weight;
    if (!continues) {
      merged.push_back(term);
      continue;
    }
    merged.back().size *= term.size;
  }
  form.terms = std::move(merged);
  return EmitDigitForm(b, form);
}

std::vector<int64_t> ShardDimsOf(const Sharding& sharding, const std::vector<int64_t>& global_dims) {
  if (!sharding.IsTiled()) return global_dims;
  return sharding.ShardDims(global_dims);
}

namespace {

// The per-device shape of the leaves of `global_shape` from `next_leaf` on: a tuple sharding
// lists one sharding per leaf, in order, however the tuples nest; any other sharding applies
// to every leaf.
Shape ShardLeavesOf(const Sharding& sharding, const Shape& global_shape, size_t& next_leaf) {
  if (global_shape.IsTuple()) {
    std::vector<Shape> elements;
    for (int64_t i = 0; i < global_shape.tuple_size(); ++i)
      elements.push_back(ShardLeavesOf(sharding, global_shape.tuple_shape(i), next_leaf));
    return Shape::Tuple(std::move(elements));
  }
  if (!sharding.IsTuple()) return ShardShapeOf(sharding, global_shape);
  GSPMD_CHECK(next_leaf < sharding.tuple_elements().size(), "tuple sharding with ", sharding.tuple_elements().size(),
              " leaves for a shape with more leaves");
  return ShardShapeOf(sharding.tuple_elements()[next_leaf++], global_shape);
}

size_t LeafCount(const Shape& shape) {
  if (!shape.IsTuple()) return 1;
  size_t count = 0;
  for (int64_t i = 0; i < shape.tuple_size(); ++i) count += LeafCount(shape.tuple_shape(i));
  return count;
}

}  // namespace

Shape ShardShapeOf(const Sharding& sharding, const Shape& global_shape) {
  if (global_shape.IsTuple()) {
    // A tuple sharding is a flat list of leaves (XLA's form) or, as propagation may hold it,
    // one element per tuple element, nested like the shape.
    const auto& elements = sharding.tuple_elements();
    const bool nested = sharding.IsTuple() && static_cast<int64_t>(elements.size()) == global_shape.tuple_size() &&
                        (elements.size() != LeafCount(global_shape) ||
                         std::any_of(elements.begin(), elements.end(), [](const Sharding& e) { return e.IsTuple(); }));
    if (nested) {
      std::vector<Shape> shards;
      for (int64_t i = 0; i < global_shape.tuple_size(); ++i)
        shards.push_back(ShardShapeOf(elements[i], global_shape.tuple_shape(i)));
      return Shape::Tuple(std::move(shards));
    }
    size_t next_leaf = 0;
    Shape shape = ShardLeavesOf(sharding, global_shape, next_leaf);
    GSPMD_CHECK(!sharding.IsTuple() || next_leaf == sharding.tuple_elements().size(), "tuple sharding with ",
                sharding.tuple_elements().size(), " leaves for a shape with ", next_leaf);
    return shape;
  }
  Shape shape = global_shape;
  if (shape.IsArray()) shape.set_dims(ShardDimsOf(sharding, global_shape.dims()));
  if (global_shape.layout()) shape.set_layout(global_shape.layout());
  return shape;
}

}  // namespace gspmd
