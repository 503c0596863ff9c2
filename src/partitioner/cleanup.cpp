// Cleanup of the partitioner's output: identity collectives, common subexpressions, dead code.
#include "partitioner/cleanup.h"

#include <functional>
#include <unordered_map>
#include <vector>

#include "partitioner/loop_all_reduce_motion.h"
#include "partitioner/simplify.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// ---- Identity collectives ----

// How many devices one replica group's ids range over, or 0 when a one-member group may
// still span several devices (XLA's cross-replica-and-partition mode: channel_id without
// use_global_device_ids on all-reduce/all-gather/reduce-scatter, where a group of replica
// ids covers every partition of those replicas).
int64_t GroupIdSpace(const Instruction& collective, const Module& module) {
  const int64_t replicas = module.replica_count();
  const int64_t partitions = module.num_partitions();
  if (!collective.channel_id.has_value()) return replicas;
  if (collective.use_global_device_ids) return replicas * partitions;
  const bool has_global_ids_flag = collective.opcode() == Opcode::kAllReduce ||
                                   collective.opcode() == Opcode::kAllGather ||
                                   collective.opcode() == Opcode::kReduceScatter;
  if (has_global_ids_flag && partitions > 1) return 0;
  return partitions;
}

bool EveryGroupHasOneMember(const Instruction& collective, const Module& module) {
  const int64_t space = GroupIdSpace(collective, module);
  if (space < 1) return false;
  const ReplicaGroups& groups = collective.replica_groups();
  if (groups.form() == ReplicaGroups::Form::kIota) return groups.iota().dim(1) == 1;
  if (groups.empty()) return space == 1;
  for (const std::vector<int64_t>& group : groups.Groups(space))
    if (group.size() != 1) return false;
  return true;
}

// Every device id the permute's mode covers is sent to itself, and nothing else is sent.
bool PermutesEveryDeviceToItself(const Instruction& permute, const Module& module) {
  const int64_t space = permute.channel_id.has_value() ? module.num_partitions() : module.replica_count();
  if (static_cast<int64_t>(permute.source_target_pairs().size()) != space) return false;
  std::vector<bool> seen(static_cast<size_t>(space), false);
  for (const SourceTargetPair& pair : permute.source_target_pairs()) {
    const bool in_range = pair.source >= 0 && pair.source < space;
    if (pair.source != pair.target || !in_range || seen[static_cast<size_t>(pair.source)]) return false;
    seen[static_cast<size_t>(pair.source)] = true;
  }
  return true;
}

bool SameArrayShape(const Instruction& a, const Instruction& b) {
  return a.shape().IsArray() && b.shape().IsArray() && a.shape().element_type() == b.shape().element_type() &&
         a.shape().dims() == b.shape().dims();
}

bool IsIdentityCollective(const Instruction& instruction, const Module& module) {
  if (instruction.operand_count() != 1 || !SameArrayShape(instruction, *instruction.operand(0))) return false;
  switch (instruction.opcode()) {
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectiveBroadcast:
      return EveryGroupHasOneMember(instruction, module);
    case Opcode::kCollectivePermute:
      return PermutesEveryDeviceToItself(instruction, module);
    default:
      return false;
  }
}

// Replaces every use of `old` by `replacement`. The ENTRY root's sharding (the program's
// output contract) moves to the replacement; when it cannot (the replacement is a
// parameter or has a sharding of its own), nothing changes and false is returned.
bool ReplaceUses(Instruction* old, Instruction* replacement) {
  Computation* computation = old->parent();
  const bool is_root = computation->root() == old;
  if (is_root && old->sharding().has_value()) {
    const bool can_carry = replacement->opcode() != Opcode::kParameter && !replacement->sharding().has_value();
    if (!can_carry) return false;
    replacement->set_sharding(old->sharding());
    old->set_sharding(std::nullopt);
  }
  old->ReplaceAllUsesWith(replacement);
  return true;
}

// ---- Common subexpressions ----

bool NeverMerged(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kParameter:
    case Opcode::kCustomCall:
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall:
    case Opcode::kFusion:
      return true;
    default:
      return false;
  }
}

void HashCombine(size_t& seed, size_t value) { seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2); }

// A hash over the fields most likely to differ; SameComputation decides.
size_t InstructionHash(const Instruction& instruction) {
  size_t seed = std::hash<int>()(static_cast<int>(instruction.opcode()));
  for (const Instruction* operand : instruction.operands()) HashCombine(seed, std::hash<int64_t>()(operand->unique_id()));
  if (instruction.shape().IsArray()) {
    HashCombine(seed, std::hash<int>()(static_cast<int>(instruction.shape().element_type())));
    for (int64_t dim : instruction.shape().dims()) HashCombine(seed, std::hash<int64_t>()(dim));
  }
  for (int64_t dim : instruction.dimensions) HashCombine(seed, std::hash<int64_t>()(dim));
  HashCombine(seed, std::hash<int64_t>()(instruction.tuple_index));
  return seed;
}

bool SameLiteral(const std::optional<Literal>& a, const std::optional<Literal>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a.has_value()) return true;
  return a->shape() == b->shape() && a->BitwiseEquals(*b);
}

// Collectives compare equal whatever their channel ids, but a cross-replica one (no
// channel_id) never equals a cross-partition one.
bool SameChannelKind(const Instruction& a, const Instruction& b) {
  if (IsCollective(a.opcode())) return a.channel_id.has_value() == b.channel_id.has_value();
  return a.channel_id == b.channel_id;
}

bool SameOpcodeAttributes(const Instruction& a, const Instruction& b) {
  return a.tuple_index == b.tuple_index && a.dimensions == b.dimensions && a.iota_dimension == b.iota_dimension &&
         a.slice() == b.slice() && a.dynamic_slice_sizes() == b.dynamic_slice_sizes() && a.padding() == b.padding() &&
         a.window() == b.window() && a.conv_dims() == b.conv_dims() && a.feature_group_count == b.feature_group_count &&
         a.batch_group_count == b.batch_group_count && a.dot_dims() == b.dot_dims() && a.gather_dims() == b.gather_dims() &&
         a.gather_slice_sizes() == b.gather_slice_sizes() && a.scatter_dims() == b.scatter_dims() &&
         a.indices_are_sorted == b.indices_are_sorted && a.unique_indices == b.unique_indices &&
         a.comparison_direction == b.comparison_direction && a.comparison_type == b.comparison_type &&
         a.is_stable == b.is_stable && a.k == b.k && a.largest == b.largest &&
         a.custom_call_target == b.custom_call_target &&
         a.custom_call_has_side_effect == b.custom_call_has_side_effect && a.exponent_bits == b.exponent_bits &&
         a.mantissa_bits == b.mantissa_bits && a.rng_distribution() == b.rng_distribution() &&
         a.conditional_uses_branch_list == b.conditional_uses_branch_list;
}

bool SameCollectiveAttributes(const Instruction& a, const Instruction& b) {
  return SameChannelKind(a, b) && a.has_replica_groups == b.has_replica_groups &&
         a.replica_groups() == b.replica_groups() && a.use_global_device_ids == b.use_global_device_ids &&
         a.constrain_layout == b.constrain_layout && a.source_target_pairs() == b.source_target_pairs();
}

// Verbatim attributes that may change meaning downstream (metadata does not).
bool SameVerbatimAttributes(const Instruction& a, const Instruction& b) {
  return a.frontend_attributes == b.frontend_attributes && a.backend_config == b.backend_config &&
         a.extra_attributes() == b.extra_attributes();
}

bool SameComputation(const Instruction& a, const Instruction& b) {
  return a.opcode() == b.opcode() && a.operands() == b.operands() && a.shape() == b.shape() &&
         a.called_computations() == b.called_computations() && a.sharding() == b.sharding() &&
         SameOpcodeAttributes(a, b) && SameCollectiveAttributes(a, b) && SameVerbatimAttributes(a, b) &&
         SameLiteral(a.literal(), b.literal());
}

int64_t EliminateInComputation(Computation& computation) {
  // Buckets by hash; looked up only, never iterated, so the output does not depend on the
  // hash order. Text order is a valid order, so an earlier equal instruction's operands are
  // already canonical when a later one is visited.
  std::unordered_map<size_t, std::vector<Instruction*>> seen;
  std::vector<Instruction*> order;
  order.reserve(computation.instructions().size());
  for (const auto& owned : computation.instructions()) order.push_back(owned.get());
  int64_t merged = 0;
  for (Instruction* instruction : order) {
    if (NeverMerged(*instruction)) continue;
    std::vector<Instruction*>& bucket = seen[InstructionHash(*instruction)];
    Instruction* earlier = nullptr;
    for (Instruction* candidate : bucket) {
      if (SameComputation(*candidate, *instruction)) {
        earlier = candidate;
        break;
      }
    }
    if (earlier == nullptr) {
      bucket.push_back(instruction);
      continue;
    }
    if (ReplaceUses(instruction, earlier)) ++merged;
  }
  return merged;
}

}  // namespace

int64_t RemoveIdentityCollectives(Module& module) {
  int64_t removed = 0;
  for (const auto& computation : module.computations()) {
    std::vector<Instruction*> collectives;
    for (const auto& owned : computation->instructions())
      if (IsCollective(owned->opcode())) collectives.push_back(owned.get());
    for (Instruction* collective : collectives) {
      if (!IsIdentityCollective(*collective, module)) continue;
      if (ReplaceUses(collective, collective->operand(0))) ++removed;
    }
  }
  return removed;
}

int64_t EliminateCommonSubexpressions(Module& module) {
  int64_t merged = 0;
  for (const auto& computation : module.computations()) merged += EliminateInComputation(*computation);
  return merged;
}

void RemoveDeadCode(Module& module) {
  for (const auto& computation : module.computations()) computation->RemoveDeadInstructions();
  module.RemoveUnusedComputations();
}

CleanupStats CleanupPartitionedModule(Module& module) {
  CleanupStats stats;
  stats.all_reduces_sunk = SinkLoopAllReduces(module);
  stats.collectives_removed = RemoveIdentityCollectives(module);
  InlinePartitionedCalls(module);
  stats.instructions_merged = EliminateCommonSubexpressions(module);
  // Exact simplifications (select of equal values, compares of a value with itself, splats
  // through collectives) leave dead code, with the collectives that fed it, for RemoveDeadCode.
  if (SimplifyPartitionedModule(module) > 0) stats.instructions_merged += EliminateCommonSubexpressions(module);
  RemoveDeadCode(module);
  return stats;
}

}  // namespace gspmd
