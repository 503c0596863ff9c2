// Value leaves and the identities between them that propagation keeps consistent: tuple and
// get-tuple-element, while (loop value, body parameter and root, condition parameter),
// conditional branches, calls, optimization barriers and annotation custom-calls.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/module.h"

namespace gspmd::propagation {

// A value's leaves, flattened depth-first: an array (or token) is one leaf, a tuple the
// leaves of its elements in order.
int64_t LeafCount(const Shape& shape);
// The index of the first leaf of tuple element `index` of `shape`.
int64_t LeafOffset(const Shape& shape, int64_t index);
// The shape of leaf `leaf` of `shape`.
const Shape& LeafShape(const Shape& shape, int64_t leaf);

enum class LinkKind {
  kTuple,            // tuple element <-> tuple operand
  kGetTupleElement,  // get-tuple-element <-> element of its operand
  kWhileInit,        // while <-> its init operand
  kWhileValue,       // while <-> body parameter, body root, condition parameter (must end equal)
  kBranchParameter,  // conditional operand <-> branch parameter
  kBranchResult,     // conditional <-> branch root
  kCallParameter,    // call operand <-> callee parameter
  kCallResult,       // call <-> callee root
  kPassThrough,      // optimization barrier, annotation custom-calls: result <-> operand
  kForwardOnly,      // xla.sdy.PropagationBarrier FORWARD: operand -> result only
  kBackwardOnly,     // xla.sdy.PropagationBarrier BACKWARD: result -> operand only
  kShardGroup,       // members of one shard_as / shard_like / xla.sdy.ShardingGroup group
  kBarrier,          // ShardBarrierFrom (result -> operand only) / ShardBarrierTo (both ways: its
                     // users' shardings never reach it, only a replicated one in their place)
  kManualConversion, // a Sharding annotation with open dims <-> the SPMDFullToShardShape /
                     // SPMDShardToFullShape it feeds: the open dims are refined on both sides
};

// Leaf `a_leaf` of `a` and leaf `b_leaf` of `b` hold the same value: a sharding of one is a
// proposal for the other.
struct LeafLink {
  const Instruction* a = nullptr;
  int64_t a_leaf = 0;
  const Instruction* b = nullptr;
  int64_t b_leaf = 0;
  LinkKind kind = LinkKind::kTuple;
  bool a_to_b = true;  // a's sharding is offered to b
  bool b_to_a = true;  // b's sharding is offered to a
};

const char* LinkRuleName(LinkKind kind);

// Control-flow-like ops whose called computations propagation flows through.
bool CallsFlowComputations(const Instruction& instruction);

// A user collective that keeps its operand's shape (all-reduce, collective-permute,
// collective-broadcast): inside a shard_map it works along manual axes only, so the layout
// over the other axes passes through.
bool IsShapePreservingCollective(const Instruction& instruction);

// Ops the partitioner only computes whole (random numbers, ids, collectives outside shard_map,
// custom-calls it does not know, ...): propagation keeps them replicated (manual over a shard_map's
// axes inside one) and asks no rule about them; their users reshard what they need.
bool ComputedWhole(const Instruction& instruction);

// Ops the driver handles itself through links (per-opcode rules are not asked about them).
bool IsDriverHandled(const Instruction& instruction);

// The links `instruction` creates (none for ops with per-opcode rules).
void AppendLinks(const Instruction& instruction, std::vector<LeafLink>& links);

// The instructions propagation works on, in one order where operands come first and the
// bodies of while/conditional/call sit right before the op that calls them (as if inlined).
// Only the entry and the computations it reaches through control flow (not reducers).
std::vector<Instruction*> FlowOrder(const Module& module);

}  // namespace gspmd::propagation
