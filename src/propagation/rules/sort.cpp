// Propagation rules for sort, topk and the TopK custom-call: the other dims pass through; a
// split sort dim is kept only when another dim is free to take its devices later.
#include "propagation/rules/rules.h"
#include "propagation/sharding_algebra.h"

namespace gspmd::propagation::rules {
namespace {

int64_t SortDim(const Instruction& sort) {
  return sort.dimensions.empty() ? sort.operand(0)->shape().rank() - 1 : sort.dimensions[0];
}

// A split sort dim can later move to an unsplit dim that its tiles divide evenly (XLA's
// "movable" test: XLA:CPU moves the tiles of a [8,4] sort over a 4-way split dim 1 to dim 0 by
// all-to-all, and gathers a [6,4] one; oracle seed 120788, where a split kept through the sort
// was moved there and back, 12 B more than XLA's gather).
bool SortDimMovable(const Sharding& sharding, const Shape& shape, int64_t sort_dim) {
  const int64_t tiles = DimTiles(sharding, sort_dim);
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (d == sort_dim || DimTiles(sharding, d) != 1 || shape.dim(d) < tiles || shape.dim(d) % tiles != 0) continue;
    return true;
  }
  return false;
}

Sharding ForEveryElement(const Instruction& instruction, const Sharding& sharding) {
  if (!instruction.shape().IsTuple()) return sharding;
  return Sharding::Tuple(std::vector<Sharding>(instruction.shape().tuple_size(), sharding));
}

const Sharding* Element(const Sharding& sharding, int64_t index) {
  if (!sharding.IsTuple()) return &sharding;
  if (index >= static_cast<int64_t>(sharding.tuple_elements().size())) return nullptr;
  return &sharding.tuple_elements()[index];
}

}  // namespace

std::optional<Proposal> SortForward(const Instruction& instruction, const Operands& operands,
                                    const ShardingLookup& lookup) {
  const Sharding* best = nullptr;
  for (const Sharding* s : operands) {
    if (s == nullptr || !IsUsable(*s)) continue;
    if (best == nullptr || IsMoreSpecific(*s, *best)) best = s;
  }
  if (best == nullptr) return std::nullopt;
  const int64_t sort_dim = SortDim(instruction);
  const Shape& shape = instruction.operand(0)->shape();
  if (DimTiles(*best, sort_dim) > 1 && !SortDimMovable(*best, shape, sort_dim)) return std::nullopt;
  return Named(ForEveryElement(instruction, *best), "sort", true);
}

std::optional<Proposal> SortBackward(const Instruction& user, int64_t operand_index,
                                     const Sharding& user_sharding, const Operands& operands,
                                     const ShardingLookup& lookup) {
  const Sharding* element = Element(user_sharding, operand_index);
  if (element == nullptr || !IsUsable(*element)) return std::nullopt;
  return Named(*element, "sort", false);
}

// topk(operand) -> (values, indices), both [..., k]: the last dim is the sort dim.
std::optional<Proposal> TopKForward(const Instruction& instruction, const Operands& operands,
                                    const ShardingLookup& lookup) {
  if (operands.empty() || operands[0] == nullptr || !IsUsable(*operands[0])) return std::nullopt;
  const int64_t rank = instruction.operand(0)->shape().rank();
  if (rank == 0) return std::nullopt;
  Sharding sharding = ReplicateDims(*operands[0], {rank - 1});
  return Named(ForEveryElement(instruction, sharding), "topk", true);
}

std::optional<Proposal> TopKBackward(const Instruction& user, int64_t operand_index,
                                     const Sharding& user_sharding, const Operands& operands,
                                     const ShardingLookup& lookup) {
  if (operand_index != 0) return std::nullopt;
  const Sharding* element = Element(user_sharding, 0);
  if (element == nullptr || !IsUsable(*element)) return std::nullopt;
  const int64_t rank = user.operand(0)->shape().rank();
  if (rank == 0) return std::nullopt;
  return Named(ReplicateDims(*element, {rank - 1}), "topk", false);
}

}  // namespace gspmd::propagation::rules
