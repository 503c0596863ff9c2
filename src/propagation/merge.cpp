// MergeShardings and IsMoreSpecific: combining compatible partial shardings during propagation.
#include <algorithm>
#include <string>
#include <unordered_map>

#include "propagation/op_rules.h"
#include "propagation/sharding_algebra.h"
#include "support/diagnostic.h"

namespace gspmd::propagation {
namespace {

// Per device: the data tile index along each dim, then the manual group index. Devices are
// indexed by id; ids that do not appear keep index -1.
struct DeviceIndex {
  int64_t rank = 0;
  std::vector<int64_t> values;  // device * (rank + 1) + k
  int64_t max_device_plus_one = 0;
};

std::optional<DeviceIndex> IndexDevices(const TileView& view) {
  const std::vector<int64_t>& devices = view.tiles.Devices();
  const std::vector<int64_t>& dims = view.tiles.dims();
  DeviceIndex index;
  index.rank = view.rank;
  index.max_device_plus_one = view.tiles.MaxDevicePlusOne();
  const int64_t width = view.rank + 1;
  index.values.assign(index.max_device_plus_one * width, -1);
  const int64_t count = static_cast<int64_t>(devices.size());
  std::vector<int64_t> multi(dims.size(), 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    const int64_t device = devices[linear];
    if (device < 0) return std::nullopt;
    int64_t* slot = &index.values[device * width];
    if (slot[0] >= 0) return std::nullopt;  // a device listed twice
    for (int64_t k = 0; k <= view.rank; ++k) slot[k] = multi[k];
    for (int64_t k = static_cast<int64_t>(dims.size()) - 1; k >= 0; --k) {
      if (++multi[k] < dims[k]) break;
      multi[k] = 0;
    }
  }
  return index;
}

bool SameShape(const TileView& a, const TileView& b) { return a.tiles.dims() == b.tiles.dims(); }

// Merges two tiled shardings of the same rank: every dim takes the tiling of whichever side
// splits it (both splitting it must agree device by device); manual groups must be identical.
std::optional<Sharding> ComputeMergeTiled(const Sharding& current, const Sharding& proposed,
                                   int64_t rank) {
  std::optional<TileView> a = ViewOf(current, rank);
  std::optional<TileView> b = ViewOf(proposed, rank);
  if (!a || !b) return std::nullopt;
  if (a->num_devices() != b->num_devices()) return std::nullopt;
  if (a->manual_size() != b->manual_size()) return std::nullopt;
  if (SameShape(*a, *b) && a->tiles == b->tiles) return FromView(*a);
  std::optional<DeviceIndex> ia = IndexDevices(*a);
  std::optional<DeviceIndex> ib = IndexDevices(*b);
  if (!ia || !ib || ia->max_device_plus_one != ib->max_device_plus_one) return std::nullopt;

  std::vector<int64_t> merged_dims(rank);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t ta = a->data_tiles(d), tb = b->data_tiles(d);
    if (ta > 1 && tb > 1 && ta != tb) return std::nullopt;
    merged_dims[d] = std::max(ta, tb);
  }
  const int64_t manual = a->manual_size();
  int64_t data_tiles = 1;
  for (int64_t t : merged_dims) data_tiles *= t;
  const int64_t num_devices = a->num_devices();
  if (num_devices % (data_tiles * manual) != 0) return std::nullopt;
  const int64_t replicated = num_devices / (data_tiles * manual);

  // Slot every device into its merged tile; each tile must get exactly `replicated` devices.
  const int64_t width = rank + 1;
  const int64_t groups = data_tiles * manual;
  std::vector<int64_t> fill(groups, 0);
  std::vector<int64_t> out(num_devices, -1);
  for (int64_t device = 0; device < ia->max_device_plus_one; ++device) {
    const int64_t* va = &ia->values[device * width];
    const int64_t* vb = &ib->values[device * width];
    if ((va[0] < 0) != (vb[0] < 0)) return std::nullopt;
    if (va[0] < 0) continue;
    if (va[rank] != vb[rank]) return std::nullopt;  // manual group
    int64_t group = 0;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t ta = a->data_tiles(d), tb = b->data_tiles(d);
      if (ta > 1 && tb > 1 && va[d] != vb[d]) return std::nullopt;
      group = group * merged_dims[d] + (ta > 1 ? va[d] : vb[d]);
    }
    group = group * manual + va[rank];
    if (fill[group] >= replicated) return std::nullopt;
    out[group * replicated + fill[group]++] = device;
  }
  std::vector<int64_t> dims = merged_dims;
  dims.push_back(manual);
  dims.push_back(replicated);
  TileView merged;
  merged.rank = rank;
  merged.tiles = TileAssignment(std::move(dims), std::move(out));
  return Compact(FromView(merged));
}

// Merging walks every device; the same pairs recur once per layer of a model, so results are
// remembered (per thread, in a bounded table keyed by the shardings' views, or their text when
// they hold long device lists; the merge is a pure function of the views, so this changes
// nothing but the time).
std::optional<Sharding> MergeTiled(const Sharding& current, const Sharding& proposed, int64_t rank) {
  thread_local std::unordered_map<std::string, std::optional<Sharding>> memo;
  thread_local std::string key;
  key.assign(1, static_cast<char>(rank));
  if (!current.IsTiled() || !proposed.IsTiled() || !AppendViewKey(current, key) || !AppendViewKey(proposed, key))
    key = StrCat("text:", rank, "|", current.ToString(), "|", proposed.ToString());
  if (auto found = memo.find(key); found != memo.end()) return found->second;
  if (memo.size() >= 4096) memo.clear();
  std::optional<Sharding> merged = ComputeMergeTiled(current, proposed, rank);
  memo.emplace(key, merged);
  return merged;
}

int64_t ArrayRankOf(const Sharding& a, const Sharding& b, const Shape& shape) {
  if (shape.IsArray()) return shape.rank();
  if (a.IsTiled()) return a.TiledDataRank();
  if (b.IsTiled()) return b.TiledDataRank();
  return 0;
}

// The merged sharding of one array value, or nullopt on conflict.
std::optional<Sharding> MergeLeaf(const Sharding& current, const Sharding& proposed,
                                  const Shape& shape) {
  if (proposed.IsUnknown()) return current;
  if (current.IsUnknown() || current.IsReplicated()) {
    if (proposed.IsReplicated() || proposed.IsTiled()) return proposed;
    return current.IsUnknown() ? std::optional<Sharding>(proposed) : std::nullopt;
  }
  if (proposed.IsReplicated()) return current;
  if (current == proposed) return current;
  if (!current.IsTiled() || !proposed.IsTiled()) return std::nullopt;
  return MergeTiled(current, proposed, ArrayRankOf(current, proposed, shape));
}

}  // namespace

std::optional<Sharding> MergeShardings(const Sharding& current, const Sharding& proposed,
                                       const Shape& shape) {
  if (current.IsTuple() || proposed.IsTuple()) {
    if (!current.IsTuple() || !proposed.IsTuple()) return std::nullopt;
    const auto& ce = current.tuple_elements();
    const auto& pe = proposed.tuple_elements();
    if (ce.size() != pe.size()) return std::nullopt;
    std::vector<Sharding> merged = ce;
    bool changed = false;
    for (size_t i = 0; i < ce.size(); ++i) {
      const Shape leaf = shape.IsTuple() && i < static_cast<size_t>(shape.tuple_size())
                             ? shape.tuple_shape(static_cast<int64_t>(i))
                             : Shape();
      std::optional<Sharding> m = MergeLeaf(ce[i], pe[i], leaf);
      if (!m || *m == ce[i]) continue;
      merged[i] = *m;
      changed = true;
    }
    if (!changed) return std::nullopt;
    Sharding out = Sharding::Tuple(std::move(merged));
    out.set_shard_group(current.shard_group());
    return out;
  }
  std::optional<Sharding> merged = MergeLeaf(current, proposed, shape);
  if (!merged || *merged == current) return std::nullopt;
  merged->set_shard_group(current.shard_group());
  return merged;
}

bool IsMoreSpecific(const Sharding& candidate, const Sharding& current) {
  if (candidate.IsTuple() || current.IsTuple()) {
    if (!candidate.IsTuple() || !current.IsTuple()) return false;
    const auto& ce = candidate.tuple_elements();
    const auto& cu = current.tuple_elements();
    if (ce.size() != cu.size()) return false;
    bool better = false;
    for (size_t i = 0; i < ce.size(); ++i) {
      if (IsMoreSpecific(cu[i], ce[i])) return false;
      better |= IsMoreSpecific(ce[i], cu[i]);
    }
    return better;
  }
  if (candidate.IsUnknown()) return false;
  if (current.IsUnknown()) return true;
  if (candidate.IsManual() || current.IsManual()) return false;
  if (current.IsTiled()) return candidate.IsTiled() && NumDataTiles(candidate) > NumDataTiles(current);
  if (current.IsMaximal()) return candidate.IsTiled();
  // current is replicated: anything else is more specific.
  return !candidate.IsReplicated();
}

}  // namespace gspmd::propagation
