// Propagation rules for reduce (reduced dims dropped forward, inserted unsplit backward),
// reduce-window and select-and-scatter (the window ops keep their input's sharding).
#include "propagation/rules/rules.h"
#include "propagation/sharding_algebra.h"

namespace gspmd::propagation::rules {
namespace {

// The sharding of element `index` of a (possibly tuple) user sharding.
const Sharding* Element(const Sharding& sharding, int64_t index) {
  if (!sharding.IsTuple()) return &sharding;
  if (index >= static_cast<int64_t>(sharding.tuple_elements().size())) return nullptr;
  return &sharding.tuple_elements()[index];
}

// The same sharding for every element of a tuple-shaped instruction.
Sharding ForEveryElement(const Instruction& instruction, const Sharding& sharding) {
  if (!instruction.shape().IsTuple()) return sharding;
  return Sharding::Tuple(std::vector<Sharding>(instruction.shape().tuple_size(), sharding));
}

int64_t InputCount(const Instruction& instruction) { return instruction.operand_count() / 2; }

bool HasDilation(const Window& window, bool base_only) {
  for (const WindowDim& dim : window) {
    if (dim.base_dilation > 1) return true;
    if (!base_only && dim.window_dilation > 1) return true;
  }
  return false;
}

}  // namespace

// ---- reduce ----

std::optional<Proposal> ReduceForward(const Instruction& instruction, const Operands& operands,
                                      const ShardingLookup& lookup) {
  const int64_t inputs = InputCount(instruction);
  std::vector<Sharding> candidates;
  const Shape& first_result =
      instruction.shape().IsTuple() ? instruction.shape().tuple_shape(0) : instruction.shape();
  for (int64_t i = 0; i < inputs && i < static_cast<int64_t>(operands.size()); ++i) {
    const Sharding* s = operands[i];
    if (s == nullptr || !IsUsable(*s) || s->IsMaximal()) continue;
    candidates.push_back(RemoveDims(*s, instruction.dimensions));
  }
  std::optional<Sharding> merged = MergeAll(candidates, first_result);
  if (!merged) return std::nullopt;
  return Named(ForEveryElement(instruction, *merged), "reduce", true);
}

std::optional<Proposal> ReduceBackward(const Instruction& user, int64_t operand_index,
                                       const Sharding& user_sharding, const Operands& operands,
                                       const ShardingLookup& lookup) {
  const int64_t inputs = InputCount(user);
  if (operand_index >= inputs) return std::nullopt;  // init values
  if (user.operand(operand_index)->shape().rank() == 0) return std::nullopt;
  const Sharding* element = Element(user_sharding, operand_index);
  if (element == nullptr || !IsUsable(*element)) return std::nullopt;
  Sharding sharding = InsertDims(*element, user.dimensions);
  // Other inputs of a variadic reduce may refine it.
  for (int64_t i = 0; i < inputs && i < static_cast<int64_t>(operands.size()); ++i) {
    if (i == operand_index || operands[i] == nullptr || !IsUsable(*operands[i])) continue;
    std::optional<Sharding> merged =
        MergeShardings(sharding, *operands[i], user.operand(operand_index)->shape());
    if (merged) sharding = *merged;
  }
  return Named(std::move(sharding), "reduce", false);
}

// ---- reduce-window ----

std::optional<Proposal> ReduceWindowForward(const Instruction& instruction,
                                            const Operands& operands,
                                            const ShardingLookup& lookup) {
  if (HasDilation(instruction.window(), /*base_only=*/false)) return std::nullopt;
  const int64_t inputs = InputCount(instruction);
  std::vector<Sharding> candidates;
  for (int64_t i = 0; i < inputs && i < static_cast<int64_t>(operands.size()); ++i) {
    const Sharding* s = operands[i];
    if (s == nullptr || !IsUsable(*s)) continue;
    candidates.push_back(*s);
  }
  const Shape& first_result =
      instruction.shape().IsTuple() ? instruction.shape().tuple_shape(0) : instruction.shape();
  std::optional<Sharding> merged = MergeAll(candidates, first_result);
  if (!merged) return std::nullopt;
  return Named(ForEveryElement(instruction, *merged), "reduce-window", true);
}

std::optional<Proposal> ReduceWindowBackward(const Instruction& user, int64_t operand_index,
                                             const Sharding& user_sharding,
                                             const Operands& operands,
                                             const ShardingLookup& lookup) {
  if (operand_index >= InputCount(user)) return std::nullopt;
  const Sharding* element = Element(user_sharding, operand_index);
  if (element == nullptr || !IsUsable(*element)) return std::nullopt;
  return Named(*element, "reduce-window", false);
}

// ---- select-and-scatter (operand, source, init) ----

std::optional<Proposal> SelectAndScatterForward(const Instruction& instruction,
                                                const Operands& operands,
                                                const ShardingLookup& lookup) {
  if (HasDilation(instruction.window(), /*base_only=*/true)) return std::nullopt;
  if (operands.empty() || operands[0] == nullptr || !IsUsable(*operands[0])) return std::nullopt;
  return Named(*operands[0], "select-and-scatter", true);
}

std::optional<Proposal> SelectAndScatterBackward(const Instruction& user, int64_t operand_index,
                                                 const Sharding& user_sharding,
                                                 const Operands& operands,
                                                 const ShardingLookup& lookup) {
  if (operand_index > 1 || !IsUsable(user_sharding)) return std::nullopt;
  if (user.operand(operand_index)->shape().dims() != user.shape().dims()) return std::nullopt;
  return Named(user_sharding, "select-and-scatter", false);
}

}  // namespace gspmd::propagation::rules
