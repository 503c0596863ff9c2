// Control flow and calls: while, conditional, call and opt-barrier. Operands are resharded to
// the called computations' parameter shardings, the computations are partitioned for them,
// and the op is emitted on per-device shapes.
#include "partitioner/computation_partitioner.h"
#include "partitioner/op_context.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// The per-device shape of a value of `shape` under `sharding` (tuples leaf by leaf).
Shape PerDeviceShape(const Sharding& sharding, const Shape& shape) {
  if (!shape.IsTuple()) return shape.IsArray() ? ShardShapeOf(sharding, shape) : shape;
  std::vector<Shape> elements;
  for (int64_t i = 0; i < shape.tuple_size(); ++i) {
    const Sharding& element = sharding.IsTuple() ? sharding.tuple_elements().at(i) : sharding;
    elements.push_back(PerDeviceShape(element, shape.tuple_shape(i)));
  }
  return Shape::Tuple(std::move(elements));
}

// Do the leaves of `sharding` line up with the leaves of `shape` (flat tuples only)?
bool FitsShape(const Sharding& sharding, const Shape& shape) {
  if (!shape.IsTuple()) return !sharding.IsTuple();
  if (!sharding.IsTuple() || sharding.tuple_elements().size() != static_cast<size_t>(shape.tuple_size()))
    return false;
  for (int64_t i = 0; i < shape.tuple_size(); ++i)
    if (!FitsShape(sharding.tuple_elements()[i], shape.tuple_shape(i))) return false;
  return true;
}

// The sharding a called computation's parameter is partitioned with: its own, or, when it
// has none, the layout the caller's operand already has (no communication).
Sharding ParameterSharding(const OpContext& op, const Instruction& parameter, const PartitionedValue& operand) {
  if (parameter.sharding()) return op.ShardingOf(parameter);
  return operand.sharding;
}

// The op with per-device operands, shape and called computations (attributes kept).
Instruction* EmitWithCalled(OpContext& op, const Shape& shape, const std::vector<Instruction*>& operands,
                            std::vector<Computation*> called) {
  const Instruction& instruction = op.instruction();
  auto clone = instruction.CloneWithNewOperands(shape, operands);
  clone->set_sharding(std::nullopt);
  clone->set_name(op.spmd().names().Unique(instruction.name()));
  clone->set_called_computations(std::move(called));
  return op.builder().Add(std::move(clone));
}

// while: loop value, body parameter and root, and condition parameter share the while's
// sharding, so the loop itself communicates nothing.
bool PartitionWhile(OpContext& op) {
  const Instruction& instruction = op.instruction();
  const Sharding& sharding = op.sharding();
  if (!FitsShape(sharding, instruction.shape())) return false;
  Instruction* init = op.OperandWith(0, sharding);
  Computation* condition = op.PartitionedComputation(instruction.while_condition(), {sharding},
                                                     Sharding::Replicated());
  Computation* body = op.PartitionedComputation(instruction.while_body(), {sharding}, sharding);
  Shape shape = PerDeviceShape(sharding, instruction.shape());
  op.SetResult(EmitWithCalled(op, shape, {init}, {condition, body}), sharding);
  return true;
}

// conditional(selector, operand_0, ..., operand_{n-1}): branch k gets operand k in its
// parameter's sharding and produces the conditional's sharding.
bool PartitionConditional(OpContext& op) {
  const Instruction& instruction = op.instruction();
  const Sharding& sharding = op.sharding();
  if (!FitsShape(sharding, instruction.shape())) return false;
  const std::vector<Computation*>& branches = instruction.called_computations();
  if (instruction.operand_count() != static_cast<int64_t>(branches.size()) + 1) return false;
  // Every device must take the same branch.
  std::vector<Instruction*> operands{op.OperandWith(0, Sharding::Replicated())};
  std::vector<Computation*> partitioned;
  for (size_t k = 0; k < branches.size(); ++k) {
    const Computation* branch = branches[k];
    if (branch->num_parameters() != 1) return false;
    int64_t index = static_cast<int64_t>(k) + 1;
    Sharding parameter = ParameterSharding(op, *branch->parameter(0), op.Operand(index));
    if (!FitsShape(parameter, instruction.operand(index)->shape())) return false;
    operands.push_back(op.OperandWith(index, parameter));
    partitioned.push_back(op.PartitionedComputation(branch, {parameter}, sharding));
  }
  Shape shape = PerDeviceShape(sharding, instruction.shape());
  op.SetResult(EmitWithCalled(op, shape, operands, std::move(partitioned)), sharding);
  return true;
}

// call: operands in the callee's parameter shardings; the callee (a shard_map body, an
// inlineable helper, ...) is partitioned for them and returns the call's sharding.
bool PartitionCall(OpContext& op) {
  const Instruction& instruction = op.instruction();
  const Sharding& sharding = op.sharding();
  if (!FitsShape(sharding, instruction.shape())) return false;
  const Computation* callee = instruction.to_apply();
  if (callee == nullptr || callee->num_parameters() != instruction.operand_count()) return false;
  std::vector<Instruction*> operands;
  std::vector<Sharding> parameters;
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    Sharding parameter = ParameterSharding(op, *callee->parameter(i), op.Operand(i));
    if (!FitsShape(parameter, instruction.operand(i)->shape())) return false;
    operands.push_back(op.OperandWith(i, parameter));
    parameters.push_back(std::move(parameter));
  }
  Computation* partitioned = op.PartitionedComputation(callee, parameters, sharding);
  Shape shape = PerDeviceShape(sharding, instruction.shape());
  op.SetResult(EmitWithCalled(op, shape, operands, {partitioned}), sharding);
  return true;
}

// opt-barrier: passes its (tuple) operand through; keep it in the op's layout.
bool PartitionOptimizationBarrier(OpContext& op) {
  const Instruction& instruction = op.instruction();
  const Sharding& sharding = op.sharding();
  if (instruction.operand_count() != 1 || !FitsShape(sharding, instruction.shape())) return false;
  Instruction* operand = op.OperandWith(0, sharding);
  op.SetResult(op.Clone(PerDeviceShape(sharding, instruction.shape()), {operand}), sharding);
  return true;
}

}  // namespace

bool PartitionControlFlow(OpContext& op) {
  switch (op.instruction().opcode()) {
    case Opcode::kWhile:
      return PartitionWhile(op);
    case Opcode::kConditional:
      return PartitionConditional(op);
    case Opcode::kCall:
      return PartitionCall(op);
    case Opcode::kOptimizationBarrier:
      return PartitionOptimizationBarrier(op);
    default:
      return false;
  }
}

}  // namespace gspmd
