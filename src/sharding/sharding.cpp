// Sharding: construction in XLA's canonical form, per-device regions, equality and text.
#include "sharding/sharding.h"

#include <algorithm>
#include <sstream>

#include "ir/shape.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

int64_t Product(const std::vector<int64_t>& v, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= v[i];
  return p;
}

int64_t CeilOfRatio(int64_t a, int64_t b) { return (a + b - 1) / b; }

const char* ReductionSuffix(Sharding::Reduction reduction) {
  switch (reduction) {
    case Sharding::Reduction::kSum: return "";
    case Sharding::Reduction::kMax: return "_max";
    case Sharding::Reduction::kMin: return "_min";
    case Sharding::Reduction::kProduct: return "_mul";
    case Sharding::Reduction::kAnd: return "_and";
    case Sharding::Reduction::kOr: return "_or";
  }
  return "";
}

std::string SubgroupTypeName(Sharding::SubgroupType type, Sharding::Reduction reduction) {
  switch (type) {
    case Sharding::SubgroupType::kManual: return "manual";
    case Sharding::SubgroupType::kReplicated: return "replicated";
    case Sharding::SubgroupType::kUnreduced: return std::string("unreduced") + ReductionSuffix(reduction);
  }
  return "replicated";
}

bool AllSameType(const std::vector<Sharding::SubgroupType>& types) {
  return std::all_of(types.begin(), types.end(),
                     [&](Sharding::SubgroupType t) { return t == types.front(); });
}

}  // namespace

const Sharding::Rep& Sharding::DefaultRep() {
  static const Rep replicated;
  return replicated;
}

Sharding::Rep& Sharding::MutableRep() {
  if (!rep_) {
    rep_ = std::make_shared<Rep>();
  } else if (rep_.use_count() > 1) {
    rep_ = std::make_shared<Rep>(*rep_);
  }
  // Only this Sharding holds the representation now, so writing through it is safe.
  return const_cast<Rep&>(*rep_);
}

void Sharding::set_shard_group(std::optional<ShardGroup> group) {
  if (group == rep().shard_group) return;
  MutableRep().shard_group = group;
}

void Sharding::set_named_view(std::optional<NamedShardingView> view) {
  if (!view && !rep().named_view) return;
  MutableRep().named_view = std::move(view);
}

void Sharding::set_metadata(std::string metadata) {
  if (metadata == rep().metadata) return;
  MutableRep().metadata = std::move(metadata);
}

Sharding Sharding::Replicated() { return Sharding(); }

Sharding Sharding::Manual() {
  Sharding s;
  s.MutableRep().kind = Kind::kManual;
  return s;
}

Sharding Sharding::Unknown() {
  Sharding s;
  s.MutableRep().kind = Kind::kUnknown;
  return s;
}

Sharding Sharding::Maximal(int64_t device) {
  GSPMD_CHECK(device >= 0, "maximal sharding on negative device ", device);
  Sharding s;
  s.MutableRep().kind = Kind::kMaximal;
  s.MutableRep().maximal_device = device;
  return s;
}

Sharding Sharding::PartiallyReplicated(TileAssignment tiles) {
  GSPMD_CHECK(tiles.num_dims() >= 1, "partial replication needs a tile dim");
  const int64_t group = tiles.dims().back();
  if (tiles.num_dims() == 1 || group == tiles.num_elements()) return Replicated();
  if (group == 1) {
    std::vector<int64_t> dims = tiles.dims();
    dims.pop_back();
    return Tiled(tiles.Reshape(std::move(dims)));
  }
  Sharding s;
  s.MutableRep().kind = Kind::kTiled;
  s.MutableRep().tiles = tiles.SortedAlongLastDim();
  s.MutableRep().subgroup_types = {SubgroupType::kReplicated};
  return s;
}

Sharding Sharding::Tiled(TileAssignment tiles, std::vector<SubgroupType> subgroup_types) {
  const int64_t rank = tiles.num_dims();
  const int64_t num_subgroups = static_cast<int64_t>(subgroup_types.size());
  GSPMD_CHECK(num_subgroups <= rank, "more subgroup dims than tile dims");
  const int64_t data_rank = rank - num_subgroups;
  if (subgroup_types.empty()) {
    Sharding s;
    s.MutableRep().kind = Kind::kTiled;
    s.MutableRep().tiles = std::move(tiles);
    return s;
  }
  const bool no_data_tiling = Product(tiles.dims(), 0, data_rank) == 1;
  if (AllSameType(subgroup_types) && no_data_tiling && subgroup_types.front() != SubgroupType::kUnreduced) {
    return subgroup_types.front() == SubgroupType::kManual ? Manual() : Replicated();
  }
  // Normalize: drop size-1 subgroup dims, merge dims of one type, manual before unreduced
  // before replicated.
  std::vector<int64_t> perm(data_rank);
  for (int64_t d = 0; d < data_rank; ++d) perm[d] = d;
  std::vector<int64_t> manual_dims, unreduced_dims, replicated_dims, removed_dims;
  for (int64_t i = 0; i < num_subgroups; ++i) {
    const int64_t dim = data_rank + i;
    if (tiles.dim(dim) == 1) {
      removed_dims.push_back(dim);
    } else if (subgroup_types[i] == SubgroupType::kManual) {
      manual_dims.push_back(dim);
    } else if (subgroup_types[i] == SubgroupType::kUnreduced) {
      unreduced_dims.push_back(dim);
    } else {
      replicated_dims.push_back(dim);
    }
  }
  std::vector<int64_t> merged_shape(tiles.dims().begin(), tiles.dims().begin() + data_rank);
  std::vector<SubgroupType> merged_types;
  auto add_group = [&](const std::vector<int64_t>& dims, SubgroupType type) {
    if (dims.empty()) return;
    int64_t size = 1;
    for (int64_t d : dims) {
      perm.push_back(d);
      size *= tiles.dim(d);
    }
    merged_shape.push_back(size);
    merged_types.push_back(type);
  };
  add_group(manual_dims, SubgroupType::kManual);
  add_group(unreduced_dims, SubgroupType::kUnreduced);
  add_group(replicated_dims, SubgroupType::kReplicated);
  perm.insert(perm.end(), removed_dims.begin(), removed_dims.end());
  TileAssignment merged = tiles.Transpose(perm).Reshape(merged_shape);

  if (merged_types.empty()) return Tiled(std::move(merged));
  if (merged_types.size() == 1 && merged_types.back() == SubgroupType::kReplicated) {
    return PartiallyReplicated(std::move(merged));
  }
  const bool all_manual_devices = merged.dims().back() == merged.num_elements();
  if (merged_types.size() == 1 && merged_types.back() == SubgroupType::kManual &&
      all_manual_devices) {
    return Manual();
  }
  Sharding s;
  s.MutableRep().kind = Kind::kTiled;
  s.MutableRep().tiles = merged_types.back() == SubgroupType::kReplicated ? merged.SortedAlongLastDim()
                                                              : std::move(merged);
  s.MutableRep().subgroup_types = std::move(merged_types);
  return s;
}

Sharding Sharding::Tuple(std::vector<Sharding> elements) {
  Sharding s;
  s.MutableRep().kind = Kind::kTuple;
  s.MutableRep().tuple_elements = std::move(elements);
  return s;
}

bool Sharding::ReplicateOnLastTileDim() const {
  return rep().kind == Kind::kTiled && !rep().subgroup_types.empty() &&
         rep().subgroup_types.back() == SubgroupType::kReplicated;
}

bool Sharding::HasUnreduced() const {
  if (rep().kind == Kind::kTuple) {
    return std::any_of(rep().tuple_elements.begin(), rep().tuple_elements.end(),
                       [](const Sharding& e) { return e.HasUnreduced(); });
  }
  return rep().kind == Kind::kTiled &&
         std::find(rep().subgroup_types.begin(), rep().subgroup_types.end(), SubgroupType::kUnreduced) !=
             rep().subgroup_types.end();
}

void Sharding::set_partial_reduction(Reduction reduction) {
  if (reduction == rep().partial_reduction) return;
  MutableRep().partial_reduction = reduction;
}

Sharding Sharding::WithoutUnreduced() const {
  if (rep().kind == Kind::kTuple) {
    if (!HasUnreduced()) return *this;
    std::vector<Sharding> elements;
    for (const Sharding& element : rep().tuple_elements) elements.push_back(element.WithoutUnreduced());
    Sharding tuple = Tuple(std::move(elements));
    tuple.set_shard_group(shard_group());
    return tuple;
  }
  if (!HasUnreduced()) return *this;
  std::vector<SubgroupType> types = rep().subgroup_types;
  for (SubgroupType& type : types)
    if (type == SubgroupType::kUnreduced) type = SubgroupType::kReplicated;
  Sharding whole = Tiled(rep().tiles, std::move(types));
  whole.set_shard_group(shard_group());
  return whole;
}

int64_t Sharding::TiledDataRank() const {
  GSPMD_CHECK(rep().kind == Kind::kTiled, "TiledDataRank of a non-tiled sharding");
  return rep().tiles.num_dims() - static_cast<int64_t>(rep().subgroup_types.size());
}

Sharding::ShardRegion Sharding::RegionForDevice(const Shape& shape, int64_t device) const {
  GSPMD_CHECK(rep().kind != Kind::kTuple, "RegionForDevice of a tuple sharding");
  const std::vector<int64_t>& dims = shape.dims();
  ShardRegion region;
  region.offsets.assign(dims.size(), 0);
  region.sizes = dims;
  region.padded_sizes = dims;
  if (rep().kind != Kind::kTiled) return region;
  GSPMD_CHECK(static_cast<int64_t>(dims.size()) == TiledDataRank(), "shape rank ", dims.size(),
              " does not match sharding ", ToString());
  std::optional<std::vector<int64_t>> index = rep().tiles.IndexOf(device);
  GSPMD_CHECK(index.has_value(), "device ", device, " is not in sharding ", ToString());
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t chunk = CeilOfRatio(dims[d], rep().tiles.dim(d));
    const int64_t start = std::min((*index)[d] * chunk, dims[d]);
    region.offsets[d] = start;
    region.sizes[d] = std::clamp<int64_t>(dims[d] - start, 0, chunk);
    region.padded_sizes[d] = chunk;
  }
  return region;
}

std::vector<int64_t> Sharding::ShardDims(const std::vector<int64_t>& dims) const {
  GSPMD_CHECK(rep().kind != Kind::kTuple, "ShardDims of a tuple sharding");
  if (rep().kind != Kind::kTiled) return dims;
  GSPMD_CHECK(static_cast<int64_t>(dims.size()) == TiledDataRank(), "shape rank ", dims.size(),
              " does not match sharding ", ToString());
  std::vector<int64_t> result(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) result[d] = CeilOfRatio(dims[d], rep().tiles.dim(d));
  return result;
}

bool Sharding::DeviceHoldsData(int64_t device) const {
  switch (rep().kind) {
    case Kind::kMaximal:
      return device == rep().maximal_device;
    case Kind::kTiled:
      return rep().tiles.IndexOf(device).has_value();
    case Kind::kTuple:
      return std::any_of(rep().tuple_elements.begin(), rep().tuple_elements.end(),
                         [&](const Sharding& e) { return e.DeviceHoldsData(device); });
    default:
      return true;
  }
}

int64_t Sharding::RequiredDeviceCount() const {
  switch (rep().kind) {
    case Kind::kMaximal:
      return rep().maximal_device + 1;
    case Kind::kTiled:
      return rep().tiles.MaxDevicePlusOne();
    case Kind::kTuple: {
      int64_t n = 0;
      for (const Sharding& e : rep().tuple_elements) n = std::max(n, e.RequiredDeviceCount());
      return n;
    }
    default:
      return 0;
  }
}

bool Sharding::operator==(const Sharding& other) const {
  if (rep_ == other.rep_) return true;
  if (rep().kind != other.rep().kind || rep().shard_group != other.rep().shard_group) return false;
  switch (rep().kind) {
    case Kind::kMaximal:
      return rep().maximal_device == other.rep().maximal_device;
    case Kind::kTiled:
      return rep().subgroup_types == other.rep().subgroup_types && rep().tiles == other.rep().tiles &&
             (!HasUnreduced() || rep().partial_reduction == other.rep().partial_reduction);
    case Kind::kTuple:
      return rep().tuple_elements == other.rep().tuple_elements;
    default:
      return true;
  }
}

std::string Sharding::ToString() const {
  std::ostringstream out;
  if (rep().kind == Kind::kTuple) {
    out << '{';
    for (size_t i = 0; i < rep().tuple_elements.size(); ++i) {
      if (i > 0) out << ", ";
      if (i > 0 && i % 5 == 0) out << "/*index=" << i << "*/";
      out << rep().tuple_elements[i].ToString();
    }
    out << '}';
    return out.str();
  }
  if (rep().named_view.has_value()) {
    out << '{' << rep().named_view->BodyToString();
    if (!rep().metadata.empty()) out << ", metadata=" << rep().metadata;
    out << '}';
    return out.str();
  }
  out << '{';
  switch (rep().kind) {
    case Kind::kReplicated:
      out << "replicated";
      break;
    case Kind::kManual:
      out << "manual";
      break;
    case Kind::kUnknown:
      out << "unknown";
      break;
    case Kind::kMaximal:
      out << "maximal device=" << rep().maximal_device;
      break;
    case Kind::kTiled:
      out << "devices=" << rep().tiles.ToString();
      if (rep().subgroup_types.size() == 1 && ReplicateOnLastTileDim()) {
        out << " last_tile_dim_replicate";
      } else if (!rep().subgroup_types.empty()) {
        out << " last_tile_dims={";
        for (size_t i = 0; i < rep().subgroup_types.size(); ++i) {
          if (i > 0) out << ", ";
          out << SubgroupTypeName(rep().subgroup_types[i], rep().partial_reduction);
        }
        out << '}';
      }
      break;
    case Kind::kTuple:
      break;
  }
  if (rep().shard_group.has_value()) {
    out << (rep().shard_group->shard_as ? " shard_as " : " shard_like ") << rep().shard_group->id;
  }
  if (!rep().metadata.empty()) out << " metadata=" << rep().metadata;
  out << '}';
  return out.str();
}

}  // namespace gspmd
