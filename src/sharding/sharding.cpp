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

const char* SubgroupTypeName(Sharding::SubgroupType type) {
  return type == Sharding::SubgroupType::kManual ? "manual" : "replicated";
}

bool AllSameType(const std::vector<Sharding::SubgroupType>& types) {
  return std::all_of(types.begin(), types.end(),
                     [&](Sharding::SubgroupType t) { return t == types.front(); });
}

}  // namespace

Sharding Sharding::Replicated() { return Sharding(); }

Sharding Sharding::Manual() {
  Sharding s;
  s.kind_ = Kind::kManual;
  return s;
}

Sharding Sharding::Unknown() {
  Sharding s;
  s.kind_ = Kind::kUnknown;
  return s;
}

Sharding Sharding::Maximal(int64_t device) {
  GSPMD_CHECK(device >= 0, "maximal sharding on negative device ", device);
  Sharding s;
  s.kind_ = Kind::kMaximal;
  s.maximal_device_ = device;
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
  s.kind_ = Kind::kTiled;
  s.tiles_ = tiles.SortedAlongLastDim();
  s.subgroup_types_ = {SubgroupType::kReplicated};
  return s;
}

Sharding Sharding::Tiled(TileAssignment tiles, std::vector<SubgroupType> subgroup_types) {
  const int64_t rank = tiles.num_dims();
  const int64_t num_subgroups = static_cast<int64_t>(subgroup_types.size());
  GSPMD_CHECK(num_subgroups <= rank, "more subgroup dims than tile dims");
  const int64_t data_rank = rank - num_subgroups;
  if (subgroup_types.empty()) {
    Sharding s;
    s.kind_ = Kind::kTiled;
    s.tiles_ = std::move(tiles);
    return s;
  }
  const bool no_data_tiling = Product(tiles.dims(), 0, data_rank) == 1;
  if (AllSameType(subgroup_types) && no_data_tiling) {
    return subgroup_types.front() == SubgroupType::kManual ? Manual() : Replicated();
  }
  // Normalize: drop size-1 subgroup dims, merge dims of one type, manual before replicated.
  std::vector<int64_t> perm(data_rank);
  for (int64_t d = 0; d < data_rank; ++d) perm[d] = d;
  std::vector<int64_t> manual_dims, replicated_dims, removed_dims;
  for (int64_t i = 0; i < num_subgroups; ++i) {
    const int64_t dim = data_rank + i;
    if (tiles.dim(dim) == 1) {
      removed_dims.push_back(dim);
    } else if (subgroup_types[i] == SubgroupType::kManual) {
      manual_dims.push_back(dim);
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
  s.kind_ = Kind::kTiled;
  s.tiles_ = merged_types.back() == SubgroupType::kReplicated ? merged.SortedAlongLastDim()
                                                              : std::move(merged);
  s.subgroup_types_ = std::move(merged_types);
  return s;
}

Sharding Sharding::Tuple(std::vector<Sharding> elements) {
  Sharding s;
  s.kind_ = Kind::kTuple;
  s.tuple_elements_ = std::move(elements);
  return s;
}

bool Sharding::ReplicateOnLastTileDim() const {
  return kind_ == Kind::kTiled && !subgroup_types_.empty() &&
         subgroup_types_.back() == SubgroupType::kReplicated;
}

int64_t Sharding::TiledDataRank() const {
  GSPMD_CHECK(kind_ == Kind::kTiled, "TiledDataRank of a non-tiled sharding");
  return tiles_.num_dims() - static_cast<int64_t>(subgroup_types_.size());
}

Sharding::ShardRegion Sharding::RegionForDevice(const Shape& shape, int64_t device) const {
  GSPMD_CHECK(kind_ != Kind::kTuple, "RegionForDevice of a tuple sharding");
  const std::vector<int64_t>& dims = shape.dims();
  ShardRegion region;
  region.offsets.assign(dims.size(), 0);
  region.sizes = dims;
  region.padded_sizes = dims;
  if (kind_ != Kind::kTiled) return region;
  GSPMD_CHECK(static_cast<int64_t>(dims.size()) == TiledDataRank(), "shape rank ", dims.size(),
              " does not match sharding ", ToString());
  std::optional<std::vector<int64_t>> index = tiles_.IndexOf(device);
  GSPMD_CHECK(index.has_value(), "device ", device, " is not in sharding ", ToString());
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t chunk = CeilOfRatio(dims[d], tiles_.dim(d));
    const int64_t start = std::min((*index)[d] * chunk, dims[d]);
    region.offsets[d] = start;
    region.sizes[d] = std::clamp<int64_t>(dims[d] - start, 0, chunk);
    region.padded_sizes[d] = chunk;
  }
  return region;
}

std::vector<int64_t> Sharding::ShardDims(const std::vector<int64_t>& dims) const {
  GSPMD_CHECK(kind_ != Kind::kTuple, "ShardDims of a tuple sharding");
  if (kind_ != Kind::kTiled) return dims;
  GSPMD_CHECK(static_cast<int64_t>(dims.size()) == TiledDataRank(), "shape rank ", dims.size(),
              " does not match sharding ", ToString());
  std::vector<int64_t> result(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) result[d] = CeilOfRatio(dims[d], tiles_.dim(d));
  return result;
}

bool Sharding::DeviceHoldsData(int64_t device) const {
  switch (kind_) {
    case Kind::kMaximal:
      return device == maximal_device_;
    case Kind::kTiled:
      return tiles_.IndexOf(device).has_value();
    case Kind::kTuple:
      return std::any_of(tuple_elements_.begin(), tuple_elements_.end(),
                         [&](const Sharding& e) { return e.DeviceHoldsData(device); });
    default:
      return true;
  }
}

int64_t Sharding::RequiredDeviceCount() const {
  switch (kind_) {
    case Kind::kMaximal:
      return maximal_device_ + 1;
    case Kind::kTiled:
      return tiles_.MaxDevicePlusOne();
    case Kind::kTuple: {
      int64_t n = 0;
      for (const Sharding& e : tuple_elements_) n = std::max(n, e.RequiredDeviceCount());
      return n;
    }
    default:
      return 0;
  }
}

bool Sharding::operator==(const Sharding& other) const {
  if (kind_ != other.kind_ || shard_group_ != other.shard_group_) return false;
  switch (kind_) {
    case Kind::kMaximal:
      return maximal_device_ == other.maximal_device_;
    case Kind::kTiled:
      return subgroup_types_ == other.subgroup_types_ && tiles_ == other.tiles_;
    case Kind::kTuple:
      return tuple_elements_ == other.tuple_elements_;
    default:
      return true;
  }
}

std::string Sharding::ToString() const {
  std::ostringstream out;
  if (kind_ == Kind::kTuple) {
    out << '{';
    for (size_t i = 0; i < tuple_elements_.size(); ++i) {
      if (i > 0) out << ", ";
      if (i > 0 && i % 5 == 0) out << "/*index=" << i << "*/";
      out << tuple_elements_[i].ToString();
    }
    out << '}';
    return out.str();
  }
  if (named_view_.has_value()) {
    out << '{' << named_view_->BodyToString();
    if (!metadata_.empty()) out << ", metadata=" << metadata_;
    out << '}';
    return out.str();
  }
  out << '{';
  switch (kind_) {
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
      out << "maximal device=" << maximal_device_;
      break;
    case Kind::kTiled:
      out << "devices=" << tiles_.ToString();
      if (subgroup_types_.size() == 1 && ReplicateOnLastTileDim()) {
        out << " last_tile_dim_replicate";
      } else if (!subgroup_types_.empty()) {
        out << " last_tile_dims={";
        for (size_t i = 0; i < subgroup_types_.size(); ++i) {
          if (i > 0) out << ", ";
          out << SubgroupTypeName(subgroup_types_[i]);
        }
        out << '}';
      }
      break;
    case Kind::kTuple:
      break;
  }
  if (shard_group_.has_value()) {
    out << (shard_group_->shard_as ? " shard_as " : " shard_like ") << shard_group_->id;
  }
  if (!metadata_.empty()) out << " metadata=" << metadata_;
  out << '}';
  return out.str();
}

}  // namespace gspmd
