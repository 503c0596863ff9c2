// Handlers for ops that need no communication of their own: constants, tuples,
// get-tuple-element, and the replicate-everything fallback.
#include "partitioner/computation_partitioner.h"
#include "partitioner/op_context.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

Shape ShardShapeForSharding(const Sharding& sharding, const Shape& shape) {
  if (!shape.IsTuple()) return shape.IsArray() ? ShardShapeOf(sharding, shape) : shape;
  std::vector<Shape> elements;
  for (int64_t i = 0; i < shape.tuple_size(); ++i) {
    const Sharding& element = sharding.IsTuple() ? sharding.tuple_elements()[i] : sharding;
    elements.push_back(ShardShapeForSharding(element, shape.tuple_shape(i)));
  }
  return Shape::Tuple(std::move(elements));
}

// Number of leaves before tuple element `index` (for slicing a flat tuple sharding).
Sharding ElementSharding(const Sharding& tuple_sharding, int64_t index) {
  if (!tuple_sharding.IsTuple()) return tuple_sharding;
  return tuple_sharding.tuple_elements().at(index);
}

// A constant: every device slices its piece out of the full literal (no communication).
void PartitionConstant(OpContext& op) {
  const Instruction& instruction = op.instruction();
  Instruction* full = op.Clone(instruction.shape(), {});
  op.SetResult(full, instruction.shape().IsTuple() ? op.sharding() : Sharding::Replicated());
}

void PartitionTuple(OpContext& op) {
  const Instruction& instruction = op.instruction();
  std::vector<Instruction*> elements;
  std::vector<Sharding> shardings;
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    Sharding wanted = ElementSharding(op.sharding(), i);
    elements.push_back(op.OperandWith(i, wanted));
    shardings.push_back(wanted);
  }
  op.SetResult(op.builder().Tuple(elements), Sharding::Tuple(shardings));
}

void PartitionGetTupleElement(OpContext& op) {
  const Instruction& instruction = op.instruction();
  const PartitionedValue& tuple = op.Operand(0);
  Sharding element = ElementSharding(tuple.sharding, instruction.tuple_index);
  Instruction* gte = op.builder().GetTupleElement(tuple.hlo, instruction.tuple_index);
  gte->printed_as_tuple_ref = instruction.printed_as_tuple_ref;
  op.SetResult(gte, element);
}

}  // namespace

bool PartitionBasic(OpContext& op) {
  switch (op.instruction().opcode()) {
    case Opcode::kConstant:
      PartitionConstant(op);
      return true;
    case Opcode::kTuple:
      PartitionTuple(op);
      return true;
    case Opcode::kGetTupleElement:
      PartitionGetTupleElement(op);
      return true;
    default:
      return false;
  }
}

void PartitionByReplicating(OpContext& op) {
  const Instruction& instruction = op.instruction();
  std::vector<Instruction*> operands;
  bool gathered = false;
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    const PartitionedValue& operand = op.Operand(i);
    Sharding replicated = operand.global_shape.IsTuple()
                              ? EffectiveSharding(*instruction.operand(i)).IsTuple()
                                    ? Sharding::Tuple(std::vector<Sharding>(
                                          operand.global_shape.tuple_size(), Sharding::Replicated()))
                                    : Sharding::Replicated()
                              : Sharding::Replicated();
    bool already = operand.sharding.IsReplicated() ||
                   (operand.sharding.IsTuple() && operand.sharding == replicated);
    if (!already && operand.global_shape.IsArray() && operand.global_shape.element_count() > 1) gathered = true;
    operands.push_back(op.OperandWith(i, replicated));
  }
  if (gathered && !op.sharding().IsReplicated()) {
    op.spmd().Warn(StrCat("involuntary full rematerialization of %", instruction.name(),
                          ": operands replicated for ", OpcodeName(instruction.opcode())));
  }
  Sharding result_sharding = instruction.shape().IsTuple()
                                 ? Sharding::Tuple(std::vector<Sharding>(instruction.shape().tuple_size(),
                                                                         Sharding::Replicated()))
                                 : Sharding::Replicated();
  op.SetResult(op.Clone(instruction.shape(), operands), result_sharding);
}

}  // namespace gspmd
