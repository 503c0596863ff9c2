// Moving between a global array and its per-device shards: ShardOfGlobal and AssembleGlobal.
#include <cstring>
#include <set>

#include "io/box.h"
#include "runtime/spmd/spmd_executor.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

bool HoldsWholeValue(const Sharding& sharding) {
  return sharding.IsReplicated() || sharding.IsManual() || sharding.IsMaximal() ||
         sharding.IsUnknown();
}

}  // namespace

Literal ShardOfGlobal(const Literal& global, const Sharding& sharding, int64_t device) {
  GSPMD_CHECK(!global.shape().IsTuple(), "ShardOfGlobal takes an array");
  if (HoldsWholeValue(sharding)) return global;
  const Sharding::ShardRegion region = sharding.RegionForDevice(global.shape(), device);
  Literal shard(Shape(global.element_type(), region.padded_sizes));
  const std::vector<int64_t> zeros(region.offsets.size(), 0);
  CopyBox(global.raw(), global.shape().dims(), region.offsets, shard.raw(), region.padded_sizes,
          zeros, region.sizes, ElementByteSize(global.element_type()));
  return shard;
}

Literal AssembleGlobal(std::span<const Literal* const> shards, const Sharding& sharding,
                       const Shape& global_shape) {
  GSPMD_CHECK(!shards.empty(), "AssembleGlobal without shards");
  if (sharding.IsMaximal()) return *shards[static_cast<size_t>(sharding.maximal_device())];
  if (HoldsWholeValue(sharding)) return *shards[0];
  Literal global(global_shape);
  std::set<std::vector<int64_t>> filled;  // tiles already copied, by their offsets
  const int64_t element_size = ElementByteSize(global_shape.element_type());
  const std::vector<int64_t> zeros(static_cast<size_t>(global_shape.rank()), 0);
  for (size_t device = 0; device < shards.size(); ++device) {
    const Sharding::ShardRegion region =
        sharding.RegionForDevice(global_shape, static_cast<int64_t>(device));
    if (!filled.insert(region.offsets).second) continue;
    const Literal& shard = *shards[device];
    GSPMD_CHECK(shard.shape().dims() == region.padded_sizes, "shard of device ", device, " is ",
                shard.shape().ToString(false));
    CopyBox(shard.raw(), shard.shape().dims(), zeros, global.raw(), global_shape.dims(),
            region.offsets, region.sizes, element_size);
  }
  return global;
}

}  // namespace gspmd
