// Dynamic-slice and dynamic-update-slice. Dims sliced at a run-time offset are replicated on
// the operand (the result may still be split there when the slice divides evenly: each device
// slices its own part); constant offsets slice like a static slice. Dynamic-update-slice keeps
// the operand sharded: each device writes the part of the (replicated-along-those-dims)
// update that falls in its piece, under a mask.
#include <algorithm>

#include "partitioner/handlers/shape_ops.h"
#include "partitioner/reshard_plan.h"

namespace gspmd::shape_ops {
namespace {

Instruction* AsS32(HloBuilder& b, Instruction* index) {
  if (index->shape().element_type() == ElementType::kS32) return index;
  return b.Convert(index, ElementType::kS32);
}

// The start the op really uses: clamp(start, 0, size - slice_size), as s32.
Instruction* ClampedStart(HloBuilder& b, Instruction* start, int64_t size, int64_t slice_size) {
  Instruction* value = AsS32(b, start);
  value = b.Binary(Opcode::kMaximum, value, b.S32Constant(0));
  return b.Binary(Opcode::kMinimum, value, b.S32Constant(size - slice_size));
}

bool IsConstantScalar(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kConstant && instruction.literal() &&
         instruction.shape().IsArray() && instruction.shape().rank() == 0;
}

enum class SliceMode {
  kWhole,    // the slice covers the dim: nothing to do
  kLocal,    // the layout does not split the dim: slice locally at the given start
  kOwnPart,  // not split on the operand, split evenly on the result: each device its part
  kStatic,   // constant start on a split dim: window exchange, stays split
  kMasked,   // run-time start on a split dim: each device its overlap, summed over the dim
};

// One way to partition a dynamic-slice: the operand layout it works in, the result layout it
// produces, what happens to each dim, and the bytes it moves (operand reshard, the sum of the
// masked parts, result reshard).
struct SlicePlan {
  Sharding operand_layout;
  Sharding result_layout;
  std::vector<SliceMode> modes;
  double cost = 0;
};

SlicePlan PlanSlice(OpContext& op, const Sharding& layout, bool own_parts, const Sharding& target) {
  const Instruction& instruction = op.instruction();
  const Shape& operand_shape = instruction.operand(0)->shape();
  const std::vector<int64_t>& sizes = instruction.dynamic_slice_sizes();
  int64_t rank = operand_shape.rank();
  SlicePlan plan;
  plan.operand_layout = layout;
  plan.modes.resize(rank);
  std::vector<int64_t> replicated_on_result, masked;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t tiles = TileCountOf(layout, d);
    int64_t target_tiles = TileCountOf(target, d);
    SliceMode& mode = plan.modes[d];
    if (sizes[d] >= operand_shape.dim(d)) mode = SliceMode::kWhole;
    else if (tiles > 1) mode = IsConstantScalar(*instruction.operand(d + 1)) ? SliceMode::kStatic : SliceMode::kMasked;
    else if (own_parts && target_tiles > 1 && sizes[d] % target_tiles == 0) mode = SliceMode::kOwnPart;
    else mode = SliceMode::kLocal;
    if (mode == SliceMode::kMasked) masked.push_back(d);
    if (own_parts && mode == SliceMode::kLocal && target_tiles > 1) replicated_on_result.push_back(d);
  }
  replicated_on_result.insert(replicated_on_result.end(), masked.begin(), masked.end());
  plan.result_layout = ReplicateDims(own_parts ? target : layout, rank, replicated_on_result);
  SpmdContext& context = op.spmd();
  auto before = ReshardCost(context, operand_shape, op.Operand(0).sharding, layout);
  auto after = ReshardCost(context, instruction.shape(), plan.result_layout, target);
  plan.cost = (before ? *before : 1e30) + (after ? *after : 1e30);
  if (!masked.empty()) {
    int64_t group = 1;
    for (int64_t d : masked) group *= TileCountOf(layout, d);
    Shape local = ShardShapeOf(plan.result_layout, instruction.shape());
    plan.cost += 2.0 * static_cast<double>(group - 1) / static_cast<double>(group) *
                 static_cast<double>(local.byte_size());
  }
  return plan;
}

// Emits `plan`: the static window slices, then one local dynamic-slice (masked dims take the
// part of the slice inside the device's piece, zero elsewhere), then the sum over the masked
// dims.
Instruction* EmitSlice(OpContext& op, const SlicePlan& plan, const Sharding& target) {
  const Instruction& instruction = op.instruction();
  const Shape& operand_shape = instruction.operand(0)->shape();
  const std::vector<int64_t>& sizes = instruction.dynamic_slice_sizes();
  int64_t rank = operand_shape.rank();
  HloBuilder& b = op.builder();
  const Sharding& layout = plan.operand_layout;
  Instruction* value = op.OperandWith(0, layout);
  for (int64_t d = 0; d < rank; ++d) {
    if (plan.modes[d] != SliceMode::kStatic) continue;
    int64_t size = operand_shape.dim(d);
    int64_t start = std::clamp<int64_t>(instruction.operand(d + 1)->literal()->GetAsInt64(0), 0, size - sizes[d]);
    value = SliceShardedDim(op, value, layout, d, size, {start, start + sizes[d], 1});
  }
  bool dynamic = std::any_of(plan.modes.begin(), plan.modes.end(), [](SliceMode m) {
    return m == SliceMode::kLocal || m == SliceMode::kOwnPart || m == SliceMode::kMasked;
  });
  if (!dynamic) return value;
  Instruction* zero = b.S32Constant(0);
  std::vector<Instruction*> starts(rank, zero);
  std::vector<int64_t> local_sizes = value->shape().dims();
  PaddingConfig padding(rank);
  bool padded = false;
  std::vector<int64_t> masked;
  std::vector<Instruction*> clamped(rank, nullptr), offsets(rank, nullptr);
  for (int64_t d = 0; d < rank; ++d) {
    Instruction* start = op.OperandWith(d + 1, Sharding::Replicated());
    switch (plan.modes[d]) {
      case SliceMode::kLocal:
        starts[d] = AsS32(b, start);
        local_sizes[d] = sizes[d];
        break;
      case SliceMode::kOwnPart: {
        Instruction* offset = ShardOffset(b, op.spmd(), target, instruction.shape().dims(), d);
        starts[d] = b.Binary(Opcode::kAdd, ClampedStart(b, start, operand_shape.dim(d), sizes[d]), offset);
        local_sizes[d] = sizes[d] / TileCountOf(target, d);
        break;
      }
      case SliceMode::kMasked: {
        // Element k of the slice is position clamped + k; in the piece padded by the slice
        // size on both sides it sits at clamped - offset + size + k.
        clamped[d] = ClampedStart(b, start, operand_shape.dim(d), sizes[d]);
        offsets[d] = ShardOffset(b, op.spmd(), layout, operand_shape.dims(), d);
        Instruction* relative = b.Binary(Opcode::kSubtract, clamped[d], offsets[d]);
        starts[d] = b.Binary(Opcode::kAdd, relative, b.S32Constant(sizes[d]));
        padding[d] = {sizes[d], sizes[d], 0};
        padded = true;
        local_sizes[d] = sizes[d];
        masked.push_back(d);
        break;
      }
      default:
        break;
    }
  }
  std::vector<int64_t> piece_dims = value->shape().dims();
  if (padded) value = b.Pad(value, b.ScalarConstant(value->shape().element_type(), 0), padding);
  value = b.DynamicSlice(value, starts, local_sizes);
  if (masked.empty()) return value;
  Instruction* inside = nullptr;
  for (int64_t d : masked) {
    Instruction* iota = b.Iota(Shape(ElementType::kS32, local_sizes), d);
    Instruction* shift = b.Binary(Opcode::kSubtract, clamped[d], offsets[d]);
    Instruction* local = b.Binary(Opcode::kAdd, iota, b.BroadcastScalar(shift, local_sizes));
    Instruction* low = b.Compare(local, b.BroadcastScalar(b.S32Constant(0), local_sizes), ComparisonDirection::kGe);
    Instruction* high = b.Compare(local, b.BroadcastScalar(b.S32Constant(piece_dims[d]), local_sizes),
                                  ComparisonDirection::kLt);
    Instruction* both = b.Binary(Opcode::kAnd, low, high);
    inside = inside ? b.Binary(Opcode::kAnd, inside, both) : both;
  }
  ElementType type = value->shape().element_type();
  value = b.Select(inside, value, b.BroadcastScalar(b.ScalarConstant(type, ExactSumIdentity(type)), local_sizes));
  CollectiveFactory& collectives = op.spmd().collectives();
  return collectives.SumOfPieces(b, value, collectives.GroupsFromList(GroupsAcrossDims(layout, masked)));
}

}  // namespace

bool PartitionDynamicSlice(OpContext& op) {
  const Instruction& instruction = op.instruction();
  Sharding target = LocalTarget(op.sharding());
  const Shape& operand_shape = instruction.operand(0)->shape();
  const std::vector<int64_t>& sizes = instruction.dynamic_slice_sizes();
  int64_t rank = operand_shape.rank();
  if (static_cast<int64_t>(sizes.size()) != rank || instruction.operand_count() != rank + 1) return false;
  if (!target.IsTiled() && !target.IsReplicated()) {
    std::vector<Instruction*> operands{op.OperandWith(0, target)};
    for (int64_t d = 0; d < rank; ++d) operands.push_back(op.OperandWith(d + 1, Sharding::Replicated()));
    op.SetResult(op.Clone(instruction.shape(), operands), target);
    return true;
  }
  // Candidates: replicate the dims sliced at run time (XLA's way), or keep them split (the
  // target's or the operand's layout) and sum each device's masked part.
  std::vector<int64_t> dynamic_dims;
  for (int64_t d = 0; d < rank; ++d)
    if (sizes[d] < operand_shape.dim(d) && !IsConstantScalar(*instruction.operand(d + 1))) dynamic_dims.push_back(d);
  std::vector<SlicePlan> plans;
  plans.push_back(PlanSlice(op, ReplicateDims(target, rank, dynamic_dims), true, target));
  if (target.IsTiled()) plans.push_back(PlanSlice(op, target, false, target));
  const Sharding& current = op.Operand(0).sharding;
  if (current.IsTiled() && !(current == target)) plans.push_back(PlanSlice(op, current, false, target));
  const SlicePlan* best = &plans[0];
  for (const SlicePlan& plan : plans)
    if (plan.cost < best->cost) best = &plan;
  op.SetResult(EmitSlice(op, *best, target), best->result_layout);
  return true;
}

bool PartitionDynamicUpdateSlice(OpContext& op) {
  const Instruction& instruction = op.instruction();
  Sharding target = LocalTarget(op.sharding());
  const Shape& operand_shape = instruction.operand(0)->shape();
  const Shape& update_shape = instruction.operand(1)->shape();
  int64_t rank = operand_shape.rank();
  if (instruction.operand_count() != rank + 2) return false;
  HloBuilder& b = op.builder();
  std::vector<int64_t> split_updated;
  for (int64_t d = 0; d < rank; ++d)
    if (update_shape.dim(d) < operand_shape.dim(d) && TileCountOf(target, d) > 1) split_updated.push_back(d);
  Instruction* operand = op.OperandWith(0, target);
  Instruction* update = op.OperandWith(1, ReplicateDims(target, rank, split_updated));
  std::vector<Instruction*> starts;
  for (int64_t d = 0; d < rank; ++d) starts.push_back(op.OperandWith(d + 2, Sharding::Replicated()));
  if (split_updated.empty()) {
    std::vector<Instruction*> operands{operand, update};
    operands.insert(operands.end(), starts.begin(), starts.end());
    op.SetResult(op.Clone(operand->shape(), operands), target);
    return true;
  }
  // The update, padded by one piece on each side along the split dims, is sliced at the
  // device's offset relative to the update's start; positions outside the update keep the
  // operand's values.
  const std::vector<int64_t>& local_dims = operand->shape().dims();
  Instruction* zero = b.S32Constant(0);
  PaddingConfig padding(rank);
  std::vector<Instruction*> piece_starts(rank, zero), write_starts(rank, zero);
  std::vector<int64_t> piece_sizes = update->shape().dims();
  Instruction* mask = nullptr;
  for (int64_t d = 0; d < rank; ++d) {
    bool split = std::find(split_updated.begin(), split_updated.end(), d) != split_updated.end();
    if (!split) {
      if (update_shape.dim(d) < operand_shape.dim(d)) write_starts[d] = AsS32(b, starts[d]);
      continue;
    }
    int64_t piece = local_dims[d];
    padding[d] = {piece, piece, 0};
    Instruction* clamped = ClampedStart(b, starts[d], operand_shape.dim(d), update_shape.dim(d));
    Instruction* offset = ShardOffset(b, op.spmd(), target, operand_shape.dims(), d);
    Instruction* relative = b.Binary(Opcode::kSubtract, offset, clamped);
    piece_starts[d] = b.Binary(Opcode::kAdd, relative, b.S32Constant(piece));
    piece_sizes[d] = piece;
    Instruction* iota = b.Iota(Shape(ElementType::kS32, local_dims), d);
    Instruction* position = b.Binary(Opcode::kAdd, iota, b.BroadcastScalar(offset, local_dims));
    Instruction* low = b.BroadcastScalar(clamped, local_dims);
    Instruction* high = b.BroadcastScalar(b.Binary(Opcode::kAdd, clamped, b.S32Constant(update_shape.dim(d))),
                                          local_dims);
    Instruction* inside = b.Binary(Opcode::kAnd, b.Compare(position, low, ComparisonDirection::kGe),
                                   b.Compare(position, high, ComparisonDirection::kLt));
    mask = mask ? b.Binary(Opcode::kAnd, mask, inside) : inside;
  }
  Instruction* padded = b.Pad(update, b.ScalarConstant(update->shape().element_type(), 0), padding);
  Instruction* piece = b.DynamicSlice(padded, piece_starts, piece_sizes);
  Instruction* written = b.DynamicUpdateSlice(operand, piece, write_starts);
  op.SetResult(b.Select(mask, written, operand), target);
  return true;
}

}  // namespace gspmd::shape_ops
