// The reduce-window and select-and-scatter handlers. The operand is laid out like the result;
// along a sharded dim with a real window every device fetches the input its windows need from
// its neighbours (a halo / window exchange) or the dim is gathered, whichever sends fewer
// bytes; cumulative windows (cumsum: the window spans the whole dim) become a local scan plus
// an all-gather of one total per shard.
#include <algorithm>
#include <optional>
#include <vector>

#include "partitioner/handlers/shape_ops.h"
#include "partitioner/handlers/window_exchange.h"
#include "partitioner/op_context.h"
#include "runtime/interp/kernels.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

using shape_ops::DimLines;
using shape_ops::WindowExchange;

// Maximal shardings are computed on every device, like replicated ones.
Sharding AsAxisSharding(const Sharding& sharding) {
  return sharding.IsMaximal() || sharding.IsUnknown() ? Sharding::Replicated() : sharding;
}

const Sharding& ElementSharding(const Sharding& sharding, int64_t index) {
  return sharding.IsTuple() ? sharding.tuple_elements().at(index) : sharding;
}

// A window dim that maps input element i to output element i.
bool IsTrivial(const WindowDim& w) {
  return w.size == 1 && w.stride == 1 && w.padding_low == 0 && w.padding_high == 0 && w.window_dilation == 1 &&
         w.base_dilation == 1;
}

// How a sharded dim is computed.
enum class DimStrategy { kLocal, kExchange, kGather, kScan };

// A cumulative window over a dim of `size`: output i reduces input [0, i] (prefix) or
// [i, size) (suffix).
enum class ScanKind { kNone, kPrefix, kSuffix };

ScanKind ScanKindOf(const WindowDim& w, int64_t size) {
  if (w.stride != 1 || w.window_dilation != 1 || w.base_dilation != 1 || w.reversal || size <= 1) return ScanKind::kNone;
  if (w.size != size) return ScanKind::kNone;
  if (w.padding_low == size - 1 && w.padding_high == 0) return ScanKind::kPrefix;
  if (w.padding_low == 0 && w.padding_high == size - 1) return ScanKind::kSuffix;
  return ScanKind::kNone;
}

std::optional<Opcode> OpcodeOfReducer(BinaryReducer reducer) {
  switch (reducer) {
    case BinaryReducer::kAdd: return Opcode::kAdd;
    case BinaryReducer::kMultiply: return Opcode::kMultiply;
    case BinaryReducer::kMaximum: return Opcode::kMaximum;
    case BinaryReducer::kMinimum: return Opcode::kMinimum;
    case BinaryReducer::kAnd: return Opcode::kAnd;
    case BinaryReducer::kOr: return Opcode::kOr;
    case BinaryReducer::kXor: return Opcode::kXor;
    case BinaryReducer::kUnknown: return std::nullopt;
  }
  return std::nullopt;
}

bool IsIdempotent(Opcode reduction) {
  return reduction == Opcode::kMaximum || reduction == Opcode::kMinimum || reduction == Opcode::kAnd ||
         reduction == Opcode::kOr;
}

// True when combining partial scans with `init` between them is exact: the init is the op's
// identity (a constant), or applying it again changes nothing.
bool InitCombinesExactly(const Instruction& init, Opcode reduction) {
  if (IsIdempotent(reduction)) return true;
  if (init.opcode() != Opcode::kConstant || !init.literal || init.literal->shape().IsTuple()) return false;
  if (init.literal->element_count() != 1) return false;
  double identity = reduction == Opcode::kMultiply ? 1.0 : 0.0;
  return init.literal->GetAsDouble(0) == identity;
}

// The window exchange that gives every device the input of its output windows along `dim`
// (input of `input_size` split `tiles` ways, output of `output_size`).
WindowExchange MakeExchange(const WindowDim& w, int64_t dim, int64_t input_size, int64_t output_size,
                            DimLines lines) {
  WindowExchange x;
  x.dim = dim;
  int64_t tiles = lines.tiles;
  x.lines = std::move(lines);
  x.segments.push_back(shape_ops::BlockSegment(input_size, tiles, 0));
  int64_t out_shard = ShardSize(output_size, tiles);
  int64_t span = (w.size - 1) * w.window_dilation + 1;
  x.window_length = (out_shard - 1) * w.stride + span;
  for (int64_t t = 0; t < tiles; ++t) {
    int64_t first = t * out_shard;
    int64_t valid = std::clamp<int64_t>(output_size - first, 0, out_shard);
    int64_t start = first * w.stride - w.padding_low;
    x.window_start.push_back(start);
    int64_t begin = std::max<int64_t>(start, 0);
    int64_t end = valid == 0 ? begin : std::min(start + (valid - 1) * w.stride + span, input_size);
    x.needed_begin.push_back(begin);
    x.needed_end.push_back(std::max(begin, end));
  }
  return x;
}

// Sets the positions of `value` along `dim` whose global position (per-device start + index)
// falls outside [0, size) to `fill`.
Instruction* MaskOutside(HloBuilder& b, Instruction* value, int64_t dim, const std::vector<int64_t>& start_of_device,
                         int64_t size, Instruction* fill) {
  const std::vector<int64_t>& dims = value->shape().dims();
  int64_t lowest = *std::min_element(start_of_device.begin(), start_of_device.end());
  int64_t highest = *std::max_element(start_of_device.begin(), start_of_device.end());
  if (lowest >= 0 && highest + dims[dim] <= size) return value;
  Instruction* iota = b.Iota(Shape(ElementType::kS32, dims), dim);
  Instruction* start = b.BroadcastScalar(shape_ops::LookupOrConstant(b, start_of_device), dims);
  Instruction* position = b.Binary(Opcode::kAdd, iota, start);
  Instruction* zero = b.BroadcastScalar(b.S32Constant(0), dims);
  Instruction* limit = b.BroadcastScalar(b.S32Constant(size), dims);
  Instruction* valid = b.Binary(Opcode::kAnd, b.Compare(position, zero, ComparisonDirection::kGe),
                                b.Compare(position, limit, ComparisonDirection::kLt));
  return b.Select(valid, value, b.BroadcastScalar(fill, dims));
}

class ReduceWindowPartitioner {
 public:
  explicit ReduceWindowPartitioner(OpContext& op)
      : op_(op), rw_(op.instruction()), context_(op.spmd()), b_(op.builder()) {}

  bool Run() {
    count_ = rw_.shape().IsTuple() ? rw_.shape().tuple_size() : 1;
    if (rw_.operand_count() != 2 * count_ || rw_.called_computations().size() != 1) return false;
    const PartitionedValue& first = op_.Operand(0);
    if (!first.global_shape.IsArray() || first.sharding.IsTuple()) return false;
    input_shape_ = first.global_shape;
    rank_ = input_shape_.rank();
    if (static_cast<int64_t>(rw_.window.size()) != rank_) return false;
    for (int64_t i = 0; i < count_; ++i)
      if (!ResultShape(i).IsArray() || ResultShape(i).rank() != rank_) return false;
    Sharding target = AsAxisSharding(ElementSharding(op_.sharding(), 0));
    if (target.IsTuple()) return false;
    if (!target.IsTiled()) return RunUnsplit(target);
    if (!context_.Axes(target, rank_)) return false;
    ChooseStrategies(target);
    if (scan_dim_ >= 0) return RunScan();
    return RunWindowed();
  }

 private:
  const Shape& ResultShape(int64_t i) const { return count_ == 1 ? rw_.shape() : rw_.shape().tuple_shape(i); }

  Instruction* Init(int64_t i) { return op_.OperandWith(count_ + i, Sharding::Replicated()); }

  // Replicated or manual results: every device computes the whole op on its operands.
  bool RunUnsplit(const Sharding& target) {
    std::vector<Instruction*> operands;
    for (int64_t i = 0; i < count_; ++i) operands.push_back(op_.OperandWith(i, target));
    for (int64_t i = 0; i < count_; ++i) operands.push_back(Init(i));
    op_.SetResult(op_.Clone(rw_.shape(), operands), ResultSharding(target));
    return true;
  }

  Sharding ResultSharding(const Sharding& element) const {
    if (!rw_.shape().IsTuple()) return element;
    return Sharding::Tuple(std::vector<Sharding>(count_, element));
  }

  double SlabBytes(const Sharding& layout, int64_t dim) const {
    double bytes = 0;
    for (int64_t i = 0; i < count_; ++i)
      bytes += shape_ops::SlabBytes(layout, rw_.operand(i)->shape(), dim);
    return bytes;
  }

  double CostTo(const Sharding& layout) {
    double total = 0;
    for (int64_t i = 0; i < count_; ++i) {
      const PartitionedValue& operand = op_.Operand(i);
      std::optional<double> cost =
          shape_ops::ReshardCost(context_, operand.global_shape, AsAxisSharding(operand.sharding), layout);
      if (!cost) return 1e300;
      total += *cost;
    }
    return total;
  }

  bool ScanApplies(int64_t dim) const {
    if (count_ != 1) return false;
    for (int64_t d = 0; d < rank_; ++d)
      if (d != dim && !IsTrivial(rw_.window[d])) return false;
    if (ScanKindOf(rw_.window[dim], input_shape_.dim(dim)) == ScanKind::kNone) return false;
    std::optional<Opcode> reduction = OpcodeOfReducer(RecognizeReducer(*rw_.to_apply()));
    if (!reduction) return false;
    return InitCombinesExactly(*rw_.operand(1), *reduction);
  }

  // For every sharded dim with a real window: exchange, gather, or scan, by estimated bytes.
  void ChooseStrategies(const Sharding& target) {
    strategies_.assign(rank_, DimStrategy::kLocal);
    std::vector<int64_t> gathered;
    layout_ = target;
    for (int64_t d = 0; d < rank_; ++d) {
      const WindowDim& w = rw_.window[d];
      if (shape_ops::TileCountOf(target, d) == 1 || IsTrivial(w)) continue;
      if (ScanApplies(d)) {
        strategies_[d] = DimStrategy::kScan;
        scan_dim_ = d;
        continue;
      }
      std::vector<int64_t> with_d = gathered;
      with_d.push_back(d);
      Sharding without_d = shape_ops::ReplicateDims(target, rank_, with_d);
      if (w.base_dilation != 1) {
        strategies_[d] = DimStrategy::kGather;
        gathered = with_d;
        layout_ = without_d;
        continue;
      }
      WindowExchange x = MakeExchange(w, d, input_shape_.dim(d), ResultShape(0).dim(d),
                                      shape_ops::LinesAlongDim(layout_, d, context_.num_devices()));
      double exchange = static_cast<double>(shape_ops::ExchangeElementsSent(x)) * SlabBytes(layout_, d);
      double exchange_total = CostTo(layout_) + exchange;
      double gather_total = CostTo(without_d);
      bool use_exchange = exchange_total < gather_total || (exchange == 0 && exchange_total <= gather_total);
      if (use_exchange) {
        strategies_[d] = DimStrategy::kExchange;
        continue;
      }
      strategies_[d] = DimStrategy::kGather;
      gathered = with_d;
      layout_ = without_d;
    }
  }

  bool RunWindowed() {
    std::vector<Instruction*> values, inits;
    for (int64_t i = 0; i < count_; ++i) {
      values.push_back(op_.OperandWith(i, layout_));
      inits.push_back(Init(i));
    }
    Window window = rw_.window;
    for (int64_t d = 0; d < rank_; ++d) {
      if (strategies_[d] != DimStrategy::kExchange) continue;
      const WindowDim& w = rw_.window[d];
      DimLines lines = shape_ops::LinesAlongDim(layout_, d, context_.num_devices());
      std::vector<int64_t> tile_of_device = lines.tile_of_device;
      WindowExchange x = MakeExchange(w, d, input_shape_.dim(d), ResultShape(0).dim(d), std::move(lines));
      std::vector<int64_t> start_of_device(context_.num_devices());
      for (int64_t p = 0; p < context_.num_devices(); ++p) start_of_device[p] = x.window_start[tile_of_device[p]];
      for (int64_t i = 0; i < count_; ++i) {
        Instruction* window_values = shape_ops::ExchangeWindows(context_, b_, values[i], x);
        values[i] = MaskOutside(b_, window_values, d, start_of_device, input_shape_.dim(d), inits[i]);
      }
      window[d].padding_low = 0;
      window[d].padding_high = 0;
    }
    std::vector<Shape> shapes;
    for (int64_t i = 0; i < count_; ++i) shapes.push_back(ShardShapeOf(layout_, ResultShape(i)));
    std::vector<Instruction*> operands = values;
    operands.insert(operands.end(), inits.begin(), inits.end());
    Instruction* local = op_.Clone(count_ == 1 ? shapes[0] : Shape::Tuple(shapes), operands);
    local->window = window;
    op_.SetResult(local, ResultSharding(layout_));
    return true;
  }

  // A cumulative window along a sharded dim: scan each shard, all-gather the shard totals,
  // and combine every shard with the totals of the shards before (prefix) or after (suffix).
  bool RunScan() {
    const int64_t d = scan_dim_;
    const int64_t size = input_shape_.dim(d);
    ScanKind kind = ScanKindOf(rw_.window[d], size);
    Opcode reduction = *OpcodeOfReducer(RecognizeReducer(*rw_.to_apply()));
    Instruction* init = Init(0);
    Instruction* value = op_.OperandWith(0, layout_);
    // Padding past the end would join the suffix totals: set it to the init value.
    std::vector<int64_t> only_d(rank_, -1);
    only_d[d] = d;
    Sharding d_only = shape_ops::RemapSharding(layout_, only_d);
    value = MaskPadding(b_, context_, value, input_shape_, d_only, init);

    const int64_t shard = value->shape().dim(d);
    Instruction* scan = op_.Clone(value->shape(), {value, init});
    scan->window[d].size = shard;
    scan->window[d].padding_low = kind == ScanKind::kPrefix ? shard - 1 : 0;
    scan->window[d].padding_high = kind == ScanKind::kSuffix ? shard - 1 : 0;

    // One total per shard, gathered along the dim.
    Instruction* total = shape_ops::SliceAlongDim(b_, scan, d, {kind == ScanKind::kPrefix ? shard - 1 : 0}, 1);
    DimLines lines = shape_ops::LinesAlongDim(layout_, d, context_.num_devices());
    const int64_t tiles = lines.tiles;
    std::vector<int64_t> totals_dims = ResultShape(0).dims();
    totals_dims[d] = tiles;
    Shape totals_shape(ResultShape(0).element_type(), totals_dims);
    Sharding gathered = shape_ops::ReplicateDims(layout_, rank_, {d});
    Instruction* totals = Reshard(context_, b_, PartitionedValue{total, totals_shape, layout_}, gathered).hlo;

    // Keep the totals of the other shards on the right side of this one; reduce them.
    const std::vector<int64_t>& dims = totals->shape().dims();
    Instruction* iota = b_.Iota(Shape(ElementType::kS32, dims), d);
    Instruction* tile = b_.BroadcastScalar(shape_ops::LookupOrConstant(b_, lines.tile_of_device), dims);
    Instruction* keep = b_.Compare(iota, tile, kind == ScanKind::kPrefix ? ComparisonDirection::kLt : ComparisonDirection::kGt);
    Instruction* kept = b_.Select(keep, totals, b_.BroadcastScalar(init, dims));
    std::vector<int64_t> carry_dims, kept_dims;
    for (int64_t j = 0; j < rank_; ++j) {
      if (j == d) continue;
      carry_dims.push_back(dims[j]);
      kept_dims.push_back(j);
    }
    Instruction* carry = b_.AddOp(Opcode::kReduce, Shape(totals->shape().element_type(), carry_dims), {kept, init});
    carry->dimensions = {d};
    carry->set_called_computations({op_.ClonedComputation(rw_.to_apply())});
    Instruction* spread = b_.Broadcast(carry, scan->shape().dims(), kept_dims);
    Instruction* result = b_.Binary(reduction, scan, spread);
    op_.SetResult(result, layout_);
    return true;
  }

  OpContext& op_;
  const Instruction& rw_;
  SpmdContext& context_;
  HloBuilder& b_;
  int64_t count_ = 1;
  int64_t rank_ = 0;
  Shape input_shape_;
  Sharding layout_;
  std::vector<DimStrategy> strategies_;
  int64_t scan_dim_ = -1;
};

// select-and-scatter: dims with a real window are replicated (on the operand, the source and
// the result); the other dims keep the result's sharding and need no communication.
bool PartitionSelectAndScatter(OpContext& op) {
  const Instruction& sas = op.instruction();
  if (sas.operand_count() != 3 || !sas.shape().IsArray()) return false;
  const Shape& shape = sas.shape();
  if (static_cast<int64_t>(sas.window.size()) != shape.rank()) return false;
  if (sas.operand(1)->shape().rank() != shape.rank()) return false;
  Sharding target = AsAxisSharding(op.sharding());
  if (target.IsTuple()) return false;
  std::vector<int64_t> windowed;
  for (int64_t d = 0; d < shape.rank(); ++d)
    if (!IsTrivial(sas.window[d])) windowed.push_back(d);
  Sharding layout = target.IsTiled() ? shape_ops::ReplicateDims(target, shape.rank(), windowed) : target;
  Instruction* operand = op.OperandWith(0, layout);
  Instruction* source = op.OperandWith(1, layout);
  Instruction* init = op.OperandWith(2, Sharding::Replicated());
  op.SetResult(op.Clone(ShardShapeOf(layout, shape), {operand, source, init}), layout);
  return true;
}

}  // namespace

bool PartitionReduceWindow(OpContext& op) {
  switch (op.instruction().opcode()) {
    case Opcode::kReduceWindow:
      return ReduceWindowPartitioner(op).Run();
    case Opcode::kSelectAndScatter:
      return PartitionSelectAndScatter(op);
    default:
      return false;
  }
}

}  // namespace gspmd
