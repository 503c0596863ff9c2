// The sort, topk and TopK custom-call handlers. Sort needs its sort dim whole on every device:
// the dim's device axes go to replication or to another dim (all-to-all), whichever is
// cheaper; a sort of which only the first k elements are read (top-k written as sort + slice)
// sorts every shard, gathers each shard's first k and sorts those. Top-k along a sharded last
// dim likewise takes the local top-k of every shard, all-gathers those k candidates (values
// and global indices) and takes the top-k of the candidates.
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "partitioner/handlers/shape_ops.h"
#include "partitioner/op_context.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

constexpr double kNoPlan = 1e300;

// Maximal shardings are computed on every device, like replicated ones.
Sharding AsAxisSharding(const Sharding& sharding) {
  return sharding.IsMaximal() || sharding.IsUnknown() ? Sharding::Replicated() : sharding;
}

const Sharding& ElementSharding(const Sharding& sharding, int64_t index) {
  return sharding.IsTuple() ? sharding.tuple_elements().at(index) : sharding;
}

// Where element `element` of a sort or top-k result is wanted: its own layout, replicated
// where the result returns it whole (its own layout is then sliced from that), or nullopt when
// nobody reads it (an argsort's values: oracle seed 115229) and any layout will do.
std::optional<Sharding> ElementTarget(const OpContext& op, int64_t element) {
  const Instruction& instruction = op.instruction();
  if (!instruction.shape().IsTuple()) return op.sharding();
  bool read = false, whole = false;
  for (const Instruction* user : instruction.users()) {
    if (user->opcode() != Opcode::kGetTupleElement) return ElementSharding(op.sharding(), element);
    if (user->tuple_index != element) continue;
    read = true;
    whole = whole || op.WholeWantedLater(*user);
  }
  if (!read) return std::nullopt;
  return whole ? Sharding::Replicated() : ElementSharding(op.sharding(), element);
}

double CostOf(SpmdContext& context, const Shape& shape, const Sharding& from, const Sharding& to) {
  std::optional<double> cost = shape_ops::ReshardCost(context, shape, AsAxisSharding(from), AsAxisSharding(to));
  return cost ? *cost : kNoPlan;
}

// `sharding` with the device axes of dim `from` moved to the minor end of dim `to`; nullopt
// when it is not a product of device axes.
std::optional<Sharding> MoveDimAxes(SpmdContext& context, const Sharding& sharding, int64_t rank, int64_t from,
                                    int64_t to) {
  const auto& axes = context.Axes(sharding, rank);
  if (!axes) return std::nullopt;
  AxisSharding moved = *axes;
  moved.dims[to].insert(moved.dims[to].end(), moved.dims[from].begin(), moved.dims[from].end());
  moved.dims[from].clear();
  return moved.ToSharding();
}

// The value that never wins a top-k: -inf / the lowest integer for the largest k, else the
// highest. In the float total order (TopK, or a TOTALORDER comparator) -NaN lies below -inf, so
// the loser is the NaN with every bit set (below every other value), or with all but the sign.
Instruction* LosingValue(HloBuilder& b, ElementType type, bool largest, bool total_order) {
  if (IsFloatingPoint(type) && total_order) {
    Literal literal(Shape(type, {}));
    std::memset(literal.raw(), 0xff, static_cast<size_t>(ElementByteSize(type)));
    if (!largest) literal.raw()[ElementByteSize(type) - 1] = 0x7f;  // little-endian: the sign byte
    return b.Constant(std::move(literal));
  }
  if (IsFloatingPoint(type))
    return b.ScalarConstant(type, largest ? -std::numeric_limits<double>::infinity()
                                          : std::numeric_limits<double>::infinity());
  Literal literal(Shape(type, {}));
  DispatchElementType(type, [&]<typename T>() {
    if constexpr (std::is_integral_v<T>)
      literal.data<T>()[0] = largest ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
  });
  return b.Constant(std::move(literal));
}

// ---- sort ----

// The value a comparator that is one compare of operand 0's two parameters sorts last: the
// highest for an ascending (LT/LE) compare, the lowest for a descending one; nullopt when the
// comparator is anything else.
std::optional<bool> LastIsLowest(const Computation& comparator) {
  const Instruction* root = comparator.root();
  if (root == nullptr || root->opcode() != Opcode::kCompare || comparator.num_parameters() < 2) return std::nullopt;
  const Instruction* p0 = comparator.parameter(0);
  const Instruction* p1 = comparator.parameter(1);
  bool direct = root->operand(0) == p0 && root->operand(1) == p1;
  bool swapped = root->operand(0) == p1 && root->operand(1) == p0;
  if (!direct && !swapped) return std::nullopt;
  switch (root->comparison_direction) {
    case ComparisonDirection::kLt: case ComparisonDirection::kLe: return swapped;
    case ComparisonDirection::kGt: case ComparisonDirection::kGe: return direct;
    default: return std::nullopt;
  }
}

// When every use of the sort reads only a prefix of the sort dim (slices, directly or after
// get-tuple-element), the prefix length; nullopt otherwise (or when the sort is a root).
std::optional<int64_t> SortedPrefixRead(const Instruction& sort, int64_t dim) {
  auto slice_limit = [&](const Instruction& user) -> std::optional<int64_t> {
    if (user.opcode() != Opcode::kSlice || user.slice().size() <= static_cast<size_t>(dim)) return std::nullopt;
    return user.slice()[dim].limit;
  };
  auto is_root = [](const Instruction& instruction) {
    return instruction.parent() != nullptr && instruction.parent()->root() == &instruction;
  };
  if (is_root(sort) || sort.users().empty()) return std::nullopt;
  int64_t prefix = 0;
  for (const Instruction* user : sort.users()) {
    std::vector<const Instruction*> readers = {user};
    if (sort.shape().IsTuple()) {
      if (user->opcode() != Opcode::kGetTupleElement || is_root(*user) || user->users().empty()) return std::nullopt;
      readers.assign(user->users().begin(), user->users().end());
    }
    for (const Instruction* reader : readers) {
      std::optional<int64_t> limit = slice_limit(*reader);
      if (!limit) return std::nullopt;
      prefix = std::max(prefix, *limit);
    }
  }
  return prefix;
}

class SortPartitioner {
 public:
  explicit SortPartitioner(OpContext& op) : op_(op), sort_(op.instruction()), context_(op.spmd()), b_(op.builder()) {}

  bool Run() {
    count_ = sort_.operand_count();
    if (count_ == 0 || sort_.dimensions.size() != 1) return false;
    const Shape& shape = sort_.operand(0)->shape();
    if (!shape.IsArray()) return false;
    rank_ = shape.rank();
    dim_ = sort_.dimensions[0];
    if (dim_ < 0 || dim_ >= rank_)
      GSPMD_USER_ERROR("sort %", sort_.name(), " sorts dim ", dim_, " of a rank-", rank_, " operand");
    for (int64_t i = 0; i < count_; ++i)
      if (!sort_.operand(i)->shape().IsArray() || sort_.operand(i)->shape().dims() != shape.dims()) return false;
    for (int64_t i = 0; i < count_; ++i)
      if (op_.Operand(i).sharding.IsTuple()) return false;
    double whole_cost = 0;
    Sharding whole = ChooseWholeLayout(&whole_cost);
    if (TryPrefix(whole_cost)) return true;
    return RunWhole(whole);
  }

 private:
  const Shape& OperandShape(int64_t i) const { return sort_.operand(i)->shape(); }

  // What moving the sorted elements someone reads to where they are wanted costs (an
  // argsort reads only the indices: oracle seed 115229, where counting the sorted values too
  // made gathering both operands look no dearer than moving the sort dim's axes to another dim).
  double ResultCost(const Sharding& layout) {
    double cost = 0;
    for (int64_t i = 0; i < count_; ++i)
      if (std::optional<Sharding> target = ElementTarget(op_, i)) cost += CostOf(context_, OperandShape(i), layout, *target);
    return cost;
  }

  // The layout with the whole sort dim on every device: the operand's or the result's, with
  // the sort dim's axes replicated or moved to another dim, by estimated bytes.
  Sharding ChooseWholeLayout(double* best_cost) {
    std::vector<Sharding> bases = {AsAxisSharding(op_.Operand(0).sharding),
                                   AsAxisSharding(ElementSharding(op_.sharding(), 0))};
    std::vector<Sharding> candidates;
    for (const Sharding& base : bases) {
      if (shape_ops::TileCountOf(base, dim_) == 1) {
        candidates.push_back(base);
        continue;
      }
      candidates.push_back(shape_ops::ReplicateDims(base, rank_, {dim_}));
      for (int64_t other = 0; other < rank_; ++other) {
        if (other == dim_ || OperandShape(0).dim(other) < 2) continue;
        if (std::optional<Sharding> moved = MoveDimAxes(context_, base, rank_, dim_, other)) candidates.push_back(*moved);
      }
    }
    const Sharding* best = nullptr;
    for (const Sharding& candidate : candidates) {
      double cost = ResultCost(candidate);
      for (int64_t i = 0; i < count_; ++i) cost += OperandCost(i, candidate);
      if (best == nullptr || cost < *best_cost) {
        *best_cost = cost;
        best = &candidate;
      }
    }
    return *best;
  }

  // Bytes of bringing operand i into `layout`. Where another user takes the operand whole
  // anyway, only what this adds to that gather counts: a layout on the way to replicated is
  // free (oracle seed 114778: an argsort moved its operand by all-to-all while a reshape
  // gathered the same operand whole; sorting in the gathered form moves nothing more).
  double OperandCost(int64_t i, const Sharding& layout) {
    const Sharding& from = op_.Operand(i).sharding;
    const double cost = CostOf(context_, OperandShape(i), from, layout);
    if (cost <= 0 || !WantedWholeElsewhere(i)) return cost;
    const Sharding whole = Sharding::Replicated();
    const double shared = CostOf(context_, OperandShape(i), from, whole);
    return std::max(0.0, cost + CostOf(context_, OperandShape(i), layout, whole) - shared);
  }

  // Whether a user of operand i other than the sort reads all of it replicated.
  bool WantedWholeElsewhere(int64_t i) const {
    const Instruction* operand = sort_.operand(i);
    for (const Instruction* user : operand->users()) {
      if (user == &sort_ || user->parent() != sort_.parent() || !user->shape().IsArray()) continue;
      const Opcode opcode = user->opcode();
      if (opcode == Opcode::kSlice || opcode == Opcode::kDynamicSlice || opcode == Opcode::kGather) continue;
      if (op_.ShardingOf(*user).IsReplicated()) return true;
    }
    return false;
  }

  bool RunWhole(const Sharding& layout) {
    std::vector<Instruction*> operands;
    std::vector<Shape> shapes;
    for (int64_t i = 0; i < count_; ++i) {
      operands.push_back(op_.OperandWith(i, layout));
      shapes.push_back(ShardShapeOf(layout, OperandShape(i)));
    }
    Finish(op_.Clone(sort_.shape().IsTuple() ? Shape::Tuple(shapes) : shapes[0], operands), layout);
    return true;
  }

  void Finish(Instruction* result, const Sharding& layout) {
    if (!sort_.shape().IsTuple()) {
      op_.SetResult(result, layout);
      return;
    }
    op_.SetResult(result, Sharding::Tuple(std::vector<Sharding>(count_, layout)));
  }

  // Only a prefix of k sorted elements is read (top-k through sort): every shard sorts its
  // piece, its first k elements are all-gathered, and they are sorted again. Ties keep their
  // order: candidates arrive in shard order and the sort is stable if the original is.
  bool TryPrefix(double whole_cost) {
    Sharding own = AsAxisSharding(op_.Operand(0).sharding);
    const int64_t tiles = shape_ops::TileCountOf(own, dim_);
    if (!own.IsTiled() || tiles == 1 || !context_.Axes(own, rank_)) return false;
    std::optional<int64_t> k = SortedPrefixRead(sort_, dim_);
    const int64_t size = OperandShape(0).dim(dim_);
    if (!k || *k <= 0 || *k >= ShardSize(size, tiles)) return false;
    std::optional<bool> last_is_lowest;
    if (size % tiles != 0) {
      last_is_lowest = LastIsLowest(*sort_.to_apply());
      if (!last_is_lowest) return false;
    }
    Sharding gathered = shape_ops::ReplicateDims(own, rank_, {dim_});
    double cost = ResultCost(gathered);
    for (int64_t i = 0; i < count_; ++i) {
      cost += CostOf(context_, OperandShape(i), op_.Operand(i).sharding, own);
      cost += CostOf(context_, CandidateShape(i, *k * tiles), own, gathered);
    }
    if (cost >= whole_cost) return false;

    std::vector<Instruction*> operands;
    std::vector<Shape> shapes;
    for (int64_t i = 0; i < count_; ++i) {
      Instruction* operand = op_.OperandWith(i, own);
      if (i == 0 && last_is_lowest) {
        std::vector<int64_t> only_dim(rank_, -1);
        only_dim[dim_] = dim_;
        operand = MaskPadding(b_, context_, operand, OperandShape(0), shape_ops::RemapSharding(own, only_dim),
                              LosingValue(b_, OperandShape(0).element_type(), *last_is_lowest,
                                          sort_.to_apply()->root()->comparison_type == ComparisonType::kTotalOrder));
      }
      operands.push_back(operand);
      shapes.push_back(operand->shape());
    }
    Instruction* local = op_.Clone(sort_.shape().IsTuple() ? Shape::Tuple(shapes) : shapes[0], operands);
    std::vector<Instruction*> candidates;
    for (int64_t i = 0; i < count_; ++i) {
      Instruction* piece = sort_.shape().IsTuple() ? b_.GetTupleElement(local, i) : local;
      piece = shape_ops::SliceAlongDim(b_, piece, dim_, {0}, *k);
      PartitionedValue value{piece, CandidateShape(i, *k * tiles), own};
      candidates.push_back(Reshard(context_, b_, value, gathered).hlo);
    }
    std::vector<Shape> candidate_shapes;
    for (Instruction* candidate : candidates) candidate_shapes.push_back(candidate->shape());
    Instruction* best = op_.Clone(sort_.shape().IsTuple() ? Shape::Tuple(candidate_shapes) : candidate_shapes[0],
                                  candidates);
    // Back to the sort's shape; past the prefix the values are never read.
    std::vector<Instruction*> results;
    for (int64_t i = 0; i < count_; ++i) {
      Instruction* sorted = sort_.shape().IsTuple() ? b_.GetTupleElement(best, i) : best;
      std::vector<int64_t> dims = sorted->shape().dims();
      dims[dim_] = size;
      if (sorted->shape().dim(dim_) > size) sorted = b_.SliceToSize(sorted, dims);
      if (sorted->shape().dim(dim_) < size)
        sorted = b_.PadToSize(sorted, dims, b_.ScalarConstant(sorted->shape().element_type(), 0));
      results.push_back(sorted);
    }
    Finish(sort_.shape().IsTuple() ? b_.Tuple(results) : results[0], gathered);
    return true;
  }

  Shape CandidateShape(int64_t i, int64_t length) const {
    std::vector<int64_t> dims = OperandShape(i).dims();
    dims[dim_] = length;
    return Shape(OperandShape(i).element_type(), dims);
  }

  OpContext& op_;
  const Instruction& sort_;
  SpmdContext& context_;
  HloBuilder& b_;
  int64_t count_ = 0;
  int64_t rank_ = 0;
  int64_t dim_ = 0;
};

// ---- top-k ----

struct TopKInfo {
  int64_t k = 0;
  bool largest = true;
  Shape operand_shape;
  Shape values_shape, indices_shape;
};

std::optional<TopKInfo> TopKInfoOf(const Instruction& topk) {
  bool custom = topk.opcode() == Opcode::kCustomCall;
  if (custom && topk.custom_call_target != "TopK") return std::nullopt;
  if (!custom && topk.opcode() != Opcode::kTopK) return std::nullopt;
  if (topk.operand_count() != 1 || !topk.shape().IsTuple() || topk.shape().tuple_size() != 2) return std::nullopt;
  TopKInfo info;
  info.operand_shape = topk.operand(0)->shape();
  if (!info.operand_shape.IsArray() || info.operand_shape.rank() == 0) return std::nullopt;
  info.values_shape = topk.shape().tuple_shape(0);
  info.indices_shape = topk.shape().tuple_shape(1);
  if (!info.values_shape.IsArray() || !info.indices_shape.IsArray()) return std::nullopt;
  if (info.values_shape.rank() != info.operand_shape.rank() || !IsInteger(info.indices_shape.element_type()))
    return std::nullopt;
  info.k = custom ? info.values_shape.dims().back() : topk.k;
  info.largest = custom ? true : topk.largest;
  return info;
}

class TopKPartitioner {
 public:
  TopKPartitioner(OpContext& op, TopKInfo info)
      : op_(op), info_(std::move(info)), context_(op.spmd()), b_(op.builder()),
        rank_(info_.operand_shape.rank()), last_(rank_ - 1) {}

  bool Run() {
    const Sharding& source = op_.Operand(0).sharding;
    if (source.IsTuple()) return false;
    Sharding own = AsAxisSharding(source);
    // Whole last dim: the operand with its last dim gathered (or the result's layout).
    Sharding whole = own.IsTiled() ? shape_ops::ReplicateDims(own, rank_, {last_}) : own;
    Sharding wanted = AsAxisSharding(ElementSharding(op_.sharding(), 0));
    Sharding whole_from_output = wanted.IsTiled() ? shape_ops::ReplicateDims(wanted, rank_, {last_}) : wanted;
    double whole_cost = WholeCost(whole);
    // Replicated too, where the result returns the elements whole (oracle seed 114866: values
    // and indices of a top-k over a split batch dim, each gathered, 560 B, where XLA gathers
    // the smaller operand once, 336 B).
    for (const Sharding& other : {whole_from_output, Sharding::Replicated()}) {
      const double cost = WholeCost(other);
      if (cost < whole_cost) {
        whole = other;
        whole_cost = cost;
      }
    }
    int64_t tiles = shape_ops::TileCountOf(own, last_);
    bool candidates_fit = own.IsTiled() && tiles > 1 && info_.k <= ShardSize(info_.operand_shape.dim(last_), tiles);
    if (candidates_fit && context_.Axes(own, rank_) && CandidatesCost(own, tiles) < whole_cost)
      return RunWithCandidates(own, tiles);
    return RunWhole(whole);
  }

 private:
  Sharding ResultSharding(const Sharding& element) const { return Sharding::Tuple({element, element}); }

  // Moving the results from `layout` to where they are wanted: their own layouts, or whole
  // where the result returns them replicated (then their own layouts are sliced from it).
  double ResultCost(const Sharding& layout) {
    double cost = 0;
    if (std::optional<Sharding> values = ElementTarget(op_, 0)) cost += CostOf(context_, info_.values_shape, layout, *values);
    if (std::optional<Sharding> indices = ElementTarget(op_, 1)) cost += CostOf(context_, info_.indices_shape, layout, *indices);
    return cost;
  }

  double WholeCost(const Sharding& layout) {
    return CostOf(context_, info_.operand_shape, op_.Operand(0).sharding, layout) + ResultCost(layout);
  }

  Shape CandidateShape(const Shape& shape, int64_t tiles) const {
    std::vector<int64_t> dims = shape.dims();
    dims[last_] = tiles * info_.k;
    return Shape(shape.element_type(), dims);
  }

  double CandidatesCost(const Sharding& own, int64_t tiles) {
    Sharding gathered = shape_ops::ReplicateDims(own, rank_, {last_});
    return CostOf(context_, CandidateShape(info_.values_shape, tiles), own, gathered) +
           CostOf(context_, CandidateShape(info_.indices_shape, tiles), own, gathered) + ResultCost(gathered);
  }

  std::vector<int64_t> LocalDims(const Sharding& layout, const Shape& shape) const {
    return ShardDimsOf(layout, shape.dims());
  }

  bool RunWhole(const Sharding& layout) {
    Instruction* operand = op_.OperandWith(0, layout);
    Shape values(info_.values_shape.element_type(), LocalDims(layout, info_.values_shape));
    Shape indices(info_.indices_shape.element_type(), LocalDims(layout, info_.indices_shape));
    op_.SetResult(op_.Clone(Shape::Tuple({values, indices}), {operand}), ResultSharding(layout));
    return true;
  }

  // Local top-k of every shard, global indices, all-gather of the candidates, top-k of them.
  bool RunWithCandidates(const Sharding& own, int64_t tiles) {
    Instruction* operand = op_.OperandWith(0, own);
    const ElementType value_type = info_.values_shape.element_type();
    const ElementType index_type = info_.indices_shape.element_type();
    std::vector<int64_t> last_only(rank_, -1);
    last_only[last_] = last_;
    operand = MaskPadding(b_, context_, operand, info_.operand_shape, shape_ops::RemapSharding(own, last_only),
                          LosingValue(b_, value_type, info_.largest, /*total_order=*/true));

    std::vector<int64_t> local_dims = operand->shape().dims();
    local_dims[last_] = info_.k;
    Instruction* local = op_.Clone(
        Shape::Tuple({Shape(value_type, local_dims), Shape(index_type, local_dims)}), {operand});
    Instruction* local_values = b_.GetTupleElement(local, 0);
    Instruction* local_indices = b_.GetTupleElement(local, 1);
    Instruction* offset = ShardOffset(b_, context_, own, info_.operand_shape.dims(), last_);
    if (index_type != ElementType::kS32) offset = b_.Convert(offset, index_type);
    Instruction* global_indices = b_.Binary(Opcode::kAdd, local_indices, b_.BroadcastScalar(offset, local_dims));

    Sharding gathered = shape_ops::ReplicateDims(own, rank_, {last_});
    Instruction* all_values =
        Reshard(context_, b_, {local_values, CandidateShape(info_.values_shape, tiles), own}, gathered).hlo;
    Instruction* all_indices =
        Reshard(context_, b_, {global_indices, CandidateShape(info_.indices_shape, tiles), own}, gathered).hlo;

    Instruction* best = op_.Clone(local->shape(), {all_values});
    Instruction* values = b_.GetTupleElement(best, 0);
    Instruction* positions = b_.GetTupleElement(best, 1);
    Instruction* indices = TakeAlongLastDim(all_indices, positions);
    op_.SetResult(b_.Tuple({values, indices}), ResultSharding(gathered));
    return true;
  }

  // result[..., j] = table[..., positions[..., j]], as a one-hot select and a sum over the
  // (short) candidate dim.
  Instruction* TakeAlongLastDim(Instruction* table, Instruction* positions) {
    const ElementType type = table->shape().element_type();
    std::vector<int64_t> dims = positions->shape().dims();  // [..., k]
    const int64_t candidates = table->shape().dim(last_);
    std::vector<int64_t> wide = dims;  // [..., k, candidates]
    wide.push_back(candidates);
    std::vector<int64_t> leading(rank_ - 1);
    for (int64_t d = 0; d < rank_ - 1; ++d) leading[d] = d;
    std::vector<int64_t> position_dims = leading, table_dims = leading;
    position_dims.push_back(last_);
    table_dims.push_back(last_ + 1);
    if (positions->shape().element_type() != ElementType::kS32) positions = b_.Convert(positions, ElementType::kS32);
    Instruction* wanted = b_.Broadcast(positions, wide, position_dims);
    Instruction* iota = b_.Iota(Shape(ElementType::kS32, wide), last_ + 1);
    Instruction* hit = b_.Compare(wanted, iota, ComparisonDirection::kEq);
    Instruction* spread = b_.Broadcast(table, wide, table_dims);
    Instruction* zero = b_.ScalarConstant(type, 0);
    Instruction* picked = b_.Select(hit, spread, b_.BroadcastScalar(zero, wide));
    Instruction* sum = b_.AddOp(Opcode::kReduce, Shape(type, dims), {picked, zero});
    sum->dimensions = {last_ + 1};
    sum->set_called_computations({context_.collectives().Reducer(Opcode::kAdd, type)});
    return sum;
  }

  OpContext& op_;
  TopKInfo info_;
  SpmdContext& context_;
  HloBuilder& b_;
  int64_t rank_;
  int64_t last_;
};

}  // namespace

bool PartitionSort(OpContext& op) {
  const Instruction& instruction = op.instruction();
  if (instruction.opcode() == Opcode::kSort) return SortPartitioner(op).Run();
  std::optional<TopKInfo> info = TopKInfoOf(instruction);
  if (!info) return false;
  return TopKPartitioner(op, std::move(*info)).Run();
}

}  // namespace gspmd
