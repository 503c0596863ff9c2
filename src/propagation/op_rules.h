// Per-opcode sharding rules for propagation: what an instruction's operands imply for its
// result (forward) and what its result implies for an operand (backward).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/instruction.h"
#include "sharding/sharding.h"

namespace gspmd::propagation {

// The sharding currently assigned to an instruction during propagation, or nullptr when none
// is known yet. Lets rules look at neighbours (e.g. a dot looks ahead at its users on ties).
using ShardingLookup = std::function<const Sharding*(const Instruction*)>;

// A rule's name for --explain: a base name and a direction ("dot" + forward prints "dot
// forward"). Two words, so propagation can record it for every value without allocating.
struct RuleName {
  enum class Direction : uint8_t { kNone, kForward, kBackward };
  const char* base = "";  // static, or owned by something that outlives the propagation
  Direction direction = Direction::kNone;
  std::string ToString() const;
};

// Ops whose result is the operands' values position by position (unary and binary math,
// compare, select, clamp, converts, copy, map, ...).
bool IsElementwiseLike(const Instruction& instruction);

// A rule's proposal, with the rule's name.
struct Proposal {
  Sharding sharding;
  RuleName rule;
};

// Forward: the result sharding implied by the operands' current shardings. Operands without a
// sharding are passed as nullptr. For array-shaped instructions only (tuple, get-tuple-element,
// parameter, while, conditional, call and the annotation custom-calls are the driver's); for a
// variadic reduce/sort the proposal is a tuple sharding. nullopt when nothing can be inferred.
std::optional<Proposal> InferResultSharding(const Instruction& instruction,
                                            const std::vector<const Sharding*>& operand_shardings,
                                            const ShardingLookup& lookup);

// Backward: the sharding of operand `operand_index` implied by the user's sharding `user`
// (for a variadic reduce/sort, `user` is the tuple sharding). `operand_shardings` are the
// operands' current shardings (nullptr when unknown), so a rule can keep what is compatible.
std::optional<Proposal> InferOperandSharding(const Instruction& user, int64_t operand_index,
                                             const Sharding& user_sharding,
                                             const std::vector<const Sharding*>& operand_shardings,
                                             const ShardingLookup& lookup);

// The priority level at which an opcode's rules may run (0 first). Propagation runs to a fixed
// point with levels 0..kMaxPriorityLevel enabled cumulatively, so strong local rules
// (elementwise, transpose, reshape, ...) settle before weak ones (broadcast last).
inline constexpr int kMaxPriorityLevel = 3;
int RulePriority(const Instruction& instruction, bool forward);

// Merges `proposed` into `current` when both can hold at once: e.g. a [2,1] data split with a
// [1,4] model split gives a [2,4] tiling when the device orders agree. Returns nullopt when
// they conflict or when `proposed` adds nothing to `current`. `shape` is the value's shape.
std::optional<Sharding> MergeShardings(const Sharding& current, const Sharding& proposed,
                                       const Shape& shape);

// True when `candidate` splits the value over more devices than `current` (so it is worth
// replacing a weaker sharding with it); used to resolve conflicts.
bool IsMoreSpecific(const Sharding& candidate, const Sharding& current);

}  // namespace gspmd::propagation
