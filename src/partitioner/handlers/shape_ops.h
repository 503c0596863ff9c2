// Internal declarations shared by the shape-op handlers (broadcast, reshape, transpose,
// reverse, slice, pad, concatenate, dynamic-slice, dynamic-update-slice, iota).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "partitioner/op_context.h"

namespace gspmd::shape_ops {

// Family handlers (each returns false for configurations it leaves to the fallback).
bool PartitionBroadcast(OpContext& op);
bool PartitionIota(OpContext& op);
// `local`, an iota along `dim` of a shard of `global` laid out as `sharding`, shifted by the
// shard's offset along that dim where it is split: that shard's piece of the global iota.
Instruction* IotaPiece(HloBuilder& b, SpmdContext& context, Instruction* local, const Sharding& sharding,
                       const Shape& global, int64_t dim);
bool PartitionTranspose(OpContext& op);
bool PartitionReverse(OpContext& op);
// `fresh_operand`: the operand is resharded from its own value, not from a form cached for
// another user (ComputationPartitioner::ReshapeIn replaces a route whose moves then go dead).
bool PartitionReshape(OpContext& op, bool fresh_operand = false);
// Bytes per device of reshaping an operand laid out as `current` into a result laid out as
// `target` (tiled) the way PartitionReshape would; nullopt when it has no plan.
std::optional<double> ReshapeCost(SpmdContext& context, const Shape& operand_shape, const Shape& result_shape,
                                  const Sharding& current, const Sharding& target);
bool PartitionSlice(OpContext& op);
bool PartitionPad(OpContext& op);
bool PartitionConcatenate(OpContext& op);
bool PartitionDynamicSlice(OpContext& op);
bool PartitionDynamicUpdateSlice(OpContext& op);

// Slices sharded dim `dim` (global size `size`, laid out as `layout`, tiles > 1) of the
// per-device `value` with a window exchange; the result piece is laid out as `layout`.
Instruction* SliceShardedDim(OpContext& op, Instruction* value, const Sharding& layout, int64_t dim,
                             int64_t size, const gspmd::SliceDim& slice);

// The sharding of a value whose dim i holds dim source_dim_of[i] of a value sharded as
// `sharding` (-1: a dim that is not split). Tiles of dims of `sharding` that no dim maps to
// become replicated; manual subgroups are kept. Non-tiled shardings are returned as they are.
//   broadcast operand:  source_dim_of = broadcast dimensions
//   transpose operand:  source_dim_of[perm[j]] = j
//   replicate dims:     identity with -1 at the dims to replicate
Sharding RemapSharding(const Sharding& sharding, const std::vector<int64_t>& source_dim_of);

// `sharding` with the tiles of `dims` moved into replication.
Sharding ReplicateDims(const Sharding& sharding, int64_t rank, const std::vector<int64_t>& dims);
// The sharding a shape op builds its result in: its own, or replicated for a maximal or unknown one.
Sharding LocalTarget(const Sharding& sharding);

// Tile count of dim `dim` (1 for non-tiled shardings).
int64_t TileCountOf(const Sharding& sharding, int64_t dim);

// The per-device s32 scalar table[partition-id], or a constant when all entries are equal.
Instruction* LookupOrConstant(HloBuilder& b, const std::vector<int64_t>& table);

// Slices `size` elements of dim `dim` starting at the per-device `starts` (static slice when
// they are all equal), keeping the other dims whole.
Instruction* SliceAlongDim(HloBuilder& b, Instruction* operand, int64_t dim, const std::vector<int64_t>& starts,
                      int64_t size);

// Estimated bytes per device of resharding a value of `shape` from `from` to `to` (0 when
// equal; nullopt when the planner cannot express it).
std::optional<double> ReshardCost(SpmdContext& context, const Shape& shape, const Sharding& from,
                                  const Sharding& to);

// Bytes of one per-device slab of dim `dim` (the piece with dim `dim` of length 1).
double SlabBytes(const Sharding& sharding, const Shape& shape, int64_t dim);

// Where each device sits along tile dim `dim` of `sharding`: the lines of devices that differ
// only in their tile along `dim` (each ordered by tile index), and each device's tile index.
struct DimLines {
  std::vector<std::vector<int64_t>> lines;  // lines[l][tile] = device
  std::vector<int64_t> tile_of_device;
  int64_t tiles = 1;
};
DimLines LinesAlongDim(const Sharding& sharding, int64_t dim, int64_t num_devices);

// Groups of devices that hold the same tiles of every dim except `dims` (for a collective
// over those dims), each ordered by device id, groups ordered by their first device.
std::vector<std::vector<int64_t>> GroupsAcrossDims(const Sharding& sharding, const std::vector<int64_t>& dims);

}  // namespace gspmd::shape_ops
