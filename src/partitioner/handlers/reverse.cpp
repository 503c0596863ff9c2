// Reverse: a local reverse, then, along each sharded reversed dim, the pieces move to the
// devices that hold those positions of the result (a collective-permute from tile T-1-i, plus a
// shift when uneven padding must end up at the end again). When the operand is already laid
// out in the mirrored device order, the local reverse alone is the answer.
#include <algorithm>

#include "partitioner/handlers/window_exchange.h"
#include "partitioner/reshard_plan.h"

namespace gspmd::shape_ops {
namespace {

// `sharding` with its tile order mirrored along `dims` (tile i <-> tile T-1-i).
Sharding Mirror(const Sharding& sharding, const std::vector<int64_t>& dims) {
  const TileAssignment& tiles = sharding.tile_assignment();
  std::vector<int64_t> devices(tiles.num_elements());
  std::vector<int64_t> index(tiles.num_dims(), 0);
  for (int64_t linear = 0; linear < tiles.num_elements(); ++linear) {
    std::vector<int64_t> source = index;
    for (int64_t d : dims) source[d] = tiles.dim(d) - 1 - index[d];
    devices[linear] = tiles.DeviceAt(source);
    for (int64_t j = tiles.num_dims() - 1; j >= 0; --j) {
      if (++index[j] < tiles.dim(j)) break;
      index[j] = 0;
    }
  }
  return Sharding::Tiled(TileAssignment(tiles.dims(), std::move(devices)), sharding.subgroup_types());
}

// After a local reverse, member t (target tile t) holds operand tile u(t): its element k is
// result position D - (u+1)*shard + k.
SourceSegment ReversedSegment(int64_t size, int64_t tiles, bool mirrored) {
  SourceSegment segment;
  int64_t shard = ShardSize(size, tiles);
  segment.length = shard;
  for (int64_t t = 0; t < tiles; ++t) {
    int64_t u = mirrored ? tiles - 1 - t : t;
    segment.global_start.push_back(size - (u + 1) * shard);
    bool empty = u * shard >= size;
    segment.real_begin.push_back(empty ? 0 : size - std::min((u + 1) * shard, size));
    segment.real_end.push_back(empty ? 0 : size - u * shard);
  }
  return segment;
}

WindowExchange ReverseExchange(const Sharding& target, int64_t dim, int64_t size, bool mirrored,
                               int64_t num_devices) {
  WindowExchange x;
  x.dim = dim;
  x.lines = LinesAlongDim(target, dim, num_devices);
  int64_t tiles = x.lines.tiles;
  int64_t shard = ShardSize(size, tiles);
  x.segments.push_back(ReversedSegment(size, tiles, mirrored));
  x.window_length = shard;
  for (int64_t t = 0; t < tiles; ++t) {
    x.window_start.push_back(t * shard);
    x.needed_begin.push_back(std::min(t * shard, size));
    x.needed_end.push_back(std::min((t + 1) * shard, size));
  }
  return x;
}

}  // namespace

bool PartitionReverse(OpContext& op) {
  const Instruction& instruction = op.instruction();
  Sharding target = op.sharding();
  if (target.IsMaximal() || target.IsUnknown()) target = Sharding::Replicated();
  const Shape& shape = instruction.shape();
  std::vector<int64_t> sharded;
  for (int64_t d : instruction.dimensions)
    if (TileCountOf(target, d) > 1) sharded.push_back(d);
  if (sharded.empty()) {
    Instruction* operand = op.OperandWith(0, target);
    op.SetResult(op.Clone(ShardShapeOf(target, shape), {operand}), target);
    return true;
  }
  // Two layouts to reverse in: the target's own (pieces then move to the mirrored tile) or the
  // mirrored one (pieces are in place, up to the shift of uneven padding).
  Sharding mirrored = Mirror(target, sharded);
  const Sharding& current = op.Operand(0).sharding;
  auto exchange_bytes = [&](bool mirror) {
    double bytes = 0;
    for (int64_t d : sharded) {
      WindowExchange x = ReverseExchange(target, d, shape.dim(d), mirror, op.spmd().num_devices());
      bytes += static_cast<double>(ExchangeElementsSent(x)) * SlabBytes(target, shape, d);
    }
    return bytes;
  };
  std::optional<double> direct = ReshardCost(op.spmd(), shape, current, target);
  std::optional<double> via_mirror = ReshardCost(op.spmd(), shape, current, mirrored);
  double direct_cost = direct ? *direct + exchange_bytes(false) : 1e300;
  double mirror_cost = via_mirror ? *via_mirror + exchange_bytes(true) : 1e300;
  bool use_mirror = mirror_cost < direct_cost;

  HloBuilder& b = op.builder();
  Instruction* operand = op.OperandWith(0, use_mirror ? mirrored : target);
  Instruction* value = op.Clone(operand->shape(), {operand});
  for (int64_t d : sharded) {
    WindowExchange x = ReverseExchange(target, d, shape.dim(d), use_mirror, op.spmd().num_devices());
    value = ExchangeWindows(op.spmd(), b, value, x);
  }
  op.SetResult(value, target);
  return true;
}

}  // namespace gspmd::shape_ops
