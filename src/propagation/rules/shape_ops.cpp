// Propagation rules for shape ops: broadcast, reshape/bitcast, transpose, reverse, slice, pad,
// concatenate, dynamic-slice, dynamic-update-slice and iota.
#include <algorithm>

#include "propagation/rules/rules.h"
#include "propagation/sharding_algebra.h"

namespace gspmd::propagation::rules {
namespace {

const Sharding* Operand(const Operands& operands, int64_t i) {
  if (i >= static_cast<int64_t>(operands.size())) return nullptr;
  const Sharding* s = operands[i];
  if (s == nullptr || s->IsUnknown() || s->IsTuple()) return nullptr;
  return s;
}

bool IsUsableArraySharding(const Sharding& s) { return !s.IsTuple() && !s.IsUnknown(); }

// dynamic-slice / dynamic-update-slice: the dims where the slice is smaller than the full
// operand (the ones indexed at run time).
std::vector<int64_t> IndexedDims(const Shape& full, const Shape& slice) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < full.rank() && d < slice.rank(); ++d)
    if (full.dim(d) != slice.dim(d)) dims.push_back(d);
  return dims;
}

}  // namespace

// ---- broadcast ----

std::optional<Proposal> BroadcastForward(const Instruction& instruction, const Operands& operands,
                                         const ShardingLookup& lookup) {
  const Sharding* s = Operand(operands, 0);
  if (s == nullptr || !IsArray(instruction)) return std::nullopt;
  // A replicated operand says nothing about the new dims: users decide.
  if (s->IsReplicated() || s->IsMaximal()) return std::nullopt;
  std::optional<Sharding> mapped = MapDims(*s, instruction.dimensions, instruction.shape().rank());
  if (!mapped) return std::nullopt;
  return Named(std::move(*mapped), "broadcast", true);
}

std::optional<Proposal> BroadcastBackward(const Instruction& user, int64_t operand_index,
                                          const Sharding& user_sharding, const Operands& operands,
                                          const ShardingLookup& lookup) {
  if (operand_index != 0 || !IsUsableArraySharding(user_sharding)) return std::nullopt;
  const int64_t rank = user.shape().rank();
  std::vector<int64_t> src_to_tgt(rank, -1);
  for (size_t i = 0; i < user.dimensions.size(); ++i)
    src_to_tgt.at(user.dimensions[i]) = static_cast<int64_t>(i);
  std::optional<Sharding> mapped =
      MapDims(user_sharding, src_to_tgt, static_cast<int64_t>(user.dimensions.size()));
  if (!mapped) return std::nullopt;
  return Named(std::move(*mapped), "broadcast", false);
}

// ---- reshape / bitcast ----

std::optional<Proposal> ReshapeForward(const Instruction& instruction, const Operands& operands,
                                       const ShardingLookup& lookup) {
  const Sharding* s = Operand(operands, 0);
  if (s == nullptr || !IsArray(instruction) || !instruction.operand(0)->shape().IsArray())
    return std::nullopt;
  return Named(ReshapeSharding(*s, instruction.operand(0)->shape().dims(), instruction.shape().dims()),
               "reshape", true);
}

std::optional<Proposal> ReshapeBackward(const Instruction& user, int64_t operand_index,
                                        const Sharding& user_sharding, const Operands& operands,
                                        const ShardingLookup& lookup) {
  if (operand_index != 0 || !IsUsableArraySharding(user_sharding)) return std::nullopt;
  if (!user.operand(0)->shape().IsArray()) return std::nullopt;
  return Named(ReshapeSharding(user_sharding, user.shape().dims(), user.operand(0)->shape().dims()),
               "reshape", false);
}

// ---- transpose ----

std::optional<Proposal> TransposeForward(const Instruction& instruction, const Operands& operands,
                                         const ShardingLookup& lookup) {
  const Sharding* s = Operand(operands, 0);
  if (s == nullptr || !IsArray(instruction)) return std::nullopt;
  return Named(TransposeSharding(*s, instruction.dimensions), "transpose", true);
}

std::optional<Proposal> TransposeBackward(const Instruction& user, int64_t operand_index,
                                          const Sharding& user_sharding, const Operands& operands,
                                          const ShardingLookup& lookup) {
  if (operand_index != 0 || !IsUsableArraySharding(user_sharding)) return std::nullopt;
  std::vector<int64_t> inverse(user.dimensions.size());
  for (size_t i = 0; i < user.dimensions.size(); ++i)
    inverse.at(user.dimensions[i]) = static_cast<int64_t>(i);
  return Named(TransposeSharding(user_sharding, inverse), "transpose", false);
}

// ---- reverse ----

std::optional<Proposal> ReverseForward(const Instruction& instruction, const Operands& operands,
                                       const ShardingLookup& lookup) {
  const Sharding* s = Operand(operands, 0);
  if (s == nullptr || !IsArray(instruction)) return std::nullopt;
  return Named(ReverseTiles(*s, instruction.dimensions), "reverse", true);
}

std::optional<Proposal> ReverseBackward(const Instruction& user, int64_t operand_index,
                                        const Sharding& user_sharding, const Operands& operands,
                                        const ShardingLookup& lookup) {
  if (operand_index != 0 || !IsUsableArraySharding(user_sharding)) return std::nullopt;
  return Named(ReverseTiles(user_sharding, user.dimensions), "reverse", false);
}

// ---- slice / pad: the sharding passes through unchanged ----

std::optional<Proposal> SliceForward(const Instruction& instruction, const Operands& operands,
                                     const ShardingLookup& lookup) {
  const Sharding* s = Operand(operands, 0);
  if (s == nullptr || !IsArray(instruction)) return std::nullopt;
  return Named(*s, "slice", true);
}

std::optional<Proposal> SliceBackward(const Instruction& user, int64_t operand_index,
                                      const Sharding& user_sharding, const Operands& operands,
                                      const ShardingLookup& lookup) {
  if (operand_index != 0 || !IsUsableArraySharding(user_sharding)) return std::nullopt;
  return Named(user_sharding, "slice", false);
}

std::optional<Proposal> PadForward(const Instruction& instruction, const Operands& operands,
                                   const ShardingLookup& lookup) {
  const Sharding* s = Operand(operands, 0);
  if (s == nullptr || !IsArray(instruction)) return std::nullopt;
  return Named(*s, "pad", true);
}

std::optional<Proposal> PadBackward(const Instruction& user, int64_t operand_index,
                                    const Sharding& user_sharding, const Operands& operands,
                                    const ShardingLookup& lookup) {
  if (operand_index != 0 || !IsUsableArraySharding(user_sharding)) return std::nullopt;
  return Named(user_sharding, "pad", false);
}

// ---- concatenate: the most specific operand sharding ----

std::optional<Proposal> ConcatenateForward(const Instruction& instruction, const Operands& operands,
                                           const ShardingLookup& lookup) {
  if (!IsArray(instruction)) return std::nullopt;
  const Sharding* best = nullptr;
  for (int64_t i = 0; i < static_cast<int64_t>(operands.size()); ++i) {
    const Sharding* s = Operand(operands, i);
    if (s == nullptr) continue;
    if (best == nullptr || IsMoreSpecific(*s, *best)) best = s;
  }
  if (best == nullptr) return std::nullopt;
  return Named(*best, "concatenate", true);
}

std::optional<Proposal> ConcatenateBackward(const Instruction& user, int64_t operand_index,
                                            const Sharding& user_sharding, const Operands& operands,
                                            const ShardingLookup& lookup) {
  if (!IsUsableArraySharding(user_sharding)) return std::nullopt;
  return Named(user_sharding, "concatenate", false);
}

// ---- dynamic-slice / dynamic-update-slice ----
// The dims the slice indexes dynamically (where the slice is smaller than the full operand) stay
// whole: every device would otherwise hold a different window. The untouched dims keep their
// split, and the indexed dims' devices replicate the value (partial replication).

std::optional<Proposal> DynamicSliceForward(const Instruction& instruction,
                                            const Operands& operands,
                                            const ShardingLookup& lookup) {
  const Sharding* s = Operand(operands, 0);
  if (s == nullptr || !IsArray(instruction)) return std::nullopt;
  return Named(ReplicateDims(*s, IndexedDims(instruction.operand(0)->shape(), instruction.shape())),
               "dynamic-slice", true);
}

std::optional<Proposal> DynamicSliceBackward(const Instruction& user, int64_t operand_index,
                                             const Sharding& user_sharding,
                                             const Operands& operands,
                                             const ShardingLookup& lookup) {
  if (operand_index != 0 || !IsUsableArraySharding(user_sharding)) return std::nullopt;
  return Named(ReplicateDims(user_sharding, IndexedDims(user.operand(0)->shape(), user.shape())),
               "dynamic-slice", false);
}

std::optional<Proposal> DynamicUpdateSliceForward(const Instruction& instruction,
                                                  const Operands& operands,
                                                  const ShardingLookup& lookup) {
  if (!IsArray(instruction)) return std::nullopt;
  std::vector<Sharding> candidates;
  if (const Sharding* base = Operand(operands, 0)) candidates.push_back(*base);
  if (const Sharding* update = Operand(operands, 1))
    candidates.push_back(ReplicateDims(*update, IndexedDims(instruction.shape(), instruction.operand(1)->shape())));
  std::optional<Sharding> merged = MergeAll(candidates, instruction.shape());
  if (!merged) return std::nullopt;
  return Named(std::move(*merged), "dynamic-update-slice", true);
}

std::optional<Proposal> DynamicUpdateSliceBackward(const Instruction& user, int64_t operand_index,
                                                   const Sharding& user_sharding,
                                                   const Operands& operands,
                                                   const ShardingLookup& lookup) {
  if (operand_index > 1 || !IsUsableArraySharding(user_sharding)) return std::nullopt;
  if (operand_index == 0) return Named(user_sharding, "dynamic-update-slice", false);
  return Named(ReplicateDims(user_sharding, IndexedDims(user.shape(), user.operand(1)->shape())),
               "dynamic-update-slice", false);
}

// ---- iota: only users decide ----

std::optional<Proposal> IotaForward(const Instruction& instruction, const Operands& operands,
                                    const ShardingLookup& lookup) {
  return std::nullopt;
}

std::optional<Proposal> IotaBackward(const Instruction& user, int64_t operand_index,
                                     const Sharding& user_sharding, const Operands& operands,
                                     const ShardingLookup& lookup) {
  return std::nullopt;
}

}  // namespace gspmd::propagation::rules
