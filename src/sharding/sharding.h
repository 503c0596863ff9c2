// Sharding: GSPMD's description of how a value is laid out over the devices of a mesh.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sharding/mesh.h"
#include "sharding/tile_assignment.h"

namespace gspmd {

class Shape;

// One sharding, as in XLA's HloSharding:
//   {replicated}                         every device holds the whole value
//   {maximal device=3}                   one device holds it
//   {manual}                             already per-device (inside shard_map)
//   {unknown}                            not decided (a placeholder for propagation)
//   {devices=[2,1,4]<=[8] last_tile_dim_replicate}
//        tiled: tensor dim d is split tile_assignment.dim(d) ways; trailing tile dims beyond
//        the tensor rank are subgroups (replicated, manual or unreduced)
//   {devices=[2,1,4]<=[8] last_tile_dims={unreduced}}
//        a partial sum: the 4 devices of each group hold pieces whose sum is their tile
//        (Shardy's unreduced axes); unreduced_max / _min / _mul / _and / _or for other
//        reductions
//   {{replicated}, {devices=[8]<=[8]}}   one per leaf of a tuple
//   {mesh['data'=2,'model'=4], [{'data'}, {}]}  named-mesh form (printed back the same way)
//
// For a tiled sharding of a rank-k value the tile assignment has rank k + number of subgroup
// dims. The device at tile index (i0,...,ik-1, s...) holds tile i_d of dimension d; uneven
// dims split into ceil(size/n)-element shards, trailing shards padded or empty.
class Sharding {
 public:
  enum class Kind { kReplicated, kMaximal, kManual, kUnknown, kTiled, kTuple };
  enum class SubgroupType { kReplicated, kManual, kUnreduced };
  // How the pieces of an unreduced subgroup combine into the value.
  enum class Reduction : uint8_t { kSum, kMax, kMin, kProduct, kAnd, kOr };

  static Sharding Replicated();
  static Sharding Manual();
  static Sharding Unknown();
  static Sharding Maximal(int64_t device);
  // Tiled; subgroup_types describes the trailing tile dims (may be empty).
  static Sharding Tiled(TileAssignment tiles, std::vector<SubgroupType> subgroup_types = {});
  // Tiled with the last tile dim replicated (XLA's last_tile_dim_replicate).
  static Sharding PartiallyReplicated(TileAssignment tiles);
  static Sharding Tuple(std::vector<Sharding> elements);
  // The sharding a named-mesh view describes (kind, tiles, subgroups), with the view kept
  // for printing. The view must be valid (axes known, sub-axes dividing, no overlap).
  static Sharding FromNamedView(NamedShardingView view);

  Kind kind() const { return rep_ ? rep_->kind : Kind::kReplicated; }
  bool IsReplicated() const { return kind() == Kind::kReplicated; }
  bool IsManual() const { return kind() == Kind::kManual; }
  bool IsMaximal() const { return kind() == Kind::kMaximal; }
  bool IsUnknown() const { return kind() == Kind::kUnknown; }
  bool IsTiled() const { return kind() == Kind::kTiled; }
  bool IsTuple() const { return kind() == Kind::kTuple; }

  const TileAssignment& tile_assignment() const { return rep().tiles; }
  const std::vector<SubgroupType>& subgroup_types() const { return rep().subgroup_types; }
  // True when the last tile dim is a replicated subgroup (printed last_tile_dim_replicate
  // when it is the only subgroup).
  bool ReplicateOnLastTileDim() const;
  // Number of tile dims that split the value (tile rank minus subgroup dims).
  int64_t TiledDataRank() const;
  // True for a tiled sharding with an unreduced (partial-sum) subgroup, or a tuple with one.
  bool HasUnreduced() const;
  // The reduction of the unreduced subgroup (kSum when there is none).
  Reduction partial_reduction() const { return rep().partial_reduction; }
  void set_partial_reduction(Reduction reduction);
  // The layout of the reduced value: the unreduced subgroup becomes replicated (tuples leaf by
  // leaf; other shardings unchanged).
  Sharding WithoutUnreduced() const;
  int64_t maximal_device() const { return rep().maximal_device; }
  const std::vector<Sharding>& tuple_elements() const { return rep().tuple_elements; }
  std::vector<Sharding>& mutable_tuple_elements() { return MutableRep().tuple_elements; }

  // shard_as / shard_like groups: {devices=... shard_as 1}.
  struct ShardGroup {
    int64_t id = 0;
    bool shard_as = true;  // false: shard_like
    bool operator==(const ShardGroup&) const = default;
  };
  const std::optional<ShardGroup>& shard_group() const { return rep().shard_group; }
  void set_shard_group(std::optional<ShardGroup> group);

  // Set when the sharding was written in named-mesh form; printing then uses that form.
  const std::optional<NamedShardingView>& named_view() const { return rep().named_view; }
  void set_named_view(std::optional<NamedShardingView> view);

  // Metadata written inside the sharding ("{replicated metadata={op_name=\"x\"}}"), kept
  // verbatim as the braced text after "metadata="; empty when absent. Ignored by ==.
  const std::string& metadata() const { return rep().metadata; }
  void set_metadata(std::string metadata);

  // What device `device` holds of a value of `shape` (an array shape): per dimension the
  // start offset and the number of valid (unpadded) elements. Replicated/manual: the whole.
  struct ShardRegion {
    std::vector<int64_t> offsets;
    std::vector<int64_t> sizes;        // valid elements (may be 0 for empty trailing shards)
    std::vector<int64_t> padded_sizes; // ceil(dim / tiles): the per-device buffer shape
  };
  ShardRegion RegionForDevice(const Shape& shape, int64_t device) const;
  // The per-device (padded) shape of a value of `shape`.
  std::vector<int64_t> ShardDims(const std::vector<int64_t>& dims) const;
  // Does `device` hold part of the value (false only for maximal on another device)?
  bool DeviceHoldsData(int64_t device) const;
  // Highest device id used + 1 (0 for replicated/manual/unknown).
  int64_t RequiredDeviceCount() const;

  bool operator==(const Sharding& other) const;  // semantic (named view ignored)

  // Canonical XLA text, with the braces: "{devices=[2,1,4]<=[8] last_tile_dim_replicate}".
  std::string ToString() const;

  // The address of the shared representation (nullptr for a default {replicated}): equal for
  // copies of one Sharding, so caches of derived facts can key on it while they hold a copy.
  const void* identity() const { return rep_.get(); }

 private:
  // Everything a sharding says, immutable once shared: copying a Sharding copies one pointer,
  // and the setters copy the representation first when another Sharding shares it.
  struct Rep {
    Kind kind = Kind::kReplicated;
    TileAssignment tiles;
    std::vector<SubgroupType> subgroup_types;
    int64_t maximal_device = -1;
    Reduction partial_reduction = Reduction::kSum;
    std::vector<Sharding> tuple_elements;
    std::optional<ShardGroup> shard_group;
    std::optional<NamedShardingView> named_view;
    std::string metadata;
  };
  static const Rep& DefaultRep();
  const Rep& rep() const { return rep_ ? *rep_ : DefaultRep(); }
  Rep& MutableRep();  // this sharding's own copy, made on first write

  std::shared_ptr<const Rep> rep_;  // nullptr: plain {replicated}
};

}  // namespace gspmd
