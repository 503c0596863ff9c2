// Propagation rules for elementwise ops (unary, binary, compare, select, clamp, convert, copy,
// map, ...) and custom-calls that pass their data through: the result and every same-shaped
// operand share one sharding.
#include "propagation/rules/rules.h"
#include "propagation/sharding_algebra.h"

namespace gspmd::propagation::rules {
namespace {

// Operands that line up element by element with the result (a clamp's scalar bounds or an
// add-dependency's token do not).
bool OperandMatchesResult(const Instruction& instruction, int64_t index) {
  if (instruction.opcode() == Opcode::kAddDependency && index != 0) return false;
  const Shape& operand = instruction.operand(index)->shape();
  return operand.IsArray() && operand.dims() == instruction.shape().dims();
}

// A bitcast-convert between element types of different widths adds or drops a minor dim.
std::optional<Sharding> AcrossWidthChange(const Sharding& sharding, int64_t from_rank,
                                          int64_t to_rank) {
  if (to_rank == from_rank + 1) return InsertDims(sharding, {from_rank});
  if (to_rank + 1 == from_rank) return RemoveDims(sharding, {from_rank - 1});
  return std::nullopt;
}

}  // namespace

std::optional<Proposal> ElementwiseForward(const Instruction& instruction, const Operands& operands,
                                           const ShardingLookup& lookup) {
  if (!IsArray(instruction)) return std::nullopt;
  if (instruction.opcode() == Opcode::kBitcastConvert && !operands.empty() && operands[0] != nullptr &&
      IsUsable(*operands[0]) && !OperandMatchesResult(instruction, 0)) {
    std::optional<Sharding> s = AcrossWidthChange(*operands[0], instruction.operand(0)->shape().rank(),
                                                  instruction.shape().rank());
    if (!s) return std::nullopt;
    return Named(std::move(*s), "elementwise", true);
  }
  std::vector<Sharding> candidates;
  for (int64_t i = 0; i < static_cast<int64_t>(operands.size()); ++i) {
    const Sharding* s = operands[i];
    if (s == nullptr || s->IsUnknown() || s->IsTuple()) continue;
    if (i >= instruction.operand_count() || !OperandMatchesResult(instruction, i)) continue;
    candidates.push_back(*s);
  }
  std::optional<Sharding> merged = MergeAll(candidates, instruction.shape());
  if (!merged) return std::nullopt;
  return Named(std::move(*merged), "elementwise", true);
}

std::optional<Proposal> ElementwiseBackward(const Instruction& user, int64_t operand_index,
                                            const Sharding& user_sharding, const Operands& operands,
                                            const ShardingLookup& lookup) {
  if (!IsArray(user) || user_sharding.IsTuple()) return std::nullopt;
  if (user.opcode() == Opcode::kBitcastConvert && operand_index == 0 &&
      !OperandMatchesResult(user, 0)) {
    std::optional<Sharding> s = AcrossWidthChange(user_sharding, user.shape().rank(),
                                                  user.operand(0)->shape().rank());
    if (!s) return std::nullopt;
    return Named(std::move(*s), "elementwise", false);
  }
  if (!OperandMatchesResult(user, operand_index)) return std::nullopt;
  return Named(user_sharding, "elementwise", false);
}

// Custom-calls that pass their data through (ir/known_custom_calls.h): the result takes the
// first operand's sharding, as XLA's propagation does; every operand takes the result's.
std::optional<Proposal> PassThroughCustomCallForward(const Instruction& instruction, const Operands& operands,
                                                     const ShardingLookup& lookup) {
  if (!IsArray(instruction) || operands.empty() || operands[0] == nullptr || !IsUsable(*operands[0]))
    return std::nullopt;
  return Named(*operands[0], "pass-through custom-call", true);
}

std::optional<Proposal> PassThroughCustomCallBackward(const Instruction& user, int64_t operand_index,
                                                      const Sharding& user_sharding, const Operands& operands,
                                                      const ShardingLookup& lookup) {
  if (!IsArray(user) || !IsUsable(user_sharding) || !OperandMatchesResult(user, operand_index)) return std::nullopt;
  return Named(user_sharding, "pass-through custom-call", false);
}

}  // namespace gspmd::propagation::rules
