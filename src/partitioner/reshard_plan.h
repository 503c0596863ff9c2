// Plans the cheapest sequence of collectives that turns one sharding of an array into
// another, as moves of device axes between tensor dims.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "partitioner/device_axes.h"

namespace gspmd {

// One step of a reshard. Axes are indices into ReshardPlan::axes (into ReshardPlan::target_axes
// from a collective-permute on).
//   kAllGather        [.., {a,b}, ..] -> [.., {a}, ..]          all-gather b along dim
//   kGatherDim        [.., {a,b}, ..] -> [.., {}, ..]           all-gather a,b along dim
//   kAllToAll         [{a}, {}]       -> [{}, {a}]              all-to-all a: dim -> to_dim
//   kDynamicSlice     [{}, ..] rep{a} -> [{a}, ..]              local slice, no communication
//   kAllReduce        partial{a,b}    -> rep{a,b}               all-reduce over a,b
//   kReduceScatter    partial{a}      -> [.., {a}]              reduce-scatter a along dim
//   kCollectivePermute same tile counts per dim, other devices  collective-permute into
//                                                                `permuted_to` (over target_axes)
struct ReshardStep {
  enum class Kind {
    kAllGather, kGatherDim, kAllToAll, kDynamicSlice, kAllReduce, kReduceScatter,
    kCollectivePermute,
  };
  Kind kind = Kind::kAllGather;
  int64_t dim = -1;      // the tensor dim acted on (the source dim of an all-to-all)
  int64_t to_dim = -1;   // all-to-all's destination dim
  std::vector<int64_t> axes;
  double cost_bytes = 0;  // bytes each device sends (ring model)
  // kCollectivePermute: the state after it, over ReshardPlan::target_axes.
  std::vector<std::vector<int64_t>> permuted_to;
  std::string ToString() const;
};

// The state of a value during a reshard: its axes per dim and its pending partial sums.
struct AxisState {
  std::vector<std::vector<int64_t>> dims;  // axis indices per tensor dim, major first
  std::vector<int64_t> partial;            // axes whose partial sums are not yet reduced
  bool operator==(const AxisState&) const = default;
};

// The steps up to a collective-permute act on `axes` (the source's axes), the later ones on
// `target_axes`. Both are the same common axes unless the two shardings' device-id digits do
// not refine each other (e.g. 2x3 against 3x2 on 6 devices): then only a collective-permute
// gets from one to the other.
struct ReshardPlan {
  std::vector<DeviceAxis> axes;
  std::vector<DeviceAxis> target_axes;
  AxisState source;  // over axes
  AxisState target;  // over target_axes
  std::vector<ReshardStep> steps;
  double total_cost_bytes = 0;
};

// Inputs to planning: the global dims and element size (for the costs and for uneven dims),
// the source and target shardings as axes, and the axes holding partial sums in the source
// (they must be replicated axes of `source`).
struct ReshardProblem {
  std::vector<int64_t> global_dims;
  int64_t element_bytes = 4;
  AxisSharding source;
  AxisSharding target;
  std::vector<DeviceAxis> partial_axes;
  // Whether a gather may instead sum each device's piece, placed in zeros, over the gathered
  // devices (exact for every type but complex: see GatherByMaskedSum).
  bool exact_sums = true;
};

// The cheapest plan found (fewest bytes sent per device; ties: fewer sequential ring steps), or
// nullopt when the two shardings differ in their manual axes.
std::optional<ReshardPlan> PlanReshard(const ReshardProblem& problem);

// Size of the per-device piece of a dim of `size` split `tiles` ways: ceil(size / tiles).
inline int64_t ShardSize(int64_t size, int64_t tiles) { return (size + tiles - 1) / tiles; }

// Whether a dim of `size` split `n` ways is better made whole by a masked sum than by an
// all-gather: each device places its piece among zeros (-0.0 for floats, so the sum is exact
// bit for bit) and one all-reduce adds them. The all-reduce sends 2 (n-1)/n of the dim, the
// all-gather (n-1)/n of n padded pieces, so the sum pays on dims mostly made of padding (a
// row or two split over many devices).
inline bool GatherByMaskedSum(int64_t size, int64_t n) { return 2 * size < n * ShardSize(size, n); }

}  // namespace gspmd
