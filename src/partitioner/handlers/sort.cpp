// The sort, topk and TopK custom-call handlers. Sort needs its sort dim whole on every device:
// the dim's device axes go to replication or to another dim (all-to-all), whichever is
// cheaper. Top-k along a sharded last dim takes the local top-k of every shard, all-gathers
// those k candidates (values and global indices) and takes the top-k of the candidates.
#include <algorithm>
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

// ---- sort ----

bool PartitionSortOp(OpContext& op) {
  const Instruction& sort = op.instruction();
  const int64_t count = sort.operand_count();
  if (count == 0 || sort.dimensions.size() != 1) return false;
  const Shape& shape = sort.operand(0)->shape();
  if (!shape.IsArray()) return false;
  const int64_t rank = shape.rank();
  const int64_t dim = sort.dimensions[0];
  if (dim < 0 || dim >= rank) GSPMD_USER_ERROR("sort %", sort.name(), " sorts dim ", dim, " of a rank-", rank, " operand");
  for (int64_t i = 0; i < count; ++i)
    if (!sort.operand(i)->shape().IsArray() || sort.operand(i)->shape().dims() != shape.dims()) return false;
  if (op.Operand(0).sharding.IsTuple()) return false;
  SpmdContext& context = op.spmd();

  // Candidate layouts: the operand's and the result's, with the sort dim's axes replicated or
  // moved to another dim.
  std::vector<Sharding> bases = {AsAxisSharding(op.Operand(0).sharding), AsAxisSharding(ElementSharding(op.sharding(), 0))};
  std::vector<Sharding> candidates;
  for (const Sharding& base : bases) {
    if (base.IsTuple()) continue;
    if (shape_ops::TileCountOf(base, dim) == 1) {
      candidates.push_back(base);
      continue;
    }
    candidates.push_back(shape_ops::ReplicateDims(base, rank, {dim}));
    for (int64_t other = 0; other < rank; ++other) {
      if (other == dim || shape.dim(other) < 2) continue;
      if (std::optional<Sharding> moved = MoveDimAxes(context, base, rank, dim, other)) candidates.push_back(*moved);
    }
  }
  if (candidates.empty()) return false;
  double best_cost = kNoPlan;
  const Sharding* best = nullptr;
  for (const Sharding& candidate : candidates) {
    double cost = 0;
    for (int64_t i = 0; i < count; ++i) {
      cost += CostOf(context, sort.operand(i)->shape(), op.Operand(i).sharding, candidate);
      cost += CostOf(context, sort.operand(i)->shape(), candidate, ElementSharding(op.sharding(), i));
    }
    if (best == nullptr || cost < best_cost) {
      best_cost = cost;
      best = &candidate;
    }
  }
  const Sharding layout = *best;
  std::vector<Instruction*> operands;
  std::vector<Shape> shapes;
  for (int64_t i = 0; i < count; ++i) {
    operands.push_back(op.OperandWith(i, layout));
    shapes.push_back(ShardShapeOf(layout, sort.operand(i)->shape()));
  }
  if (!sort.shape().IsTuple()) {
    op.SetResult(op.Clone(shapes[0], operands), layout);
    return true;
  }
  op.SetResult(op.Clone(Shape::Tuple(shapes), operands), Sharding::Tuple(std::vector<Sharding>(count, layout)));
  return true;
}

// ---- top-k ----

// The value that never wins a top-k: -inf / the lowest integer for the largest k, else the
// highest.
Instruction* LosingValue(HloBuilder& b, ElementType type, bool largest) {
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
      : op_(op), topk_(op.instruction()), info_(std::move(info)), context_(op.spmd()), b_(op.builder()),
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
    double output_cost = WholeCost(whole_from_output);
    if (output_cost < whole_cost) {
      whole = whole_from_output;
      whole_cost = output_cost;
    }
    int64_t tiles = shape_ops::TileCountOf(own, last_);
    bool candidates_fit = own.IsTiled() && tiles > 1 && info_.k <= ShardSize(info_.operand_shape.dim(last_), tiles);
    if (candidates_fit && context_.Axes(own, rank_) && CandidatesCost(own, tiles) < whole_cost)
      return RunWithCandidates(own, tiles);
    return RunWhole(whole);
  }

 private:
  Sharding ResultSharding(const Sharding& element) const { return Sharding::Tuple({element, element}); }

  double ResultCost(const Sharding& layout) {
    return CostOf(context_, info_.values_shape, layout, ElementSharding(op_.sharding(), 0)) +
           CostOf(context_, info_.indices_shape, layout, ElementSharding(op_.sharding(), 1));
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
                          LosingValue(b_, value_type, info_.largest));

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
  const Instruction& topk_;
  TopKInfo info_;
  SpmdContext& context_;
  HloBuilder& b_;
  int64_t rank_;
  int64_t last_;
};

}  // namespace

bool PartitionSort(OpContext& op) {
  const Instruction& instruction = op.instruction();
  if (instruction.opcode() == Opcode::kSort) return PartitionSortOp(op);
  std::optional<TopKInfo> info = TopKInfoOf(instruction);
  if (!info) return false;
  return TopKPartitioner(op, std::move(*info)).Run();
}

}  // namespace gspmd
