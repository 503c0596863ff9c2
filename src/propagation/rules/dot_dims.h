// Dot-like dimension bookkeeping shared by the dot and convolution rules: which operand dims
// are batch, contracting and non-contracting, and where they land in the result.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "propagation/op_rules.h"

namespace gspmd::propagation::rules {

// One logical dim of a dot-like op: its index in the lhs, the rhs and the result (-1: absent).
struct DimTriple {
  int64_t lhs = -1;
  int64_t rhs = -1;
  int64_t output = -1;
};

struct DotDims {
  std::vector<DimTriple> batch;                // lhs, rhs and output
  std::vector<DimTriple> contracting;          // lhs and rhs (output -1)
  std::vector<DimTriple> lhs_non_contracting;  // lhs and output
  std::vector<DimTriple> rhs_non_contracting;  // rhs and output
  int64_t output_rank = 0;
};

// The dims of a dot instruction (result dims: batch, lhs free, rhs free).
DotDims DotDimsOf(const Instruction& dot);

// The result sharding implied by operand `operand` (0 lhs, 1 rhs): its batch and own
// non-contracting dims carry over, contracting dims' devices become replicated.
std::optional<Sharding> DotResultFromOperand(const DotDims& dims, int64_t operand,
                                             const Sharding& sharding, int64_t operand_rank);
// The operand sharding implied by the result: batch and own non-contracting dims come back,
// the other operand's non-contracting dims' devices become replicated.
std::optional<Sharding> DotOperandFromResult(const DotDims& dims, int64_t operand,
                                             const Sharding& result, int64_t operand_rank);
// The operand sharding implied by the other operand: batch and contracting dims line up.
std::optional<Sharding> DotOperandFromOther(const DotDims& dims, int64_t operand,
                                            const Sharding& other, int64_t other_rank,
                                            int64_t operand_rank);

// The sharding the users of `instruction` would give it: follows a chain of single users
// up to the first one with a sharding and applies the backward rules down the chain.
std::optional<Sharding> LookaheadUserSharding(const Instruction& instruction,
                                              const ShardingLookup& lookup);

// Combines the result proposals from the two operands of a dot-like op: the one the users
// agree with (lookahead) or else the one from the larger operand is primary; the other is
// merged in when compatible.
std::optional<Sharding> CombineOperandProposals(const Instruction& instruction,
                                                std::optional<Sharding> from_lhs,
                                                std::optional<Sharding> from_rhs,
                                                const ShardingLookup& lookup);

// Backward: the operand sharding from the result, merged with what the other operand implies
// (used when the two are compatible, or instead when the other is more specific).
std::optional<Sharding> DotLikeOperandSharding(const DotDims& dims, int64_t operand_index,
                                               const Sharding& result,
                                               const Sharding* other_sharding,
                                               const Instruction& user);

}  // namespace gspmd::propagation::rules
