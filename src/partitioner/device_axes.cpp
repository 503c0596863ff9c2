// Decomposition of tile assignments into device-id digit axes, and their common refinement.
#include "partitioner/device_axes.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <string>
#include <unordered_map>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

// Splits the device offsets g(0..size-1) along one tile dim into digit axes, minor first.
// Returns false when g is not a mixed-radix digit function.
bool FactorTileDim(const std::vector<int64_t>& g, std::vector<DeviceAxis>& minor_first) {
  int64_t size = static_cast<int64_t>(g.size());
  int64_t unit = 1;
  while (unit < size) {
    int64_t stride = g[unit];
    if (stride <= 0) return false;
    int64_t count = 1;
    while (unit * (count + 1) <= size && g[unit * count] == count * stride) ++count;
    // Shrink to a count that divides what is left of the dim.
    while (count > 1 && (size / unit) % count != 0) --count;
    if (count <= 1) return false;
    minor_first.push_back({stride, count});
    unit *= count;
  }
  if (unit != size) return false;
  // Every index must be the sum of its digits' offsets.
  for (int64_t i = 0; i < size; ++i) {
    int64_t expected = 0, rest = i;
    for (const DeviceAxis& axis : minor_first) {
      expected += (rest % axis.size) * axis.stride;
      rest /= axis.size;
    }
    if (g[i] != expected) return false;
  }
  return true;
}

bool IsMixedRadix(std::vector<DeviceAxis> axes, int64_t num_devices) {
  std::sort(axes.begin(), axes.end());
  int64_t expected = 1;
  for (const DeviceAxis& axis : axes) {
    if (axis.stride != expected) return false;
    expected *= axis.size;
  }
  return expected == num_devices;
}

int64_t Digit(int64_t device, const DeviceAxis& axis) { return (device / axis.stride) % axis.size; }

// Splits `axis` at the given boundaries (sorted strides), returning sub-axes major first.
std::vector<DeviceAxis> SplitAxis(const DeviceAxis& axis, const std::vector<int64_t>& boundaries) {
  std::vector<DeviceAxis> major_first;
  int64_t low = axis.stride, high = axis.stride * axis.size;
  std::vector<int64_t> cuts;
  for (int64_t b : boundaries)
    if (b > low && b < high) cuts.push_back(b);
  int64_t previous = low;
  std::vector<DeviceAxis> minor_first;
  for (int64_t cut : cuts) {
    minor_first.push_back({previous, cut / previous});
    previous = cut;
  }
  minor_first.push_back({previous, high / previous});
  major_first.assign(minor_first.rbegin(), minor_first.rend());
  return major_first;
}

std::vector<DeviceAxis> SplitAll(const std::vector<DeviceAxis>& axes, const std::vector<int64_t>& boundaries) {
  std::vector<DeviceAxis> out;
  for (const DeviceAxis& axis : axes) {
    std::vector<DeviceAxis> parts = SplitAxis(axis, boundaries);
    out.insert(out.end(), parts.begin(), parts.end());
  }
  return out;
}

}  // namespace

AxisSharding SplitAxesAt(const AxisSharding& sharding, const std::vector<int64_t>& boundaries) {
  AxisSharding out;
  for (const auto& dim : sharding.dims) out.dims.push_back(SplitAll(dim, boundaries));
  out.replicated = SplitAll(sharding.replicated, boundaries);
  out.manual = SplitAll(sharding.manual, boundaries);
  out.unreduced = SplitAll(sharding.unreduced, boundaries);
  out.reduction = sharding.reduction;
  std::sort(out.replicated.begin(), out.replicated.end());
  std::sort(out.manual.begin(), out.manual.end());
  std::sort(out.unreduced.begin(), out.unreduced.end());
  return out;
}

int64_t AxisSharding::TileCount(int64_t dim) const {
  int64_t count = 1;
  for (const DeviceAxis& axis : dims.at(dim)) count *= axis.size;
  return count;
}

std::vector<DeviceAxis> AxisSharding::AllAxes() const {
  std::vector<DeviceAxis> all;
  for (const auto& dim : dims) all.insert(all.end(), dim.begin(), dim.end());
  all.insert(all.end(), replicated.begin(), replicated.end());
  all.insert(all.end(), manual.begin(), manual.end());
  all.insert(all.end(), unreduced.begin(), unreduced.end());
  std::sort(all.begin(), all.end());
  return all;
}

std::vector<int64_t> AxisSharding::TileIndex(int64_t device) const {
  std::vector<int64_t> index;
  for (const auto& dim : dims) {
    int64_t tile = 0;
    for (const DeviceAxis& axis : dim) tile = tile * axis.size + Digit(device, axis);
    index.push_back(tile);
  }
  return index;
}

namespace {

void AppendAxesKey(std::string& key, const std::vector<DeviceAxis>& axes) {
  int64_t count = static_cast<int64_t>(axes.size());
  key.append(reinterpret_cast<const char*>(&count), sizeof(count));
  key.append(reinterpret_cast<const char*>(axes.data()), axes.size() * sizeof(DeviceAxis));
}

}  // namespace

Sharding AxisSharding::ToSharding() const {
  // Handlers convert the same few axis shardings over and over: cache them (per thread, so no
  // locking; bounded).
  thread_local std::unordered_map<std::string, Sharding> cache;
  thread_local std::string key;
  constexpr size_t kMaxCached = 4096;
  key.clear();
  for (const auto& dim : dims) AppendAxesKey(key, dim);
  AppendAxesKey(key, replicated);
  AppendAxesKey(key, manual);
  AppendAxesKey(key, unreduced);
  key.push_back(static_cast<char>(reduction));
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  Sharding sharding = BuildSharding();
  if (cache.size() >= kMaxCached) cache.clear();
  cache.emplace(key, sharding);
  return sharding;
}

Sharding AxisSharding::BuildSharding() const {
  // Tile dims: one per tensor dim, then manual, then replicated subgroups.
  std::vector<int64_t> tile_dims;
  std::vector<DeviceAxis> listed;  // axes in tile-array order (major first)
  for (int64_t d = 0; d < rank(); ++d) {
    tile_dims.push_back(TileCount(d));
    listed.insert(listed.end(), dims[d].begin(), dims[d].end());
  }
  std::vector<Sharding::SubgroupType> subgroups;
  auto add_subgroup = [&](const std::vector<DeviceAxis>& axes, Sharding::SubgroupType type) {
    if (axes.empty()) return;
    int64_t count = 1;
    std::vector<DeviceAxis> major_first(axes.rbegin(), axes.rend());  // by stride, descending
    for (const DeviceAxis& axis : major_first) count *= axis.size;
    tile_dims.push_back(count);
    listed.insert(listed.end(), major_first.begin(), major_first.end());
    subgroups.push_back(type);
  };
  add_subgroup(manual, Sharding::SubgroupType::kManual);
  add_subgroup(unreduced, Sharding::SubgroupType::kUnreduced);
  add_subgroup(replicated, Sharding::SubgroupType::kReplicated);

  bool all_replicated = std::all_of(dims.begin(), dims.end(), [](const auto& d) { return d.empty(); });
  if (all_replicated && manual.empty() && unreduced.empty()) return Sharding::Replicated();
  if (all_replicated && replicated.empty() && unreduced.empty()) return Sharding::Manual();

  // Iota form: arange over axes sorted by descending stride, transposed into `listed` order.
  std::vector<DeviceAxis> by_stride = AllAxes();
  std::reverse(by_stride.begin(), by_stride.end());
  std::vector<int64_t> reshape_dims, perm;
  for (const DeviceAxis& axis : by_stride) reshape_dims.push_back(axis.size);
  for (const DeviceAxis& axis : listed) {
    auto it = std::find(by_stride.begin(), by_stride.end(), axis);
    perm.push_back(it - by_stride.begin());
  }
  if (reshape_dims.empty()) reshape_dims.push_back(1);
  if (perm.empty()) perm.push_back(0);
  TileAssignment tiles = TileAssignment::Iota(tile_dims, reshape_dims, perm);
  Sharding sharding = Sharding::Tiled(std::move(tiles), std::move(subgroups));
  if (!unreduced.empty()) sharding.set_partial_reduction(reduction);
  return sharding;
}

namespace {

void AppendNumber(std::string& out, int64_t value) {
  char buffer[24];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, end);
}

void AppendAxesText(std::string& out, const std::vector<DeviceAxis>& axes) {
  out.push_back('{');
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i) out.push_back(',');
    AppendNumber(out, axes[i].stride);
    out.push_back('x');
    AppendNumber(out, axes[i].size);
  }
  out.push_back('}');
}

}  // namespace

std::string AxisSharding::ToString() const {
  // Handlers use this text as a key in hot loops: one buffer, no temporaries.
  std::string out;
  out.reserve(16 + 8 * dims.size());
  out.push_back('[');
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d) out += ", ";
    AppendAxesText(out, dims[d]);
  }
  out.push_back(']');
  if (!replicated.empty()) {
    out += " rep";
    AppendAxesText(out, replicated);
  }
  if (!manual.empty()) {
    out += " manual";
    AppendAxesText(out, manual);
  }
  if (!unreduced.empty()) {
    out += " unreduced";
    out += std::to_string(static_cast<int>(reduction));
    AppendAxesText(out, unreduced);
  }
  return out;
}

namespace {

std::optional<AxisSharding> DecomposeShardingUncached(const Sharding& sharding, int64_t rank, int64_t num_devices) {
  AxisSharding result;
  result.dims.resize(rank);
  if (sharding.IsReplicated() || sharding.IsManual()) {
    if (num_devices > 1) {
      auto& list = sharding.IsReplicated() ? result.replicated : result.manual;
      list.push_back({1, num_devices});
    }
    return result;
  }
  if (!sharding.IsTiled()) return std::nullopt;
  const TileAssignment& tiles = sharding.tile_assignment();
  if (tiles.num_elements() != num_devices) return std::nullopt;
  int64_t data_rank = sharding.TiledDataRank();
  if (data_rank != rank) return std::nullopt;
  const std::vector<int64_t>& devices = tiles.Devices();
  if (devices[0] != 0) return std::nullopt;

  std::vector<int64_t> strides(tiles.num_dims(), 1);
  for (int64_t j = tiles.num_dims() - 2; j >= 0; --j) strides[j] = strides[j + 1] * tiles.dim(j + 1);
  std::vector<std::vector<DeviceAxis>> per_tile_dim(tiles.num_dims());
  for (int64_t j = 0; j < tiles.num_dims(); ++j) {
    std::vector<int64_t> g(tiles.dim(j));
    for (int64_t i = 0; i < tiles.dim(j); ++i) g[i] = devices[i * strides[j]];
    std::vector<DeviceAxis> minor_first;
    if (tiles.dim(j) > 1 && !FactorTileDim(g, minor_first)) return std::nullopt;
    per_tile_dim[j].assign(minor_first.rbegin(), minor_first.rend());
  }
  // Separability: every device id is the sum of its per-dim offsets.
  for (int64_t linear = 0; linear < num_devices; ++linear) {
    int64_t expected = 0, rest = linear;
    for (int64_t j = tiles.num_dims() - 1; j >= 0; --j) {
      int64_t i = rest % tiles.dim(j);
      rest /= tiles.dim(j);
      expected += devices[i * strides[j]];
    }
    if (devices[linear] != expected) return std::nullopt;
  }
  for (int64_t d = 0; d < rank; ++d) result.dims[d] = per_tile_dim[d];
  const auto& subgroup_types = sharding.subgroup_types();
  for (size_t s = 0; s < subgroup_types.size(); ++s) {
    auto& target = subgroup_types[s] == Sharding::SubgroupType::kManual      ? result.manual
                   : subgroup_types[s] == Sharding::SubgroupType::kUnreduced ? result.unreduced
                                                                             : result.replicated;
    const auto& axes = per_tile_dim[rank + s];
    target.insert(target.end(), axes.begin(), axes.end());
  }
  if (!result.unreduced.empty()) result.reduction = sharding.partial_reduction();
  std::sort(result.replicated.begin(), result.replicated.end());
  std::sort(result.manual.begin(), result.manual.end());
  std::sort(result.unreduced.begin(), result.unreduced.end());
  if (!IsMixedRadix(result.AllAxes(), num_devices)) return std::nullopt;
  return result;
}

// The decompositions of recently seen shardings, by representation: the reshard planner and
// the partial-sum analysis ask for the same few shardings again and again, and each answer
// costs a pass over every device (on 2048 devices this was half of partitioning). An entry
// holds a copy of its sharding, so its representation (the key) cannot be freed and reused.
struct DecompositionCache {
  struct Key {
    const void* identity;
    int64_t rank;
    int64_t num_devices;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const {
      size_t h = std::hash<const void*>()(key.identity);
      h ^= std::hash<int64_t>()(key.rank) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
      h ^= std::hash<int64_t>()(key.num_devices) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
      return h;
    }
  };
  struct Entry {
    Sharding keep_alive;
    std::optional<AxisSharding> decomposition;
  };
  static constexpr size_t kCapacity = 4096;  // cleared when full: the working set is small
  std::unordered_map<Key, Entry, KeyHash> entries;
};

}  // namespace

std::optional<AxisSharding> DecomposeSharding(const Sharding& sharding, int64_t rank, int64_t num_devices) {
  // Plain {replicated} has no representation to key on (and is cheap to decompose).
  if (sharding.identity() == nullptr) return DecomposeShardingUncached(sharding, rank, num_devices);
  thread_local DecompositionCache cache;
  const DecompositionCache::Key key{sharding.identity(), rank, num_devices};
  if (auto found = cache.entries.find(key); found != cache.entries.end()) return found->second.decomposition;
  if (cache.entries.size() >= DecompositionCache::kCapacity) cache.entries.clear();
  std::optional<AxisSharding> decomposition = DecomposeShardingUncached(sharding, rank, num_devices);
  cache.entries.emplace(key, DecompositionCache::Entry{sharding, decomposition});
  return decomposition;
}

std::optional<std::pair<AxisSharding, AxisSharding>> RefineToCommonAxes(const AxisSharding& a,
                                                                        const AxisSharding& b) {
  std::set<int64_t> boundary_set;
  for (const DeviceAxis& axis : a.AllAxes()) {
    boundary_set.insert(axis.stride);
    boundary_set.insert(axis.stride * axis.size);
  }
  for (const DeviceAxis& axis : b.AllAxes()) {
    boundary_set.insert(axis.stride);
    boundary_set.insert(axis.stride * axis.size);
  }
  std::vector<int64_t> boundaries(boundary_set.begin(), boundary_set.end());
  for (size_t i = 1; i < boundaries.size(); ++i)
    if (boundaries[i] % boundaries[i - 1] != 0) return std::nullopt;
  return std::make_pair(SplitAxesAt(a, boundaries), SplitAxesAt(b, boundaries));
}

namespace {

void AddBoundaries(std::set<int64_t>& boundaries, const AxisSharding& sharding) {
  for (const DeviceAxis& axis : sharding.AllAxes()) {
    boundaries.insert(axis.stride);
    boundaries.insert(axis.stride * axis.size);
  }
}

// Each boundary divides the next: the axes they cut are a common refinement.
bool IsChain(const std::set<int64_t>& boundaries) {
  int64_t previous = 0;
  for (int64_t b : boundaries) {
    if (previous != 0 && b % previous != 0) return false;
    previous = b;
  }
  return true;
}

// `layout`'s tile counts and replication in a device order (its dims and its replication as
// single digits, in some order) whose boundaries refine with `boundaries`.
std::optional<AxisSharding> StandIn(const AxisSharding& layout, const std::set<int64_t>& boundaries) {
  if (!layout.manual.empty() || !layout.unreduced.empty()) return std::nullopt;
  // Digits: dims with their tile counts, then the replication (index rank).
  std::vector<std::pair<int64_t, int64_t>> digits;
  for (int64_t d = 0; d < layout.rank(); ++d)
    if (layout.TileCount(d) > 1) digits.push_back({d, layout.TileCount(d)});
  int64_t replication = 1;
  for (const DeviceAxis& axis : layout.replicated) replication *= axis.size;
  if (replication > 1) digits.push_back({layout.rank(), replication});
  std::sort(digits.begin(), digits.end());
  do {
    AxisSharding candidate;
    candidate.dims.resize(layout.rank());
    int64_t stride = 1;
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) {  // minor first
      DeviceAxis axis{stride, it->second};
      if (it->first == layout.rank()) candidate.replicated.push_back(axis);
      else candidate.dims[it->first].push_back(axis);
      stride *= it->second;
    }
    std::set<int64_t> merged = boundaries;
    AddBoundaries(merged, candidate);
    if (IsChain(merged)) return candidate;
  } while (std::next_permutation(digits.begin(), digits.end()));
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<AxisSharding>> RefineAllToCommonAxes(const std::vector<AxisSharding>& layouts,
                                                                size_t anchor) {
  std::set<int64_t> boundaries;
  AddBoundaries(boundaries, layouts.at(anchor));
  std::vector<AxisSharding> fitted = layouts;
  std::vector<bool> fits(layouts.size(), false);
  fits[anchor] = true;
  for (size_t i = 0; i < layouts.size(); ++i) {
    std::set<int64_t> merged = boundaries;
    AddBoundaries(merged, layouts[i]);
    if (!IsChain(merged)) continue;
    boundaries = std::move(merged);
    fits[i] = true;
  }
  for (size_t i = 0; i < layouts.size(); ++i) {
    if (fits[i]) continue;
    std::optional<AxisSharding> stand_in = StandIn(layouts[i], boundaries);
    if (!stand_in) return std::nullopt;
    AddBoundaries(boundaries, *stand_in);
    fitted[i] = std::move(*stand_in);
  }
  std::vector<int64_t> cuts(boundaries.begin(), boundaries.end());
  for (AxisSharding& layout : fitted) layout = SplitAxesAt(layout, cuts);
  return fitted;
}

std::vector<std::vector<int64_t>> GroupsOverAxes(const std::vector<DeviceAxis>& axes,
                                                 int64_t num_devices) {
  std::vector<std::vector<int64_t>> groups;
  int64_t group_size = 1;
  for (const DeviceAxis& axis : axes) group_size *= axis.size;
  for (int64_t base = 0; base < num_devices; ++base) {
    bool is_base = std::all_of(axes.begin(), axes.end(),
                               [&](const DeviceAxis& axis) { return Digit(base, axis) == 0; });
    if (!is_base) continue;
    std::vector<int64_t> group;
    group.reserve(group_size);
    for (int64_t member = 0; member < group_size; ++member) {
      int64_t device = base, rest = member;
      for (int64_t k = static_cast<int64_t>(axes.size()) - 1; k >= 0; --k) {
        device += (rest % axes[k].size) * axes[k].stride;
        rest /= axes[k].size;
      }
      group.push_back(device);
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace gspmd
