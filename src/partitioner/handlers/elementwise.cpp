// Elementwise ops (unary, binary, compare, select, clamp, convert): every operand is resharded
// to the result's sharding and the op runs on each device's piece, with no communication
// beyond those reshards; or, where the operands share a layout and moving the result moves
// less than moving them, the op runs in their layout and its result is moved.
#include <algorithm>
#include <vector>

#include "partitioner/handlers/shape_ops.h"
#include "partitioner/manual.h"
#include "partitioner/op_context.h"

namespace gspmd {
namespace {

bool IsElementwise(const Instruction& instruction) {
  Opcode opcode = instruction.opcode();
  if (IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode)) return true;
  switch (opcode) {
    case Opcode::kCompare: case Opcode::kSelect: case Opcode::kClamp: case Opcode::kConvert:
    case Opcode::kBitcastConvert: case Opcode::kCopy: case Opcode::kReducePrecision:
    case Opcode::kStochasticConvert:
      return true;
    default:
      return false;
  }
}

bool IsScalar(const Instruction& instruction) {
  return instruction.shape().IsArray() && instruction.shape().rank() == 0;
}

// The layout every array operand shares, when running the op there and moving its result to
// `target` moves fewer bytes than moving the operands (a compare of f32 values whose pred
// result is wanted whole: oracle seed 112399, 56 B against XLA's 14).
std::optional<Sharding> CheaperToMoveTheResult(OpContext& op, const Sharding& target) {
  const Instruction& instruction = op.instruction();
  std::optional<Sharding> shared;
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    if (IsScalar(*instruction.operand(i)) && !IsScalar(instruction)) continue;
    const Sharding& sharding = op.Operand(i).sharding;
    if (shared && sharding != *shared) return std::nullopt;
    shared = sharding;
  }
  if (!shared || *shared == target || !shared->IsTiled() || shared->HasUnreduced() || HasManualAxes(*shared) ||
      (!target.IsTiled() && !target.IsReplicated()))
    return std::nullopt;
  SpmdContext& context = op.spmd();
  double operands = 0;
  std::vector<const Instruction*> counted;  // an operand used twice (x + x) moves once
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    const Instruction* operand = instruction.operand(i);
    if ((IsScalar(*operand) && !IsScalar(instruction)) ||
        std::find(counted.begin(), counted.end(), operand) != counted.end())
      continue;
    counted.push_back(operand);
    std::optional<double> cost = shape_ops::ReshardCost(context, operand->shape(), *shared, target);
    if (!cost) return std::nullopt;
    operands += *cost;
  }
  std::optional<double> result = shape_ops::ReshardCost(context, instruction.shape(), *shared, target);
  if (!result || *result >= operands) return std::nullopt;
  return shared;
}

}  // namespace

bool PartitionElementwise(OpContext& op) {
  const Instruction& instruction = op.instruction();
  if (!IsElementwise(instruction) || !instruction.shape().IsArray()) return false;
  if (op.sharding().IsTuple()) return false;
  // bitcast-convert between widths changes the rank; only same-rank forms are elementwise.
  if (instruction.opcode() == Opcode::kBitcastConvert &&
      instruction.operand(0)->shape().rank() != instruction.shape().rank())
    return false;
  Sharding target = op.sharding();
  if (std::optional<Sharding> shared = CheaperToMoveTheResult(op, target)) target = *shared;  // moved after
  std::vector<Instruction*> operands;
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    // Scalar operands of select/clamp broadcast implicitly: keep them replicated.
    bool scalar_operand = IsScalar(*instruction.operand(i)) && !IsScalar(instruction);
    operands.push_back(op.OperandWith(i, scalar_operand ? Sharding::Replicated() : target));
  }
  op.SetResult(op.Clone(ShardShapeOf(target, instruction.shape()), operands), target);
  return true;
}

}  // namespace gspmd
