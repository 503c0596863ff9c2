// Sharding algebra for propagation rules: tile-array transposes and reshapes that keep device
// orders, partial replication and manual subgroups exact.
#include "propagation/sharding_algebra.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <unordered_map>

#include "ir/shape.h"
#include "partitioner/device_axes.h"
#include "support/diagnostic.h"

namespace gspmd::propagation {
namespace {

int64_t Product(const std::vector<int64_t>& values) {
  int64_t product = 1;
  for (int64_t v : values) product *= v;
  return product;
}

std::vector<int64_t> Identity(int64_t n) {
  std::vector<int64_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  return perm;
}

// Results of the sharding algebra by content: propagation asks for the same few maps and
// reshapes of the same few shardings on every layer, and each answer rebuilds tile arrays.
ShardingAnswerCache& Cache() {
  thread_local ShardingAnswerCache cache;
  return cache;
}

}  // namespace

bool AppendViewKey(const Sharding& sharding, std::string& key) {
  const TileAssignment& tiles = sharding.tile_assignment();
  auto append = [&key](int64_t value) { key.append(reinterpret_cast<const char*>(&value), sizeof(value)); };
  auto append_all = [&](const std::vector<int64_t>& values) {
    append(static_cast<int64_t>(values.size()));
    for (int64_t v : values) append(v);
  };
  append_all(tiles.dims());
  if (tiles.is_iota()) {
    append(1);
    append_all(tiles.iota_reshape_dims());
    append_all(tiles.iota_transpose_perm());
  } else {
    if (tiles.num_elements() > 256) return false;
    append(0);
    append_all(tiles.Devices());
  }
  append(static_cast<int64_t>(sharding.subgroup_types().size()));
  for (Sharding::SubgroupType type : sharding.subgroup_types()) append(static_cast<int64_t>(type));
  append(sharding.HasUnreduced() ? static_cast<int64_t>(sharding.partial_reduction()) : -1);
  return true;
}

bool ShardingAnswerCache::Begin(char op, const Sharding& sharding) {
  key_.clear();
  key_.push_back(op);
  return AppendViewKey(sharding, key_);
}

void ShardingAnswerCache::Append(const std::vector<int64_t>& values) {
  Append(static_cast<int64_t>(values.size()));
  key_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t));
}

void ShardingAnswerCache::Append(int64_t value) {
  key_.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

const std::optional<Sharding>* ShardingAnswerCache::Find() const {
  auto it = entries_.find(key_);
  return it == entries_.end() ? nullptr : &it->second;
}

void ShardingAnswerCache::Store(const std::optional<Sharding>& value) {
  if (entries_.size() >= kCapacity) entries_.clear();
  entries_.emplace(key_, value);
}

std::optional<TileView> ViewOf(const Sharding& sharding, int64_t rank) {
  if (!sharding.IsTiled() || sharding.TiledDataRank() != rank) return std::nullopt;
  const TileAssignment& tiles = sharding.tile_assignment();
  const auto& types = sharding.subgroup_types();
  std::vector<int64_t> perm = Identity(rank);
  std::vector<int64_t> dims(tiles.dims().begin(), tiles.dims().begin() + rank);
  int64_t manual = 1, replicated = 1;
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] != Sharding::SubgroupType::kManual) continue;
    perm.push_back(rank + static_cast<int64_t>(i));
    manual *= tiles.dim(rank + static_cast<int64_t>(i));
  }
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] == Sharding::SubgroupType::kManual) continue;
    perm.push_back(rank + static_cast<int64_t>(i));
    replicated *= tiles.dim(rank + static_cast<int64_t>(i));
  }
  dims.push_back(manual);
  dims.push_back(replicated);
  TileView view;
  view.rank = rank;
  view.tiles = tiles.Transpose(perm).Reshape(std::move(dims));
  return view;
}

Sharding FromView(const TileView& view) {
  Sharding sharding = Sharding::Tiled(
      view.tiles, {Sharding::SubgroupType::kManual, Sharding::SubgroupType::kReplicated});
  if (sharding.IsTiled() && sharding.subgroup_types().empty() &&
      sharding.tile_assignment().num_elements() == 1) {
    return Sharding::Replicated();
  }
  return sharding;
}

Sharding Compact(const Sharding& sharding) {
  if (!sharding.IsTiled() || sharding.tile_assignment().is_iota()) return sharding;
  const int64_t rank = sharding.TiledDataRank();
  std::optional<AxisSharding> axes =
      DecomposeSharding(sharding, rank, sharding.tile_assignment().num_elements());
  if (!axes) return sharding;
  Sharding compact = axes->ToSharding();
  if (!(compact == sharding)) return sharding;
  compact.set_shard_group(sharding.shard_group());
  return compact;
}

bool IsSpatiallyPartitioned(const Sharding& sharding) {
  if (sharding.IsTuple()) {
    for (const Sharding& element : sharding.tuple_elements())
      if (IsSpatiallyPartitioned(element)) return true;
    return false;
  }
  return NumDataTiles(sharding) > 1;
}

int64_t NumDataTiles(const Sharding& sharding) {
  if (!sharding.IsTiled()) return 1;
  int64_t product = 1;
  for (int64_t d = 0; d < sharding.TiledDataRank(); ++d) product *= sharding.tile_assignment().dim(d);
  return product;
}

int64_t DimTiles(const Sharding& sharding, int64_t dim) {
  if (!sharding.IsTiled() || dim >= sharding.TiledDataRank()) return 1;
  return sharding.tile_assignment().dim(dim);
}

bool HasManual(const Sharding& sharding) {
  if (sharding.IsManual()) return true;
  if (!sharding.IsTiled()) return false;
  for (auto type : sharding.subgroup_types())
    if (type == Sharding::SubgroupType::kManual) return true;
  return false;
}

namespace {
std::optional<Sharding> MapDimsUncached(const Sharding& sharding, const std::vector<int64_t>& src_to_tgt,
                                        int64_t target_rank);
}  // namespace

std::optional<Sharding> MapDims(const Sharding& sharding, const std::vector<int64_t>& src_to_tgt,
                                int64_t target_rank) {
  if (sharding.IsTuple()) return std::nullopt;
  if (!sharding.IsTiled()) return sharding;
  ShardingAnswerCache& cache = Cache();
  if (!cache.Begin('m', sharding)) return MapDimsUncached(sharding, src_to_tgt, target_rank);
  cache.Append(src_to_tgt);
  cache.Append({target_rank});
  if (const std::optional<Sharding>* found = cache.Find()) return *found;
  std::optional<Sharding> result = MapDimsUncached(sharding, src_to_tgt, target_rank);
  cache.Store(result);
  return result;
}

namespace {
std::optional<Sharding> MapDimsUncached(const Sharding& sharding, const std::vector<int64_t>& src_to_tgt,
                                        int64_t target_rank) {
  const int64_t source_rank = static_cast<int64_t>(src_to_tgt.size());
  std::optional<TileView> view = ViewOf(sharding, source_rank);
  if (!view) return std::nullopt;
  std::vector<int64_t> target_source(target_rank, -1);
  for (int64_t i = 0; i < source_rank; ++i) {
    int64_t t = src_to_tgt[i];
    if (t < 0) continue;
    GSPMD_CHECK(t < target_rank && target_source[t] < 0, "bad dim mapping");
    target_source[t] = i;
  }
  std::vector<int64_t> perm, dims;
  for (int64_t t = 0; t < target_rank; ++t) {
    if (target_source[t] < 0) {
      dims.push_back(1);
      continue;
    }
    perm.push_back(target_source[t]);
    dims.push_back(view->data_tiles(target_source[t]));
  }
  perm.push_back(source_rank);  // manual
  dims.push_back(view->manual_size());
  int64_t replicated = view->replicated_size();
  for (int64_t i = 0; i < source_rank; ++i) {
    if (src_to_tgt[i] >= 0) continue;
    perm.push_back(i);
    replicated *= view->data_tiles(i);
  }
  perm.push_back(source_rank + 1);
  dims.push_back(replicated);
  TileView out;
  out.rank = target_rank;
  out.tiles = view->tiles.Transpose(perm).Reshape(std::move(dims));
  return FromView(out);
}
}  // namespace

Sharding TransposeSharding(const Sharding& sharding, const std::vector<int64_t>& perm) {
  std::vector<int64_t> src_to_tgt(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) src_to_tgt[perm[i]] = static_cast<int64_t>(i);
  std::optional<Sharding> out = MapDims(sharding, src_to_tgt, static_cast<int64_t>(perm.size()));
  GSPMD_CHECK(out.has_value(), "transpose of a sharding of another rank: ", sharding.ToString());
  return *out;
}

Sharding ReplicateDims(const Sharding& sharding, const std::vector<int64_t>& dims) {
  if (!sharding.IsTiled()) return sharding;
  const int64_t rank = sharding.TiledDataRank();
  std::vector<int64_t> src_to_tgt = Identity(rank);
  for (int64_t d : dims) src_to_tgt.at(d) = -1;
  return *MapDims(sharding, src_to_tgt, rank);
}

Sharding ReplicateAllDimsExcept(const Sharding& sharding, const std::vector<int64_t>& keep) {
  if (!sharding.IsTiled()) return sharding;
  const int64_t rank = sharding.TiledDataRank();
  std::vector<int64_t> src_to_tgt(rank, -1);
  for (int64_t d : keep) src_to_tgt.at(d) = d;
  return *MapDims(sharding, src_to_tgt, rank);
}

Sharding RemoveDims(const Sharding& sharding, const std::vector<int64_t>& dims) {
  if (!sharding.IsTiled()) return sharding;
  const int64_t rank = sharding.TiledDataRank();
  std::vector<int64_t> src_to_tgt(rank, 0);
  for (int64_t d : dims) src_to_tgt.at(d) = -1;
  int64_t next = 0;
  for (int64_t i = 0; i < rank; ++i)
    if (src_to_tgt[i] >= 0) src_to_tgt[i] = next++;
  return *MapDims(sharding, src_to_tgt, next);
}

Sharding InsertDims(const Sharding& sharding, const std::vector<int64_t>& positions) {
  if (!sharding.IsTiled()) return sharding;
  const int64_t rank = sharding.TiledDataRank();
  const int64_t target_rank = rank + static_cast<int64_t>(positions.size());
  std::vector<bool> inserted(target_rank, false);
  for (int64_t p : positions) inserted.at(p) = true;
  std::vector<int64_t> src_to_tgt;
  for (int64_t t = 0; t < target_rank; ++t)
    if (!inserted[t]) src_to_tgt.push_back(t);
  return *MapDims(sharding, src_to_tgt, target_rank);
}

Sharding ReverseTiles(const Sharding& sharding, const std::vector<int64_t>& dims) {
  if (!sharding.IsTiled()) return sharding;
  const int64_t rank = sharding.TiledDataRank();
  std::optional<TileView> view = ViewOf(sharding, rank);
  GSPMD_CHECK(view.has_value(), "no tile view");
  bool any = false;
  for (int64_t d : dims) any |= view->data_tiles(d) > 1;
  if (!any) return sharding;
  const std::vector<int64_t>& tile_dims = view->tiles.dims();
  const std::vector<int64_t> strides = RowMajorStrides(tile_dims);
  const std::vector<int64_t>& devices = view->tiles.Devices();
  std::vector<int64_t> out(devices.size());
  for (int64_t linear = 0; linear < static_cast<int64_t>(devices.size()); ++linear) {
    int64_t source = linear;
    for (int64_t d : dims) {
      int64_t index = (linear / strides[d]) % tile_dims[d];
      source += (tile_dims[d] - 1 - 2 * index) * strides[d];
    }
    out[linear] = devices[source];
  }
  TileView reversed;
  reversed.rank = rank;
  reversed.tiles = TileAssignment(tile_dims, std::move(out));
  return Compact(FromView(reversed));
}

namespace {

// Compares the regions of every device (see IsSubTilingOrEqual).
bool EveryRegionInside(const std::vector<int64_t>& dims, const Sharding& fine, const Sharding& coarse) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  Shape shape(ElementType::kF32, dims);
  for (int64_t device : fine.tile_assignment().Devices()) {
    Sharding::ShardRegion f = fine.RegionForDevice(shape, device);
    Sharding::ShardRegion c = coarse.RegionForDevice(shape, device);
    for (int64_t d = 0; d < rank; ++d) {
      if (f.sizes[d] == 0) continue;
      if (f.offsets[d] < c.offsets[d] || f.offsets[d] + f.sizes[d] > c.offsets[d] + c.sizes[d])
        return false;
    }
  }
  return true;
}

}  // namespace

bool IsSubTilingOrEqual(const std::vector<int64_t>& dims, const Sharding& fine,
                        const Sharding& coarse) {
  if (fine == coarse) return true;
  if (coarse.IsReplicated()) return !fine.IsTuple() && !HasManual(fine);
  if (!fine.IsTiled() || !coarse.IsTiled()) return false;
  if (HasManual(fine) != HasManual(coarse)) return false;
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (fine.TiledDataRank() != rank || coarse.TiledDataRank() != rank) return false;
  if (fine.tile_assignment().num_elements() != coarse.tile_assignment().num_elements())
    return false;
  // The device walk is O(devices) and the same questions recur once per layer: answers are
  // remembered per thread in a bounded table keyed by the dims and the shardings' contents
  // (their text when they hold long explicit device lists).
  thread_local std::unordered_map<std::string, bool> memo;
  thread_local std::string key;
  key.assign(1, static_cast<char>(dims.size()));
  for (int64_t d : dims) key.append(reinterpret_cast<const char*>(&d), sizeof(d));
  key.push_back('|');
  if (!AppendViewKey(fine, key) || !AppendViewKey(coarse, key)) {
    key.assign("text:");
    for (int64_t d : dims) key += std::to_string(d) + ",";
    key += "|" + fine.ToString() + "|" + coarse.ToString();
  }
  if (auto found = memo.find(key); found != memo.end()) return found->second;
  if (memo.size() >= 4096) memo.clear();
  const bool inside = EveryRegionInside(dims, fine, coarse);
  memo.emplace(key, inside);
  return inside;
}

}  // namespace gspmd::propagation

// ---------------------------------------------------------------------------------------------
// Reshape. Elements are numbered row-major over the whole array; a source dim split t ways
// (evenly) is one "tile digit": the interval [lo, hi) of element-index strides, lo = stride *
// size / t, hi = stride * size. A target dim spans [B, U) = [stride, stride * size); it can
// carry the tiling of the digits (or parts of digits) that run contiguously down from U.
namespace gspmd::propagation {
namespace {

struct Digit {
  int64_t source_dim = 0;
  int64_t lo = 1, hi = 1;
  std::vector<int64_t> cuts;  // strictly inside (lo, hi), any order
};

bool CutFits(const Digit& digit, int64_t cut) {
  if (cut <= digit.lo || cut >= digit.hi) return cut == digit.lo || cut == digit.hi;
  if (digit.hi % cut != 0 || cut % digit.lo != 0) return false;
  for (int64_t c : digit.cuts)
    if (!(c % cut == 0 || cut % c == 0)) return false;
  return true;
}

void AddCut(Digit& digit, int64_t cut) {
  if (cut <= digit.lo || cut >= digit.hi) return;
  if (std::find(digit.cuts.begin(), digit.cuts.end(), cut) == digit.cuts.end())
    digit.cuts.push_back(cut);
}

int64_t LargestDivisorDividing(int64_t tiles, int64_t size) {
  for (int64_t g = tiles; g > 1; --g)
    if (tiles % g == 0 && size % g == 0) return g;
  return 1;
}

}  // namespace

namespace {
Sharding ReshapeShardingUncached(const Sharding& sharding, const std::vector<int64_t>& from,
                                 const std::vector<int64_t>& to);
}  // namespace

Sharding ReshapeSharding(const Sharding& sharding, const std::vector<int64_t>& from,
                         const std::vector<int64_t>& to) {
  if (!sharding.IsTiled()) return sharding;
  // An unchanged shape may give back the input itself, with its metadata: not cached.
  if (from == to) return ReshapeShardingUncached(sharding, from, to);
  ShardingAnswerCache& cache = Cache();
  auto key = [&] {
    if (!cache.Begin('r', sharding)) return false;
    cache.Append(from);
    cache.Append(to);
    return true;
  };
  if (!key()) return ReshapeShardingUncached(sharding, from, to);
  if (const std::optional<Sharding>* found = cache.Find()) return **found;
  Sharding result = ReshapeShardingUncached(sharding, from, to);
  key();  // the reshape may have used the cache (MapDims) in between
  cache.Store(result);
  return result;
}

namespace {
Sharding ReshapeShardingUncached(const Sharding& sharding, const std::vector<int64_t>& from,
                                 const std::vector<int64_t>& to) {
  const int64_t source_rank = static_cast<int64_t>(from.size());
  const int64_t target_rank = static_cast<int64_t>(to.size());
  std::optional<TileView> view = ViewOf(sharding, source_rank);
  GSPMD_CHECK(view.has_value(), "reshape of a sharding of another rank: ", sharding.ToString());
  const bool has_zero = std::find(from.begin(), from.end(), 0) != from.end() ||
                        std::find(to.begin(), to.end(), 0) != to.end();
  if (has_zero || Product(from) != Product(to)) {
    return *MapDims(sharding, std::vector<int64_t>(source_rank, -1), target_rank);
  }
  if (from == to) return sharding;
  const std::vector<int64_t> source_strides = RowMajorStrides(from);
  const std::vector<int64_t> target_strides = RowMajorStrides(to);

  // Sub-digits of each source tile dim, major first: (size, target dim or -1).
  struct SubDigit {
    int64_t size;
    int64_t target;
    int64_t order;  // position in the target's chain (major first)
  };
  std::vector<std::vector<SubDigit>> subdigits(source_rank);
  std::vector<Digit> digits;
  std::vector<int64_t> dropped_minor(source_rank, 1);  // uneven dims: minor tile part dropped
  std::vector<int64_t> whole_target(source_rank, -1);
  for (int64_t i = 0; i < source_rank; ++i) {
    const int64_t tiles = view->data_tiles(i);
    if (tiles == 1) continue;
    if (from[i] % tiles != 0) {
      // An uneven dim that reappears unchanged keeps its tiling as is.
      for (int64_t j = 0; j < target_rank; ++j) {
        if (to[j] == from[i] && target_strides[j] == source_strides[i]) whole_target[i] = j;
      }
      if (whole_target[i] >= 0) continue;
      const int64_t g = LargestDivisorDividing(tiles, from[i]);
      dropped_minor[i] = tiles / g;
      if (g == 1) continue;
      digits.push_back({i, source_strides[i] * (from[i] / g), source_strides[i] * from[i], {}});
      continue;
    }
    digits.push_back({i, source_strides[i] * (from[i] / tiles), source_strides[i] * from[i], {}});
  }

  // Assigned pieces: (source dim, upper cut) -> (target, chain order).
  struct Piece {
    int64_t source_dim, lo, hi, target, order;
  };
  std::vector<Piece> pieces;
  auto digit_containing = [&](int64_t h) -> Digit* {
    for (Digit& d : digits)
      if (d.lo < h && h <= d.hi) return &d;
    return nullptr;
  };
  for (int64_t j = 0; j < target_rank; ++j) {
    if (to[j] == 1) continue;
    const int64_t base = target_strides[j];
    int64_t h = base * to[j];
    int64_t order = 0;
    bool first = true;
    while (true) {
      Digit* digit = digit_containing(h);
      if (digit == nullptr) break;
      if (h < digit->hi) {
        if (!first || !CutFits(*digit, h)) break;
      }
      int64_t low = std::max(digit->lo, base);
      bool partial = false;
      if (!CutFits(*digit, low) || h % low != 0 || low % base != 0) {
        // Keep the largest top part of [low, h) that is a clean sub-digit.
        const int64_t span = h / digit->lo;
        int64_t found = -1;
        for (int64_t k = 1; k < span; ++k) {
          if (span % k != 0) continue;
          const int64_t candidate = digit->lo * k;
          if (candidate < base || candidate >= h || candidate % base != 0) continue;
          if (!CutFits(*digit, candidate)) continue;
          found = candidate;
          break;
        }
        if (found < 0) break;
        low = found;
        partial = true;
      }
      AddCut(*digit, h);
      AddCut(*digit, low);
      pieces.push_back({digit->source_dim, low, h, j, order++});
      if (partial || low == base) break;
      h = low;
      first = false;
    }
  }

  // Split every source tile dim into its sub-digits.
  for (const Digit& digit : digits) {
    std::vector<int64_t> cuts = digit.cuts;
    cuts.push_back(digit.lo);
    cuts.push_back(digit.hi);
    std::sort(cuts.rbegin(), cuts.rend());
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      SubDigit sub{cuts[k] / cuts[k + 1], -1, 0};
      for (const Piece& piece : pieces) {
        if (piece.source_dim == digit.source_dim && piece.hi == cuts[k]) {
          sub.target = piece.target;
          sub.order = piece.order;
        }
      }
      subdigits[digit.source_dim].push_back(sub);
    }
  }
  for (int64_t i = 0; i < source_rank; ++i) {
    if (whole_target[i] >= 0) subdigits[i].push_back({view->data_tiles(i), whole_target[i], 0});
    if (dropped_minor[i] > 1) subdigits[i].push_back({dropped_minor[i], -1, 0});
  }

  // Tile array: [sub-digits of every source dim..., manual, replicated], then transposed into
  // [target chains..., manual, dropped sub-digits + replicated].
  std::vector<int64_t> split_dims;
  struct Position {
    int64_t index, target, order;
  };
  std::vector<Position> positions;
  for (int64_t i = 0; i < source_rank; ++i) {
    for (const SubDigit& sub : subdigits[i]) {
      positions.push_back({static_cast<int64_t>(split_dims.size()), sub.target, sub.order});
      split_dims.push_back(sub.size);
    }
  }
  const int64_t manual_index = static_cast<int64_t>(split_dims.size());
  split_dims.push_back(view->manual_size());
  split_dims.push_back(view->replicated_size());
  std::vector<int64_t> perm, out_dims;
  for (int64_t j = 0; j < target_rank; ++j) {
    std::vector<Position> chain;
    for (const Position& p : positions)
      if (p.target == j) chain.push_back(p);
    std::sort(chain.begin(), chain.end(),
              [](const Position& a, const Position& b) { return a.order < b.order; });
    int64_t tiles = 1;
    for (const Position& p : chain) {
      perm.push_back(p.index);
      tiles *= split_dims[p.index];
    }
    out_dims.push_back(tiles);
  }
  perm.push_back(manual_index);
  out_dims.push_back(view->manual_size());
  int64_t replicated = view->replicated_size();
  for (const Position& p : positions) {
    if (p.target >= 0) continue;
    perm.push_back(p.index);
    replicated *= split_dims[p.index];
  }
  perm.push_back(manual_index + 1);
  out_dims.push_back(replicated);
  TileView out;
  out.rank = target_rank;
  out.tiles = view->tiles.Reshape(split_dims).Transpose(perm).Reshape(out_dims);
  return FromView(out);
}
}  // namespace

}  // namespace gspmd::propagation
