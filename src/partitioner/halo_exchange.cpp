// Halo exchange: boundary pieces of neighbouring tiles via collective-permute, concatenated
// around the own shard, then sliced to each device's window and masked at the global edges.
#include "partitioner/halo_exchange.h"

#include <algorithm>

#include "partitioner/reshard_plan.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

bool AllEqual(const std::vector<int64_t>& values) {
  return std::adjacent_find(values.begin(), values.end(), std::not_equal_to<>()) == values.end();
}

// Length of the piece taken from the tile `hop` steps away when `total` elements are needed
// from that side and every tile holds `shard_size`.
int64_t HopLength(int64_t total, int64_t shard_size, int64_t hop) {
  return std::min(shard_size, total - (hop - 1) * shard_size);
}

int64_t HopCount(int64_t total, int64_t shard_size) {
  if (total <= 0 || shard_size <= 0) return 0;
  return (total + shard_size - 1) / shard_size;
}

// Pairs sending tile t+delta's piece to every device holding tile t (same other coordinates).
std::vector<SourceTargetPair> NeighbourPairs(const Sharding& sharding, int64_t dim, int64_t delta,
                                             int64_t num_devices) {
  std::vector<SourceTargetPair> pairs;
  if (!sharding.IsTiled()) return pairs;
  const TileAssignment& tiles = sharding.tile_assignment();
  for (int64_t p = 0; p < num_devices; ++p) {
    std::optional<std::vector<int64_t>> index = tiles.IndexOf(p);
    if (!index) continue;
    int64_t source_tile = (*index)[dim] + delta;
    if (source_tile < 0 || source_tile >= tiles.dim(dim)) continue;
    (*index)[dim] = source_tile;
    pairs.push_back({tiles.DeviceAt(*index), p});
  }
  std::sort(pairs.begin(), pairs.end(),
            [](const SourceTargetPair& a, const SourceTargetPair& c) { return a.source < c.source; });
  return pairs;
}

Instruction* SliceAlong(HloBuilder& b, Instruction* operand, int64_t dim, int64_t start, int64_t limit) {
  std::vector<SliceDim> slice;
  for (int64_t d = 0; d < operand->shape().rank(); ++d)
    slice.push_back(d == dim ? SliceDim{start, limit, 1} : SliceDim{0, operand->shape().dim(d), 1});
  if (start == 0 && limit == operand->shape().dim(dim)) return operand;
  return b.Slice(operand, std::move(slice));
}

// The piece of `shard` that `hop` tiles away on one side contributes: the last `length`
// elements of the source's shard for the left side, the first ones for the right side.
Instruction* HopPiece(HloBuilder& b, SpmdContext& context, Instruction* shard, const Sharding& sharding,
                      const HaloPlan& plan, int64_t hop, int64_t length, bool from_left, Instruction* pad_value) {
  int64_t dim = plan.dim;
  std::vector<SourceTargetPair> pairs =
      NeighbourPairs(sharding, dim, from_left ? -hop : hop, context.num_devices());
  if (pairs.empty()) {
    std::vector<int64_t> dims = shard->shape().dims();
    dims[dim] = length;
    return b.BroadcastScalar(pad_value, dims);
  }
  int64_t size = shard->shape().dim(dim);
  Instruction* piece = from_left ? SliceAlong(b, shard, dim, size - length, size) : SliceAlong(b, shard, dim, 0, length);
  return context.collectives().CollectivePermute(b, piece, std::move(pairs));
}

// Sets positions of `window` (device p's starts at plan.starts[p]) outside [0, D) to `pad_value`.
Instruction* MaskOutside(HloBuilder& b, Instruction* window, const HaloPlan& plan, int64_t global_size,
                         Instruction* pad_value) {
  const std::vector<int64_t>& dims = window->shape().dims();
  Instruction* position = b.Iota(Shape(ElementType::kS32, dims), plan.dim);
  if (!AllEqual(plan.starts) || plan.starts.front() != 0) {
    Instruction* start = AllEqual(plan.starts) ? b.S32Constant(plan.starts.front()) : b.TableLookup(plan.starts);
    position = b.Binary(Opcode::kAdd, position, b.BroadcastScalar(start, dims));
  }
  Instruction* zero = b.BroadcastScalar(b.S32Constant(0), dims);
  Instruction* limit = b.BroadcastScalar(b.S32Constant(global_size), dims);
  Instruction* valid = b.Binary(Opcode::kAnd, b.Compare(position, zero, ComparisonDirection::kGe),
                                b.Compare(position, limit, ComparisonDirection::kLt));
  return b.Select(valid, window, b.BroadcastScalar(pad_value, dims));
}

}  // namespace

HaloNeed RealHaloOf(int64_t start, int64_t window, int64_t own_start, int64_t own_end, int64_t global) {
  const int64_t lo = std::max<int64_t>(start, 0);
  const int64_t hi = std::min(start + window, global);
  HaloNeed need;
  if (lo < std::min(hi, own_start)) need.left = own_start - lo;
  if (hi > std::max(lo, own_end)) need.right = hi - own_end;
  return need;
}

double HaloPlan::CostBytes(const std::vector<int64_t>& shard_dims, int64_t element_bytes) const {
  if (tiles <= 1) return 0;
  double other = static_cast<double>(element_bytes);
  for (size_t d = 0; d < shard_dims.size(); ++d)
    if (static_cast<int64_t>(d) != dim) other *= static_cast<double>(shard_dims[d]);
  double elements = 0;
  for (int64_t hop = 1; hop <= HopCount(data_left, shard_size) && hop < tiles; ++hop)
    elements += static_cast<double>(HopLength(data_left, shard_size, hop));
  for (int64_t hop = 1; hop <= HopCount(data_right, shard_size) && hop < tiles; ++hop)
    elements += static_cast<double>(HopLength(data_right, shard_size, hop));
  return elements * other;
}

HaloPlan PlanWindows(const Sharding& sharding, const std::vector<int64_t>& global_dims, int64_t dim,
                     std::vector<int64_t> starts, int64_t window_size, int64_t num_devices) {
  GSPMD_CHECK(static_cast<int64_t>(starts.size()) == num_devices, "one window start per device");
  GSPMD_CHECK(window_size >= 0, "negative window size");
  HaloPlan plan;
  plan.dim = dim;
  plan.window_size = window_size;
  int64_t global = global_dims.at(dim);
  bool tiled = sharding.IsTiled() && dim < sharding.TiledDataRank();
  plan.tiles = tiled ? sharding.tile_assignment().dim(dim) : 1;
  plan.shard_size = ShardSize(global, plan.tiles);
  plan.tile_of_device.assign(num_devices, 0);
  if (tiled) {
    for (int64_t p = 0; p < num_devices; ++p) {
      auto index = sharding.tile_assignment().IndexOf(p);
      if (index) plan.tile_of_device[p] = (*index)[dim];
    }
  }
  for (int64_t p = 0; p < num_devices; ++p) {
    int64_t own_start = plan.tile_of_device[p] * plan.shard_size;
    plan.left = std::max(plan.left, own_start - starts[p]);
    plan.right = std::max(plan.right, starts[p] + window_size - own_start - plan.shard_size);
    if (starts[p] < 0 || starts[p] + window_size > global) plan.needs_mask = true;
    const HaloNeed need = RealHaloOf(starts[p], window_size, own_start, own_start + plan.shard_size, global);
    plan.data_left = std::max(plan.data_left, need.left);
    plan.data_right = std::max(plan.data_right, need.right);
  }
  plan.data_left = std::min(plan.data_left, plan.left);
  plan.data_right = std::min(plan.data_right, plan.right);
  for (int64_t p = 0; p < num_devices; ++p)
    plan.offsets.push_back(starts[p] - (plan.tile_of_device[p] * plan.shard_size - plan.left));
  plan.starts = std::move(starts);
  return plan;
}

Instruction* WindowsAlongDim(HloBuilder& b, SpmdContext& context, Instruction* shard, const Sharding& sharding,
                             const Shape& global_shape, const HaloPlan& plan, Instruction* pad_value) {
  int64_t dim = plan.dim;
  GSPMD_CHECK(shard->shape().dim(dim) == plan.shard_size, "halo exchange on a shard of ", shard->shape().dim(dim),
              " elements; expected ", plan.shard_size);
  // Positions no device reads real data from are filled with the pad value, not sent.
  auto pad_block = [&](int64_t length) {
    std::vector<int64_t> dims = shard->shape().dims();
    dims[dim] = length;
    return b.BroadcastScalar(pad_value, dims);
  };
  std::vector<Instruction*> parts;
  if (plan.left > plan.data_left) parts.push_back(pad_block(plan.left - plan.data_left));
  for (int64_t hop = HopCount(plan.data_left, plan.shard_size); hop >= 1; --hop)
    parts.push_back(HopPiece(b, context, shard, sharding, plan, hop,
                             HopLength(plan.data_left, plan.shard_size, hop), /*from_left=*/true, pad_value));
  parts.push_back(shard);
  for (int64_t hop = 1; hop <= HopCount(plan.data_right, plan.shard_size); ++hop)
    parts.push_back(HopPiece(b, context, shard, sharding, plan, hop,
                             HopLength(plan.data_right, plan.shard_size, hop), /*from_left=*/false, pad_value));
  if (plan.right > plan.data_right) parts.push_back(pad_block(plan.right - plan.data_right));
  Instruction* extended = parts.size() == 1 ? shard : b.Concatenate(parts, dim);

  Instruction* window = nullptr;
  if (AllEqual(plan.offsets)) {
    window = SliceAlong(b, extended, dim, plan.offsets.front(), plan.offsets.front() + plan.window_size);
  } else {
    Instruction* zero = b.S32Constant(0);
    std::vector<Instruction*> starts(extended->shape().rank(), zero);
    starts[dim] = b.TableLookup(plan.offsets);
    std::vector<int64_t> sizes = extended->shape().dims();
    sizes[dim] = plan.window_size;
    window = b.DynamicSlice(extended, starts, sizes);
  }
  if (!plan.needs_mask) return window;
  return MaskOutside(b, window, plan, global_shape.dim(dim), pad_value);
}

Instruction* ExchangeHalo(HloBuilder& b, SpmdContext& context, Instruction* shard, const Sharding& sharding,
                          const Shape& global_shape, int64_t dim, int64_t left, int64_t right,
                          Instruction* pad_value) {
  bool tiled = sharding.IsTiled() && dim < sharding.TiledDataRank();
  int64_t tiles = tiled ? sharding.tile_assignment().dim(dim) : 1;
  int64_t shard_size = ShardSize(global_shape.dim(dim), tiles);
  std::vector<int64_t> starts(context.num_devices(), 0);
  for (int64_t p = 0; p < context.num_devices(); ++p) {
    int64_t tile = 0;
    if (tiled) {
      auto index = sharding.tile_assignment().IndexOf(p);
      if (index) tile = (*index)[dim];
    }
    starts[p] = tile * shard_size - left;
  }
  HaloPlan plan = PlanWindows(sharding, global_shape.dims(), dim, std::move(starts),
                              std::max<int64_t>(shard_size + left + right, 0), context.num_devices());
  return WindowsAlongDim(b, context, shard, sharding, global_shape, plan, pad_value);
}

}  // namespace gspmd
