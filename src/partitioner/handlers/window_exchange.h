// Window exchange along one sharded dim: every device gathers a window of global positions from
// the devices of its line with as few collective-permute rounds as it can (a generalised halo
// exchange). Slice, pad, concatenate and reverse are all expressed with it.
#pragma once

#include <cstdint>
#include <vector>

#include "partitioner/handlers/shape_ops.h"

namespace gspmd::shape_ops {

// A run of the per-device source buffer along the exchanged dim: local element
// local_offset + k holds global position global_start[tile] + k; only the positions in
// [real_begin[tile], real_end[tile]) hold real data (the rest is padding or another value's).
struct SourceSegment {
  int64_t local_offset = 0;
  int64_t length = 0;
  std::vector<int64_t> global_start;  // per tile
  std::vector<int64_t> real_begin;    // per tile
  std::vector<int64_t> real_end;      // per tile
};

// What every device wants: window element k of tile t is global position window_start[t] + k;
// the positions in [needed_begin[t], needed_end[t]) (inside the window) must be right, the
// others are left unspecified. Each needed position must be real in at most one segment of
// one tile; positions real nowhere stay unspecified (the caller masks them).
struct WindowExchange {
  int64_t dim = 0;
  DimLines lines;
  std::vector<SourceSegment> segments;
  int64_t window_length = 0;
  std::vector<int64_t> window_start;  // per tile
  std::vector<int64_t> needed_begin;  // per tile
  std::vector<int64_t> needed_end;    // per tile
};

// Every device's window (the source with dim `dim` resized to window_length).
Instruction* ExchangeWindows(SpmdContext& context, HloBuilder& b, Instruction* source,
                             const WindowExchange& exchange);

// Elements along the dim each device sends (multiply by the bytes of one slab).
int64_t ExchangeElementsSent(const WindowExchange& exchange);

// A segment covering a whole dim of `size` split into `tiles` shards of ceil(size/tiles):
// tile j's element k is position offset + j * shard + k, real for j*shard+k < size.
SourceSegment BlockSegment(int64_t size, int64_t tiles, int64_t offset, int64_t local_offset = 0);

}  // namespace gspmd::shape_ops
