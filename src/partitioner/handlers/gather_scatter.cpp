// The gather and scatter handlers. Device axes go on "slots" chosen by estimated bytes:
//   gather   index pass-through   an index batch dim + its result dim (+ the operand
//                                 batching dim paired with it)                      local
//            operand pass-through an operand dim sliced whole + its offset dim       local
//            indexed operand dim  an operand dim indexed with slice size 1: each device
//                                 gathers from its own rows (indices offset by its shard
//                                 start), zeroes rows it does not hold      partial sums
//   scatter  operand pass-through an operand dim with whole update windows           local
//            indexed operand dim  an operand dim indexed with window size 1: indices
//                                 offset, updates outside the shard are dropped      local
//            index batch dim      indices + updates split: local scatter into an
//                                 identity-initialised operand, then a reduction with
//                                 the combiner (add/mul/max/min/or/and only)  partial sums
//            batching dims        indices + updates + operand                        local
// Any other dim stays whole.
#include <algorithm>
#include <cmath>
#include <limits>

#include "partitioner/handlers/slot_placement.h"
#include "partitioner/op_context.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

Sharding AsAxisSharding(const Sharding& sharding) {
  return sharding.IsMaximal() || sharding.IsUnknown() ? Sharding::Replicated() : sharding;
}

int64_t IndexOf(const std::vector<int64_t>& list, int64_t value) {
  auto it = std::find(list.begin(), list.end(), value);
  return it == list.end() ? -1 : it - list.begin();
}

bool Contains(const std::vector<int64_t>& list, int64_t value) { return IndexOf(list, value) >= 0; }

SlotTensor Tensor(const Shape& shape, const AxisSharding& layout, std::vector<int64_t> slots) {
  return SlotTensor{shape.dims(), ElementByteSize(shape.element_type()), layout, std::move(slots)};
}

// ---- index vectors ----

// Where the index vector of an indices array lives: dim `dim` (or an implicit trailing dim of
// size 1 when dim == rank).
struct IndexVector {
  int64_t dim = 0;
  bool implicit = false;
  int64_t components = 1;

  IndexVector(const Shape& indices, int64_t index_vector_dim)
      : dim(index_vector_dim), implicit(index_vector_dim == indices.rank()),
        components(index_vector_dim == indices.rank() ? 1 : indices.dim(index_vector_dim)) {}

  // Dims of the indices other than the index vector dim (the "batch" dims), in order.
  std::vector<int64_t> BatchDims(int64_t rank) const {
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d)
      if (implicit || d != dim) dims.push_back(d);
    return dims;
  }
};

// A per-component value broadcast over `indices` (components along the index vector dim).
Instruction* BroadcastComponents(HloBuilder& b, const std::vector<Instruction*>& scalars, const Shape& indices,
                                 const IndexVector& vector) {
  if (vector.implicit) return b.BroadcastScalar(scalars.at(0), indices.dims());
  std::vector<Instruction*> pieces;
  for (Instruction* scalar : scalars) pieces.push_back(b.Reshape(scalar, {1}));
  Instruction* row = pieces.size() == 1 ? pieces[0] : b.Concatenate(pieces, 0);
  return b.Broadcast(row, indices.dims(), {vector.dim});
}

// Component k of every index vector of `indices`, over the batch dims.
Instruction* Component(HloBuilder& b, Instruction* indices, const IndexVector& vector, int64_t k) {
  if (vector.implicit) return indices;
  std::vector<SliceDim> slice;
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < indices->shape().rank(); ++d) {
    slice.push_back(d == vector.dim ? SliceDim{k, k + 1, 1} : SliceDim{0, indices->shape().dim(d), 1});
    if (d != vector.dim) dims.push_back(indices->shape().dim(d));
  }
  return b.Reshape(b.Slice(indices, std::move(slice)), dims);
}

// The shard start of operand dim `dim` under `layout` on this device, in `type`.
Instruction* ShardStart(OpContext& op, const AxisSharding& layout, int64_t dim, int64_t global_size, ElementType type) {
  HloBuilder& b = op.builder();
  int64_t shard = ShardSize(global_size, layout.TileCount(dim));
  std::vector<int64_t> table(op.spmd().num_devices());
  for (int64_t p = 0; p < op.spmd().num_devices(); ++p) table[p] = layout.TileIndex(p)[dim] * shard;
  Instruction* start = b.TableLookup(table);
  return type == ElementType::kS32 ? start : b.Convert(start, type);
}

// The operand dims whose shard starts are subtracted from the index components (k -> dim,
// -1 for components whose dim is not split).
std::vector<int64_t> ShiftedComponents(const std::vector<int64_t>& component_dims, const AxisSharding& layout,
                                       const std::vector<int64_t>& indexed_slot_dims) {
  std::vector<int64_t> shifted;
  for (int64_t dim : component_dims)
    shifted.push_back(Contains(indexed_slot_dims, dim) && layout.TileCount(dim) > 1 ? dim : -1);
  return shifted;
}

bool AnyShifted(const std::vector<int64_t>& shifted) {
  return std::any_of(shifted.begin(), shifted.end(), [](int64_t d) { return d >= 0; });
}

// indices - shard start, per component (0 for components not shifted).
Instruction* SubtractShardStarts(OpContext& op, Instruction* indices, const IndexVector& vector,
                                 const std::vector<int64_t>& shifted, const AxisSharding& layout,
                                 const Shape& operand) {
  HloBuilder& b = op.builder();
  ElementType type = indices->shape().element_type();
  std::vector<Instruction*> starts;
  for (int64_t dim : shifted)
    starts.push_back(dim >= 0 ? ShardStart(op, layout, dim, operand.dim(dim), type) : b.ScalarConstant(type, 0));
  return b.Binary(Opcode::kSubtract, indices, BroadcastComponents(b, starts, indices->shape(), vector));
}

// ---- gather ----

struct GatherSlots {
  int64_t count = 0;
  std::vector<int64_t> operand, indices, result;
  std::vector<int64_t> extent;
  std::vector<int64_t> indexed_dims;  // operand dims on partial (indexed) slots
};

GatherSlots MakeGatherSlots(const Instruction& gather, const Shape& operand, const Shape& indices,
                            const IndexVector& vector) {
  const GatherDimensionNumbers& dn = gather.gather_dims();
  const Shape& result = gather.shape();
  GatherSlots slots;
  slots.operand.assign(operand.rank(), -1);
  slots.indices.assign(indices.rank(), -1);
  slots.result.assign(result.rank(), -1);
  std::vector<int64_t> result_batch;
  for (int64_t d = 0; d < result.rank(); ++d)
    if (!Contains(dn.offset_dims, d)) result_batch.push_back(d);
  std::vector<int64_t> index_batch = vector.BatchDims(indices.rank());
  if (result_batch.size() != index_batch.size())
    GSPMD_USER_ERROR("gather %", gather.name(), " has ", result_batch.size(), " batch dims in its result but ",
                     index_batch.size(), " in its indices");
  for (size_t j = 0; j < index_batch.size(); ++j) {
    int64_t slot = slots.count++;
    slots.indices[index_batch[j]] = slot;
    slots.result[result_batch[j]] = slot;
    slots.extent.push_back(indices.dim(index_batch[j]));
    int64_t k = IndexOf(dn.start_indices_batching_dims, index_batch[j]);
    if (k >= 0 && k < static_cast<int64_t>(dn.operand_batching_dims.size())) slots.operand[dn.operand_batching_dims[k]] = slot;
  }
  std::vector<int64_t> offset_dims = dn.offset_dims;
  std::sort(offset_dims.begin(), offset_dims.end());
  size_t next_offset = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (Contains(dn.operand_batching_dims, d)) continue;
    bool collapsed = Contains(dn.collapsed_slice_dims, d);
    int64_t result_dim = -1;
    if (!collapsed) {
      if (next_offset >= offset_dims.size())
        GSPMD_USER_ERROR("gather %", gather.name(), " has fewer offset_dims than uncollapsed operand dims");
      result_dim = offset_dims[next_offset++];
    }
    int64_t slice = gather.gather_slice_sizes().at(d);
    if (!collapsed && slice == operand.dim(d)) {
      slots.operand[d] = slots.count;
      slots.result[result_dim] = slots.count++;
      slots.extent.push_back(operand.dim(d));
    } else if (slice == 1 && Contains(dn.start_index_map, d)) {
      slots.operand[d] = slots.count++;
      slots.extent.push_back(operand.dim(d));
      slots.indexed_dims.push_back(d);
    }
  }
  return slots;
}

void CheckGather(const Instruction& gather, const Shape& operand, const Shape& indices) {
  const GatherDimensionNumbers& dn = gather.gather_dims();
  if (static_cast<int64_t>(gather.gather_slice_sizes().size()) != operand.rank())
    GSPMD_USER_ERROR("gather %", gather.name(), " has ", gather.gather_slice_sizes().size(),
                     " slice_sizes for an operand of rank ", operand.rank());
  if (dn.index_vector_dim < 0 || dn.index_vector_dim > indices.rank())
    GSPMD_USER_ERROR("gather %", gather.name(), " has index_vector_dim ", dn.index_vector_dim, " for indices of rank ",
                     indices.rank());
  for (int64_t d : dn.start_index_map)
    if (d < 0 || d >= operand.rank()) GSPMD_USER_ERROR("gather %", gather.name(), " start_index_map names dim ", d);
  IndexVector vector(indices, dn.index_vector_dim);
  if (vector.components != static_cast<int64_t>(dn.start_index_map.size()))
    GSPMD_USER_ERROR("gather %", gather.name(), " has ", vector.components, " index components but start_index_map has ",
                     dn.start_index_map.size(), " entries");
}

// Zeroes the result rows whose (clamped) indices fall outside this device's rows of an
// indexed operand dim, after shifting the indices by the shard starts.
class GatherPartitioner {
 public:
  GatherPartitioner(OpContext& op, const Shape& operand, const Shape& indices)
      : op_(op), gather_(op.instruction()), operand_(operand), indices_(indices),
        vector_(indices, gather_.gather_dims().index_vector_dim) {}

  bool Run() {
    SpmdContext& context = op_.spmd();
    const auto& operand_axes = context.Axes(AsAxisSharding(op_.Operand(0).sharding), operand_.rank());
    const auto& indices_axes = context.Axes(AsAxisSharding(op_.Operand(1).sharding), indices_.rank());
    const auto& result_axes = context.Axes(AsAxisSharding(op_.sharding()), gather_.shape().rank());
    if (!operand_axes || !indices_axes || !result_axes) return false;
    slots_ = MakeGatherSlots(gather_, operand_, indices_, vector_);
    SlotProblem problem;
    problem.slot_count = slots_.count;
    problem.slot_extent = slots_.extent;
    problem.inputs.push_back(Tensor(operand_, *operand_axes, slots_.operand));
    problem.inputs.push_back(Tensor(indices_, *indices_axes, slots_.indices));
    problem.result = Tensor(gather_.shape(), *result_axes, slots_.result);
    std::optional<SlotPlacement> placement = ChooseSlotPlacement(context, problem);
    if (!placement) return false;
    Emit(*placement);
    return true;
  }

 private:
  void Emit(const SlotPlacement& placement) {
    HloBuilder& b = op_.builder();
    const AxisSharding& operand_layout = placement.inputs[0];
    Instruction* operand = op_.OperandWith(0, operand_layout.ToSharding());
    Instruction* indices = op_.OperandWith(1, placement.inputs[1].ToSharding());
    const std::vector<int64_t>& component_dims = gather_.gather_dims().start_index_map;
    std::vector<int64_t> shifted = ShiftedComponents(component_dims, operand_layout, slots_.indexed_dims);
    Instruction* in_range = nullptr;
    if (AnyShifted(shifted)) {
      indices = ClampToOperand(indices);
      indices = SubtractShardStarts(op_, indices, vector_, shifted, operand_layout, operand_);
      in_range = InShard(indices, shifted, operand_layout);
    }
    std::vector<int64_t> slice_sizes = gather_.gather_slice_sizes();
    for (int64_t d = 0; d < operand_.rank(); ++d)
      if (slice_sizes[d] == operand_.dim(d)) slice_sizes[d] = operand->shape().dim(d);
    Sharding local_sharding = placement.result.ToSharding();
    Shape local_shape = ShardShapeOf(local_sharding, gather_.shape());
    Instruction* local = op_.Clone(local_shape, {operand, indices});
    local->mutable_gather_slice_sizes() = std::move(slice_sizes);
    if (in_range != nullptr) {
      std::vector<int64_t> batch_positions;
      for (int64_t d = 0; d < local_shape.rank(); ++d)
        if (!Contains(gather_.gather_dims().offset_dims, d)) batch_positions.push_back(d);
      Instruction* mask = b.Broadcast(in_range, local_shape.dims(), batch_positions);
      // -0.0 for floats: the exact identity of the sum that combines the pieces (+0.0 would turn
      // a gathered -0.0 into +0.0, which orders differently in sort/topk).
      double identity = IsFloatingPoint(local_shape.element_type()) ? -0.0 : 0.0;
      Instruction* zero = b.BroadcastScalar(b.ScalarConstant(local_shape.element_type(), identity), local_shape.dims());
      local = b.Select(mask, local, zero);
    }
    if (placement.partial.empty()) {
      op_.SetResult(local, local_sharding);
      return;
    }
    Opcode reduction = local_shape.element_type() == ElementType::kPred ? Opcode::kOr : Opcode::kAdd;
    op_.SetResult(ResolvePartialSums(op_.spmd(), b, local, gather_.shape(), local_sharding, placement.partial,
                                     reduction, op_.sharding()));
  }

  // Gather clamps every start so the slice fits the operand; clamp against the global operand
  // before shifting, so that a shard does not clamp into its own rows.
  Instruction* ClampToOperand(Instruction* indices) {
    HloBuilder& b = op_.builder();
    ElementType type = indices->shape().element_type();
    std::vector<Instruction*> lows, highs;
    for (int64_t dim : gather_.gather_dims().start_index_map) {
      lows.push_back(b.ScalarConstant(type, 0));
      highs.push_back(b.ScalarConstant(type, static_cast<double>(operand_.dim(dim) - gather_.gather_slice_sizes()[dim])));
    }
    Instruction* low = BroadcastComponents(b, lows, indices->shape(), vector_);
    Instruction* high = BroadcastComponents(b, highs, indices->shape(), vector_);
    return b.AddOp(Opcode::kClamp, indices->shape(), {low, indices, high});
  }

  // pred over the index batch dims: every shifted component lies in [0, shard size).
  Instruction* InShard(Instruction* indices, const std::vector<int64_t>& shifted, const AxisSharding& layout) {
    HloBuilder& b = op_.builder();
    ElementType type = indices->shape().element_type();
    Instruction* all = nullptr;
    for (size_t k = 0; k < shifted.size(); ++k) {
      if (shifted[k] < 0) continue;
      Instruction* component = Component(b, indices, vector_, static_cast<int64_t>(k));
      const std::vector<int64_t>& dims = component->shape().dims();
      int64_t shard = ShardSize(operand_.dim(shifted[k]), layout.TileCount(shifted[k]));
      Instruction* zero = b.BroadcastScalar(b.ScalarConstant(type, 0), dims);
      Instruction* limit = b.BroadcastScalar(b.ScalarConstant(type, static_cast<double>(shard)), dims);
      Instruction* inside = b.Binary(Opcode::kAnd, b.Compare(component, zero, ComparisonDirection::kGe),
                                     b.Compare(component, limit, ComparisonDirection::kLt));
      all = all ? b.Binary(Opcode::kAnd, all, inside) : inside;
    }
    return all;
  }

  OpContext& op_;
  const Instruction& gather_;
  const Shape& operand_;
  const Shape& indices_;
  IndexVector vector_;
  GatherSlots slots_;
};

// ---- scatter ----

// The combiner as one associative, commutative binary op with an identity, if it is one.
struct Combiner {
  Opcode opcode;
  double identity;
};

std::optional<Combiner> ReducibleCombiner(const Computation* computation, ElementType type) {
  if (computation == nullptr || computation->num_parameters() != 2) return std::nullopt;
  const Instruction* root = computation->root();
  if (root->operand_count() != 2) return std::nullopt;
  bool on_parameters = root->operand(0)->opcode() == Opcode::kParameter &&
                       root->operand(1)->opcode() == Opcode::kParameter && root->operand(0) != root->operand(1);
  if (!on_parameters) return std::nullopt;
  bool is_float = IsFloatingPoint(type);
  bool is_pred = type == ElementType::kPred;
  bool is_64_bit = ElementByteSize(type) == 8;
  switch (root->opcode()) {
    case Opcode::kAdd:
      if (is_pred) return std::nullopt;
      return Combiner{Opcode::kAdd, is_float ? -0.0 : 0.0};  // -0.0: x + -0.0 == x exactly
    case Opcode::kMultiply:
      if (is_pred) return std::nullopt;
      return Combiner{Opcode::kMultiply, 1};
    case Opcode::kOr:
      if (is_float) return std::nullopt;
      return Combiner{Opcode::kOr, 0};
    case Opcode::kAnd:
      if (!is_pred) return std::nullopt;
      return Combiner{Opcode::kAnd, 1};
    case Opcode::kMaximum:
      if (is_pred) return std::nullopt;
      if (is_float) return Combiner{Opcode::kMaximum, -std::numeric_limits<double>::infinity()};
      if (!IsSignedInteger(type)) return Combiner{Opcode::kMaximum, 0};
      return Combiner{Opcode::kMaximum, -std::ldexp(1.0, ElementByteSize(type) * 8 - 1)};
    case Opcode::kMinimum:
      if (is_pred || (!is_float && is_64_bit)) return std::nullopt;
      if (is_float) return Combiner{Opcode::kMinimum, std::numeric_limits<double>::infinity()};
      if (IsSignedInteger(type)) return Combiner{Opcode::kMinimum, std::ldexp(1.0, ElementByteSize(type) * 8 - 1) - 1};
      return Combiner{Opcode::kMinimum, std::ldexp(1.0, ElementByteSize(type) * 8) - 1};
    default:
      return std::nullopt;
  }
}

struct ScatterSlots {
  int64_t count = 0;
  std::vector<int64_t> operand, indices, updates;
  std::vector<int64_t> extent;
  std::vector<int64_t> indexed_dims;   // operand dims on indexed slots
  std::vector<int64_t> partial_slots;  // index batch slots the operand has no dim for
};

ScatterSlots MakeScatterSlots(const Instruction& scatter, const Shape& operand, const Shape& indices,
                              const Shape& updates, const IndexVector& vector, bool reducible) {
  const ScatterDimensionNumbers& dn = scatter.scatter_dims();
  ScatterSlots slots;
  slots.operand.assign(operand.rank(), -1);
  slots.indices.assign(indices.rank(), -1);
  slots.updates.assign(updates.rank(), -1);
  std::vector<int64_t> update_scatter_dims;
  for (int64_t d = 0; d < updates.rank(); ++d)
    if (!Contains(dn.update_window_dims, d)) update_scatter_dims.push_back(d);
  std::vector<int64_t> index_batch = vector.BatchDims(indices.rank());
  if (update_scatter_dims.size() != index_batch.size())
    GSPMD_USER_ERROR("scatter %", scatter.name(), " has ", update_scatter_dims.size(), " scatter dims in its updates but ",
                     index_batch.size(), " batch dims in its indices");
  for (size_t j = 0; j < index_batch.size(); ++j) {
    int64_t k = IndexOf(dn.scatter_indices_batching_dims, index_batch[j]);
    bool batching = k >= 0 && k < static_cast<int64_t>(dn.input_batching_dims.size());
    if (!batching && !reducible) continue;
    int64_t slot = slots.count++;
    slots.indices[index_batch[j]] = slot;
    slots.updates[update_scatter_dims[j]] = slot;
    slots.extent.push_back(indices.dim(index_batch[j]));
    if (batching) {
      slots.operand[dn.input_batching_dims[k]] = slot;
    } else {
      slots.partial_slots.push_back(slot);
    }
  }
  std::vector<int64_t> window_dims = dn.update_window_dims;
  std::sort(window_dims.begin(), window_dims.end());
  size_t next_window = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (Contains(dn.input_batching_dims, d)) continue;
    bool indexed = Contains(dn.scatter_dims_to_operand_dims, d);
    int64_t window = 1;
    int64_t update_dim = -1;
    if (!Contains(dn.inserted_window_dims, d)) {
      if (next_window >= window_dims.size())
        GSPMD_USER_ERROR("scatter %", scatter.name(), " has fewer update_window_dims than operand window dims");
      update_dim = window_dims[next_window++];
      window = updates.dim(update_dim);
    }
    if (update_dim >= 0 && window == operand.dim(d)) {
      slots.operand[d] = slots.count;
      slots.updates[update_dim] = slots.count++;
      slots.extent.push_back(operand.dim(d));
    } else if (window == 1 && indexed) {
      slots.operand[d] = slots.count++;
      slots.extent.push_back(operand.dim(d));
      slots.indexed_dims.push_back(d);
    }
  }
  return slots;
}

class ScatterPartitioner {
 public:
  ScatterPartitioner(OpContext& op, const Shape& operand, const Shape& indices, const Shape& updates)
      : op_(op), scatter_(op.instruction()), operand_(operand), indices_(indices), updates_(updates),
        vector_(indices, scatter_.scatter_dims().index_vector_dim),
        combiner_(ReducibleCombiner(scatter_.to_apply(), operand.element_type())) {}

  bool Run() {
    SpmdContext& context = op_.spmd();
    const auto& operand_axes = context.Axes(AsAxisSharding(op_.Operand(0).sharding), operand_.rank());
    const auto& indices_axes = context.Axes(AsAxisSharding(op_.Operand(1).sharding), indices_.rank());
    const auto& updates_axes = context.Axes(AsAxisSharding(op_.Operand(2).sharding), updates_.rank());
    const auto& result_axes = context.Axes(AsAxisSharding(op_.sharding()), operand_.rank());
    if (!operand_axes || !indices_axes || !updates_axes || !result_axes) return false;
    slots_ = MakeScatterSlots(scatter_, operand_, indices_, updates_, vector_, combiner_.has_value());
    SlotProblem problem;
    problem.slot_count = slots_.count;
    problem.slot_extent = slots_.extent;
    problem.inputs.push_back(Tensor(operand_, *operand_axes, slots_.operand));
    problem.inputs.push_back(Tensor(indices_, *indices_axes, slots_.indices));
    problem.inputs.push_back(Tensor(updates_, *updates_axes, slots_.updates));
    problem.result = Tensor(scatter_.shape(), *result_axes, slots_.operand);
    std::optional<SlotPlacement> placement = ChooseSlotPlacement(context, problem);
    if (!placement) return false;
    Emit(*placement);
    return true;
  }

 private:
  void Emit(const SlotPlacement& placement) {
    HloBuilder& b = op_.builder();
    const AxisSharding& operand_layout = placement.inputs[0];
    Instruction* operand = op_.OperandWith(0, operand_layout.ToSharding());
    Instruction* indices = op_.OperandWith(1, placement.inputs[1].ToSharding());
    Instruction* updates = op_.OperandWith(2, placement.inputs[2].ToSharding());
    std::vector<int64_t> shifted =
        ShiftedComponents(scatter_.scatter_dims().scatter_dims_to_operand_dims, operand_layout, slots_.indexed_dims);
    if (AnyShifted(shifted)) indices = SubtractShardStarts(op_, indices, vector_, shifted, operand_layout, operand_);
    if (!placement.partial.empty()) {
      GSPMD_CHECK(combiner_.has_value(), "partial scatter without a reducible combiner");
      Instruction* identity = b.ScalarConstant(operand_.element_type(), combiner_->identity);
      updates = MaskPartialPadding(updates, placement.inputs[2], identity);
      operand = OperandOnFirstDevices(operand, placement.partial, identity);
    }
    Sharding local_sharding = placement.result.ToSharding();
    Instruction* local = op_.Clone(ShardShapeOf(local_sharding, scatter_.shape()), {operand, indices, updates});
    if (placement.partial.empty()) {
      op_.SetResult(local, local_sharding);
      return;
    }
    op_.SetResult(ResolvePartialSums(op_.spmd(), b, local, scatter_.shape(), local_sharding, placement.partial,
                                     combiner_->opcode, op_.sharding()));
  }

  // Sets the uneven padding of the updates' split index batch dims to the identity, so that
  // the padding rows change nothing.
  Instruction* MaskPartialPadding(Instruction* updates, const AxisSharding& layout, Instruction* identity) {
    AxisSharding only = layout;
    bool uneven = false;
    for (int64_t d = 0; d < only.rank(); ++d) {
      if (Contains(slots_.partial_slots, slots_.updates[d])) {
        uneven = uneven || updates_.dim(d) % only.TileCount(d) != 0;
        continue;
      }
      only.replicated.insert(only.replicated.end(), only.dims[d].begin(), only.dims[d].end());
      only.dims[d].clear();
    }
    if (!uneven) return updates;
    std::sort(only.replicated.begin(), only.replicated.end());
    return MaskPadding(op_.builder(), op_.spmd(), updates, updates_, only.ToSharding(), identity);
  }

  // The operand on the devices whose partial-axis digits are all 0, the identity elsewhere:
  // the reduction over the partial axes then adds the operand once.
  Instruction* OperandOnFirstDevices(Instruction* operand, const std::vector<DeviceAxis>& partial,
                                     Instruction* identity) {
    HloBuilder& b = op_.builder();
    std::vector<int64_t> table(op_.spmd().num_devices());
    for (int64_t p = 0; p < op_.spmd().num_devices(); ++p) {
      bool first = std::all_of(partial.begin(), partial.end(),
                               [&](const DeviceAxis& axis) { return (p / axis.stride) % axis.size == 0; });
      table[p] = first ? 1 : 0;
    }
    const std::vector<int64_t>& dims = operand->shape().dims();
    Instruction* is_first = b.Compare(b.TableLookup(table), b.S32Constant(1), ComparisonDirection::kEq);
    return b.Select(b.Broadcast(is_first, dims, {}), operand, b.BroadcastScalar(identity, dims));
  }

  OpContext& op_;
  const Instruction& scatter_;
  const Shape& operand_;
  const Shape& indices_;
  const Shape& updates_;
  IndexVector vector_;
  std::optional<Combiner> combiner_;
  ScatterSlots slots_;
};

void CheckScatter(const Instruction& scatter, const Shape& operand, const Shape& indices) {
  const ScatterDimensionNumbers& dn = scatter.scatter_dims();
  if (dn.index_vector_dim < 0 || dn.index_vector_dim > indices.rank())
    GSPMD_USER_ERROR("scatter %", scatter.name(), " has index_vector_dim ", dn.index_vector_dim,
                     " for indices of rank ", indices.rank());
  for (int64_t d : dn.scatter_dims_to_operand_dims)
    if (d < 0 || d >= operand.rank())
      GSPMD_USER_ERROR("scatter %", scatter.name(), " scatter_dims_to_operand_dims names dim ", d);
  IndexVector vector(indices, dn.index_vector_dim);
  if (vector.components != static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size()))
    GSPMD_USER_ERROR("scatter %", scatter.name(), " has ", vector.components,
                     " index components but scatter_dims_to_operand_dims has ",
                     dn.scatter_dims_to_operand_dims.size(), " entries");
}

}  // namespace

bool PartitionGather(OpContext& op) {
  const Instruction& gather = op.instruction();
  if (gather.opcode() != Opcode::kGather || gather.operand_count() != 2) return false;
  if (!gather.shape().IsArray() || op.sharding().IsTuple()) return false;
  const PartitionedValue& operand = op.Operand(0);
  const PartitionedValue& indices = op.Operand(1);
  if (!operand.global_shape.IsArray() || !indices.global_shape.IsArray()) return false;
  if (operand.sharding.IsTuple() || indices.sharding.IsTuple()) return false;
  CheckGather(gather, operand.global_shape, indices.global_shape);
  GatherPartitioner partitioner(op, operand.global_shape, indices.global_shape);
  return partitioner.Run();
}

bool PartitionScatter(OpContext& op) {
  const Instruction& scatter = op.instruction();
  // Variadic scatters (several operands and updates, a tuple result) use the fallback.
  if (scatter.opcode() != Opcode::kScatter || scatter.operand_count() != 3) return false;
  if (!scatter.shape().IsArray() || op.sharding().IsTuple()) return false;
  for (int64_t i = 0; i < 3; ++i) {
    const PartitionedValue& value = op.Operand(i);
    if (!value.global_shape.IsArray() || value.sharding.IsTuple()) return false;
  }
  const Shape& operand = op.Operand(0).global_shape;
  const Shape& indices = op.Operand(1).global_shape;
  const Shape& updates = op.Operand(2).global_shape;
  CheckScatter(scatter, operand, indices);
  ScatterPartitioner partitioner(op, operand, indices, updates);
  return partitioner.Run();
}

}  // namespace gspmd
