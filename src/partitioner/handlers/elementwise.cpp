// Elementwise ops (unary, binary, compare, select, clamp, convert): every operand is resharded
// to the result's sharding and the op runs on each device's piece, with no communication
// beyond those reshards.
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

}  // namespace

bool PartitionElementwise(OpContext& op) {
  const Instruction& instruction = op.instruction();
  if (!IsElementwise(instruction) || !instruction.shape().IsArray()) return false;
  if (op.sharding().IsTuple()) return false;
  // bitcast-convert between widths changes the rank; only same-rank forms are elementwise.
  if (instruction.opcode() == Opcode::kBitcastConvert &&
      instruction.operand(0)->shape().rank() != instruction.shape().rank())
    return false;
  const Sharding& target = op.sharding();
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
