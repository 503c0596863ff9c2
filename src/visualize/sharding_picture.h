// Pictures of how one value is laid out over the devices: a grid of tiles labelled with device
// ids for 1-D and 2-D arrays (as jax.debug.visualize_array_sharding draws), a table of dims for
// higher ranks. Used by `gspmd show` and the HTML report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/shape.h"
#include "sharding/sharding.h"

namespace gspmd::visualize {

// One tile of a value: the index range it covers along each dim and the devices holding it.
//   f32[10] {devices=[4]<=[4]}: tile 3 covers [9,10) of dim 0, padded_size 3 (2 elements of
//   padding), devices {3}.
struct Tile {
  std::vector<int64_t> begin;        // per dim
  std::vector<int64_t> end;          // per dim, exclusive (begin == end: all padding)
  std::vector<int64_t> padded_size;  // per dim: the per-device buffer extent
  std::vector<int64_t> devices;      // ascending
};

// The tiles of an array of `shape` under an array sharding (tiled, replicated, maximal or
// manual) over `num_devices` devices, row-major over the tile grid. Replicated and manual
// give one tile held by every device; maximal one tile held by its device.
std::vector<Tile> TilesOf(const Shape& shape, const Sharding& sharding, int64_t num_devices);

// How many tiles `sharding` cuts each dim of a rank-`rank` array into (all 1 unless tiled).
std::vector<int64_t> TileCounts(const Sharding& sharding, int64_t rank);

// The global shape of a value of a per-device program: each dim of the shard shape times its
// tile count (the padding of an uneven split is not visible any more). Tuples leaf by leaf.
Shape GlobalShapeOfShard(const Shape& shard, const Sharding& sharding);

// "0-3", "0,4", "0-1,4-5": ascending device ids with runs of consecutive ids collapsed.
std::string DeviceListText(const std::vector<int64_t>& devices);

struct PictureOptions {
  bool color = false;         // ANSI background colours per distinct device set
  int64_t max_tiles_per_dim = 16;  // more tiles along a dim are elided in the middle ("...")
};

// The picture of one value (no trailing title line): for rank <= 2 a grid, for higher ranks a
// table with per dim its size, tile count, the device axes splitting it, shard size and
// padding; a summary line (per-device shape and bytes, replication, padding) follows either.
// Tuple shardings and shapes draw each leaf in turn ("leaf 0:", ...).
std::string DrawSharding(const Shape& shape, const Sharding& sharding, int64_t num_devices,
                         const PictureOptions& options = {});

}  // namespace gspmd::visualize
