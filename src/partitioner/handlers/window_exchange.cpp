// Window exchange: transfers between tiles of a line, scheduled into collective-permute rounds,
// placed into each device's window and merged with per-device masks.
#include "partitioner/handlers/window_exchange.h"

#include <algorithm>

#include "partitioner/reshard_plan.h"
#include "support/diagnostic.h"

namespace gspmd::shape_ops {
namespace {

// Global positions [begin, end) of segment `segment` of tile `source` go to tile `target`.
struct Transfer {
  int64_t source = 0;
  int64_t target = 0;
  int64_t segment = 0;
  int64_t begin = 0;
  int64_t end = 0;
  int64_t length() const { return end - begin; }
};

struct Round {
  bool local = false;  // source == target for every transfer: no communication
  std::vector<Transfer> transfers;
  int64_t length = 0;
};

// One segment's non-empty tile parts sorted by where they begin, for finding the parts that
// meet a range by binary search. `disjoint` is false when sorted parts overlap (their ends are
// then not sorted too), and every part must be checked.
struct SegmentIndex {
  std::vector<int64_t> tiles;  // non-empty parts, by real_begin
  std::vector<int64_t> begins, ends;
  bool disjoint = true;
};

SegmentIndex IndexSegment(const SourceSegment& segment, int64_t tile_count) {
  SegmentIndex index;
  for (int64_t j = 0; j < tile_count; ++j)
    if (segment.real_begin[j] < segment.real_end[j]) index.tiles.push_back(j);
  std::stable_sort(index.tiles.begin(), index.tiles.end(),
                   [&](int64_t a, int64_t b) { return segment.real_begin[a] < segment.real_begin[b]; });
  for (int64_t j : index.tiles) {
    if (!index.ends.empty() && segment.real_begin[j] < index.ends.back()) index.disjoint = false;
    index.begins.push_back(segment.real_begin[j]);
    index.ends.push_back(segment.real_end[j]);
  }
  return index;
}

// Every (source tile, segment) piece each target tile needs, in (target, source, segment)
// order. Only the parts that meet the needed range are visited (binary search over each
// segment's parts): on 2048 devices a scan of every tile per target was the partitioner's
// hot spot.
std::vector<Transfer> FindTransfers(const WindowExchange& x) {
  std::vector<Transfer> transfers;
  int64_t tiles = x.lines.tiles;
  std::vector<SegmentIndex> indexes;
  for (const SourceSegment& segment : x.segments) indexes.push_back(IndexSegment(segment, tiles));
  std::vector<Transfer> for_target;
  for (int64_t t = 0; t < tiles; ++t) {
    int64_t begin = x.needed_begin[t], end = x.needed_end[t];
    if (begin >= end) continue;
    GSPMD_CHECK(begin >= x.window_start[t] && end <= x.window_start[t] + x.window_length,
                "needed positions outside the window");
    for_target.clear();
    for (size_t g = 0; g < x.segments.size(); ++g) {
      const SourceSegment& segment = x.segments[g];
      const SegmentIndex& index = indexes[g];
      size_t first = 0;
      const size_t last = std::lower_bound(index.begins.begin(), index.begins.end(), end) - index.begins.begin();
      if (index.disjoint) first = std::upper_bound(index.ends.begin(), index.ends.end(), begin) - index.ends.begin();
      for (size_t k = first; k < last; ++k) {
        const int64_t j = index.tiles[k];
        int64_t lo = std::max(begin, segment.real_begin[j]);
        int64_t hi = std::min(end, segment.real_end[j]);
        if (lo >= hi) continue;
        for_target.push_back({j, t, static_cast<int64_t>(g), lo, hi});
      }
    }
    std::sort(for_target.begin(), for_target.end(), [](const Transfer& a, const Transfer& b) {
      return a.source != b.source ? a.source < b.source : a.segment < b.segment;
    });
    transfers.insert(transfers.end(), for_target.begin(), for_target.end());
  }
  return transfers;
}

// Local transfers: round k holds the k-th local transfer of every tile. Remote transfers:
// longest first, each into the first round where its source and target are still free.
std::vector<Round> ScheduleRounds(const std::vector<Transfer>& transfers, int64_t tiles) {
  std::vector<Round> rounds;
  std::vector<int64_t> local_count(tiles, 0);
  std::vector<Transfer> remote;
  for (const Transfer& transfer : transfers) {
    if (transfer.source != transfer.target) {
      remote.push_back(transfer);
      continue;
    }
    int64_t k = local_count[transfer.target]++;
    if (k >= static_cast<int64_t>(rounds.size())) rounds.push_back(Round{true, {}, 0});
    rounds[k].transfers.push_back(transfer);
    rounds[k].length = std::max(rounds[k].length, transfer.length());
  }
  std::stable_sort(remote.begin(), remote.end(),
                   [](const Transfer& a, const Transfer& b) { return a.length() > b.length(); });
  std::vector<Round> remote_rounds;
  std::vector<std::vector<bool>> source_busy, target_busy;
  for (const Transfer& transfer : remote) {
    size_t r = 0;
    for (; r < remote_rounds.size(); ++r)
      if (!source_busy[r][transfer.source] && !target_busy[r][transfer.target]) break;
    if (r == remote_rounds.size()) {
      remote_rounds.push_back(Round{false, {}, 0});
      source_busy.emplace_back(tiles, false);
      target_busy.emplace_back(tiles, false);
    }
    remote_rounds[r].transfers.push_back(transfer);
    remote_rounds[r].length = std::max(remote_rounds[r].length, transfer.length());
    source_busy[r][transfer.source] = true;
    target_busy[r][transfer.target] = true;
  }
  rounds.insert(rounds.end(), remote_rounds.begin(), remote_rounds.end());
  return rounds;
}

bool Uniform(const std::vector<int64_t>& values) {
  return std::all_of(values.begin(), values.end(), [&](int64_t v) { return v == values[0]; });
}

// Puts `piece` (length P along dim) at per-device position place[device] of a window of
// length L; what falls outside the window is dropped, the rest of the window is zero.
Instruction* Place(HloBuilder& b, Instruction* piece, int64_t dim, const std::vector<int64_t>& place,
                   int64_t window_length, int64_t margin) {
  int64_t length = piece->shape().dim(dim);
  Instruction* zero = b.ScalarConstant(piece->shape().element_type(), 0);
  if (Uniform(place)) {
    int64_t at = place[0];
    if (at == 0 && length == window_length) return piece;
    int64_t keep_begin = std::max<int64_t>(0, -at);
    int64_t keep_end = std::min(length, window_length - at);
    if (keep_end <= keep_begin) {
      std::vector<int64_t> dims = piece->shape().dims();
      dims[dim] = window_length;
      return b.BroadcastScalar(zero, dims);
    }
    Instruction* kept = SliceAlongDim(b, piece, dim, {keep_begin}, keep_end - keep_begin);
    PaddingConfig padding(piece->shape().rank());
    int64_t low = std::max<int64_t>(at, 0);
    padding[dim] = {low, window_length - low - (keep_end - keep_begin), 0};
    return b.Pad(kept, zero, padding);
  }
  std::vector<int64_t> buffer_dims = piece->shape().dims();
  buffer_dims[dim] = window_length + 2 * margin;
  Instruction* buffer = b.BroadcastScalar(zero, buffer_dims);
  std::vector<int64_t> shifted = place;
  for (int64_t& value : shifted) value += margin;
  Instruction* zero_index = b.S32Constant(0);
  std::vector<Instruction*> starts(piece->shape().rank(), zero_index);
  starts[dim] = b.TableLookup(shifted);
  Instruction* placed = b.DynamicUpdateSlice(buffer, piece, starts);
  return SliceAlongDim(b, placed, dim, {margin}, window_length);
}

// pred mask of the window: true where begin[device] <= position < end[device].
Instruction* RangeMask(HloBuilder& b, const std::vector<int64_t>& dims, int64_t dim,
                       const std::vector<int64_t>& begin, const std::vector<int64_t>& end) {
  Instruction* iota = b.Iota(Shape(ElementType::kS32, dims), dim);
  Instruction* mask = nullptr;
  bool begin_trivial = Uniform(begin) && begin[0] <= 0;
  bool end_trivial = Uniform(end) && end[0] >= dims[dim];
  if (!begin_trivial) {
    Instruction* limit = b.BroadcastScalar(LookupOrConstant(b, begin), dims);
    mask = b.Compare(iota, limit, ComparisonDirection::kGe);
  }
  if (!end_trivial) {
    Instruction* limit = b.BroadcastScalar(LookupOrConstant(b, end), dims);
    Instruction* below = b.Compare(iota, limit, ComparisonDirection::kLt);
    mask = mask ? b.Binary(Opcode::kAnd, mask, below) : below;
  }
  return mask;
}

}  // namespace

SourceSegment BlockSegment(int64_t size, int64_t tiles, int64_t offset, int64_t local_offset) {
  SourceSegment segment;
  int64_t shard = ShardSize(size, tiles);
  segment.local_offset = local_offset;
  segment.length = shard;
  for (int64_t j = 0; j < tiles; ++j) {
    int64_t first = j * shard;
    int64_t last = std::min(size, first + shard);
    segment.global_start.push_back(offset + first);
    segment.real_begin.push_back(offset + std::min(first, size));
    segment.real_end.push_back(offset + std::max(last, std::min(first, size)));
  }
  return segment;
}

int64_t ExchangeElementsSent(const WindowExchange& exchange) {
  int64_t sent = 0;
  for (const Round& round : ScheduleRounds(FindTransfers(exchange), exchange.lines.tiles))
    if (!round.local) sent += round.length;
  return sent;
}

Instruction* ExchangeWindows(SpmdContext& context, HloBuilder& b, Instruction* source,
                             const WindowExchange& x) {
  const int64_t dim = x.dim;
  const int64_t window_length = x.window_length;
  const int64_t source_length = source->shape().dim(dim);
  const int64_t devices = context.num_devices();
  std::vector<Round> rounds = ScheduleRounds(FindTransfers(x), x.lines.tiles);
  std::vector<int64_t> window_dims = source->shape().dims();
  window_dims[dim] = window_length;
  if (rounds.empty()) {
    Instruction* zero = b.ScalarConstant(source->shape().element_type(), 0);
    return b.BroadcastScalar(zero, window_dims);
  }
  int64_t margin = 0;
  for (const Round& round : rounds) margin = std::max(margin, round.length);

  Instruction* result = nullptr;
  for (const Round& round : rounds) {
    const int64_t length = round.length;
    std::vector<int64_t> send_start(devices, 0), place(devices, 0);
    std::vector<int64_t> resp_begin(devices, 0), resp_end(devices, 0);
    std::vector<SourceTargetPair> pairs;
    // Devices that receive nothing keep the placement of the first transfer (uniform tables
    // give static slices); their mask is empty.
    bool first = true;
    for (const Transfer& transfer : round.transfers) {
      const SourceSegment& segment = x.segments[transfer.segment];
      int64_t local_begin = segment.local_offset + (transfer.begin - segment.global_start[transfer.source]);
      int64_t start = std::max<int64_t>(0, std::min(local_begin, source_length - length));
      int64_t window_at = transfer.begin - x.window_start[transfer.target];
      int64_t at = window_at - (local_begin - start);
      if (first) {
        std::fill(send_start.begin(), send_start.end(), start);
        std::fill(place.begin(), place.end(), at);
        first = false;
      }
      for (const auto& line : x.lines.lines) {
        int64_t from = line[transfer.source], to = line[transfer.target];
        if (from < 0 || to < 0 || from >= devices || to >= devices) continue;
        send_start[from] = start;
        place[to] = at;
        resp_begin[to] = window_at;
        resp_end[to] = window_at + transfer.length();
        if (!round.local) pairs.push_back({from, to});
      }
    }
    Instruction* piece = SliceAlongDim(b, source, dim, send_start, length);
    if (!round.local) {
      std::sort(pairs.begin(), pairs.end(),
                [](const SourceTargetPair& a, const SourceTargetPair& c) { return a.source < c.source; });
      piece = context.collectives().CollectivePermute(b, piece, std::move(pairs));
    }
    Instruction* placed = Place(b, piece, dim, place, window_length, margin);
    if (result == nullptr) {
      result = placed;
      continue;
    }
    Instruction* mask = RangeMask(b, window_dims, dim, resp_begin, resp_end);
    result = mask ? b.Select(mask, placed, result) : placed;
  }
  return result;
}

}  // namespace gspmd::shape_ops
