// The reduce-window and select-and-scatter handlers. The operand is laid out like the result;
// along a sharded dim with a real window every device fetches the input its windows need from
// its neighbours (a halo / window exchange) or the dim is gathered, whichever sends fewer
// bytes; cumulative windows (cumsum: the window spans the whole dim) become a local scan plus
// an all-gather of one total per shard. select-and-scatter exchanges halos of both the operand
// and the source and keeps each device's own piece of the scattered result.
#include <algorithm>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "partitioner/computation_partitioner.h"
#include "partitioner/handlers/shape_ops.h"
#include "partitioner/handlers/window_exchange.h"
#include "partitioner/manual.h"
#include "partitioner/op_context.h"
#include "runtime/interp/evaluator.h"
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
  if (init.opcode() != Opcode::kConstant || !init.literal() || init.literal()->shape().IsTuple()) return false;
  if (init.literal()->element_count() != 1) return false;
  double identity = reduction == Opcode::kMultiply ? 1.0 : 0.0;
  return init.literal()->GetAsDouble(0) == identity;
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

Instruction* ExtremeValue(HloBuilder& b, ElementType type, bool lowest);

// The identity of a recognized reducer for `type` (what positions outside the array must hold
// so that each window still applies the op's init exactly once, as the interpreter does);
// nullptr for an unrecognized reducer.
Instruction* ReducerIdentity(HloBuilder& b, const Computation& reducer, ElementType type) {
  std::optional<Opcode> reduction = OpcodeOfReducer(RecognizeReducer(reducer));
  if (!reduction) return nullptr;
  switch (*reduction) {
    case Opcode::kAdd: case Opcode::kOr: case Opcode::kXor: return b.ScalarConstant(type, 0);
    case Opcode::kMultiply: case Opcode::kAnd: return b.ScalarConstant(type, 1);
    case Opcode::kMaximum: return ExtremeValue(b, type, /*lowest=*/true);
    case Opcode::kMinimum: return ExtremeValue(b, type, /*lowest=*/false);
    default: return nullptr;
  }
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
    if (static_cast<int64_t>(rw_.window().size()) != rank_) return false;
    for (int64_t i = 0; i < count_; ++i)
      if (!ResultShape(i).IsArray() || ResultShape(i).rank() != rank_) return false;
    Sharding target = AsAxisSharding(ElementSharding(op_.sharding(), 0));
    if (target.IsTuple()) return false;
    if (!target.IsTiled()) return RunUnsplit(target);
    // Every operand whole on every device: each computes the whole op and takes its piece of
    // the result by a local slice, where splitting the operands first needs their halos moved
    // (oracle seed 20135: a cumsum of a replicated vector returned split, 14 B against XLA's 0).
    if (OperandsWhole()) return RunUnsplit(Sharding::Replicated());
    if (!context_.Axes(target, rank_)) return false;
    ChooseStrategies(target);
    if (scan_dim_ >= 0) return RunScan();
    return RunWindowed();
  }

 private:
  const Shape& ResultShape(int64_t i) const { return count_ == 1 ? rw_.shape() : rw_.shape().tuple_shape(i); }

  Instruction* Init(int64_t i) { return op_.OperandWith(count_ + i, Sharding::Replicated()); }

  bool OperandsWhole() const {
    for (int64_t i = 0; i < count_; ++i) {
      const Sharding& sharding = op_.Operand(i).sharding;
      if (sharding.IsReplicated()) continue;
      if (!sharding.IsTiled() || sharding.HasUnreduced() || HasManualAxes(sharding)) return false;
      for (int64_t d = 0; d < rank_; ++d)
        if (shape_ops::TileCountOf(sharding, d) != 1) return false;
    }
    return true;
  }

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

  // What the users will pay to reshard the result from `layout` into the layout each of them
  // takes it in (elementwise users and tuples: their own; others are not counted). A strategy
  // that leaves the result wider can save a later gather.
  double ConsumerCost(const Sharding& layout) {
    if (count_ != 1) return 0;
    double total = 0;
    for (const Instruction* user : rw_.users()) {
      std::optional<Sharding> wanted;
      if (user->opcode() == Opcode::kTuple) {
        Sharding tuple = EffectiveSharding(*user);
        for (int64_t k = 0; k < user->operand_count(); ++k)
          if (user->operand(k) == &rw_ && tuple.IsTuple()) wanted = tuple.tuple_elements().at(k);
      } else if (user->shape().IsArray() && user->shape().dims() == rw_.shape().dims() &&
                 (IsElementwiseUnary(user->opcode()) || IsElementwiseBinary(user->opcode()) ||
                  user->opcode() == Opcode::kCopy)) {
        wanted = EffectiveSharding(*user);
      }
      if (!wanted || wanted->IsTuple()) continue;
      std::optional<double> cost = shape_ops::ReshardCost(context_, rw_.shape(), layout, AsAxisSharding(*wanted));
      if (cost) total += *cost;
    }
    return total;
  }

  // Whether the reducer's identity is known (ReducerIdentity gives it): one output and a
  // recognized op.
  bool HasKnownIdentity() const {
    if (count_ != 1) return false;
    std::optional<Opcode> reduction = OpcodeOfReducer(RecognizeReducer(*rw_.to_apply()));
    if (!reduction) return false;
    switch (*reduction) {
      case Opcode::kAdd: case Opcode::kOr: case Opcode::kXor: case Opcode::kMultiply: case Opcode::kAnd:
      case Opcode::kMaximum: case Opcode::kMinimum:
        return true;
      default:
        return false;
    }
  }

  // Whether positions filled with the init values may join a window without changing it: the
  // inits are constants and the reducer applied to them gives them back, bit for bit
  // (reducers combine in any order, so a window's init applied once or many times is the
  // same). True for argmax's (-inf, 0), false for an add with init 0.5.
  bool InitsAreIdempotent() const {
    std::vector<Literal> inits;
    for (int64_t i = 0; i < count_; ++i) {
      const Instruction& init = *rw_.operand(count_ + i);
      if (init.opcode() != Opcode::kConstant || !init.literal() || init.literal()->shape().IsTuple() ||
          init.literal()->element_count() != 1)
        return false;
      inits.push_back(*init.literal());
    }
    const Computation& reducer = *rw_.to_apply();
    if (reducer.parent() == nullptr || reducer.num_parameters() != 2 * count_) return false;
    std::vector<const Literal*> arguments;
    for (int pass = 0; pass < 2; ++pass)
      for (const Literal& init : inits) arguments.push_back(&init);
    try {
      Evaluator evaluator(*reducer.parent());
      Literal combined = evaluator.Call(reducer, arguments);
      if (count_ == 1) return !combined.shape().IsTuple() && combined.BitwiseEquals(inits[0]);
      if (!combined.shape().IsTuple() || static_cast<int64_t>(combined.tuple_elements().size()) != count_) return false;
      for (int64_t i = 0; i < count_; ++i)
        if (!combined.tuple_elements()[i].BitwiseEquals(inits[i])) return false;
      return true;
    } catch (const UserError&) {
      return false;  // a reducer the interpreter cannot run here: gather to be safe
    }
  }

  bool ScanApplies(int64_t dim) const {
    if (count_ != 1) return false;
    for (int64_t d = 0; d < rank_; ++d)
      if (d != dim && !IsTrivial(rw_.window()[d])) return false;
    if (ScanKindOf(rw_.window()[dim], input_shape_.dim(dim)) == ScanKind::kNone) return false;
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
      const WindowDim& w = rw_.window()[d];
      if (shape_ops::TileCountOf(target, d) == 1 || IsTrivial(w)) continue;
      std::vector<int64_t> with_d = gathered;
      with_d.push_back(d);
      Sharding without_d = shape_ops::ReplicateDims(target, rank_, with_d);
      if (ScanApplies(d)) {
        // The scan sends one total per shard; a replicated operand may be cheaper whole. On a
        // tie the gather wins: its whole result is kept, so a consumer that wants the value
        // whole later (a replicated result, say) gets it without gathering again.
        double totals = static_cast<double>(shape_ops::TileCountOf(target, d) - 1) * SlabBytes(target, d);
        if (CostTo(target) + totals + ConsumerCost(target) < CostTo(without_d) + ConsumerCost(without_d)) {
          strategies_[d] = DimStrategy::kScan;
          scan_dim_ = d;
          continue;
        }
      }
      // Exchanged halos mark positions outside the array with the reducer's identity; a
      // reducer without a known one (variadic, or not recognized) cannot have them there when
      // windows reach past the array's ends, so that dim is gathered instead.
      const bool windows_pass_the_ends = w.padding_low != 0 || w.padding_high != 0;
      if (w.base_dilation != 1 || (windows_pass_the_ends && !HasKnownIdentity() && !InitsAreIdempotent())) {
        strategies_[d] = DimStrategy::kGather;
        gathered = with_d;
        layout_ = without_d;
        continue;
      }
      WindowExchange x = MakeExchange(w, d, input_shape_.dim(d), ResultShape(0).dim(d),
                                      shape_ops::LinesAlongDim(layout_, d, context_.num_devices()));
      double exchange = static_cast<double>(shape_ops::ExchangeElementsSent(x)) * SlabBytes(layout_, d);
      double exchange_total = CostTo(layout_) + exchange + ConsumerCost(layout_);
      double gather_total = CostTo(without_d) + ConsumerCost(without_d);
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
    Window window = rw_.window();
    for (int64_t d = 0; d < rank_; ++d) {
      if (strategies_[d] != DimStrategy::kExchange) continue;
      const WindowDim& w = rw_.window()[d];
      DimLines lines = shape_ops::LinesAlongDim(layout_, d, context_.num_devices());
      std::vector<int64_t> tile_of_device = lines.tile_of_device;
      WindowExchange x = MakeExchange(w, d, input_shape_.dim(d), ResultShape(0).dim(d), std::move(lines));
      std::vector<int64_t> start_of_device(context_.num_devices());
      for (int64_t p = 0; p < context_.num_devices(); ++p) start_of_device[p] = x.window_start[tile_of_device[p]];
      for (int64_t i = 0; i < count_; ++i) {
        Instruction* window_values = shape_ops::ExchangeWindows(context_, b_, values[i], x);
        // Outside the array: the reducer's identity, not init (init may be any value and is
        // applied once per window by the local reduce-window). Variadic and unrecognized
        // reducers keep init there: they are exchanged only when windows stay inside the
        // array or the inits are idempotent under the reducer (ChooseStrategies).
        Instruction* fill = count_ == 1 ? ReducerIdentity(b_, *rw_.to_apply(), ResultShape(0).element_type()) : nullptr;
        values[i] = MaskOutside(b_, window_values, d, start_of_device, input_shape_.dim(d), fill ? fill : inits[i]);
      }
      window[d].padding_low = 0;
      window[d].padding_high = 0;
    }
    std::vector<Shape> shapes;
    for (int64_t i = 0; i < count_; ++i) shapes.push_back(ShardShapeOf(layout_, ResultShape(i)));
    std::vector<Instruction*> operands = values;
    operands.insert(operands.end(), inits.begin(), inits.end());
    Instruction* local = op_.Clone(count_ == 1 ? shapes[0] : Shape::Tuple(shapes), operands);
    local->mutable_window() = window;
    op_.SetResult(local, ResultSharding(layout_));
    return true;
  }

  // A cumulative window along a sharded dim: scan each shard, all-gather the shard totals,
  // and combine every shard with the totals of the shards before (prefix) or after (suffix).
  bool RunScan() {
    const int64_t d = scan_dim_;
    const int64_t size = input_shape_.dim(d);
    ScanKind kind = ScanKindOf(rw_.window()[d], size);
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
    scan->mutable_window()[d].size = shard;
    scan->mutable_window()[d].padding_low = kind == ScanKind::kPrefix ? shard - 1 : 0;
    scan->mutable_window()[d].padding_high = kind == ScanKind::kSuffix ? shard - 1 : 0;

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

// ---- select-and-scatter ----

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

// The operand value a recognized select (compare of its two parameters) never keeps: -inf
// (the lowest integer) for a max-like select, +inf for a min-like one; nullopt otherwise.
std::optional<bool> PadIsLowest(const Computation& select) {
  const Instruction* root = select.root();
  if (root == nullptr || root->opcode() != Opcode::kCompare || select.num_parameters() != 2) return std::nullopt;
  const Instruction* p0 = select.parameter(0);
  const Instruction* p1 = select.parameter(1);
  bool direct = root->operand(0) == p0 && root->operand(1) == p1;
  bool swapped = root->operand(0) == p1 && root->operand(1) == p0;
  if (!direct && !swapped) return std::nullopt;
  switch (root->comparison_direction) {
    case ComparisonDirection::kGe: case ComparisonDirection::kGt: return direct;
    case ComparisonDirection::kLe: case ComparisonDirection::kLt: return swapped;
    default: return std::nullopt;
  }
}

// Whether a recognized select keeps the current element on ties (>=, <=: the first of equal
// elements wins) rather than taking the candidate (>, <: the last wins).
bool FirstOfEqualWins(const Computation& select) {
  ComparisonDirection direction = select.root()->comparison_direction;
  return direction == ComparisonDirection::kGe || direction == ComparisonDirection::kLe;
}

Instruction* ExtremeValue(HloBuilder& b, ElementType type, bool lowest) {
  if (IsFloatingPoint(type))
    return b.ScalarConstant(type, lowest ? -std::numeric_limits<double>::infinity()
                                         : std::numeric_limits<double>::infinity());
  Literal literal(Shape(type, {}));
  DispatchElementType(type, [&]<typename T>() {
    if constexpr (std::is_integral_v<T>)
      literal.data<T>()[0] = lowest ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
  });
  return b.Constant(std::move(literal));
}

// The halo plan of one sharded window dim: every device runs the windows that touch its own
// piece of the operand, on an operand window fetched from its neighbours, then keeps its piece.
struct ScatterDimPlan {
  int64_t dim = 0;
  int64_t shard = 0;                // operand elements per device
  WindowExchange data;              // operand windows (window_length = extended length)
  WindowExchange source;            // source windows (one per window that touches the piece)
  std::vector<int64_t> piece_start; // per tile: where the own piece starts in the extended data
  std::vector<int64_t> tile_of_device;
};

std::optional<ScatterDimPlan> MakeScatterDimPlan(const WindowDim& w, int64_t dim, int64_t size, int64_t windows,
                                                 DimLines lines) {
  if (w.window_dilation != 1 || w.base_dilation != 1 || w.stride < 1) return std::nullopt;
  const int64_t tiles = lines.tiles;
  ScatterDimPlan plan;
  plan.dim = dim;
  plan.shard = ShardSize(size, tiles);
  plan.tile_of_device = lines.tile_of_device;
  std::vector<int64_t> first_window(tiles);
  int64_t count = 1;
  for (int64_t t = 0; t < tiles; ++t) {
    int64_t low = t * plan.shard, high = (t + 1) * plan.shard;
    first_window[t] = CeilDiv(low + w.padding_low - w.size + 1, w.stride);
    int64_t last_window = FloorDiv(high - 1 + w.padding_low, w.stride);
    count = std::max(count, last_window - first_window[t] + 1);
  }
  const int64_t length = (count - 1) * w.stride + w.size;
  plan.data.dim = plan.source.dim = dim;
  plan.data.lines = lines;
  plan.source.lines = std::move(lines);
  plan.data.segments.push_back(shape_ops::BlockSegment(size, tiles, 0));
  plan.source.segments.push_back(shape_ops::BlockSegment(windows, tiles, 0));
  plan.data.window_length = length;
  plan.source.window_length = count;
  for (int64_t t = 0; t < tiles; ++t) {
    int64_t start = first_window[t] * w.stride - w.padding_low;
    int64_t piece = t * plan.shard - start;
    if (piece < 0 || piece + plan.shard > length) return std::nullopt;
    plan.piece_start.push_back(piece);
    plan.data.window_start.push_back(start);
    plan.data.needed_begin.push_back(std::clamp<int64_t>(start, 0, size));
    plan.data.needed_end.push_back(std::clamp<int64_t>(start + length, 0, size));
    plan.source.window_start.push_back(first_window[t]);
    plan.source.needed_begin.push_back(std::clamp<int64_t>(first_window[t], 0, windows));
    plan.source.needed_end.push_back(std::clamp<int64_t>(first_window[t] + count, 0, windows));
  }
  return plan;
}

class SelectAndScatterPartitioner {
 public:
  explicit SelectAndScatterPartitioner(OpContext& op)
      : op_(op), sas_(op.instruction()), context_(op.spmd()), b_(op.builder()) {}

  bool Run() {
    if (sas_.operand_count() != 3 || !sas_.shape().IsArray() || sas_.called_computations().size() != 2) return false;
    const Shape& shape = sas_.shape();
    rank_ = shape.rank();
    if (static_cast<int64_t>(sas_.window().size()) != rank_) return false;
    if (!sas_.operand(1)->shape().IsArray() || sas_.operand(1)->shape().rank() != rank_) return false;
    if (op_.Operand(0).sharding.IsTuple() || op_.Operand(1).sharding.IsTuple()) return false;
    Sharding target = AsAxisSharding(op_.sharding());
    if (target.IsTuple()) return false;
    if (!target.IsTiled()) return Finish(target, {});
    if (!context_.Axes(target, rank_)) return false;
    layout_ = ChoosePlans(target);
    return Finish(layout_, plans_);
  }

 private:
  const Shape& SourceShape() const { return sas_.operand(1)->shape(); }

  // Halos need an add scatter (windows outside the source add zero) and a select whose
  // never-kept value pads the operand.
  bool HalosPossible() const {
    BinaryReducer scatter = RecognizeReducer(*sas_.called_computations()[1]);
    return scatter == BinaryReducer::kAdd && PadIsLowest(*sas_.called_computations()[0]).has_value();
  }

  double CostTo(const Sharding& layout) {
    double total = 0;
    for (int64_t i = 0; i < 2; ++i) {
      const PartitionedValue& value = op_.Operand(i);
      std::optional<double> cost =
          shape_ops::ReshardCost(context_, value.global_shape, AsAxisSharding(value.sharding), layout);
      if (!cost) return 1e300;
      total += *cost;
    }
    return total;
  }

  Sharding ChoosePlans(const Sharding& target) {
    Sharding layout = target;
    std::vector<int64_t> gathered;
    bool halos = HalosPossible();
    for (int64_t d = 0; d < rank_; ++d) {
      const WindowDim& w = sas_.window()[d];
      if (shape_ops::TileCountOf(target, d) == 1 || IsTrivial(w)) continue;
      std::vector<int64_t> with_d = gathered;
      with_d.push_back(d);
      Sharding without_d = shape_ops::ReplicateDims(target, rank_, with_d);
      std::optional<ScatterDimPlan> plan;
      if (halos)
        plan = MakeScatterDimPlan(w, d, sas_.shape().dim(d), SourceShape().dim(d),
                                  shape_ops::LinesAlongDim(layout, d, context_.num_devices()));
      if (plan) {
        double sent = static_cast<double>(shape_ops::ExchangeElementsSent(plan->data)) *
                          shape_ops::SlabBytes(layout, sas_.shape(), d) +
                      static_cast<double>(shape_ops::ExchangeElementsSent(plan->source)) *
                          shape_ops::SlabBytes(layout, SourceShape(), d);
        if (CostTo(layout) + sent < CostTo(without_d)) {
          plans_.push_back(std::move(*plan));
          continue;
        }
      }
      gathered = with_d;
      layout = without_d;
    }
    // Lines depend on the final layout (gathered dims change the other dims' lines).
    for (ScatterDimPlan& plan : plans_) {
      DimLines lines = shape_ops::LinesAlongDim(layout, plan.dim, context_.num_devices());
      plan.tile_of_device = lines.tile_of_device;
      plan.data.lines = lines;
      plan.source.lines = std::move(lines);
    }
    return layout;
  }

  bool Finish(const Sharding& layout, const std::vector<ScatterDimPlan>& plans) {
    Instruction* data = op_.OperandWith(0, layout);
    Instruction* source = op_.OperandWith(1, layout);
    Instruction* init = op_.OperandWith(2, Sharding::Replicated());
    if (plans.empty()) {
      op_.SetResult(op_.Clone(ShardShapeOf(layout, sas_.shape()), {data, source, init}), layout);
      return true;
    }
    const int64_t devices = context_.num_devices();
    Instruction* pad = ExtremeValue(b_, sas_.shape().element_type(), *PadIsLowest(*sas_.called_computations()[0]));
    Instruction* zero = b_.ScalarConstant(SourceShape().element_type(), 0);
    Window window = sas_.window();
    for (const ScatterDimPlan& plan : plans) {
      std::vector<int64_t> data_start(devices), source_start(devices);
      for (int64_t p = 0; p < devices; ++p) {
        data_start[p] = plan.data.window_start[plan.tile_of_device[p]];
        source_start[p] = plan.source.window_start[plan.tile_of_device[p]];
      }
      data = shape_ops::ExchangeWindows(context_, b_, data, plan.data);
      data = MaskOutside(b_, data, plan.dim, data_start, sas_.shape().dim(plan.dim), pad);
      source = shape_ops::ExchangeWindows(context_, b_, source, plan.source);
      source = MaskOutside(b_, source, plan.dim, source_start, SourceShape().dim(plan.dim), zero);
      window[plan.dim].padding_low = 0;
      window[plan.dim].padding_high = 0;
    }
    Instruction* scattered = op_.Clone(data->shape(), {data, source, init});
    scattered->mutable_window() = window;
    scattered = RedoEdgeWindows(plans, data, source, init, window, scattered);
    for (const ScatterDimPlan& plan : plans) {
      std::vector<int64_t> piece_start(devices);
      for (int64_t p = 0; p < devices; ++p) piece_start[p] = plan.piece_start[plan.tile_of_device[p]];
      scattered = shape_ops::SliceAlongDim(b_, scattered, plan.dim, piece_start, plan.shard);
    }
    op_.SetResult(scattered, layout);
    return true;
  }

  // The pads written into the operand are never selected over a real element, except on a
  // tie with a real element equal to the pad (-inf, or the lowest integer, for a max-like
  // select): a pad that comes first in a window wins such a tie for a select that keeps the
  // first of equal elements, a pad that comes last for one that keeps the last. Only windows
  // overhanging the global start (first wins) or end (last wins) have such pads; the devices
  // holding them run the scatter again with that overhang as window padding, which is never
  // selected, and keep that result.
  Instruction* RedoEdgeWindows(const std::vector<ScatterDimPlan>& plans, Instruction* data, Instruction* source,
                               Instruction* init, const Window& window, Instruction* scattered) {
    const int64_t devices = context_.num_devices();
    const bool first_wins = FirstOfEqualWins(*sas_.called_computations()[0]);
    std::vector<std::vector<int64_t>> overhang(devices);  // per device, per plan
    for (int64_t p = 0; p < devices; ++p) {
      bool all_pad = false;
      for (const ScatterDimPlan& plan : plans) {
        int64_t length = data->shape().dim(plan.dim);
        int64_t start = plan.data.window_start[plan.tile_of_device[p]];
        int64_t size = sas_.shape().dim(plan.dim);
        int64_t over = first_wins ? -start : start + length - size;
        over = std::max<int64_t>(over, 0);
        all_pad = all_pad || over >= length;
        overhang[p].push_back(over);
      }
      // Windows without any real element scatter nothing either way.
      if (all_pad) std::fill(overhang[p].begin(), overhang[p].end(), 0);
    }
    std::vector<std::vector<int64_t>> variants = {std::vector<int64_t>(plans.size(), 0)};
    std::vector<int64_t> variant_of(devices, 0);
    for (int64_t p = 0; p < devices; ++p) {
      auto found = std::find(variants.begin(), variants.end(), overhang[p]);
      variant_of[p] = found - variants.begin();
      if (found == variants.end()) variants.push_back(overhang[p]);
    }
    if (variants.size() == 1) return scattered;
    const std::vector<int64_t>& dims = scattered->shape().dims();
    Instruction* which = b_.BroadcastScalar(shape_ops::LookupOrConstant(b_, variant_of), dims);
    Instruction* zero = b_.ScalarConstant(scattered->shape().element_type(), 0);
    for (size_t v = 1; v < variants.size(); ++v) {
      Instruction* edge_data = data;
      Window edge_window = window;
      PaddingConfig restore;
      for (size_t i = 0; i < plans.size(); ++i) {
        int64_t d = plans[i].dim, over = variants[v][i];
        std::vector<SliceDim> slice;
        for (int64_t k = 0; k < rank_; ++k) slice.push_back({0, edge_data->shape().dim(k), 1});
        if (first_wins) {
          slice[d].start = over;
          edge_window[d].padding_low = over;
        } else {
          slice[d].limit -= over;
          edge_window[d].padding_high = over;
        }
        if (over > 0) edge_data = b_.Slice(edge_data, slice);
      }
      Instruction* edge = op_.Clone(edge_data->shape(), {edge_data, source, init});
      edge->mutable_window() = edge_window;
      restore.resize(rank_);
      for (size_t i = 0; i < plans.size(); ++i)
        (first_wins ? restore[plans[i].dim].low : restore[plans[i].dim].high) = variants[v][i];
      edge = b_.Pad(edge, zero, restore);
      Instruction* mine = b_.Compare(which, b_.BroadcastScalar(b_.S32Constant(static_cast<int64_t>(v)), dims),
                                     ComparisonDirection::kEq);
      scattered = b_.Select(mine, edge, scattered);
    }
    return scattered;
  }

  OpContext& op_;
  const Instruction& sas_;
  SpmdContext& context_;
  HloBuilder& b_;
  int64_t rank_ = 0;
  Sharding layout_;
  std::vector<ScatterDimPlan> plans_;
};

}  // namespace

bool PartitionReduceWindow(OpContext& op) {
  switch (op.instruction().opcode()) {
    case Opcode::kReduceWindow:
      return ReduceWindowPartitioner(op).Run();
    case Opcode::kSelectAndScatter:
      return SelectAndScatterPartitioner(op).Run();
    default:
      return false;
  }
}

}  // namespace gspmd
