// The state of one partitioning run, and the partitioned-value type handlers work with.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/hlo_builder.h"
#include "ir/module.h"
#include "partitioner/collective_factory.h"
#include "partitioner/device_axes.h"
#include "partitioner/reshard_plan.h"
#include "partitioner/windowed_einsum_options.h"

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

  // An instruction that depends only on (tag, sharding, values) and the computation, built
  // once per computation by `build` and reused (shard offsets, padding masks). Safe because
  // nothing is removed while partitioning and instructions are only appended, so a cached
  // instruction precedes every later use in its computation.
  template <typename Build>
  Instruction* Memoized(HloBuilder& builder, const char* tag, const Sharding& sharding,
                        const std::vector<int64_t>& values, Build build) {
    std::string key = MemoKey(builder.computation(), tag, sharding, values);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    Instruction* built = build();
    memo_.emplace(std::move(key), built);
    return built;
  }

  // A handler decision (e.g. a dot's placement) that depends only on `key`, computed once per
  // run by `decide`: models repeat the same layers, so the same decisions recur. The key must
  // start with a tag naming the decision (the type T is tied to the tag).
  template <typename T, typename Decide>
  const T& Decision(const std::string& key, Decide decide) {
    auto it = decisions_.find(key);
    if (it == decisions_.end()) it = decisions_.emplace(key, std::make_shared<T>(decide())).first;
    return *static_cast<const T*>(it->second.get());
  }

  // While a dot, convolution or reduce is partitioned into a partial sum: ResolvePartialSums
  // toward `whole` (the op's sharding without its unreduced axes) resolves into `partial`
  // instead, so the pending sum over those axes stays pending (see partial_sums.h).
  struct KeptPartial {
    Sharding whole;
    Sharding partial;
  };
  void set_kept_partial(std::optional<KeptPartial> kept) { kept_partial_ = std::move(kept); }
  const std::optional<KeptPartial>& kept_partial() const { return kept_partial_; }

  // When dots window their all-gathers (handlers/dot_windowed.h).
  const WindowedEinsumOptions& windowed_einsum() const { return windowed_einsum_; }
  void set_windowed_einsum(const WindowedEinsumOptions& options) { windowed_einsum_ = options; }

  void Warn(std::string message) { warnings_.push_back(std::move(message)); }
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  Module* output_;
  int64_t num_devices_;
  NameUniquer names_;
  CollectiveFactory collectives_;
  std::vector<std::string> warnings_;
  std::optional<KeptPartial> kept_partial_;
  WindowedEinsumOptions windowed_einsum_;
  // Keyed by a binary encoding of the inputs (see spmd_context.cpp); node-based, so the
  // returned references stay valid.
  std::unordered_map<std::string, std::optional<AxisSharding>> axes_cache_;
  std::unordered_map<std::string, std::optional<ReshardPlan>> plan_cache_;
  std::unordered_map<std::string, Instruction*> memo_;
  std::unordered_map<std::string, std::shared_ptr<const void>> decisions_;
  std::string key_;  // scratch buffer for building keys

  static std::string MemoKey(const Computation* computation, const char* tag, const Sharding& sharding,
                             const std::vector<int64_t>& values);
  static std::optional<ReshardPlan> SharedPlan(const std::string& key, const ReshardProblem& problem);
};

// Binary cache keys (raw int64s, lists prefixed by their length), for Decision() and caches.
void AppendKey(std::string& key, int64_t value);
void AppendKey(std::string& key, const std::vector<int64_t>& values);
void AppendKey(std::string& key, const AxisSharding& sharding);

// s32[] (the mixed-radix number of this partition's digits of `axes`, major first) * `piece`,
// computed arithmetically from partition-id (no table of num_devices entries): the start of
// this partition's shard along a dim split by `axes` into pieces of `piece` elements.
Instruction* AxisOffset(HloBuilder& builder, const std::vector<DeviceAxis>& axes, int64_t piece,
                        int64_t num_devices);

// Per-device dims of a value of `global_dims` under `sharding` (maximal and manual: whole).
std::vector<int64_t> ShardDimsOf(const Sharding& sharding, const std::vector<int64_t>& global_dims);
// The per-device shape (element type and layout of `global_shape`, shard dims).
Shape ShardShapeOf(const Sharding& sharding, const Shape& global_shape);

}  // namespace gspmd
