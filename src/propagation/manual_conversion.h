// Refining the unspecified dims of a Sharding annotation across the manual boundary it sits
// on (the SPMDFullToShardShape or SPMDShardToFullShape it feeds): the global side and the
// manual side split those dims over the same device axes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sharding/sharding.h"

namespace gspmd::propagation {

// `target` (one side of the boundary, rank `rank`) with its `open_dims` split as `source` (the
// other side) splits them, where the target leaves those devices replicated. E.g. on 8
// devices, source {devices=[2,2,1,2]0,1,4,5,2,3,6,7 last_tile_dim_replicate} (global) and
// target {devices=[1,1,1,4,2]0,2,1,3,4,6,5,7 last_tile_dims={replicated,manual}} with open
// dims {1,2} give {devices=[1,2,1,2,2]... last_tile_dims={replicated,manual}}. nullopt when
// nothing is added or the shardings do not decompose into common device axes.
std::optional<Sharding> RefineAcrossManualBoundary(const Sharding& source, const Sharding& target,
                                                   const std::vector<int64_t>& open_dims, int64_t rank,
                                                   int64_t num_devices);

}  // namespace gspmd::propagation
