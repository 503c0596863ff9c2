// Internal declarations of the per-family propagation rules that op_rules.cpp dispatches to.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "propagation/op_rules.h"

namespace gspmd::propagation::rules {

using Operands = std::vector<const Sharding*>;

// Each family: Forward (result from operands) and Backward (operand from the user's result).
#define GSPMD_DECLARE_RULE_FAMILY(Family)                                                   \
  std::optional<Proposal> Family##Forward(const Instruction& instruction,                  \
                                          const Operands& operands,                       \
                                          const ShardingLookup& lookup);                  \
  std::optional<Proposal> Family##Backward(const Instruction& user, int64_t operand_index, \
                                           const Sharding& user_sharding,                 \
                                           const Operands& operands,                      \
                                           const ShardingLookup& lookup);

GSPMD_DECLARE_RULE_FAMILY(Elementwise)
GSPMD_DECLARE_RULE_FAMILY(Dot)
GSPMD_DECLARE_RULE_FAMILY(Convolution)
GSPMD_DECLARE_RULE_FAMILY(Reduce)
GSPMD_DECLARE_RULE_FAMILY(ReduceWindow)
GSPMD_DECLARE_RULE_FAMILY(SelectAndScatter)
GSPMD_DECLARE_RULE_FAMILY(Broadcast)
GSPMD_DECLARE_RULE_FAMILY(Reshape)
GSPMD_DECLARE_RULE_FAMILY(Transpose)
GSPMD_DECLARE_RULE_FAMILY(Reverse)
GSPMD_DECLARE_RULE_FAMILY(Slice)
GSPMD_DECLARE_RULE_FAMILY(Pad)
GSPMD_DECLARE_RULE_FAMILY(Concatenate)
GSPMD_DECLARE_RULE_FAMILY(DynamicSlice)
GSPMD_DECLARE_RULE_FAMILY(DynamicUpdateSlice)
GSPMD_DECLARE_RULE_FAMILY(Iota)
GSPMD_DECLARE_RULE_FAMILY(Gather)
GSPMD_DECLARE_RULE_FAMILY(Scatter)
GSPMD_DECLARE_RULE_FAMILY(Sort)
GSPMD_DECLARE_RULE_FAMILY(TopK)
GSPMD_DECLARE_RULE_FAMILY(PassThroughCustomCall)

#undef GSPMD_DECLARE_RULE_FAMILY

// Shared helpers.
// A proposal named "<rule> forward" / "<rule> backward".
Proposal Named(Sharding sharding, const char* rule, bool forward);
// True for an array-shaped instruction whose shardings are plain (not tuple) shardings.
bool IsArray(const Instruction& instruction);
// A plain array sharding that says something (not a tuple, not unknown).
bool IsUsable(const Sharding& sharding);
// The non-null operand shardings among `indices` (all when empty).
std::vector<const Sharding*> Known(const Operands& operands, const std::vector<int64_t>& indices = {});
// Picks the most specific of `candidates` and merges the others into it when compatible
// (a conflicting one is skipped). nullopt when `candidates` is empty.
std::optional<Sharding> MergeAll(const std::vector<Sharding>& candidates, const Shape& shape);

}  // namespace gspmd::propagation::rules
