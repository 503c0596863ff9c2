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

Instruction* IotaPiece(HloBuilder& b, SpmdContext& context, Instruction* local, const Sharding& sharding,
                       const Shape& global, int64_t dim) {
  if (TileCountOf(sharding, dim) == 1) return local;
  Instruction* offset = ShardOffset(b, context, sharding, global.dims(), dim);
  if (global.element_type() != ElementType::kS32) offset = b.Convert(offset, global.element_type());
  return b.Binary(Opcode::kAdd, local, b.BroadcastScalar(offset, local->shape().dims()));
}

bool PartitionIota(OpContext& op) {
  const Instruction& instruction = op.instruction();
  Sharding target = LocalTarget(op.sharding());
  const Shape& shape = instruction.shape();
  Instruction* iota = op.Clone(ShardShapeOf(target, shape), {});
  op.SetResult(IotaPiece(op.builder(), op.spmd(), iota, target, shape, instruction.iota_dimension), target);
  return true;
}

}  // namespace gspmd::shape_ops
