// Sharding algebra for propagation rules: move, drop, insert, replicate and reshape the tiled
// dims of a sharding, keeping device orders, partial replication and manual subgroups exact.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sharding/sharding.h"

namespace gspmd::propagation {

// A tiled sharding of a rank-`rank` value viewed with exactly rank + 2 tile dims:
// [data tile dims..., manual group size, replicated group size] (the last two may be 1).
struct TileView {
  TileAssignment tiles;
  int64_t rank = 0;

  int64_t data_tiles(int64_t dim) const { return tiles.dim(dim); }
  int64_t manual_size() const { return tiles.dim(rank); }
  int64_t replicated_size() const { return tiles.dim(rank + 1); }
  int64_t num_devices() const { return tiles.num_elements(); }
};

// The view of a tiled sharding (nullopt for replicated, manual, maximal, unknown, tuple, or a
// tiled sharding whose data rank is not `rank`).
std::optional<TileView> ViewOf(const Sharding& sharding, int64_t rank);
// The sharding a view describes, canonical (Sharding::Tiled's normal form; all-unsplit with no
// manual group gives Replicated).
Sharding FromView(const TileView& view);

// Appends what a tiled sharding's view depends on (tile dims, the iota form or the device
// list, subgroup types, and the reduction of unreduced axes; not metadata or shard groups) to
// `key`, for caches of pure functions of the view; false when the sharding is not worth keying
// (an explicit list of many devices).
bool AppendViewKey(const Sharding& sharding, std::string& key);

// Answers of a pure function of a tiled sharding and some integers, by content: layers repeat,
// so the same few questions come again and again. Keep one per thread (thread_local); it is
// cleared when full (the working set is small).
//   if (!cache.Begin('m', sharding)) return Uncached(...);
//   cache.Append(dims);
//   if (const auto* found = cache.Find()) return *found;
//   ... cache.Store(result);
class ShardingAnswerCache {
 public:
  // Starts the key for operation `op` of `sharding`; false when it cannot be keyed.
  bool Begin(char op, const Sharding& sharding);
  void Append(const std::vector<int64_t>& values);
  void Append(int64_t value);
  const std::optional<Sharding>* Find() const;
  void Store(const std::optional<Sharding>& value);

 private:
  static constexpr size_t kCapacity = 8192;
  std::unordered_map<std::string, std::optional<Sharding>> entries_;
  std::string key_;
};

// The same sharding with an explicit tile assignment rewritten in iota form when it has one
// (so printed shardings look like XLA's); unchanged otherwise.
Sharding Compact(const Sharding& sharding);

// True for a tiled sharding that splits at least one data dim.
bool IsSpatiallyPartitioned(const Sharding& sharding);
// Number of data tiles (product of the data tile dims; 1 for non-tiled shardings).
int64_t NumDataTiles(const Sharding& sharding);
// Tiles along data dim `dim` (1 for non-tiled shardings).
int64_t DimTiles(const Sharding& sharding, int64_t dim);
// True when the sharding has a manual subgroup or is fully manual.
bool HasManual(const Sharding& sharding);

// Maps the data dims of a rank-`source_rank` sharding to a rank-`target_rank` value: source dim
// i becomes target dim src_to_tgt[i], or is dropped when src_to_tgt[i] < 0 (its devices join
// the replicated group). Target dims no source maps to are unsplit. Non-tiled shardings are
// returned unchanged. nullopt only for a tuple or a sharding whose rank does not match.
std::optional<Sharding> MapDims(const Sharding& sharding, const std::vector<int64_t>& src_to_tgt,
                                int64_t target_rank);

// Result dim i is operand dim perm[i].
Sharding TransposeSharding(const Sharding& sharding, const std::vector<int64_t>& perm);
// Unsplits `dims` (their devices join the replicated group); other dims keep their tiling.
Sharding ReplicateDims(const Sharding& sharding, const std::vector<int64_t>& dims);
// Unsplits every data dim except `keep`.
Sharding ReplicateAllDimsExcept(const Sharding& sharding, const std::vector<int64_t>& keep);
// Removes `dims` (sorted or not) from a sharding; split ones are replicated first.
Sharding RemoveDims(const Sharding& sharding, const std::vector<int64_t>& dims);
// Inserts unsplit dims so that they sit at `positions` (indices in the result, any order).
Sharding InsertDims(const Sharding& sharding, const std::vector<int64_t>& positions);
// Reverses the tile order along `dims` (for reverse when those dims split evenly).
Sharding ReverseTiles(const Sharding& sharding, const std::vector<int64_t>& dims);

// The sharding of a reshape's other side: maps the tiling of a value with dims `from` to a
// value with dims `to`. Splits and merges of sharded dims carry over when the tile counts
// divide the dims; otherwise the largest compatible part is kept and the rest replicated.
// Never nullopt for array inputs (worst case: replicated).
Sharding ReshapeSharding(const Sharding& sharding, const std::vector<int64_t>& from,
                         const std::vector<int64_t>& to);

// True when every device's tile under `fine` lies inside its tile under `coarse` (fine is
// `coarse` or a refinement of it). Both for a value of dims `dims`.
bool IsSubTilingOrEqual(const std::vector<int64_t>& dims, const Sharding& fine,
                        const Sharding& coarse);

}  // namespace gspmd::propagation
