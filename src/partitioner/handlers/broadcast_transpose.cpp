// Broadcast, transpose and iota: the result's sharding mapped onto the operand's dims, then a
// local op on each device's piece (iota adds the device's offset along sharded dims).
#include <algorithm>

#include "partitioner/handlers/shape_ops.h"

namespace gspmd::shape_ops {
namespace {

// Maximal (and unknown) results are computed everywhere, like replicated ones.
}  // namespace

bool PartitionBroadcast(OpContext& op) {
  const Instruction& instruction = op.instruction();
  Sharding target = LocalTarget(op.sharding());
  // Operand dim i is result dim dimensions[i]; the tiles of the new dims become replicated.
  Sharding operand_sharding = RemapSharding(target, instruction.dimensions);
  Instruction* operand = op.OperandWith(0, operand_sharding);
  op.SetResult(op.Clone(ShardShapeOf(target, instruction.shape()), {operand}), target);
  return true;
}

bool PartitionTranspose(OpContext& op) {
  const Instruction& instruction = op.instruction();
  Sharding target = LocalTarget(op.sharding());
  const std::vector<int64_t>& perm = instruction.dimensions;
  // Result dim j is operand dim perm[j].
  std::vector<int64_t> source_dim_of(perm.size(), -1);
  for (size_t j = 0; j < perm.size(); ++j) source_dim_of[perm[j]] = static_cast<int64_t>(j);
  Instruction* operand = op.OperandWith(0, RemapSharding(target, source_dim_of));
  op.SetResult(op.Clone(ShardShapeOf(target, instruction.shape()), {operand}), target);
  return true;
}

bool PartitionIota(OpContext& op) {
  const Instruction& instruction = op.instruction();
  Sharding target = LocalTarget(op.sharding());
  const Shape& shape = instruction.shape();
  Shape local = ShardShapeOf(target, shape);
  Instruction* iota = op.Clone(local, {});
  int64_t dim = instruction.iota_dimension;
  if (TileCountOf(target, dim) == 1) {
    op.SetResult(iota, target);
    return true;
  }
  HloBuilder& b = op.builder();
  Instruction* offset = ShardOffset(b, op.spmd(), target, shape.dims(), dim);
  if (shape.element_type() != ElementType::kS32) offset = b.Convert(offset, shape.element_type());
  Instruction* shifted = b.Binary(Opcode::kAdd, iota, b.BroadcastScalar(offset, local.dims()));
  op.SetResult(shifted, target);
  return true;
}

}  // namespace gspmd::shape_ops
