// The reduce handler (single and variadic): reduces each device's piece locally and resolves
// the partial results of sharded reduced dims with all-reduce / reduce-scatter of the reducer's
// op, or, for reducers that are no single op (argmax), by gathering the partial results and
// reducing them again.
#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

#include "partitioner/op_context.h"
#include "runtime/interp/kernels.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

constexpr double kNoPlan = std::numeric_limits<double>::infinity();

// Maximal shardings are computed on every device, like replicated ones.
Sharding AsAxisSharding(const Sharding& sharding) {
  return sharding.IsMaximal() || sharding.IsUnknown() ? Sharding::Replicated() : sharding;
}

const Sharding& ElementSharding(const Sharding& sharding, int64_t index) {
  return sharding.IsTuple() ? sharding.tuple_elements().at(index) : sharding;
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

// Reducing a value twice with these ops gives the same result, so padding and repeated init
// values may hold the init value itself.
bool IsIdempotent(Opcode reduction) {
  return reduction == Opcode::kMaximum || reduction == Opcode::kMinimum || reduction == Opcode::kAnd ||
         reduction == Opcode::kOr;
}

double IdentityOf(Opcode reduction) { return reduction == Opcode::kMultiply ? 1.0 : 0.0; }

// The op combining element i of a variadic reducer whose root is a tuple of independent
// binary ops (root element i = op(param i, param count + i)); nullopt when it mixes elements.
std::optional<Opcode> IndependentElementOp(const Computation& reducer, int64_t i, int64_t count) {
  const Instruction* root = reducer.root();
  if (root == nullptr || root->opcode() != Opcode::kTuple || root->operand_count() != count) return std::nullopt;
  if (reducer.num_parameters() != 2 * count) return std::nullopt;
  const Instruction* element = root->operand(i);
  if (element->operand_count() != 2) return std::nullopt;
  const Instruction* a = reducer.parameter(i);
  const Instruction* b = reducer.parameter(count + i);
  bool uses_pair = (element->operand(0) == a && element->operand(1) == b) ||
                   (element->operand(0) == b && element->operand(1) == a);
  if (!uses_pair) return std::nullopt;
  switch (element->opcode()) {
    case Opcode::kAdd: case Opcode::kMultiply: case Opcode::kMaximum: case Opcode::kMinimum:
    case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor:
      return element->opcode();
    default:
      return std::nullopt;
  }
}

// Per output element, the single collective op that combines partial results (all of them
// known), or nullopt when some element needs the reducer computation itself.
std::optional<std::vector<Opcode>> CollectiveOps(const Instruction& reduce, int64_t count) {
  const Computation& reducer = *reduce.to_apply();
  std::vector<Opcode> ops;
  if (count == 1) {
    std::optional<Opcode> op = OpcodeOfReducer(RecognizeReducer(reducer));
    if (!op) return std::nullopt;
    return std::vector<Opcode>{*op};
  }
  for (int64_t i = 0; i < count; ++i) {
    std::optional<Opcode> op = IndependentElementOp(reducer, i, count);
    if (!op) return std::nullopt;
    ops.push_back(*op);
  }
  return ops;
}

// True when `init` is a constant equal to the identity of `reduction`.
bool IsIdentityConstant(const Instruction& init, Opcode reduction) {
  if (init.opcode() != Opcode::kConstant || !init.literal() || init.literal()->shape().IsTuple()) return false;
  if (init.literal()->element_count() != 1) return false;
  return init.literal()->GetAsDouble(0) == IdentityOf(reduction);
}

// The reduce's dims: which operand dims are reduced, and the operand dim of each output dim.
struct ReduceDims {
  std::vector<bool> reduced;
  std::vector<int64_t> kept;  // output dim o comes from operand dim kept[o]
};

ReduceDims MakeReduceDims(const Instruction& reduce, int64_t rank) {
  ReduceDims dims;
  dims.reduced.assign(rank, false);
  for (int64_t d : reduce.dimensions) {
    if (d < 0 || d >= rank)
      GSPMD_USER_ERROR("reduce %", reduce.name(), " reduces dim ", d, " of a rank-", rank, " operand");
    dims.reduced[d] = true;
  }
  for (int64_t d = 0; d < rank; ++d)
    if (!dims.reduced[d]) dims.kept.push_back(d);
  return dims;
}

// The layout of the local reduce's result for an operand layout: kept dims keep their axes,
// the axes of reduced dims become partial-sum axes (replicated in the result).
struct LocalResult {
  AxisSharding layout;
  std::vector<DeviceAxis> partial;
};

LocalResult LocalResultOf(const AxisSharding& operand, const ReduceDims& dims) {
  LocalResult result;
  result.layout.replicated = operand.replicated;
  result.layout.manual = operand.manual;
  for (int64_t d : dims.kept) result.layout.dims.push_back(operand.dims[d]);
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (!dims.reduced[d]) continue;
    result.partial.insert(result.partial.end(), operand.dims[d].begin(), operand.dims[d].end());
  }
  result.layout.replicated.insert(result.layout.replicated.end(), result.partial.begin(), result.partial.end());
  std::sort(result.layout.replicated.begin(), result.layout.replicated.end());
  return result;
}

// `layout` with only its reduced dims split, for masking the padding of those dims alone.
AxisSharding ReducedOnly(const AxisSharding& layout, const ReduceDims& dims) {
  AxisSharding only = layout;
  for (int64_t d = 0; d < only.rank(); ++d) {
    if (dims.reduced[d]) continue;
    only.replicated.insert(only.replicated.end(), only.dims[d].begin(), only.dims[d].end());
    only.dims[d].clear();
  }
  std::sort(only.replicated.begin(), only.replicated.end());
  return only;
}

bool HasUnevenReducedDim(const AxisSharding& layout, const ReduceDims& dims, const Shape& shape) {
  for (int64_t d = 0; d < layout.rank(); ++d)
    if (dims.reduced[d] && shape.dim(d) % layout.TileCount(d) != 0) return true;
  return false;
}

double PlanCost(SpmdContext& context, const Shape& shape, const AxisSharding& from, const AxisSharding& to,
                const std::vector<DeviceAxis>& partial) {
  if (partial.empty() && from == to) return 0;
  ReshardProblem problem{shape.dims(), ElementByteSize(shape.element_type()), from, to, partial};
  const std::optional<ReshardPlan>& plan = context.Plan(problem);
  return plan ? plan->total_cost_bytes : kNoPlan;
}

// The operand layout built from the wanted output: kept dims take the output's axes, reduced
// dims keep those of their operand axes the output does not use; the rest is replicated.
// nullopt when the two cannot be written over common axes.
std::optional<AxisSharding> LayoutFromOutput(const AxisSharding& operand, const AxisSharding& out,
                                             const ReduceDims& dims) {
  auto refined = RefineToCommonAxes(operand, out);
  if (!refined) return std::nullopt;
  const AxisSharding& in = refined->first;
  const AxisSharding& wanted = refined->second;
  if (in.manual != wanted.manual) return std::nullopt;
  AxisSharding layout;
  layout.manual = in.manual;
  layout.dims.resize(in.rank());
  std::vector<DeviceAxis> used;
  for (size_t o = 0; o < dims.kept.size(); ++o) {
    layout.dims[dims.kept[o]] = wanted.dims[o];
    used.insert(used.end(), wanted.dims[o].begin(), wanted.dims[o].end());
  }
  auto is_used = [&](const DeviceAxis& axis) { return std::find(used.begin(), used.end(), axis) != used.end(); };
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (!dims.reduced[d]) continue;
    for (const DeviceAxis& axis : in.dims[d]) {
      if (is_used(axis)) break;  // keep a major-first prefix only
      layout.dims[d].push_back(axis);
      used.push_back(axis);
    }
  }
  for (const DeviceAxis& axis : in.AllAxes()) {
    bool manual = std::find(layout.manual.begin(), layout.manual.end(), axis) != layout.manual.end();
    if (!manual && !is_used(axis)) layout.replicated.push_back(axis);
  }
  std::sort(layout.replicated.begin(), layout.replicated.end());
  return layout;
}

class ReducePartitioner {
 public:
  explicit ReducePartitioner(OpContext& op)
      : op_(op), reduce_(op.instruction()), context_(op.spmd()), b_(op.builder()) {}

  bool Run() {
    count_ = reduce_.shape().IsTuple() ? reduce_.shape().tuple_size() : 1;
    if (reduce_.operand_count() != 2 * count_ || reduce_.called_computations().size() != 1) return false;
    for (int64_t i = 0; i < count_; ++i)
      if (!reduce_.operand(i)->shape().IsArray() || reduce_.operand(i)->shape().IsTuple()) return false;
    const PartitionedValue& first = op_.Operand(0);
    if (first.sharding.IsTuple()) return false;
    operand_shape_ = first.global_shape;
    dims_ = MakeReduceDims(reduce_, operand_shape_.rank());
    const auto& operand_axes = context_.Axes(AsAxisSharding(first.sharding), operand_shape_.rank());
    if (!operand_axes) return false;
    ops_ = CollectiveOps(reduce_, count_);

    AxisSharding layout = ChooseLayout(*operand_axes);
    LocalResult local = LocalResultOf(layout, dims_);
    std::vector<Instruction*> pieces = LocalReduce(layout, local);
    Sharding local_sharding = local.layout.ToSharding();
    if (local.partial.empty()) return Finish(pieces, local_sharding);
    if (ops_) return ResolveWithCollectives(pieces, local, local_sharding);
    return ResolveByGathering(pieces, layout, local_sharding);
  }

 private:
  const Shape& ResultShape(int64_t i) const {
    return count_ == 1 && !reduce_.shape().IsTuple() ? reduce_.shape() : reduce_.shape().tuple_shape(i);
  }

  // The operand layout of the local reduce: the operand's own, or one built from the wanted
  // output when that costs fewer bytes (or the same and splits the work further for free).
  AxisSharding ChooseLayout(const AxisSharding& own) {
    if (count_ != 1 || !ops_) return own;
    Sharding wanted_sharding = AsAxisSharding(ElementSharding(op_.sharding(), 0));
    if (wanted_sharding.IsTuple()) return own;
    const auto& wanted = context_.Axes(wanted_sharding, reduce_.shape().rank());
    if (!wanted) return own;
    std::optional<AxisSharding> from_output = LayoutFromOutput(own, *wanted, dims_);
    if (!from_output || *from_output == own) return own;
    double own_cost = ResolveCost(own, *wanted);
    double move_cost = PlanCost(context_, operand_shape_, own, *from_output, {});
    double other_cost = move_cost + ResolveCost(*from_output, *wanted);
    bool cheaper = other_cost < own_cost;
    bool free_and_finer = move_cost == 0 && other_cost <= own_cost;
    return cheaper || free_and_finer ? *from_output : own;
  }

  double ResolveCost(const AxisSharding& layout, const AxisSharding& wanted) {
    LocalResult local = LocalResultOf(layout, dims_);
    return PlanCost(context_, reduce_.shape(), local.layout, wanted, local.partial);
  }

  // The value padding of reduced dims is set to before the local reduce.
  Instruction* PadValue(int64_t i, Instruction* init) {
    if (ops_ && !IsIdempotent((*ops_)[i])) return b_.ScalarConstant(init->shape().element_type(), IdentityOf((*ops_)[i]));
    return init;
  }

  // Whether the init of element i must be kept out of the local reduces (it would be counted
  // once per device) and applied once after the partial results are combined.
  bool InitAppliedAfter(int64_t i, const LocalResult& local) const {
    if (local.partial.empty() || !ops_ || IsIdempotent((*ops_)[i])) return false;
    return !IsIdentityConstant(*reduce_.operand(count_ + i), (*ops_)[i]);
  }

  std::vector<Instruction*> LocalReduce(const AxisSharding& layout, const LocalResult& local) {
    Sharding operand_sharding = layout.ToSharding();
    bool mask = HasUnevenReducedDim(layout, dims_, operand_shape_);
    Sharding mask_sharding = mask ? ReducedOnly(layout, dims_).ToSharding() : Sharding::Replicated();
    std::vector<Instruction*> inputs, inits;
    for (int64_t i = 0; i < count_; ++i) {
      Instruction* init = op_.OperandWith(count_ + i, Sharding::Replicated());
      Instruction* input = op_.OperandWith(i, operand_sharding);
      if (mask) input = MaskPadding(b_, context_, input, reduce_.operand(i)->shape(), mask_sharding, PadValue(i, init));
      inputs.push_back(input);
      if (InitAppliedAfter(i, local)) {
        init_after_.push_back(init);
        init = b_.ScalarConstant(init->shape().element_type(), IdentityOf((*ops_)[i]));
      } else {
        init_after_.push_back(nullptr);
      }
      inits.push_back(init);
    }
    Sharding local_sharding = local.layout.ToSharding();
    std::vector<Shape> shapes;
    for (int64_t i = 0; i < count_; ++i) shapes.push_back(ShardShapeOf(local_sharding, ResultShape(i)));
    std::vector<Instruction*> operands = inputs;
    operands.insert(operands.end(), inits.begin(), inits.end());
    Shape shape = reduce_.shape().IsTuple() ? Shape::Tuple(shapes) : shapes[0];
    Instruction* reduced = op_.Clone(shape, operands);
    if (!reduce_.shape().IsTuple()) return {reduced};
    std::vector<Instruction*> pieces;
    for (int64_t i = 0; i < count_; ++i) pieces.push_back(b_.GetTupleElement(reduced, i));
    return pieces;
  }

  bool Finish(const std::vector<Instruction*>& pieces, const Sharding& sharding) {
    if (!reduce_.shape().IsTuple()) {
      op_.SetResult(pieces[0], sharding);
      return true;
    }
    op_.SetResult(b_.Tuple(pieces), Sharding::Tuple(std::vector<Sharding>(count_, sharding)));
    return true;
  }

  // Every element's partial results combine with one collective op.
  bool ResolveWithCollectives(const std::vector<Instruction*>& pieces, const LocalResult& local,
                              const Sharding& local_sharding) {
    std::vector<Instruction*> resolved;
    std::vector<Sharding> shardings;
    for (int64_t i = 0; i < count_; ++i) {
      Sharding target = AsAxisSharding(ElementSharding(op_.sharding(), i));
      PartitionedValue value = ResolvePartialSums(context_, b_, pieces[i], ResultShape(i), local_sharding,
                                                  local.partial, (*ops_)[i], target);
      Instruction* hlo = value.hlo;
      if (init_after_[i] != nullptr)
        hlo = b_.Binary((*ops_)[i], hlo, b_.BroadcastScalar(init_after_[i], hlo->shape().dims()));
      resolved.push_back(hlo);
      shardings.push_back(value.sharding);
    }
    if (!reduce_.shape().IsTuple()) {
      op_.SetResult(resolved[0], shardings[0]);
      return true;
    }
    op_.SetResult(b_.Tuple(resolved), Sharding::Tuple(shardings));
    return true;
  }

  // Reducers that are no single collective op: every device gathers the partial results of
  // its group (one per tile of the reduced dims) and reduces them again with the reducer.
  bool ResolveByGathering(const std::vector<Instruction*>& pieces, const AxisSharding& layout,
                          const Sharding& local_sharding) {
    // The partial results as an array of the operand's rank whose reduced dims have one
    // element per tile, split over the reduced dims' axes.
    AxisSharding spread = layout;
    AxisSharding gathered = layout;
    for (int64_t d = 0; d < layout.rank(); ++d) {
      if (!dims_.reduced[d]) continue;
      gathered.replicated.insert(gathered.replicated.end(), layout.dims[d].begin(), layout.dims[d].end());
      gathered.dims[d].clear();
    }
    std::sort(gathered.replicated.begin(), gathered.replicated.end());
    Sharding spread_sharding = spread.ToSharding();
    Sharding gathered_sharding = gathered.ToSharding();
    std::vector<Instruction*> all_partials;
    for (int64_t i = 0; i < count_; ++i) {
      const Shape& result_shape = ResultShape(i);
      std::vector<int64_t> global_dims(operand_shape_.rank()), local_dims(operand_shape_.rank());
      for (int64_t d = 0, o = 0; d < operand_shape_.rank(); ++d) {
        if (dims_.reduced[d]) {
          global_dims[d] = layout.TileCount(d);
          local_dims[d] = 1;
        } else {
          global_dims[d] = result_shape.dim(o);
          local_dims[d] = pieces[i]->shape().dim(o);
          ++o;
        }
      }
      Instruction* expanded = b_.Reshape(pieces[i], local_dims);
      PartitionedValue partial{expanded, Shape(result_shape.element_type(), global_dims), spread_sharding};
      all_partials.push_back(Reshard(context_, b_, partial, gathered_sharding).hlo);
    }
    std::vector<Instruction*> operands = all_partials;
    for (int64_t i = 0; i < count_; ++i) operands.push_back(op_.OperandWith(count_ + i, Sharding::Replicated()));
    std::vector<Shape> shapes;
    for (Instruction* piece : pieces) shapes.push_back(piece->shape());
    Shape shape = reduce_.shape().IsTuple() ? Shape::Tuple(shapes) : shapes[0];
    Instruction* reduced = op_.Clone(shape, operands);
    if (!reduce_.shape().IsTuple()) {
      op_.SetResult(reduced, local_sharding);
      return true;
    }
    op_.SetResult(reduced, Sharding::Tuple(std::vector<Sharding>(count_, local_sharding)));
    return true;
  }

  OpContext& op_;
  const Instruction& reduce_;
  SpmdContext& context_;
  HloBuilder& b_;
  int64_t count_ = 1;
  Shape operand_shape_;
  ReduceDims dims_;
  std::optional<std::vector<Opcode>> ops_;
  std::vector<Instruction*> init_after_;  // per element: the init to apply once, or null
};

}  // namespace

bool PartitionReduce(OpContext& op) {
  if (op.instruction().opcode() != Opcode::kReduce) return false;
  return ReducePartitioner(op).Run();
}

}  // namespace gspmd
