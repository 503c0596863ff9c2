// The partitioning driver for one computation, and module-wide bookkeeping.
#include "partitioner/computation_partitioner.h"

#include <algorithm>
#include <map>
#include <optional>

#include "ir/instruction_error.h"
#include "partitioner/constant_folds.h"
#include "partitioner/handlers/shape_ops.h"
#include "partitioner/manual.h"
#include "partitioner/partial_sums.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// Whether `instruction` passes its one operand's value on unchanged: a copy or a sharding
// constraint.
bool PassesValueOn(const Instruction& instruction) {
  return instruction.operand_count() == 1 &&
         (instruction.opcode() == Opcode::kCopy ||
          (instruction.opcode() == Opcode::kCustomCall && instruction.custom_call_target == "Sharding"));
}

Sharding TupleOfReplicated(const Shape& shape) {
  std::vector<Sharding> elements;
  for (const Shape& element : shape.tuple_shapes())
    elements.push_back(element.IsTuple() ? TupleOfReplicated(element) : Sharding::Replicated());
  return Sharding::Tuple(std::move(elements));
}

// A tuple-shaped value with a non-tuple sharding: the same sharding for every leaf.
Sharding ExpandForShape(const Sharding& sharding, const Shape& shape) {
  if (!shape.IsTuple() || sharding.IsTuple()) return sharding;
  std::vector<Sharding> elements;
  for (const Shape& element : shape.tuple_shapes()) elements.push_back(ExpandForShape(sharding, element));
  return Sharding::Tuple(std::move(elements));
}

bool RunHandlers(OpContext& op) {
  return PartitionCustomCall(op) || PartitionControlFlow(op) || PartitionManual(op) || PartitionBasic(op) ||
         PartitionElementwise(op) || PartitionDot(op) || PartitionShapeOp(op) || PartitionConvolution(op) ||
         PartitionGather(op) || PartitionScatter(op) || PartitionReduce(op) || PartitionReduceWindow(op) ||
         PartitionSort(op);
}

// The same tiling in iota device order, when `sharding` (of an array) covers every device in an
// order that is no product of device axes (XLA's reverse propagation gives such orders, e.g.
// {devices=[4]3,2,1,0}) while the iota order is. Tuples element-wise; nullopt when nothing
// changes.
std::optional<Sharding> IotaOrderFix(SpmdContext& spmd, const Sharding& sharding, const Shape& shape) {
  if (sharding.IsTuple() && shape.IsTuple()) {
    std::vector<Sharding> elements;
    bool changed = false;
    for (int64_t i = 0; i < shape.tuple_size() && i < static_cast<int64_t>(sharding.tuple_elements().size()); ++i) {
      std::optional<Sharding> fixed = IotaOrderFix(spmd, sharding.tuple_elements()[i], shape.tuple_shape(i));
      changed = changed || fixed.has_value();
      elements.push_back(fixed.value_or(sharding.tuple_elements()[i]));
    }
    if (!changed || elements.size() != sharding.tuple_elements().size()) return std::nullopt;
    return Sharding::Tuple(std::move(elements));
  }
  if (!sharding.IsTiled() || !shape.IsArray()) return std::nullopt;
  if (sharding.tile_assignment().num_elements() != spmd.num_devices()) return std::nullopt;
  if (spmd.Axes(sharding, shape.rank()).has_value()) return std::nullopt;
  Sharding ordered =
      Sharding::Tiled(TileAssignment::Iota(sharding.tile_assignment().dims()), sharding.subgroup_types());
  if (!spmd.Axes(ordered, shape.rank()).has_value()) return std::nullopt;
  return ordered;
}

// Ops that only route values (their leaves keep whatever state their operands have).
bool IsPlumbing(Opcode opcode) {
  return opcode == Opcode::kTuple || opcode == Opcode::kGetTupleElement || opcode == Opcode::kWhile ||
         opcode == Opcode::kCall || opcode == Opcode::kConditional || opcode == Opcode::kParameter ||
         opcode == Opcode::kOptimizationBarrier;
}

}  // namespace

Sharding EffectiveSharding(const Instruction& instruction) {
  // An unannotated get-tuple-element (XLA's inline %tuple#1 references) is its element.
  if (!instruction.sharding() && instruction.opcode() == Opcode::kGetTupleElement) {
    Sharding tuple = EffectiveSharding(*instruction.operand(0));
    if (tuple.IsTuple() && instruction.tuple_index < static_cast<int64_t>(tuple.tuple_elements().size()))
      return ExpandForShape(tuple.tuple_elements()[instruction.tuple_index], instruction.shape());
  }
  if (!instruction.sharding()) {
    return instruction.shape().IsTuple() ? TupleOfReplicated(instruction.shape()) : Sharding::Replicated();
  }
  return ExpandForShape(*instruction.sharding(), instruction.shape());
}

ComputationPartitioner::ComputationPartitioner(ModulePartitioner& module_partitioner,
                                               const Computation& source, Computation* output,
                                               std::vector<Sharding> parameter_shardings,
                                               Sharding root_sharding, bool is_entry)
    : module_partitioner_(module_partitioner), source_(source), output_(output),
      builder_(output, &module_partitioner.spmd().names()),
      parameter_shardings_(std::move(parameter_shardings)), root_sharding_(std::move(root_sharding)),
      is_entry_(is_entry) {
  values_.reserve(source.instructions().size());
}

SpmdContext& ComputationPartitioner::spmd() { return module_partitioner_.spmd(); }

const PartitionedValue& ComputationPartitioner::ValueOf(const Instruction* original) const {
  auto it = values_.find(original);
  GSPMD_CHECK(it != values_.end(), "operand %", original->name(), " not partitioned yet");
  return it->second;
}

PartitionedValue ComputationPartitioner::ReshardCached(const Instruction* original, const Sharding& sharding) {
  const PartitionedValue& value = ValueOf(original);
  if (value.sharding == sharding) return value;
  auto key = std::make_pair(original, sharding.ToString());
  if (auto it = reshards_.find(key); it != reshards_.end()) return it->second;
  // A value a later user takes whole (a result returned replicated) is gathered once, first,
  // and other layouts are sliced from it (oracle seed 112834: a reshape of a parameter that is
  // also returned whole moved its own 16 B besides the 64 B gather, XLA only the gather).
  if (!sharding.IsReplicated() && original->shape().IsArray() && !value.sharding.IsReplicated() &&
      WholeWantedLater(original))
    ReshardCached(original, Sharding::Replicated());
  // Start from whichever form already computed (the value itself, an earlier reshard, the
  // wider form its handler produced) is cheapest to turn into `sharding`.
  PartitionedValue start = value;
  std::optional<double> best;  // the cost from `start`
  if (original->shape().IsArray()) {
    best = shape_ops::ReshardCost(spmd(), original->shape(), value.sharding, sharding);
    for (auto it = reshards_.lower_bound(std::make_pair(original, std::string()));
         it != reshards_.end() && it->first.first == original; ++it) {
      std::optional<double> cost = shape_ops::ReshardCost(spmd(), original->shape(), it->second.sharding, sharding);
      if (cost && (!best || *cost < *best)) {
        best = cost;
        start = it->second;
      }
    }
    // The same value in other forms: through copies and sharding constraints, their operand's
    // forms; for an element of a tuple, the elements of that tuple's forms (a top-k run whole
    // and sliced into its own layout, then wanted whole: oracle seed 114503, 112 B; an argsort's
    // indices under a split constraint, returned whole as well: 114436, 32 B; XLA none).
    if (std::optional<SameValueForm> other = CheapestSameValueForm(original, sharding, best)) {
      best = other->cost;
      start = other->element < 0 ? other->value
                                 : PartitionedValue{builder_.GetTupleElement(other->value.hlo, other->element),
                                                    original->shape(),
                                                    other->value.sharding.tuple_elements()[other->element]};
    }
  }
  // A broadcast of a scalar is made again in the new layout where moving it would communicate
  // (a gradient of ones under a sharding constraint, returned otherwise: oracle seed 20213).
  // So is a value that is an iota of its own shape (an argmax's index iota reshaped and laid
  // out for another op: oracle seed 114445, a 1024 B all-to-all of one, XLA none).
  if (original->shape().IsArray() && (!best || *best > 0)) {
    std::optional<PartitionedValue> again = SplatIn(original, sharding);
    if (!again) again = IotaIn(original, sharding);
    if (!again) again = WholeExpressionIn(original, sharding);
    if (!again) again = BroadcastIn(original, sharding);
    if (again) {
      reshards_[key] = *again;
      return *again;
    }
  }
  // A reshape is made again from its operand in the new layout where that moves less than
  // moving its result (oracle seed 112416: a reshape that propagation laid out by a partial
  // guess, gathered whole to get there, then sliced for a dot; from its operand, one all-to-all).
  if (original->opcode() == Opcode::kReshape && best) {
    if (std::optional<PartitionedValue> again = ReshapeIn(original, sharding, *best)) {
      reshards_[key] = *again;
      return *again;
    }
  }
  PartitionedValue resharded = Reshard(spmd(), builder_, start, sharding);
  reshards_[key] = resharded;
  return resharded;
}

bool ComputationPartitioner::WholeWantedLater(const Instruction* original) const {
  for (const Instruction* user : original->users()) {
    if (user->opcode() != Opcode::kTuple || user->parent() != &source_ || values_.count(user) != 0) continue;
    const Sharding layout = module_partitioner_.ShardingOf(*user);
    if (!layout.IsTuple() || static_cast<int64_t>(layout.tuple_elements().size()) != user->operand_count()) continue;
    for (int64_t i = 0; i < user->operand_count(); ++i)
      if (user->operand(i) == original && layout.tuple_elements()[i].IsReplicated()) return true;
  }
  return false;
}

std::optional<ComputationPartitioner::SameValueForm> ComputationPartitioner::CheapestSameValueForm(
    const Instruction* original, const Sharding& sharding, std::optional<double> below) {
  std::optional<SameValueForm> found;
  auto consider = [&](const PartitionedValue& value, int64_t element) {
    const Sharding& layout = element < 0 ? value.sharding : value.sharding.tuple_elements()[element];
    if (layout.IsTuple() || layout.HasUnreduced() || layout.IsManual() || HasManualAxes(layout)) return;
    std::optional<double> cost = shape_ops::ReshardCost(spmd(), original->shape(), layout, sharding);
    if (cost && (!below || *cost < *below)) {
      below = cost;
      found = SameValueForm{value, element, *cost};
    }
  };
  auto forms = [&](const Instruction* at, const auto& visit) {
    if (auto it = values_.find(at); it != values_.end()) visit(it->second);
    for (auto it = reshards_.lower_bound(std::make_pair(at, std::string())); it != reshards_.end() && it->first.first == at;
         ++it)
      visit(it->second);
  };
  const Instruction* at = original;
  for (int depth = 0; depth < 8; ++depth) {
    if (at != original) forms(at, [&](const PartitionedValue& value) { consider(value, -1); });
    if (at->opcode() == Opcode::kGetTupleElement) {
      const int64_t index = at->tuple_index;
      forms(at->operand(0), [&](const PartitionedValue& value) {
        if (value.sharding.IsTuple() && index >= 0 && index < static_cast<int64_t>(value.sharding.tuple_elements().size()))
          consider(value, index);
      });
      break;
    }
    if (!PassesValueOn(*at) || !(at->operand(0)->shape() == at->shape())) break;
    at = at->operand(0);
  }
  return found;
}

std::optional<PartitionedValue> ComputationPartitioner::ReshapeIn(const Instruction* original, const Sharding& sharding,
                                                                  double moving) {
  if (!sharding.IsTiled() || sharding.HasUnreduced() || HasManualAxes(sharding) || original->operand_count() != 1 ||
      !original->shape().IsArray())
    return std::nullopt;
  const Instruction* operand = original->operand(0);
  auto it = values_.find(operand);
  if (it == values_.end()) return std::nullopt;
  const Sharding& from = it->second.sharding;
  if (!(from.IsTiled() || from.IsReplicated()) || from.HasUnreduced() || HasManualAxes(from)) return std::nullopt;
  std::optional<double> cost = shape_ops::ReshapeCost(spmd(), operand->shape(), original->shape(), from, sharding);
  // With one user, and an operand only it reads, the reshape as first laid out is dead once
  // made again: what it moved counts against keeping it. (Where the operand has other users,
  // its moves may serve them too: oracle seed 112695.)
  double sunk = 0;
  if (original->users().size() == 1 && operand->users().size() == 1) {
    const Sharding& laid_out = ValueOf(original).sharding;
    if (laid_out.IsTiled())
      sunk = shape_ops::ReshapeCost(spmd(), operand->shape(), original->shape(), from, laid_out).value_or(0);
  }
  if (!cost || *cost >= moving + sunk) return std::nullopt;
  OpContext op(*this, *original, sharding);
  if (!shape_ops::PartitionReshape(op, /*fresh_operand=*/true) || !op.has_result()) return std::nullopt;
  PartitionedValue value = op.result();
  if (!(value.sharding == sharding)) value = Reshard(spmd(), builder_, value, sharding);
  return value;
}

namespace {

// The broadcast of a scalar that `original` is, looking through sharding constraints, copies,
// transposes and reshapes (every element is the scalar still); nullptr when it is none.
const Instruction* SplatSource(const Instruction* original) {
  for (int depth = 0; depth < 16 && original != nullptr; ++depth) {
    const Opcode opcode = original->opcode();
    if (opcode == Opcode::kBroadcast)
      return original->operand(0)->shape().IsArray() && original->operand(0)->shape().rank() == 0 ? original : nullptr;
    // (oracle seed 114892: a gradient's splat, transposed twice, was gathered for 240 B.)
    const bool passes = PassesValueOn(*original) || opcode == Opcode::kTranspose || opcode == Opcode::kReshape;
    if (!passes || !original->shape().IsArray()) return nullptr;
    original = original->operand(0);
  }
  return nullptr;
}

// The dim along which `value` counts 0, 1, 2, ... (equal elsewhere), where its value is an
// iota of its own shape: an iota through copies, sharding constraints, reshapes that keep that
// dim's size and stride, transposes, broadcasts and exact integer converts.
std::optional<int64_t> IotaDimOf(const Instruction* value) {
  std::vector<const Instruction*> chain;
  const Instruction* at = value;
  for (; at != nullptr && at->opcode() != Opcode::kIota && chain.size() < 16; at = at->operand(0)) {
    const Opcode opcode = at->opcode();
    const bool moves = PassesValueOn(*at) || opcode == Opcode::kReshape || opcode == Opcode::kTranspose ||
                       opcode == Opcode::kBroadcast || opcode == Opcode::kConvert;
    if (!moves || at->operand_count() != 1 || !at->shape().IsArray() || !at->operand(0)->shape().IsArray())
      return std::nullopt;
    chain.push_back(at);
  }
  if (at == nullptr || at->opcode() != Opcode::kIota || !at->shape().IsArray()) return std::nullopt;
  int64_t dim = at->iota_dimension;
  if (dim < 0 || dim >= at->shape().rank() || at->shape().dims()[dim] <= 1) return std::nullopt;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const Instruction& op = **it;
    const std::vector<int64_t>& in = op.operand(0)->shape().dims();
    const std::vector<int64_t>& out = op.shape().dims();
    switch (op.opcode()) {
      case Opcode::kTranspose: {
        auto found = std::find(op.dimensions.begin(), op.dimensions.end(), dim);
        if (found == op.dimensions.end()) return std::nullopt;
        dim = found - op.dimensions.begin();
        break;
      }
      case Opcode::kBroadcast:
        if (dim >= static_cast<int64_t>(op.dimensions.size())) return std::nullopt;
        dim = op.dimensions[dim];
        break;
      case Opcode::kReshape: {
        int64_t stride = 1;
        for (size_t k = dim + 1; k < in.size(); ++k) stride *= in[k];
        std::optional<int64_t> same;
        int64_t out_stride = 1;
        for (int64_t k = static_cast<int64_t>(out.size()) - 1; k >= 0 && !same; --k) {
          if (out[k] == in[dim] && out_stride == stride) same = k;
          out_stride *= out[k];
        }
        if (!same) return std::nullopt;
        dim = *same;
        break;
      }
      case Opcode::kConvert: {
        // Exact: integer to integer no narrower, or integers small enough for the float type.
        const ElementType from = op.operand(0)->shape().element_type();
        const ElementType to = op.shape().element_type();
        const bool ints = IsInteger(from) && IsInteger(to) && ElementByteSize(to) >= ElementByteSize(from);
        const bool floats = IsInteger(from) && (to == ElementType::kF32 ? in[dim] <= (int64_t{1} << 24)
                                                : to == ElementType::kF64);
        if (!ints && !floats) return std::nullopt;
        break;
      }
      default: break;  // copies and constraints keep the value
    }
    if (dim < 0 || dim >= static_cast<int64_t>(out.size()) || out[dim] <= 1) return std::nullopt;
  }
  return dim;
}

}  // namespace

std::optional<PartitionedValue> ComputationPartitioner::IotaIn(const Instruction* original, const Sharding& sharding) {
  if (!original->shape().IsArray() || sharding.IsManual() || sharding.HasUnreduced() ||
      !(sharding.IsReplicated() || sharding.IsTiled()) || HasManualAxes(sharding))
    return std::nullopt;
  std::optional<int64_t> dim = IotaDimOf(original);
  if (!dim) return std::nullopt;
  const Shape& shape = original->shape();
  Instruction* iota = builder_.Iota(ShardShapeOf(sharding, shape), *dim);
  return PartitionedValue{shape_ops::IotaPiece(builder_, spmd(), iota, sharding, shape, *dim), shape, sharding};
}

std::optional<PartitionedValue> ComputationPartitioner::BroadcastIn(const Instruction* original,
                                                                   const Sharding& sharding) {
  if (original->opcode() != Opcode::kBroadcast || !original->shape().IsArray() || sharding.IsManual() ||
      sharding.HasUnreduced() || !(sharding.IsReplicated() || sharding.IsTiled()) || HasManualAxes(sharding))
    return std::nullopt;
  auto it = values_.find(original->operand(0));
  if (it == values_.end() || !it->second.sharding.IsReplicated() || !it->second.global_shape.IsArray())
    return std::nullopt;
  Sharding piece = shape_ops::RemapSharding(sharding, original->dimensions);
  Instruction* operand = ReshardCached(original->operand(0), piece).hlo;
  auto clone = original->CloneWithNewOperands(ShardShapeOf(sharding, original->shape()), {operand});
  clone->set_sharding(std::nullopt);
  return PartitionedValue{builder_.Add(std::move(clone)), original->shape(), sharding};
}

std::optional<PartitionedValue> ComputationPartitioner::MovedDataComputedWhole(const Instruction& instruction,
                                                                              const Sharding& target) {
  switch (instruction.opcode()) {
    case Opcode::kSlice: case Opcode::kPad: case Opcode::kConcatenate: case Opcode::kReverse:
    case Opcode::kReshape: case Opcode::kTranspose: case Opcode::kDynamicSlice: case Opcode::kDynamicUpdateSlice:
      break;
    default:
      return std::nullopt;
  }
  if (!target.IsTiled() || !instruction.shape().IsArray()) return std::nullopt;
  bool moved = false;  // an operand laid out otherwise than whole: the handler would move it
  for (const Instruction* operand : instruction.operands()) {
    auto it = values_.find(operand);
    moved = moved || (it != values_.end() && !it->second.sharding.IsReplicated());
  }
  if (!moved) return std::nullopt;
  return WholeExpressionIn(&instruction, target);
}

bool ComputationPartitioner::FreeInAnyLayout(const Instruction* original) {
  if (!original->shape().IsArray()) return false;
  if (const Instruction* broadcast = SplatSource(original)) {
    auto it = values_.find(broadcast->operand(0));
    if (it != values_.end() && it->second.sharding.IsReplicated()) return true;
  }
  if (IotaDimOf(original)) return true;
  if (original->opcode() == Opcode::kBroadcast) {
    auto it = values_.find(original->operand(0));
    if (it != values_.end() && it->second.sharding.IsReplicated()) return true;
  }
  return !WholeExpressionOf(original).empty();
}

std::vector<const Instruction*> ComputationPartitioner::WholeExpressionOf(const Instruction* original) const {
  if (!original->shape().IsArray()) return {};
  return ExpressionOf(*original, [&](const Instruction& value) {
    auto it = values_.find(&value);
    return it != values_.end() && it->second.global_shape.IsArray() && it->second.sharding.IsReplicated();
  });
}

std::optional<PartitionedValue> ComputationPartitioner::WholeExpressionIn(const Instruction* original,
                                                                         const Sharding& sharding) {
  if (!original->shape().IsArray() || sharding.IsManual() || sharding.HasUnreduced() ||
      !(sharding.IsReplicated() || sharding.IsTiled()) || HasManualAxes(sharding))
    return std::nullopt;
  const std::vector<const Instruction*> expression = WholeExpressionOf(original);
  if (expression.empty()) return std::nullopt;
  const auto key = std::make_pair(original, Sharding::Replicated().ToString());
  auto whole = reshards_.find(key);
  if (whole == reshards_.end()) {
    std::map<const Instruction*, Instruction*> made;
    for (const Instruction* member : expression) {
      std::vector<Instruction*> operands;
      for (const Instruction* operand : member->operands()) {
        auto it = made.find(operand);
        operands.push_back(it != made.end() ? it->second : values_.at(operand).hlo);  // a leaf, held whole
      }
      auto clone = member->CloneWithNewOperands(member->shape(), operands);
      clone->set_sharding(std::nullopt);
      std::vector<Computation*> called;
      for (const Computation* computation : member->called_computations())
        called.push_back(module_partitioner_.Clone(computation));
      clone->set_called_computations(called);
      made[member] = builder_.Add(std::move(clone));
    }
    whole = reshards_.emplace(key, PartitionedValue{made.at(original), original->shape(), Sharding::Replicated()}).first;
  }
  if (sharding.IsReplicated()) return whole->second;
  return Reshard(spmd(), builder_, whole->second, sharding);
}

std::optional<PartitionedValue> ComputationPartitioner::SplatIn(const Instruction* original, const Sharding& sharding) {
  const Instruction* broadcast = SplatSource(original);
  if (broadcast == nullptr || !original->shape().IsArray() || sharding.IsManual() || sharding.HasUnreduced() ||
      !(sharding.IsReplicated() || sharding.IsTiled()) || HasManualAxes(sharding))
    return std::nullopt;
  auto it = values_.find(broadcast->operand(0));
  if (it == values_.end() || !it->second.sharding.IsReplicated()) return std::nullopt;
  Instruction* local = builder_.BroadcastScalar(it->second.hlo, ShardShapeOf(sharding, original->shape()).dims());
  return PartitionedValue{local, original->shape(), sharding};
}

PartitionedValue ComputationPartitioner::PartitionParameter(const Instruction& parameter) {
  int64_t number = parameter.parameter_number;
  Sharding incoming = number < static_cast<int64_t>(parameter_shardings_.size())
                          ? parameter_shardings_[number]
                          : EffectiveSharding(parameter);
  // Tuple shardings list one sharding per leaf, however the tuples nest.
  Shape shard_shape = parameter.shape();
  if (shard_shape.IsTuple() || shard_shape.IsArray()) shard_shape = ShardShapeOf(incoming, shard_shape);
  auto clone = std::make_unique<Instruction>(Opcode::kParameter, shard_shape, parameter.name());
  clone->parameter_number = number;
  clone->metadata = parameter.metadata;
  clone->frontend_attributes = parameter.frontend_attributes;
  if (is_entry_) clone->set_sharding(parameter.sharding() ? *parameter.sharding() : incoming);
  Instruction* hlo = builder_.Add(std::move(clone));
  PartitionedValue value{hlo, parameter.shape(), incoming};
  return value;
}

void ComputationPartitioner::PartitionInstruction(const Instruction& instruction) {
  if (instruction.opcode() == Opcode::kParameter) {
    PartitionedValue value = PartitionParameter(instruction);
    Sharding wanted = module_partitioner_.ShardingOf(instruction);
    if (!(value.sharding == wanted)) value = Reshard(spmd(), builder_, value, wanted);
    values_[&instruction] = value;
    return;
  }
  Sharding target = module_partitioner_.ShardingOf(instruction);
  const bool plumbing = IsPlumbing(instruction.opcode());
  if (const Sharding* partial = module_partitioner_.ComputedAs(instruction);
      partial != nullptr && !plumbing && instruction.shape().IsArray() && !target.HasUnreduced() &&
      PartitionOnPieces(instruction, *partial)) {
    // The sum of the pieces, reduce-scattered into the op's own layout.
    PartitionedValue& value = values_[&instruction];
    value = Reshard(spmd(), builder_, value, target);
    return;
  }
  if (!plumbing && instruction.shape().IsArray() && target.HasUnreduced()) {
    if (PartitionOnPieces(instruction, target) || PartitionKeepingSum(instruction, target)) return;
    // Nothing partial comes in and nothing pending is produced: the value is whole.
    target = target.WithoutUnreduced();
  }
  if (std::optional<PartitionedValue> whole = MovedDataComputedWhole(instruction, target)) {
    values_[&instruction] = *whole;
    return;
  }
  SavedValues saved;
  if (!plumbing) saved = ReducePartialOperands(instruction, target);
  OpContext op(*this, instruction, target);
  bool handled = RunHandlers(op);
  if (!handled && PartitionInIotaOrder(instruction)) {
    Restore(saved);
    return;
  }
  if (!handled) PartitionByReplicating(op);
  Restore(saved);
  GSPMD_CHECK(op.has_result(), "no result for %", instruction.name());
  PartitionedValue result = op.result();
  if (!(result.sharding == op.sharding())) {
    // The handler computed the value in another layout (wider, say, after gathering its
    // operand): keep that form, so a later reshard to it costs nothing (XLA's reshard cache
    // keeps such reverse entries too).
    reshards_[std::make_pair(&instruction, result.sharding.ToString())] = result;
    result = Reshard(spmd(), builder_, result, op.sharding());
  }
  if (result.hlo->metadata.empty()) result.hlo->metadata = instruction.metadata;
  values_[&instruction] = result;
}

ComputationPartitioner::SavedValues ComputationPartitioner::ReducePartialOperands(const Instruction& instruction,
                                                                                const Sharding& target) {
  SavedValues saved;
  for (const Instruction* operand : instruction.operands()) {
    if (std::any_of(saved.begin(), saved.end(), [&](const auto& entry) { return entry.first == operand; })) continue;
    const PartitionedValue& value = ValueOf(operand);
    if (!value.sharding.HasUnreduced()) continue;
    Sharding whole = value.sharding.WithoutUnreduced();
    // A consumer laid out like the operand but split over the pending axes takes the sum
    // already split: a reduce-scatter instead of an all-reduce.
    if (operand->shape().IsArray() && instruction.shape().IsArray() &&
        operand->shape().dims() == instruction.shape().dims() && !target.IsTuple() && !target.HasUnreduced() &&
        (target.IsTiled() || target.IsReplicated()) && !(target == whole)) {
      std::optional<double> to_whole = shape_ops::ReshardCost(spmd(), operand->shape(), value.sharding, whole);
      std::optional<double> to_target = shape_ops::ReshardCost(spmd(), operand->shape(), value.sharding, target);
      if (to_target && (!to_whole || *to_target < *to_whole)) whole = target;
    }
    saved.emplace_back(operand, value);
    values_[operand] = ReshardCached(operand, whole);
  }
  return saved;
}

void ComputationPartitioner::Restore(const SavedValues& saved) {
  for (const auto& [operand, value] : saved) values_[operand] = value;
}

bool ComputationPartitioner::PartitionKeepingSum(const Instruction& instruction, const Sharding& target) {
  if (!ProducesPartialSums(instruction)) return false;
  for (const Instruction* operand : instruction.operands())
    if (ValueOf(operand).sharding.HasUnreduced()) return false;
  Sharding whole = target.WithoutUnreduced();
  // A dot whose handler would rather gather (when it must be whole) is asked for the partial
  // layout itself, so that it weighs its placements against that.
  const bool ask_partial = module_partitioner_.PartialInsteadOfGathering(instruction);
  if (!ask_partial) spmd().set_kept_partial(SpmdContext::KeptPartial{whole, target});
  OpContext op(*this, instruction, ask_partial ? target : whole);
  bool handled = RunHandlers(op);
  spmd().set_kept_partial(std::nullopt);
  if (!handled) return false;
  PartitionedValue result = op.result();
  if (!(result.sharding == target) && !(result.sharding == whole)) {
    reshards_[std::make_pair(&instruction, result.sharding.ToString())] = result;
    result = Reshard(spmd(), builder_, result, whole);
  }
  if (result.hlo->metadata.empty()) result.hlo->metadata = instruction.metadata;
  values_[&instruction] = result;
  return true;
}

bool ComputationPartitioner::PartitionOnPieces(const Instruction& instruction, const Sharding& target) {
  using Type = Sharding::SubgroupType;
  const int64_t devices = spmd().num_devices();
  const int64_t rank = instruction.shape().rank();
  const std::vector<DeviceAxis> axes = UnreducedAxes(target, rank, devices);
  if (axes.empty()) return false;
  const std::vector<DeviceAxis> joined = JoinAdjacentAxes(axes);
  const Sharding::Reduction reduction = target.partial_reduction();
  const int64_t count = instruction.operand_count();
  std::vector<bool> partial(count, false);
  bool any = false;
  for (int64_t i = 0; i < count; ++i) {
    const Instruction* operand = instruction.operand(i);
    const PartitionedValue& value = ValueOf(operand);
    if (!value.sharding.HasUnreduced()) continue;
    if (!operand->shape().IsArray() || value.sharding.partial_reduction() != reduction ||
        JoinAdjacentAxes(UnreducedAxes(value.sharding, operand->shape().rank(), devices)) != joined)
      return false;
    partial[i] = any = true;
  }
  if (!any) return false;
  std::optional<LinearRoles> roles = LinearRolesOf(instruction, partial, reduction);
  if (!roles) return false;
  auto is_linear = [&](int64_t i) { return std::find(roles->linear.begin(), roles->linear.end(), i) != roles->linear.end(); };
  for (int64_t i = 0; i < count; ++i)
    if (partial[i] && !is_linear(i)) return false;
  std::optional<Sharding> handler_target = MoveAxesBetweenSubgroups(target, rank, devices, axes, Type::kUnreduced,
                                                                    Type::kManual, reduction);
  if (!handler_target) return false;
  // Each operand as pieces with the pending axes manual: a partial one relabelled, a whole
  // linear one kept by one device of each group (the others hold zeros), a whole factor
  // replicated over the group.
  std::map<const Instruction*, std::pair<PartitionedValue, bool>> pieces;
  for (int64_t i = 0; i < count; ++i) {
    const Instruction* operand = instruction.operand(i);
    const bool linear = is_linear(i);
    if (auto it = pieces.find(operand); it != pieces.end()) {
      if (it->second.second != linear && !partial[i]) return false;
      continue;
    }
    if (!operand->shape().IsArray()) return false;
    const int64_t operand_rank = operand->shape().rank();
    PartitionedValue value = ValueOf(operand);
    std::optional<Sharding> label;
    if (partial[i]) {
      label = MoveAxesBetweenSubgroups(value.sharding, operand_rank, devices, axes, Type::kUnreduced, Type::kManual,
                                       reduction);
    } else {
      std::optional<Sharding> spread = ReplicatingAxes(value.sharding, operand_rank, devices, axes);
      if (!spread) return false;
      if (linear) {
        std::optional<Sharding> masked = MoveAxesBetweenSubgroups(*spread, operand_rank, devices, axes,
                                                                  Type::kReplicated, Type::kUnreduced, reduction);
        if (!masked) return false;
        value = ReshardCached(operand, *masked);
        label = MoveAxesBetweenSubgroups(value.sharding, operand_rank, devices, axes, Type::kUnreduced, Type::kManual,
                                         reduction);
      } else {
        value = ReshardCached(operand, *spread);
        label = MoveAxesBetweenSubgroups(value.sharding, operand_rank, devices, axes, Type::kReplicated,
                                         Type::kManual, reduction);
      }
    }
    if (!label) return false;
    value.sharding = *label;
    pieces[operand] = {value, linear};
  }
  SavedValues saved;
  for (const auto& [operand, entry] : pieces) {
    saved.emplace_back(operand, ValueOf(operand));
    values_[operand] = entry.first;
  }
  // Reshards of the relabelled pieces are cached apart: the same labels mean other data
  // (masked or not) for another op.
  std::map<std::pair<const Instruction*, std::string>, PartitionedValue> piece_reshards;
  std::swap(reshards_, piece_reshards);
  OpContext op(*this, instruction, *handler_target);
  const bool handled = RunHandlers(op);
  PartitionedValue result;
  if (handled) {
    result = op.result();
    if (!(result.sharding == *handler_target)) result = Reshard(spmd(), builder_, result, *handler_target);
  }
  std::swap(reshards_, piece_reshards);
  Restore(saved);
  if (!handled) return false;
  std::optional<Sharding> back = MoveAxesBetweenSubgroups(result.sharding, rank, devices, axes, Type::kManual,
                                                          Type::kUnreduced, reduction);
  GSPMD_CHECK(back.has_value(), "partial sum of %", instruction.name(), " lost its pending axes");
  result.sharding = *back;
  if (result.hlo->metadata.empty()) result.hlo->metadata = instruction.metadata;
  values_[&instruction] = result;
  return true;
}

// No handler took the instruction, and some operand or the result has a device order that is no
// product of device axes: collective-permute those operands into iota order, let the handlers
// aim for the result in iota order, and permute the result back (instead of replicating).
bool ComputationPartitioner::PartitionInIotaOrder(const Instruction& instruction) {
  Sharding wanted = EffectiveSharding(instruction);
  std::optional<Sharding> result_order = IotaOrderFix(spmd(), wanted, instruction.shape());
  std::vector<std::pair<const Instruction*, PartitionedValue>> saved;
  for (const Instruction* operand : instruction.operands()) {
    if (std::any_of(saved.begin(), saved.end(), [&](const auto& entry) { return entry.first == operand; })) continue;
    const PartitionedValue& value = ValueOf(operand);
    std::optional<Sharding> ordered = IotaOrderFix(spmd(), value.sharding, value.global_shape);
    if (!ordered) continue;
    saved.emplace_back(operand, value);
    values_[operand] = ReshardCached(operand, *ordered);
  }
  if (!result_order && saved.empty()) return false;
  OpContext op(*this, instruction, result_order.value_or(wanted));
  bool handled = RunHandlers(op);
  for (const auto& [operand, value] : saved) values_[operand] = value;
  if (!handled) return false;
  PartitionedValue result = op.result();
  if (!(result.sharding == wanted)) result = Reshard(spmd(), builder_, result, wanted);
  if (result.hlo->metadata.empty()) result.hlo->metadata = instruction.metadata;
  values_[&instruction] = result;
  return true;
}

void ComputationPartitioner::Run() {
  // What gets built for an instruction takes its source location, and errors found while
  // partitioning it name it.
  for (const Instruction* instruction : source_.MakePostOrder()) {
    builder_.set_source_instruction(instruction);
    WithInstructionContext(*instruction, [&] { PartitionInstruction(*instruction); });
  }
  builder_.set_source_instruction(source_.root());
  PartitionedValue root = ValueOf(source_.root());
  if (!(root.sharding == root_sharding_)) root = Reshard(spmd(), builder_, root, root_sharding_);
  Instruction* root_hlo = root.hlo;
  if (is_entry_ && root_hlo->opcode() == Opcode::kParameter) root_hlo = builder_.Copy(root_hlo);
  if (is_entry_) root_hlo->set_sharding(root_sharding_);
  output_->set_root(root_hlo);
}

Sharding ModulePartitioner::ShardingOf(const Instruction& instruction) const {
  if (plan_ != nullptr) {
    auto it = plan_->shardings.find(&instruction);
    if (it != plan_->shardings.end()) return it->second;
  }
  return EffectiveSharding(instruction);
}

const Sharding* ModulePartitioner::ComputedAs(const Instruction& instruction) const {
  if (plan_ == nullptr) return nullptr;
  auto it = plan_->computed_as.find(&instruction);
  return it == plan_->computed_as.end() ? nullptr : &it->second;
}

bool ModulePartitioner::PartialInsteadOfGathering(const Instruction& instruction) const {
  return plan_ != nullptr && plan_->instead_of_gathering.contains(&instruction);
}

ModulePartitioner::ModulePartitioner(const Module& source, Module* output, int64_t num_devices)
    : source_(source), spmd_(output, num_devices) {
  spmd_.names().ReserveAll(source);
}

Computation* ModulePartitioner::Clone(const Computation* computation) {
  if (auto it = clones_.find(computation); it != clones_.end()) return it->second;
  auto clone = std::make_unique<Computation>(spmd_.names().Unique(computation->name()));
  Computation* output = spmd_.output()->AddComputationFront(std::move(clone));
  clones_[computation] = output;
  std::map<const Instruction*, Instruction*> mapping;
  for (const Instruction* instruction : computation->MakePostOrder()) {
    std::vector<Instruction*> operands;
    for (const Instruction* operand : instruction->operands()) operands.push_back(mapping.at(operand));
    auto copy = instruction->CloneWithNewOperands(instruction->shape(), operands);
    copy->set_sharding(std::nullopt);
    std::vector<Computation*> called;
    for (const Computation* c : instruction->called_computations()) called.push_back(Clone(c));
    copy->set_called_computations(called);
    Instruction* added = output->AddInstruction(std::move(copy));
    mapping[instruction] = added;
  }
  output->set_root(mapping.at(computation->root()));
  return output;
}

Computation* ModulePartitioner::Partition(const Computation* computation,
                                          const std::vector<Sharding>& parameter_shardings,
                                          const Sharding& root_sharding, bool is_entry) {
  std::string key = computation->name() + "|";
  for (const Sharding& sharding : parameter_shardings) key += sharding.ToString() + ";";
  key += "|" + root_sharding.ToString();
  if (auto it = partitioned_.find(key); it != partitioned_.end()) return it->second;
  auto output = std::make_unique<Computation>(spmd_.names().Unique(computation->name() + "_spmd"));
  Computation* raw = output.get();
  partitioned_[key] = raw;
  ComputationPartitioner partitioner(*this, *computation, raw, parameter_shardings, root_sharding, is_entry);
  partitioner.Run();
  // Added once partitioned, after everything it calls (which may have been cloned earlier).
  spmd_.output()->AddComputation(std::move(output), is_entry);
  return raw;
}

}  // namespace gspmd
