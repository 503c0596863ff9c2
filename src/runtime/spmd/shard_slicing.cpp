// Moving between a global array and its per-device shards: ShardOfGlobal and AssembleGlobal.
#include <cstring>
#include <set>

#include "runtime/spmd/spmd_executor.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// Copies the box of `sizes` elements at src_offsets in src (dims src_dims) to dst_offsets in
// dst (dims dst_dims). Trailing dims that the box, src and dst all span fully are merged into
// one contiguous run per memcpy.
void CopyBox(const uint8_t* src, const std::vector<int64_t>& src_dims,
             const std::vector<int64_t>& src_offsets, uint8_t* dst,
             const std::vector<int64_t>& dst_dims, const std::vector<int64_t>& dst_offsets,
             const std::vector<int64_t>& sizes, int64_t element_size) {
  const size_t rank = sizes.size();
  for (int64_t size : sizes)
    if (size <= 0) return;
  const std::vector<int64_t> src_strides = RowMajorStrides(src_dims);
  const std::vector<int64_t> dst_strides = RowMajorStrides(dst_dims);
  int64_t src_base = 0, dst_base = 0;
  for (size_t k = 0; k < rank; ++k) {
    src_base += src_offsets[k] * src_strides[k];
    dst_base += dst_offsets[k] * dst_strides[k];
  }
  // Dims [outer_rank, rank) form one contiguous run of `run` elements in both buffers.
  size_t outer_rank = rank;
  int64_t run = 1;
  while (outer_rank > 0) {
    const size_t k = outer_rank - 1;
    run *= sizes[k];
    --outer_rank;
    if (sizes[k] != src_dims[k] || sizes[k] != dst_dims[k]) break;
  }
  const size_t run_bytes = static_cast<size_t>(run * element_size);
  std::vector<int64_t> index(outer_rank, 0);
  while (true) {
    int64_t src_offset = src_base, dst_offset = dst_base;
    for (size_t k = 0; k < outer_rank; ++k) {
      src_offset += index[k] * src_strides[k];
      dst_offset += index[k] * dst_strides[k];
    }
    std::memcpy(dst + dst_offset * element_size, src + src_offset * element_size, run_bytes);
    size_t k = outer_rank;
    while (k > 0) {
      --k;
      if (++index[k] < sizes[k]) break;
      index[k] = 0;
      if (k == 0) return;
    }
    if (outer_rank == 0) return;
  }
}

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
