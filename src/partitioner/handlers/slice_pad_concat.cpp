// Slice, pad and concatenate: local work along unsharded dims; along sharded dims each device
// collects the window of positions its result piece covers from its neighbours (window
// exchange: collective-permutes of boundary rows), then pad masks positions outside the data.
#include <algorithm>

#include "partitioner/handlers/window_exchange.h"
#include "partitioner/manual.h"
#include "partitioner/reshard.h"
#include "partitioner/reshard_plan.h"

namespace gspmd::shape_ops {
namespace {

// The result piece of tile t covers positions [t*piece, min((t+1)*piece, size)).
void SetBlockWindows(WindowExchange& x, int64_t result_size, int64_t piece) {
  for (int64_t t = 0; t < x.lines.tiles; ++t) {
    x.window_start.push_back(t * piece);
    x.needed_begin.push_back(std::min(t * piece, result_size));
    x.needed_end.push_back(std::min((t + 1) * piece, result_size));
  }
  x.window_length = piece;
}

// The layout to slice in: the operand's own (the smaller result is resharded afterwards) or the
// result's (the operand is resharded first), whichever moves fewer bytes.
Sharding SliceLayout(OpContext& op, const Sharding& target) {
  const Sharding& current = op.Operand(0).sharding;
  if (current == target || !current.IsTiled()) return target;
  const Shape& operand_shape = op.instruction().operand(0)->shape();
  std::optional<double> before = ReshardCost(op.spmd(), operand_shape, current, target);
  std::optional<double> after = ReshardCost(op.spmd(), op.instruction().shape(), current, target);
  if (after && (!before || *after < *before)) return current;
  return target;
}

bool IsFullSlice(const gspmd::SliceDim& slice, int64_t size) {
  return slice.start == 0 && slice.limit == size && slice.stride == 1;
}

// Position of every element of the local piece along `dim`: iota + the tile's offset.
Instruction* GlobalPositions(OpContext& op, const Sharding& layout, const Shape& global, int64_t dim,
                             const std::vector<int64_t>& local_dims) {
  HloBuilder& b = op.builder();
  Instruction* iota = b.Iota(Shape(ElementType::kS32, local_dims), dim);
  if (TileCountOf(layout, dim) == 1) return iota;
  Instruction* offset = ShardOffset(b, op.spmd(), layout, global.dims(), dim);
  return b.Binary(Opcode::kAdd, iota, b.BroadcastScalar(offset, local_dims));
}

// Pads the sharded dim `dim`: the window of the padded result, then the pad value wherever
// the position is not an operand element.
Instruction* PadShardedDim(OpContext& op, Instruction* value, const Sharding& layout, int64_t dim,
                           int64_t size, const PaddingDim& padding, Instruction* pad_value,
                           const Shape& result_shape) {
  HloBuilder& b = op.builder();
  int64_t step = padding.interior + 1;
  if (padding.interior > 0) {
    PaddingConfig interior(value->shape().rank());
    interior[dim] = {0, 0, padding.interior};
    value = b.Pad(value, pad_value, interior);
  }
  WindowExchange x;
  x.dim = dim;
  x.lines = LinesAlongDim(layout, dim, op.spmd().num_devices());
  int64_t tiles = x.lines.tiles;
  int64_t shard = ShardSize(size, tiles);
  SourceSegment segment;
  segment.length = value->shape().dim(dim);
  for (int64_t j = 0; j < tiles; ++j) {
    int64_t count = std::clamp<int64_t>(size - j * shard, 0, shard);
    int64_t start = padding.low + j * shard * step;
    segment.global_start.push_back(start);
    segment.real_begin.push_back(start);
    segment.real_end.push_back(count > 0 ? start + (count - 1) * step + 1 : start);
  }
  x.segments.push_back(segment);
  int64_t result_size = result_shape.dim(dim);
  int64_t data_begin = std::max<int64_t>(padding.low, 0);
  int64_t data_end = size > 0 ? std::min(result_size, padding.low + (size - 1) * step + 1) : 0;
  SetBlockWindows(x, result_size, ShardSize(result_size, tiles));
  for (int64_t t = 0; t < tiles; ++t) {
    x.needed_begin[t] = std::clamp(x.needed_begin[t], data_begin, std::max(data_begin, data_end));
    x.needed_end[t] = std::clamp(x.needed_end[t], x.needed_begin[t], std::max(x.needed_begin[t], data_end));
  }
  Instruction* window = ExchangeWindows(op.spmd(), b, value, x);
  const std::vector<int64_t>& dims = window->shape().dims();
  Instruction* position = GlobalPositions(op, layout, result_shape, dim, dims);
  auto bound = [&](int64_t v) { return b.BroadcastScalar(b.S32Constant(v), dims); };
  Instruction* valid = b.Compare(position, bound(data_begin), ComparisonDirection::kGe);
  valid = b.Binary(Opcode::kAnd, valid, b.Compare(position, bound(data_end), ComparisonDirection::kLt));
  if (padding.interior > 0) {
    Instruction* relative = b.Binary(Opcode::kSubtract, position, bound(padding.low));
    Instruction* phase = b.Binary(Opcode::kRemainder, relative, bound(step));
    valid = b.Binary(Opcode::kAnd, valid, b.Compare(phase, bound(0), ComparisonDirection::kEq));
  }
  return b.Select(valid, window, b.BroadcastScalar(pad_value, dims));
}

}  // namespace

namespace {

// The window exchange that slices the sharded dim `dim` (global size `size`, laid out as
// `layout`): tile t's window starts at its first result position's source.
WindowExchange SliceExchange(OpContext& op, const Sharding& layout, int64_t dim, int64_t size,
                             const gspmd::SliceDim& slice) {
  WindowExchange x;
  x.dim = dim;
  x.lines = LinesAlongDim(layout, dim, op.spmd().num_devices());
  int64_t tiles = x.lines.tiles;
  x.segments.push_back(BlockSegment(size, tiles, 0));
  int64_t result_size = (slice.limit - slice.start + slice.stride - 1) / slice.stride;
  int64_t piece = ShardSize(result_size, tiles);
  x.window_length = piece > 0 ? slice.stride * (piece - 1) + 1 : 0;  // an empty result reads nothing
  for (int64_t t = 0; t < tiles; ++t) {
    int64_t start = slice.start + slice.stride * t * piece;
    int64_t count = std::clamp<int64_t>(result_size - t * piece, 0, piece);
    x.window_start.push_back(start);
    x.needed_begin.push_back(start);
    x.needed_end.push_back(count > 0 ? start + slice.stride * (count - 1) + 1 : start);
  }
  return x;
}

int64_t SlicedSize(const gspmd::SliceDim& slice) {
  return (slice.limit - slice.start + slice.stride - 1) / slice.stride;
}

// Bytes the window exchanges of a slice in `layout` send per device: its sharded dims are
// sliced one after another, each on the value the previous ones left.
double ExchangeBytes(OpContext& op, const Sharding& layout) {
  const Instruction& instruction = op.instruction();
  Shape shape = instruction.operand(0)->shape();
  for (int64_t d = 0; d < shape.rank(); ++d)
    if (TileCountOf(layout, d) == 1) shape.set_dim(d, instruction.shape().dim(d));
  double bytes = 0;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    const gspmd::SliceDim& slice = instruction.slice()[d];
    if (TileCountOf(layout, d) == 1 || IsFullSlice(slice, shape.dim(d))) continue;
    WindowExchange x = SliceExchange(op, layout, d, shape.dim(d), slice);
    bytes += static_cast<double>(ExchangeElementsSent(x)) * SlabBytes(layout, shape, d);
    shape.set_dim(d, SlicedSize(slice));
  }
  return bytes;
}

// The sliced dims a masked sum would take from the operand where it lies (its sharded dims
// the slice does not cover whole).
std::vector<int64_t> MaskedDims(OpContext& op, const Sharding& layout) {
  const Instruction& instruction = op.instruction();
  std::vector<int64_t> dims;
  if (instruction.shape().element_count() == 0) return dims;
  for (int64_t d = 0; d < instruction.shape().rank(); ++d)
    if (TileCountOf(layout, d) > 1 && !IsFullSlice(instruction.slice()[d], instruction.operand(0)->shape().dim(d)))
      dims.push_back(d);
  return dims;
}

// A slice whose result is small against the pieces it is cut from (a few rows of a split dim):
// every device takes the part of the slice inside its own piece, the identity of a sum
// elsewhere, and one all-reduce over the devices of the sliced dims assembles the result
// replicated there. It moves twice the result instead of a whole padded piece per device.
// The sum is exact: -0.0 is added to floats (x + -0.0 == x, bit for bit), 0 to integers and
// false (by or) to predicates. `value` is the operand in `layout`, already sliced along its
// unsharded dims.
Instruction* SliceByMaskedSum(OpContext& op, Instruction* value, const Sharding& layout,
                              const std::vector<int64_t>& dims) {
  const Instruction& instruction = op.instruction();
  const Shape& operand_shape = instruction.operand(0)->shape();
  HloBuilder& b = op.builder();
  int64_t rank = operand_shape.rank();
  std::vector<int64_t> piece = value->shape().dims();
  std::vector<int64_t> window = piece;
  std::vector<Instruction*> starts(rank, b.S32Constant(0));
  std::vector<Instruction*> shifts(rank, nullptr);
  PaddingConfig padding(rank);
  for (int64_t d : dims) {
    const gspmd::SliceDim& slice = instruction.slice()[d];
    int64_t length = slice.stride * (SlicedSize(slice) - 1) + 1;
    window[d] = length;
    // Window element k is global position start + k, local position start - offset + k; in
    // the piece padded by the window's length on both sides it sits `length` further on.
    Instruction* offset = ShardOffset(b, op.spmd(), layout, operand_shape.dims(), d);
    shifts[d] = b.Binary(Opcode::kSubtract, b.S32Constant(slice.start), offset);
    starts[d] = b.Binary(Opcode::kAdd, shifts[d], b.S32Constant(length));
    padding[d] = {length, length, 0};
  }
  ElementType type = value->shape().element_type();
  value = b.Pad(value, b.ScalarConstant(type, 0), padding);
  value = b.DynamicSlice(value, starts, window);
  Instruction* inside = nullptr;
  for (int64_t d : dims) {
    Instruction* local = b.Binary(Opcode::kAdd, b.Iota(Shape(ElementType::kS32, window), d),
                                  b.BroadcastScalar(shifts[d], window));
    Instruction* low = b.Compare(local, b.BroadcastScalar(b.S32Constant(0), window), ComparisonDirection::kGe);
    Instruction* high = b.Compare(local, b.BroadcastScalar(b.S32Constant(piece[d]), window), ComparisonDirection::kLt);
    Instruction* both = b.Binary(Opcode::kAnd, low, high);
    inside = inside ? b.Binary(Opcode::kAnd, inside, both) : both;
  }
  value = b.Select(inside, value, b.BroadcastScalar(b.ScalarConstant(type, ExactSumIdentity(type)), window));
  bool strided = false;
  std::vector<gspmd::SliceDim> every(rank);
  for (int64_t d = 0; d < rank; ++d) every[d] = {0, window[d], 1};
  for (int64_t d : dims) {
    if (instruction.slice()[d].stride == 1) continue;
    every[d].stride = instruction.slice()[d].stride;
    strided = true;
  }
  if (strided) value = b.Slice(value, std::move(every));
  CollectiveFactory& collectives = op.spmd().collectives();
  return collectives.SumOfPieces(b, value, collectives.GroupsFromList(GroupsAcrossDims(layout, dims)));
}

// Whether the masked sum in the operand's layout moves fewer bytes than slicing by window
// exchange in `layout` (SliceLayout's choice) and resharding to `target`.
bool MaskedSumPays(OpContext& op, const Sharding& layout, const Sharding& target, const std::vector<int64_t>& dims) {
  const Instruction& instruction = op.instruction();
  const Sharding& current = op.Operand(0).sharding;
  if (dims.empty() || current.HasUnreduced() || HasManualAxes(current) || HasManualAxes(target)) return false;
  SpmdContext& context = op.spmd();
  const Shape& operand_shape = instruction.operand(0)->shape();
  std::optional<double> move = layout == current
      ? ReshardCost(context, instruction.shape(), current, target)
      : ReshardCost(context, operand_shape, current, layout);
  if (!move) return false;
  double exchange = *move + ExchangeBytes(op, layout);
  Sharding summed = ReplicateDims(current, instruction.shape().rank(), dims);
  std::optional<double> after = ReshardCost(context, instruction.shape(), summed, target);
  if (!after) return false;
  int64_t group = 1;
  for (int64_t d : dims) group *= TileCountOf(current, d);
  double sum = 2.0 * static_cast<double>(group - 1) / static_cast<double>(group) *
               static_cast<double>(ShardShapeOf(summed, instruction.shape()).byte_size());
  return sum + *after < exchange;
}

}  // namespace

// Slices the sharded dim `dim` of `value` (global size `size`, laid out as `layout`).
Instruction* SliceShardedDim(OpContext& op, Instruction* value, const Sharding& layout, int64_t dim,
                             int64_t size, const gspmd::SliceDim& slice) {
  WindowExchange x = SliceExchange(op, layout, dim, size, slice);
  Instruction* window = ExchangeWindows(op.spmd(), op.builder(), value, x);
  if (slice.stride == 1) return window;
  std::vector<gspmd::SliceDim> strided;
  for (int64_t d = 0; d < window->shape().rank(); ++d)
    strided.push_back(d == dim ? gspmd::SliceDim{0, x.window_length, slice.stride}
                               : gspmd::SliceDim{0, window->shape().dim(d), 1});
  return op.builder().Slice(window, std::move(strided));
}

bool PartitionSlice(OpContext& op) {
  const Instruction& instruction = op.instruction();
  Sharding target = LocalTarget(op.sharding());
  const Shape& operand_shape = instruction.operand(0)->shape();
  // A replicated result too may be cheaper sliced where the operand lies (one row of a sharded
  // matrix: moving the row, not the matrix).
  Sharding layout = target.IsTiled() || target.IsReplicated() ? SliceLayout(op, target) : target;
  std::vector<int64_t> masked;
  if (op.Operand(0).sharding.IsTiled() && (target.IsTiled() || target.IsReplicated())) {
    masked = MaskedDims(op, op.Operand(0).sharding);
    if (MaskedSumPays(op, layout, target, masked)) layout = op.Operand(0).sharding;
    else masked.clear();
  }
  Instruction* value = op.OperandWith(0, layout);
  // Unsharded dims first (shrinks what moves), then one window exchange per sharded dim.
  std::vector<gspmd::SliceDim> local;
  bool any_local = false;
  for (int64_t d = 0; d < operand_shape.rank(); ++d) {
    const gspmd::SliceDim& slice = instruction.slice()[d];
    bool sharded = TileCountOf(layout, d) > 1;
    if (sharded || IsFullSlice(slice, operand_shape.dim(d))) {
      local.push_back({0, value->shape().dim(d), 1});
      continue;
    }
    local.push_back(slice);
    any_local = true;
  }
  if (any_local) value = op.builder().Slice(value, std::move(local));
  if (!masked.empty()) {
    op.SetResult(SliceByMaskedSum(op, value, layout, masked), ReplicateDims(layout, operand_shape.rank(), masked));
    return true;
  }
  for (int64_t d = 0; d < operand_shape.rank(); ++d) {
    const gspmd::SliceDim& slice = instruction.slice()[d];
    if (TileCountOf(layout, d) == 1 || IsFullSlice(slice, operand_shape.dim(d))) continue;
    value = SliceShardedDim(op, value, layout, d, operand_shape.dim(d), slice);
  }
  op.SetResult(value, layout);
  return true;
}

bool PartitionPad(OpContext& op) {
  const Instruction& instruction = op.instruction();
  Sharding target = LocalTarget(op.sharding());
  const Shape& operand_shape = instruction.operand(0)->shape();
  HloBuilder& b = op.builder();
  // A replicated operand is padded whole and cut to the result's layout where it is: each
  // device holds every element it needs, and no window moves (oracle seed 120891: a replicated
  // [4,2,4] padded to [6,8,6] split 8 ways on the padded dim, a 64 B halo permute; XLA none).
  if (op.Operand(0).sharding.IsReplicated() && !target.IsReplicated()) {
    Instruction* whole = b.Pad(op.Operand(0).hlo, op.OperandWith(1, Sharding::Replicated()), instruction.padding());
    op.SetResult(Reshard(op.spmd(), b, PartitionedValue{whole, instruction.shape(), Sharding::Replicated()}, target).hlo,
                 target);
    return true;
  }
  Instruction* value = op.OperandWith(0, target);
  Instruction* pad_value = op.OperandWith(1, Sharding::Replicated());
  // Each unsharded dim is padded locally: before the sharded dims' window exchanges when that
  // does not grow it (cropping shrinks what moves), after them when it does (they then move
  // the operand's elements, not the padding, as XLA does).
  PaddingConfig before(operand_shape.rank()), after(operand_shape.rank());
  bool any_before = false, any_after = false;
  for (int64_t d = 0; d < operand_shape.rank(); ++d) {
    const PaddingDim& padding = instruction.padding()[d];
    if (TileCountOf(target, d) > 1 || padding == PaddingDim{}) continue;
    if (instruction.shape().dim(d) <= operand_shape.dim(d)) {
      before[d] = padding;
      any_before = true;
    } else {
      after[d] = padding;
      any_after = true;
    }
  }
  if (any_before) value = b.Pad(value, pad_value, before);
  for (int64_t d = 0; d < operand_shape.rank(); ++d) {
    if (TileCountOf(target, d) == 1 || instruction.padding()[d] == PaddingDim{}) continue;
    value = PadShardedDim(op, value, target, d, operand_shape.dim(d), instruction.padding()[d], pad_value,
                          instruction.shape());
  }
  if (any_after) value = b.Pad(value, pad_value, after);
  op.SetResult(value, target);
  return true;
}

namespace {

// Where a concatenate operand's elements come from: positions [begin, end) of `source` along
// the concatenated dim (the whole operand, or the operand of a slice it is).
struct ConcatPart {
  const Instruction* source = nullptr;
  int64_t begin = 0;
  int64_t end = 0;
};

// A slice that only feeds this concatenate, takes a contiguous range along `dim` and whole
// other dims, of a value already laid out as the concatenate: the concatenate reads that
// value directly (so concat(slice(x), slice(x)) rotations cost one exchange, not two).
ConcatPart PartOf(OpContext& op, int64_t i, int64_t dim, const Sharding& target) {
  const Instruction* operand = op.instruction().operand(i);
  ConcatPart part{operand, 0, operand->shape().dim(dim)};
  if (operand->opcode() != Opcode::kSlice || operand->users().size() != 1) return part;
  const Instruction* source = operand->operand(0);
  for (int64_t d = 0; d < source->shape().rank(); ++d) {
    const gspmd::SliceDim& slice = operand->slice()[d];
    if (slice.stride != 1) return part;
    if (d != dim && !IsFullSlice(slice, source->shape().dim(d))) return part;
  }
  if (!(op.ValueOfOriginal(source).sharding == target)) return part;
  return ConcatPart{source, operand->slice()[dim].start, operand->slice()[dim].limit};
}

}  // namespace

namespace {

// A concatenate laid out as `target` along its split dim: the distinct sources side by side
// form the source buffer of one window exchange, and each operand is a segment of it placed at
// its offset in the result. Built from the sources' sizes alone (each piece is a padded shard
// of `target`), so that it can be priced before any operand is resharded.
struct ConcatExchange {
  WindowExchange x;
  std::vector<ConcatPart> parts;           // per distinct source
  std::vector<int64_t> operand_of_source;  // the operand each distinct source was first seen as
};

ConcatExchange PlanConcatExchange(OpContext& op, const Sharding& target, int64_t dim) {
  const Instruction& instruction = op.instruction();
  ConcatExchange plan;
  WindowExchange& x = plan.x;
  x.dim = dim;
  x.lines = LinesAlongDim(target, dim, op.spmd().num_devices());
  int64_t tiles = x.lines.tiles;
  std::vector<int64_t> source_offsets;
  int64_t local_length = 0, offset = 0;
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    int64_t size = instruction.operand(i)->shape().dim(dim);
    if (size == 0) continue;
    ConcatPart part = PartOf(op, i, dim, target);
    size_t index = 0;
    while (index < plan.parts.size() && plan.parts[index].source != part.source) ++index;
    int64_t source_size = part.source->shape().dim(dim);
    int64_t shard = ShardSize(source_size, tiles);
    if (index == plan.parts.size()) {
      plan.parts.push_back(part);
      plan.operand_of_source.push_back(i);
      source_offsets.push_back(local_length);
      local_length += shard;
    }
    SourceSegment segment;
    segment.local_offset = source_offsets[index];
    segment.length = shard;
    int64_t shift = offset - part.begin;  // result position of source position 0
    for (int64_t j = 0; j < tiles; ++j) {
      int64_t real_begin = std::max(j * shard, part.begin);
      int64_t real_end = std::max(real_begin, std::min({(j + 1) * shard, source_size, part.end}));
      segment.global_start.push_back(shift + j * shard);
      segment.real_begin.push_back(shift + real_begin);
      segment.real_end.push_back(shift + real_end);
    }
    x.segments.push_back(segment);
    offset += size;
  }
  int64_t result_size = instruction.shape().dim(dim);
  SetBlockWindows(x, result_size, ShardSize(result_size, tiles));
  return plan;
}

// Another layout to concatenate in: an operand's split that leaves the concatenated dim whole,
// when bringing every operand to it and the result from it to the target moves fewer bytes
// than the window exchange in the target's layout (a concatenate split along its own dim, of
// operands split along another dim, is then one all-to-all of the result).
std::optional<Sharding> CheaperLayout(OpContext& op, const Sharding& target, int64_t dim, const ConcatExchange& plan) {
  const Instruction& instruction = op.instruction();
  SpmdContext& context = op.spmd();
  double direct = static_cast<double>(ExchangeElementsSent(plan.x)) * SlabBytes(target, instruction.shape(), dim);
  for (size_t k = 0; k < plan.parts.size(); ++k) {
    const int64_t i = plan.operand_of_source[k];
    if (plan.parts[k].source != instruction.operand(i)) continue;  // read from a value already laid out
    std::optional<double> cost = ReshardCost(context, instruction.operand(i)->shape(), op.Operand(i).sharding, target);
    if (!cost) return std::nullopt;
    direct += *cost;
  }
  std::optional<Sharding> best;
  double best_cost = direct;
  for (int64_t k = 0; k < instruction.operand_count(); ++k) {
    const Sharding& layout = op.Operand(k).sharding;
    if (!layout.IsTiled() || layout.HasUnreduced() || TileCountOf(layout, dim) != 1 || layout == target) continue;
    if (HasManualAxes(layout) || HasManualAxes(target)) continue;
    bool seen = false;
    for (int64_t j = 0; j < k && !seen; ++j) seen = op.Operand(j).sharding == layout;
    if (seen) continue;
    std::optional<double> total = ReshardCost(context, instruction.shape(), layout, target);
    for (int64_t i = 0; i < instruction.operand_count() && total; ++i) {
      std::optional<double> cost = ReshardCost(context, instruction.operand(i)->shape(), op.Operand(i).sharding, layout);
      total = cost ? std::optional<double>(*total + *cost) : std::nullopt;
    }
    if (total && *total < best_cost) {
      best = layout;
      best_cost = *total;
    }
  }
  return best;
}

}  // namespace

bool PartitionConcatenate(OpContext& op) {
  const Instruction& instruction = op.instruction();
  Sharding target = LocalTarget(op.sharding());
  int64_t dim = instruction.dimensions.at(0);
  auto concatenate_in = [&](const Sharding& layout) {
    std::vector<Instruction*> operands;
    for (int64_t i = 0; i < instruction.operand_count(); ++i) operands.push_back(op.OperandWith(i, layout));
    op.SetResult(op.Clone(ShardShapeOf(layout, instruction.shape()), operands), layout);
    return true;
  };
  if (TileCountOf(target, dim) == 1) return concatenate_in(target);
  ConcatExchange plan = PlanConcatExchange(op, target, dim);
  if (plan.parts.empty()) return false;
  if (std::optional<Sharding> layout = CheaperLayout(op, target, dim, plan)) return concatenate_in(*layout);
  std::vector<Instruction*> pieces;
  for (size_t k = 0; k < plan.parts.size(); ++k) {
    const int64_t i = plan.operand_of_source[k];
    pieces.push_back(plan.parts[k].source == instruction.operand(i) ? op.OperandWith(i, target)
                                                                    : op.ValueOfOriginal(plan.parts[k].source).hlo);
  }
  HloBuilder& b = op.builder();
  Instruction* source = pieces.size() == 1 ? pieces[0] : b.Concatenate(pieces, dim);
  op.SetResult(ExchangeWindows(op.spmd(), b, source, plan.x), target);
  return true;
}

}  // namespace gspmd::shape_ops
