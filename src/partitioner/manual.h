// Manual (shard_map) regions: values whose sharding is {manual} (or has a manual subgroup)
// are already per-device; these helpers move values into and out of such regions.
#pragma once

#include <optional>

#include "partitioner/op_context.h"

namespace gspmd {

// {manual}, a tiled sharding whose data dims are all untiled with a manual subgroup, or a
// tuple whose leaves all are: the per-device value is the whole (local) value.
bool IsFullyManual(const Sharding& sharding);
// Manual on some devices' axes: {manual} or a tiled sharding with a manual subgroup.
bool HasManualAxes(const Sharding& sharding);

// Does every device's piece of a `global_shape` value under `full` equal its piece of the
// local (manual-region) value of `local_shape` under `local`? That is: same per-device shape,
// the piece's offset within its local block matches, and the devices of one manual group
// hold pieces of one block.
bool ManualPiecesAgree(const Sharding& full, const Shape& global_shape, const Sharding& local,
                       const Shape& local_shape, int64_t num_devices);

// A sharding of the global value that agrees with `local` (see ManualPiecesAgree): each dim's
// manual split (global / local size) taken from the manual axes, major to the local split.
// `preferred` is returned when it agrees already. nullopt when none can be built.
std::optional<Sharding> FullShardingAgreeingWith(SpmdContext& context, const Sharding& local,
                                                 const Shape& local_shape, const Shape& global_shape,
                                                 const Sharding& preferred);

// Enters a manual region: `full` (a partitioned global value) becomes the local value of
// `local_shape` under `local` (the result of SPMDFullToShardShape / GlobalToLocalShape).
// `preferred` is the full sharding to use when it agrees (the operand's or the in_sharding).
// Uneven padding is zeroed, as XLA does. Returns the per-device instruction (a copy).
Instruction* EnterManualRegion(OpContext& op, int64_t operand, const Sharding& preferred,
                               const Sharding& local, const Shape& local_shape);

// Leaves a manual region: `local` (a manual value) becomes a global value of `global_shape`;
// `wanted` is the result's sharding. The returned value's sharding agrees with `local`
// (wanted when it does, otherwise a derived one the driver then reshards to `wanted`).
PartitionedValue LeaveManualRegion(OpContext& op, const PartitionedValue& local, const Shape& global_shape,
                                   const Sharding& wanted);

}  // namespace gspmd
