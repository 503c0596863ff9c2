// Propagation rules for dot: batch and non-contracting dims map between operands and result;
// contracting dims meet only between the operands. Ties between the two operands' proposals
// are broken by looking ahead at the users, then by operand size.
#include "propagation/rules/dot_dims.h"

#include <algorithm>

#include "propagation/rules/rules.h"
#include "propagation/sharding_algebra.h"

namespace gspmd::propagation::rules {

DotDims DotDimsOf(const Instruction& dot) {
  const DotDimensionNumbers& dn = dot.dot_dims();
  const int64_t lhs_rank = dot.operand(0)->shape().rank();
  const int64_t rhs_rank = dot.operand(1)->shape().rank();
  DotDims dims;
  int64_t output = 0;
  for (size_t i = 0; i < dn.lhs_batch_dims.size(); ++i)
    dims.batch.push_back({dn.lhs_batch_dims[i], dn.rhs_batch_dims.at(i), output++});
  for (size_t i = 0; i < dn.lhs_contracting_dims.size(); ++i)
    dims.contracting.push_back({dn.lhs_contracting_dims[i], dn.rhs_contracting_dims.at(i), -1});
  auto listed = [](const std::vector<int64_t>& a, const std::vector<int64_t>& b, int64_t d) {
    return std::find(a.begin(), a.end(), d) != a.end() || std::find(b.begin(), b.end(), d) != b.end();
  };
  for (int64_t d = 0; d < lhs_rank; ++d) {
    if (listed(dn.lhs_batch_dims, dn.lhs_contracting_dims, d)) continue;
    dims.lhs_non_contracting.push_back({d, -1, output++});
  }
  for (int64_t d = 0; d < rhs_rank; ++d) {
    if (listed(dn.rhs_batch_dims, dn.rhs_contracting_dims, d)) continue;
    dims.rhs_non_contracting.push_back({-1, d, output++});
  }
  dims.output_rank = output;
  return dims;
}

namespace {

int64_t Side(const DimTriple& t, int64_t operand) { return operand == 0 ? t.lhs : t.rhs; }

const std::vector<DimTriple>& OwnNonContracting(const DotDims& dims, int64_t operand) {
  return operand == 0 ? dims.lhs_non_contracting : dims.rhs_non_contracting;
}

}  // namespace

std::optional<Sharding> DotResultFromOperand(const DotDims& dims, int64_t operand,
                                             const Sharding& sharding, int64_t operand_rank) {
  if (sharding.IsTuple() || sharding.IsUnknown()) return std::nullopt;
  if (!sharding.IsTiled()) return sharding;
  std::vector<int64_t> src_to_tgt(operand_rank, -1);
  for (const DimTriple& t : dims.batch)
    if (Side(t, operand) >= 0 && t.output >= 0) src_to_tgt[Side(t, operand)] = t.output;
  for (const DimTriple& t : OwnNonContracting(dims, operand))
    if (Side(t, operand) >= 0 && t.output >= 0) src_to_tgt[Side(t, operand)] = t.output;
  return MapDims(sharding, src_to_tgt, dims.output_rank);
}

std::optional<Sharding> DotOperandFromResult(const DotDims& dims, int64_t operand,
                                             const Sharding& result, int64_t operand_rank) {
  if (result.IsTuple() || result.IsUnknown()) return std::nullopt;
  if (!result.IsTiled()) return result;
  std::vector<int64_t> src_to_tgt(dims.output_rank, -1);
  for (const DimTriple& t : dims.batch)
    if (Side(t, operand) >= 0 && t.output >= 0) src_to_tgt[t.output] = Side(t, operand);
  for (const DimTriple& t : OwnNonContracting(dims, operand))
    if (Side(t, operand) >= 0 && t.output >= 0) src_to_tgt[t.output] = Side(t, operand);
  return MapDims(result, src_to_tgt, operand_rank);
}

std::optional<Sharding> DotOperandFromOther(const DotDims& dims, int64_t operand,
                                            const Sharding& other, int64_t other_rank,
                                            int64_t operand_rank) {
  if (other.IsTuple() || other.IsUnknown()) return std::nullopt;
  if (!other.IsTiled()) return other;
  const int64_t other_index = 1 - operand;
  std::vector<int64_t> src_to_tgt(other_rank, -1);
  auto map = [&](const std::vector<DimTriple>& list) {
    for (const DimTriple& t : list) {
      const int64_t from = Side(t, other_index), to = Side(t, operand);
      if (from >= 0 && to >= 0) src_to_tgt[from] = to;
    }
  };
  map(dims.batch);
  map(dims.contracting);
  return MapDims(other, src_to_tgt, operand_rank);
}

std::optional<Sharding> LookaheadUserSharding(const Instruction& instruction,
                                              const ShardingLookup& lookup) {
  constexpr int kMaxChain = 16;
  std::vector<const Instruction*> chain = {&instruction};
  const Instruction* current = &instruction;
  for (int step = 0; step < kMaxChain; ++step) {
    if (current->users().size() != 1) return std::nullopt;
    const Instruction* user = current->users()[0];
    chain.push_back(user);
    if (lookup && lookup(user) != nullptr && !lookup(user)->IsUnknown()) break;
    current = user;
  }
  const Instruction* top = chain.back();
  if (!lookup || lookup(top) == nullptr) return std::nullopt;
  Sharding sharding = *lookup(top);
  // Walk back down the chain with the backward rules.
  for (size_t i = chain.size() - 1; i >= 1; --i) {
    const Instruction* user = chain[i];
    const Instruction* operand = chain[i - 1];
    int64_t index = -1;
    for (int64_t k = 0; k < user->operand_count(); ++k)
      if (user->operand(k) == operand) index = k;
    if (index < 0) return std::nullopt;
    std::vector<const Sharding*> operand_shardings;
    for (const Instruction* op : user->operands())
      operand_shardings.push_back(lookup ? lookup(op) : nullptr);
    std::optional<Proposal> proposal =
        InferOperandSharding(*user, index, sharding, operand_shardings, lookup);
    if (!proposal) return std::nullopt;
    sharding = std::move(proposal->sharding);
  }
  return sharding;
}

std::optional<Sharding> CombineOperandProposals(const Instruction& instruction,
                                                std::optional<Sharding> from_lhs,
                                                std::optional<Sharding> from_rhs,
                                                const ShardingLookup& lookup) {
  if (!from_lhs && !from_rhs) return std::nullopt;
  if (!from_rhs) return from_lhs;
  if (!from_lhs) return from_rhs;
  const Shape& shape = instruction.shape();
  Sharding primary = *from_lhs, secondary = *from_rhs;
  bool decided = false;
  if (std::optional<Sharding> ahead = LookaheadUserSharding(instruction, lookup)) {
    const bool lhs_fits = IsSubTilingOrEqual(shape.dims(), *ahead, *from_lhs);
    const bool rhs_fits = IsSubTilingOrEqual(shape.dims(), *ahead, *from_rhs);
    if (lhs_fits != rhs_fits) {
      decided = true;
      if (rhs_fits) std::swap(primary, secondary);
    }
  }
  if (!decided &&
      instruction.operand(0)->shape().byte_size() < instruction.operand(1)->shape().byte_size()) {
    std::swap(primary, secondary);
  }
  if (std::optional<Sharding> merged = MergeShardings(primary, secondary, shape)) return merged;
  return primary;
}

std::optional<Proposal> DotForward(const Instruction& instruction, const Operands& operands,
                                   const ShardingLookup& lookup) {
  if (!IsArray(instruction) || instruction.operand_count() < 2) return std::nullopt;
  const DotDims dims = DotDimsOf(instruction);
  std::optional<Sharding> proposals[2];
  for (int64_t k = 0; k < 2; ++k) {
    const Sharding* s = k < static_cast<int64_t>(operands.size()) ? operands[k] : nullptr;
    if (s == nullptr || s->IsUnknown() || s->IsTuple() || s->IsMaximal()) continue;
    proposals[k] = DotResultFromOperand(dims, k, *s, instruction.operand(k)->shape().rank());
  }
  std::optional<Sharding> combined =
      CombineOperandProposals(instruction, proposals[0], proposals[1], lookup);
  if (!combined) return std::nullopt;
  return Named(std::move(*combined), "dot", true);
}

std::optional<Sharding> DotLikeOperandSharding(const DotDims& dims, int64_t operand_index,
                                               const Sharding& result,
                                               const Sharding* other_sharding,
                                               const Instruction& user) {
  const int64_t rank = user.operand(operand_index)->shape().rank();
  std::optional<Sharding> from_result = DotOperandFromResult(dims, operand_index, result, rank);
  if (!from_result) return std::nullopt;
  if (other_sharding == nullptr || !IsUsable(*other_sharding) || other_sharding->IsMaximal())
    return from_result;
  const int64_t other = 1 - operand_index;
  std::optional<Sharding> from_other = DotOperandFromOther(
      dims, operand_index, *other_sharding, user.operand(other)->shape().rank(), rank);
  if (!from_other) return from_result;
  if (std::optional<Sharding> merged =
          MergeShardings(*from_result, *from_other, user.operand(operand_index)->shape())) {
    return merged;
  }
  if (IsMoreSpecific(*from_other, *from_result)) return from_other;
  return from_result;
}

std::optional<Proposal> DotBackward(const Instruction& user, int64_t operand_index,
                                    const Sharding& user_sharding, const Operands& operands,
                                    const ShardingLookup& lookup) {
  if (operand_index > 1 || !IsUsable(user_sharding)) return std::nullopt;
  const int64_t other = 1 - operand_index;
  const Sharding* other_sharding =
      other < static_cast<int64_t>(operands.size()) ? operands[other] : nullptr;
  std::optional<Sharding> sharding =
      DotLikeOperandSharding(DotDimsOf(user), operand_index, user_sharding, other_sharding, user);
  if (!sharding) return std::nullopt;
  return Named(std::move(*sharding), "dot", false);
}

}  // namespace gspmd::propagation::rules
