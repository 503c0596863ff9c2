// Halo exchange: per-device windows of a sharded array along one dim, assembled from the
// device's own shard and boundary pieces of neighbouring tiles (collective-permutes), masked
// at the global edges. Used by convolution; pad, slice and reduce-window can use it too.
#pragma once

#include <cstdint>
#include <vector>

#include "partitioner/spmd_context.h"

namespace gspmd {

// How the windows of WindowsAlongDim are assembled (computed from the sharding alone):
//   shard_size    S, the per-device length of `dim` (tile t holds [t*S, t*S+S))
//   left, right   elements before / after the own shard in the assembled array (>= 0)
//   data_left, data_right
//                 how many of those some device reads real data from (taken from the
//                 preceding / following tiles, several hops when longer than a shard); the
//                 rest only covers positions outside [0, D), which read as the pad value
//   offsets       per device: where its window starts in [own - left, own + S + right)
//   needs_mask    some window reaches outside [0, D) (global edges or uneven padding)
struct HaloPlan {
  int64_t dim = 0;
  int64_t tiles = 1;
  int64_t shard_size = 0;
  int64_t left = 0;
  int64_t right = 0;
  int64_t data_left = 0;
  int64_t data_right = 0;
  int64_t window_size = 0;
  std::vector<int64_t> tile_of_device;
  std::vector<int64_t> starts;   // per device, global index of the window's first element
  std::vector<int64_t> offsets;  // per device
  bool needs_mask = false;

  // Bytes each device sends for the permutes, given the per-device dims of the array.
  double CostBytes(const std::vector<int64_t>& shard_dims, int64_t element_bytes) const;
};

// The real elements (inside [0, global)) a window [start, start + window) reads before its
// tile's shard [own_start, own_end) and after it; padding outside the array is not counted.
struct HaloNeed {
  int64_t left = 0;
  int64_t right = 0;
};
HaloNeed RealHaloOf(int64_t start, int64_t window, int64_t own_start, int64_t own_end, int64_t global);

// Plans windows [starts[p], starts[p] + window_size) along `dim` for every device p (indexed
// by device id) of an array of `global_dims` laid out as `sharding` (tiled or replicated).
HaloPlan PlanWindows(const Sharding& sharding, const std::vector<int64_t>& global_dims, int64_t dim,
                     std::vector<int64_t> starts, int64_t window_size, int64_t num_devices);

// Device p gets elements [starts[p], starts[p] + window_size) of dim `dim` of the global value
// (other dims: its own shard); positions outside [0, D) read as `pad_value` (a scalar). A
// replicated dim needs no communication (pad + slice).
Instruction* WindowsAlongDim(HloBuilder& b, SpmdContext& context, Instruction* shard, const Sharding& sharding,
                             const Shape& global_shape, const HaloPlan& plan, Instruction* pad_value);

// Extends each device's shard along `dim` by `left` elements from the left neighbour(s) and
// `right` from the right, via collective-permute, with `pad_value` at the global edges (and in
// uneven padding). The result is S + left + right long along `dim`. Negative amounts trim.
Instruction* ExchangeHalo(HloBuilder& b, SpmdContext& context, Instruction* shard, const Sharding& sharding,
                          const Shape& global_shape, int64_t dim, int64_t left, int64_t right,
                          Instruction* pad_value);

}  // namespace gspmd
