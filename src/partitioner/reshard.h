// Resharding: turning a partitioned value into the same value under another sharding, with the
// cheapest collectives (see reshard_plan.h), or, as a last resort, via full replication.
#pragma once

#include <vector>

#include "partitioner/spmd_context.h"

namespace gspmd {

// Returns `value` resharded to `target`. Tuples reshard element-wise. Maximal shardings are
// treated as replicated (every device computes the value). When no plan over device axes
// exists, a collective-permute handles pure device reorders; anything else replicates and
// re-slices, with a warning "involuntary full rematerialization of %name: {...} -> {...}".
PartitionedValue Reshard(SpmdContext& context, HloBuilder& builder, const PartitionedValue& value,
                         const Sharding& target);

// `local` holds, on every device, a partial result: the true value is the reduction (add, max,
// ...) of the pieces over the devices of `partial_axes`. `sharding` is the layout of the
// pieces (partial axes appear in it as replicated axes). Reduces them with all-reduce or,
// when `target` splits a dim over those axes, reduce-scatter, and reshards to `target`.
PartitionedValue ResolvePartialSums(SpmdContext& context, HloBuilder& builder, Instruction* local,
                                    const Shape& global_shape, const Sharding& sharding,
                                    const std::vector<DeviceAxis>& partial_axes, Opcode reduction,
                                    const Sharding& target);

// A per-device s32 offset into dim `dim` of a value of `global_dims` under `sharding`:
// tile_index(dim) * shard_size, from a constant table indexed by partition-id.
Instruction* ShardOffset(HloBuilder& builder, SpmdContext& context, const Sharding& sharding,
                         const std::vector<int64_t>& global_dims, int64_t dim);

// Sets the padding of uneven shards (positions at or past the global size along some dim) to
// `pad_value`, so that reductions, contractions and windows do not see it.
Instruction* MaskPadding(HloBuilder& builder, SpmdContext& context, Instruction* shard,
                         const Shape& global_shape, const Sharding& sharding, Instruction* pad_value);

// True when some dim of `global_dims` does not divide evenly under `sharding`.
bool HasUnevenPadding(const Sharding& sharding, const std::vector<int64_t>& global_dims);

}  // namespace gspmd
