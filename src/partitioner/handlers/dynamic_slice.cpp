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

Sharding LocalTarget(const Sharding& sharding) {
  if (sharding.IsMaximal() || sharding.IsUnknown()) return Sharding::Replicated();
  return sharding;
}

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
  return instruction.opcode() == Opcode::kConstant && instruction.literal &&
         instruction.shape().IsArray() && instruction.shape().rank() == 0;
}

enum class SliceMode {
  kWhole,      // the slice covers the dim: nothing to do
  kLocal,      // the dim is not split: slice locally at the given start
  kStatic,     // constant start on a split dim: window exchange, stays split
  kOwnPart,    // run-time start, split evenly: operand replicated, each device its part
  kReplicate,  // run-time start, uneven split: operand and result replicated along the dim
};

}  // namespace

bool PartitionDynamicSlice(OpContext& op) {
  const Instruction& instruction = op.instruction();
  Sharding target = LocalTarget(op.sharding());
  const Shape& operand_shape = instruction.operand(0)->shape();
  const std::vector<int64_t>& sizes = instruction.dynamic_slice_sizes;
  int64_t rank = operand_shape.rank();
  if (static_cast<int64_t>(sizes.size()) != rank || instruction.operand_count() != rank + 1) return false;
  HloBuilder& b = op.builder();
  if (!target.IsTiled()) {
    std::vector<Instruction*> operands{op.OperandWith(0, target)};
    for (int64_t d = 0; d < rank; ++d) operands.push_back(op.OperandWith(d + 1, Sharding::Replicated()));
    op.SetResult(op.Clone(instruction.shape(), operands), target);
    return true;
  }
  std::vector<SliceMode> modes(rank);
  std::vector<int64_t> replicated_on_operand, replicated_on_result;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t tiles = TileCountOf(target, d);
    if (sizes[d] >= operand_shape.dim(d)) modes[d] = SliceMode::kWhole;
    else if (tiles == 1) modes[d] = SliceMode::kLocal;
    else if (IsConstantScalar(*instruction.operand(d + 1))) modes[d] = SliceMode::kStatic;
    else if (sizes[d] % tiles == 0) modes[d] = SliceMode::kOwnPart;
    else modes[d] = SliceMode::kReplicate;
    if (modes[d] == SliceMode::kOwnPart || modes[d] == SliceMode::kReplicate) replicated_on_operand.push_back(d);
    if (modes[d] == SliceMode::kReplicate) replicated_on_result.push_back(d);
  }
  Sharding operand_layout = ReplicateDims(target, rank, replicated_on_operand);
  Sharding result_layout = ReplicateDims(target, rank, replicated_on_result);
  Instruction* value = op.OperandWith(0, operand_layout);
  for (int64_t d = 0; d < rank; ++d) {
    if (modes[d] != SliceMode::kStatic) continue;
    int64_t size = operand_shape.dim(d);
    int64_t start = std::clamp<int64_t>(instruction.operand(d + 1)->literal->GetAsInt64(0), 0, size - sizes[d]);
    value = SliceShardedDim(op, value, operand_layout, d, size, {start, start + sizes[d], 1});
  }
  bool dynamic = std::any_of(modes.begin(), modes.end(), [](SliceMode m) {
    return m == SliceMode::kLocal || m == SliceMode::kOwnPart || m == SliceMode::kReplicate;
  });
  if (dynamic) {
    Instruction* zero = b.S32Constant(0);
    std::vector<Instruction*> starts(rank, zero);
    std::vector<int64_t> local_sizes = value->shape().dims();
    for (int64_t d = 0; d < rank; ++d) {
      Instruction* start = op.OperandWith(d + 1, Sharding::Replicated());
      switch (modes[d]) {
        case SliceMode::kLocal:
        case SliceMode::kReplicate:
          starts[d] = AsS32(b, start);
          local_sizes[d] = sizes[d];
          break;
        case SliceMode::kOwnPart: {
          int64_t piece = sizes[d] / TileCountOf(target, d);
          Instruction* offset = ShardOffset(b, op.spmd(), target, instruction.shape().dims(), d);
          starts[d] = b.Binary(Opcode::kAdd, ClampedStart(b, start, operand_shape.dim(d), sizes[d]), offset);
          local_sizes[d] = piece;
          break;
        }
        default:
          break;
      }
    }
    value = b.DynamicSlice(value, starts, local_sizes);
  }
  op.SetResult(value, result_layout);
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
