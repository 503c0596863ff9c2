// SinkLoopAllReduces: finds zero-initialized loop accumulators fed by an all-reduce and
// reduces their final value once instead.
#include "partitioner/loop_all_reduce_motion.h"

#include <vector>

#include "ir/literal.h"

namespace gspmd {
namespace {

bool IsZero(const Instruction* x) {
  while (x->opcode() == Opcode::kBroadcast || x->opcode() == Opcode::kCopy) x = x->operand(0);
  if (x->opcode() != Opcode::kConstant || !x->shape().IsArray() || !x->literal().has_value()) return false;
  const Literal& value = *x->literal();
  for (int64_t i = 0; i < value.element_count(); ++i)
    if (value.GetAsDouble(i) != 0.0) return false;
  return true;
}

bool IsSumAllReduce(const Instruction* x) {
  if (x->opcode() != Opcode::kAllReduce || x->operand_count() != 1 || !x->shape().IsArray()) return false;
  if (x->called_computations().size() != 1) return false;
  const Instruction* root = x->to_apply()->root();
  return root != nullptr && root->opcode() == Opcode::kAdd && root->operand(0)->opcode() == Opcode::kParameter &&
         root->operand(1)->opcode() == Opcode::kParameter;
}

// The get-tuple-elements of `tuple` with index k, or false when `tuple` has another kind of
// user (then its element k may be read some other way).
bool ElementReaders(const Instruction* tuple, int64_t k, std::vector<Instruction*>& readers) {
  for (Instruction* user : tuple->users()) {
    if (user->opcode() != Opcode::kGetTupleElement) return false;
    if (user->tuple_index == k) readers.push_back(user);
  }
  return true;
}

// The same all-reduce (groups, reducer, flags) applied to another operand.
bool SameReduction(const Instruction& a, const Instruction& b) {
  return a.replica_groups() == b.replica_groups() && a.use_global_device_ids == b.use_global_device_ids &&
         a.channel_id.has_value() == b.channel_id.has_value() && a.to_apply() == b.to_apply();
}

// Ops through which a sum over devices commutes: every device applies the same linear map.
bool CommutesWithSum(const Instruction& x) {
  switch (x.opcode()) {
    case Opcode::kAdd:
    case Opcode::kTranspose:
    case Opcode::kReshape:
    case Opcode::kCopy:
    case Opcode::kBroadcast:
      return true;
    case Opcode::kPad:
      return IsZero(x.operand(1));
    default:
      return false;
  }
}

// Collects the all-reduces at the leaves of `value`, a tree of CommutesWithSum ops (each
// used once) over sum all-reduces (each used once) and zeros. False when `value` is not one.
bool CollectReducedLeaves(Instruction* value, std::vector<Instruction*>& leaves) {
  if (value->users().size() != 1) return false;
  if (IsSumAllReduce(value)) {
    if (!leaves.empty() && !SameReduction(*leaves[0], *value)) return false;
    leaves.push_back(value);
    return true;
  }
  if (IsZero(value)) return true;
  if (!CommutesWithSum(*value) || !value->shape().IsArray()) return false;
  const int64_t operands = value->opcode() == Opcode::kPad ? 1 : value->operand_count();
  for (int64_t i = 0; i < operands; ++i)
    if (!CollectReducedLeaves(value->operand(i), leaves)) return false;
  return true;
}

// One accumulator: element k of `loop`. Returns whether it was moved.
bool SinkAccumulator(Instruction* loop, int64_t k) {
  Computation* body = loop->while_body();
  Computation* condition = loop->while_condition();
  Instruction* root = body->root();
  Instruction* init = loop->operand(0);
  if (root->opcode() != Opcode::kTuple || init->opcode() != Opcode::kTuple || !IsZero(init->operand(k))) return false;
  Instruction* update = root->operand(k);
  if (update->opcode() != Opcode::kAdd || update->users().size() != 1) return false;
  std::vector<Instruction*> in_body, in_condition, after;
  if (body->num_parameters() != 1 || !ElementReaders(body->parameter(0), k, in_body) || in_body.size() != 1) return false;
  if (condition->num_parameters() != 1 || !ElementReaders(condition->parameter(0), k, in_condition) ||
      !in_condition.empty())
    return false;
  Instruction* accumulator = in_body[0];
  if (accumulator->users().size() != 1 || accumulator->users()[0] != update) return false;
  const int64_t summed_side = update->operand(0) == accumulator ? 1 : 0;
  if (update->operand(1 - summed_side) != accumulator) return false;
  std::vector<Instruction*> leaves;
  if (!CollectReducedLeaves(update->operand(summed_side), leaves) || leaves.empty()) return false;
  if (!ElementReaders(loop, k, after) || after.size() > 1) return false;  // one reader keeps channel ids unique

  Computation* outer = loop->parent();
  for (Instruction* reader : after) {
    std::vector<Instruction*> users = reader->users();
    Instruction* reduced = outer->AddInstruction(leaves[0]->CloneWithNewOperands(leaves[0]->shape(), {reader}));
    reduced->set_shape(reader->shape());
    for (Instruction* user : users)
      for (int64_t i = 0; i < user->operand_count(); ++i)
        if (user->operand(i) == reader) user->ReplaceOperand(i, reduced);
    if (outer->root() == reader) outer->set_root(reduced);
  }
  for (Instruction* leaf : leaves) {
    Instruction* user = leaf->users()[0];
    for (int64_t i = 0; i < user->operand_count(); ++i)
      if (user->operand(i) == leaf) user->ReplaceOperand(i, leaf->operand(0));
    body->RemoveInstruction(leaf);
  }
  outer->SortInPostOrder();
  return true;
}

}  // namespace

int64_t SinkLoopAllReduces(Module& module) {
  int64_t moved = 0;
  for (const auto& computation : module.computations()) {
    std::vector<Instruction*> loops;
    for (const auto& instruction : computation->instructions())
      if (instruction->opcode() == Opcode::kWhile && instruction->shape().IsTuple()) loops.push_back(instruction.get());
    for (Instruction* loop : loops)
      for (int64_t k = 0; k < loop->shape().tuple_size(); ++k)
        if (SinkAccumulator(loop, k)) ++moved;
  }
  return moved;
}

}  // namespace gspmd
