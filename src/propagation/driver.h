// The propagation driver (internal to src/propagation): per-leaf slots, the compact graph it
// works on, and the steps of one run (graph, seeding, rules to a fixed point, finishing).
// driver.cpp holds the fixed point, driver_finish.cpp what happens after it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/module.h"
#include "propagation/annotations.h"
#include "propagation/boundary.h"
#include "propagation/control_flow.h"
#include "propagation/op_rules.h"
#include "propagation/propagation.h"
#include "support/diagnostic.h"

namespace gspmd::propagation::driver {

constexpr int kUserPriority = -1;
constexpr int kUnsetPriority = 1 << 20;
// The --explain text of a value nothing reached (it keeps no sharding).
// The --explain text of a ShardBarrierTo replicated because its users proposed a sharding.
constexpr const char* kBarrierToRule = "replicated: a ShardBarrierTo blocks its users' sharding";
// The --explain text of a tuple leaf replicated because its other leaves are sharded.
constexpr const char* kTupleElementRule = "replicated: a tuple element beside sharded ones";
constexpr const char* kUnreachedRule = "no sharding: none reached it (partitioned as replicated)";

// What propagation knows about one leaf of one value.
struct Slot {
  std::optional<Sharding> sharding;
  int priority = kUnsetPriority;  // the rule priority that set it (lower is stronger)
  bool fixed = false;             // user annotation or manual region: never replaced
  bool user = false;              // this value's own sharding was written by the user
  bool refined = false;           // a fixed sharding whose open dims were refined
  std::vector<int64_t> open_dims; // dims of a fixed sharding left open for refinement
  bool kept = false;              // decided in an earlier user-priority round: only refined
  int32_t source = -1;            // the annotated node this sharding flows from
  RuleName rule;
  bool closed = false;            // a boundary value propagation may not set (stays replicated)
  bool even_only = false;         // a boundary value propagated on request (--propagate-to-*=true):
                                  // as in XLA, it splits evenly or stays replicated
  bool unreached = false;         // no annotation or rule gave it a sharding: replicated inside
                                  // the driver, written back as none (see FillDefaults)
};

// The driver keeps its own compact copy of what the worklists read (neighbours as node
// numbers, rule priorities), so that a sweep over the module touches instructions only where
// a rule runs.
struct Node {
  Instruction* instruction = nullptr;
  int64_t first_slot = 0;
  int64_t leaf_count = 0;
  bool rule_op = false;                // per-opcode rules apply
  bool is_tuple = false;               // tuple-shaped
  int8_t forward_priority = 0;         // RulePriority of the instruction's rules
  int8_t backward_priority = 0;
  int32_t operands_begin = 0, operands_end = 0;  // operand node numbers in operand_nodes_
  int32_t users_begin = 0, users_end = 0;        // user node numbers (one per use) in user_nodes_
  const ManualContext* manual = nullptr;
  bool whole = false;                  // computed whole (ComputedWhole): replicated, or manual
  bool barrier_to = false;             // ShardBarrierTo: takes nothing from its users
  std::optional<Sharding> composed;    // tuple-shaped nodes: the leaves as one tuple sharding
  bool composed_valid = false;
};

// Number of data tiles (the sharding's "size" when comparing proposals).
int64_t Tiles(const Sharding& sharding);
// The replicated sharding of a value of `shape` (one per leaf for tuples).
Sharding ReplicatedFor(const Shape& shape);
// Flattens a (possibly nested) tuple sharding into `leaves`; a non-tuple sharding of a tuple
// shape applies to every leaf.
void FlattenSharding(const Sharding& sharding, const Shape& shape, std::vector<Sharding>& leaves);
// Builds the nested tuple sharding of `shape` from its leaves, starting at leaves[*next].
Sharding NestLeaves(const Shape& shape, const std::vector<const Sharding*>& leaves, size_t* next);

// Instruction -> node number without hashing pointers: one dense vector per computation,
// indexed by the instruction's unique id (ids are unique within a computation). Lookups of
// neighbours mostly stay in one computation, so the last vector is kept at hand.
class NodeIndex {
 public:
  void Add(const Instruction* instruction, int32_t node) {
    std::vector<int32_t>& nodes = by_computation_[instruction->parent()];
    const int64_t id = instruction->unique_id();
    GSPMD_CHECK(id >= 0, "instruction %", instruction->name(), " has no id in its computation");
    if (id >= static_cast<int64_t>(nodes.size())) nodes.resize(id + 1, -1);
    nodes[id] = node;
    last_computation_ = nullptr;
  }

  int32_t Find(const Instruction* instruction) const {
    const int64_t id = instruction->unique_id();
    if (id < 0) return -1;
    if (instruction->parent() != last_computation_) {
      auto it = by_computation_.find(instruction->parent());
      if (it == by_computation_.end()) return -1;
      last_computation_ = instruction->parent();
      last_nodes_ = &it->second;
    }
    return id < static_cast<int64_t>(last_nodes_->size()) ? (*last_nodes_)[id] : -1;
  }

 private:
  std::unordered_map<const Computation*, std::vector<int32_t>> by_computation_;
  mutable const Computation* last_computation_ = nullptr;
  mutable const std::vector<int32_t>* last_nodes_ = nullptr;
};

class Driver {
 public:
  Driver(Module& module, int64_t num_devices, const PropagationOptions& options)
      : module_(module), num_devices_(num_devices), options_(options), record_origins_(options.record_origins) {}

  PropagationResult Run();

 private:
  // ---------------- Graph ----------------

  void BuildNodes();

  int32_t NodeOf(const Instruction* instruction) const;

  int64_t SlotOf(const Instruction* instruction, int64_t leaf) const;

  const Shape& SlotShape(int64_t slot) const;

  // a's sharding is offered to b when a_to_b, b's to a when b_to_a.
  void AddLink(int64_t a, int64_t b, LinkKind kind, bool a_to_b = true, bool b_to_a = true);

  void BuildLinks();

  // Within a shard group, no sharding flows from a ShardBarrierFrom member nor into a
  // ShardBarrierTo member.
  static bool GroupMayOffer(const Node& from, const Node& to);

  // ---------------- Annotations ----------------

  // The boundary policy of leaf `leaf` of node `node` (kUnannotated for values inside).
  BoundaryPolicy PolicyOf(const Node& node, int64_t leaf) const;

  bool IsBoundary(const Node& node) const;

  // Seeds the annotations as they stand in user-priority round `round` (UserAnnotation::ForRound).
  void SeedAnnotations(int64_t round);
  // The next user priority: what earlier rounds decided is kept (later proposals may add to
  // it, not replace it), and the annotations' dims of this priority take effect.
  void StartRound(int64_t round);

  // An op computed whole (a custom-call propagation does not know, a collective, ...) whose
  // operand is manual is itself manual: it runs on each device's own value, as XLA assumes.
  void MakeManualIfFedManual(int32_t n);

  static bool IsAllManualSharding(const Sharding& sharding);

  // A rule name built at run time, kept for as long as the driver (one copy per distinct text).
  RuleName Intern(std::string text);

  // A sharding propagation must not change that is not the user's.
  void Fix(int64_t s, Sharding sharding, RuleName rule);

  // ---------------- Improving one slot ----------------

  // Refines the open dims of a fixed sharding with `proposal`; the written dims stay.
  bool RefineOpenDims(int64_t s, const Sharding& proposal, int32_t source, const RuleName& rule);

  bool Acceptable(int64_t s, const Sharding& proposal) const;

  // Offers `proposal` (from a rule of priority `priority`) for slot `s`. True when the slot's
  // sharding changed: set, merged with the proposal, or replaced by a more specific one.
  bool Improve(int64_t s, Sharding proposal, int priority, int32_t source, const RuleName& rule);

  bool Set(int64_t s, Sharding sharding, int priority, int32_t source, const RuleName& rule);

  // A slot changed: its links are offered the new sharding, and the rules next to it run again.
  void OnChanged(int64_t s);

  void PropagateLinks();

  // Slot `s` (one side of a Sharding annotation / SPMD*Shape pair) offers its split of the
  // shared unspecified dims to slot `t` on the other side of the manual boundary.
  void OfferAcrossManualBoundary(int64_t s, int64_t t);

  // ---------------- Rules ----------------

  const Sharding* ShardingOf(int32_t n);

  // The current shardings of node `n`'s operands, in `shardings` (reused between calls).
  void OperandShardings(int32_t n, std::vector<const Sharding*>& shardings);

  bool AllFixed(const Node& node) const;

  // Offers a rule's proposal for every leaf of node `n`.
  void Apply(int32_t n, const Sharding& proposal, int priority, int32_t source, const RuleName& rule);

  int32_t SourceOf(int32_t n) const;

  void Forward(int32_t n, int level);

  void Backward(int32_t n, int level);

  // ---------------- Worklists ----------------

  void PushForward(int32_t n);
  void PushBackward(int32_t n);

  // Runs the rules of priority <= level to a fixed point: forward sweeps in program order,
  // backward sweeps in reverse, each visiting only nodes next to a change.
  void RunLevel(int level);

  // Runs the queued rules of priority <= level until nothing changes; shard_like members
  // exchange their shardings whenever the sweeps settle.
  void Drain(int level);

  // shard_like: a soft hint. Each member's sharding is offered to the others like any rule's
  // proposal, so members whose own uses disagree keep different shardings.
  bool ExchangeShardLike(int level);

  // ---------------- Finishing ----------------

  // A tuple with some leaves sharded has them all (XLA's tuple shardings are whole): the
  // unreached leaves are offered replicated (manual in a manual region), which then flows on
  // like any sharding (a loop counter beside a sharded loop value, its compare, ...). True when
  // a slot changed; the rules then run again.
  bool CompletePartlyShardedTuples();

  // A slot nothing reached is replicated for the steps that follow and marked unreached. As in
  // XLA, an instruction none of whose leaves was reached is written back without a sharding
  // (XLA's partitioner then replicates it, and so does ours); a tuple with some leaves reached
  // gets replicated ones for the rest. Inside a manual region the default is manual.
  void FillDefaults();

  // An elementwise value computed from replicated values only (directly or through other such
  // values), that some user needs whole (a replicated output or sharding constraint, or an
  // elementwise user that is or becomes replicated), is replicated: its sharded users then slice it where they read it,
  // which is free, where the sharding propagation gave it had to be gathered back for the
  // whole user. XLA computes it whole too (oracle seed 20019: `add(x, x)` of a replicated x,
  // returned replicated and also feeding a sharded output, was gathered: 12 B against 0).
  // Only values propagation chose change: annotated, manual and grouped ones stay.
  void ReplicateWhatUsersNeedWhole();

  // A loop-invariant value of a while loop (the body returns it as it came) that the body only
  // reads at run-time offsets (dynamic-slices whose start varies along a split dim, as a scan
  // reads its xs) is carried whole along those dims: gathered once before the loop instead of
  // a masked sum of the slice on every trip, which moves twice as much for a scan. XLA hoists
  // the gather out of the loop likewise. Where the trip count is known and the trips read less
  // than half the value, the sums stay (oracle seed 40165).
  void GatherLoopInvariantsOnce();
  // A loop-invariant element (the body returns it as it came) whose carried layout propagation
  // chose (tiled, not the user's): the loop, its body root, the element, its slot, and its
  // reads in the body (get-tuple-elements, each passed on by the root only as itself).
  struct LoopInvariant {
    const Instruction* loop = nullptr;
    const Instruction* root = nullptr;
    int64_t index = 0;
    int64_t slot = -1;
    std::vector<const Instruction*> reads;
  };
  std::vector<LoopInvariant> FreeLoopInvariants() const;
  // Carries `invariant` (its loop slot and its reads) as `layout`.
  void CarryLoopInvariantAs(const LoopInvariant& invariant, const Sharding& layout, RuleName rule);
  // A loop-invariant value of a while loop that the body reads whole, only by element-wise
  // ops that all have one split layout other than the carried one, is carried in that layout:
  // moved once before the loop instead of on every trip (oracle seed 121294: an invariant
  // split along its last dim, added to a carry split along its rows, an all-to-all per trip;
  // XLA moves it once).
  void LayLoopInvariantsOutAsTheirReaders();
  // The one layout every dynamic-slice of `reads` (a loop invariant's get-tuple-elements in
  // the body) has, when it splits none of the `sliced` dims; nullopt otherwise.
  std::optional<Sharding> CommonReadLayout(const std::vector<const Instruction*>& reads, const Instruction* root,
                                           const std::vector<int64_t>& sliced) const;

  // shard_as members end with one sharding: the most specific one a member has (a user's
  // annotation first; a ShardBarrierFrom member's only when no other member has one). A
  // ShardBarrierTo member keeps its own. With `propagate`, the changes are offered onwards
  // (a ShardBarrierFrom member hands its new sharding to its operand); true when any changed.
  bool AlignGroups(bool propagate);

  bool AlignShardAsGroups() { return AlignGroups(/*propagate=*/true); }
  void MakeGroupsConsistent() { AlignGroups(/*propagate=*/false); }

  // An entry parameter or result propagated on request that would split some dim unevenly is
  // replicated instead, as XLA does (its callers cannot hold uneven pieces). Values propagated
  // by default keep an uneven split: the runtime here passes them, and that saves the gather.
  void ReplicateUnevenBoundaries();

  // ShardBarrierFrom / ShardBarrierTo only steer propagation: each is replaced by its operand,
  // so none reaches the partitioner.
  void RemoveShardBarriers();

  // A while's body parameter, body root and condition parameter take the loop's sharding, so
  // the loop carries its value without resharding.
  void MakeLoopsConsistent();

  // Every leaf of the node unreached (and nothing written on it): it keeps no sharding.
  bool LeftUnsharded(const Node& node) const;

  ShardingOrigin OriginOf(const Node& node) const;

  PropagationResult WriteBack();

  Module& module_;
  int64_t num_devices_;
  const PropagationOptions& options_;
  bool record_origins_;
  BoundaryPolicies boundary_;
  std::vector<std::vector<int32_t>> like_groups_;  // shard_like members (node numbers)
  std::vector<int32_t> pending_manual_;            // computed-whole nodes with a manual operand
  std::set<std::string> interned_rules_;  // node-based: the c_str()s RuleNames hold stay valid
  Annotations annotations_;
  std::vector<Node> nodes_;
  NodeIndex node_of_;
  std::vector<Slot> slots_;
  std::vector<int32_t> slot_node_;
  std::vector<int32_t> operand_nodes_, user_nodes_;  // see Node
  std::vector<const Sharding*> forward_operands_, backward_operands_;  // scratch
  std::vector<std::vector<std::pair<int64_t, LinkKind>>> links_;
  std::vector<std::pair<int64_t, int64_t>> loop_ties_;  // (while slot, tied slot)
  std::vector<int64_t> link_stack_;
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<int32_t>> forward_;  // program order
  std::priority_queue<int32_t> backward_;                                              // reverse order
  std::vector<bool> in_forward_, in_backward_;
  Sharding replicated_ = Sharding::Replicated();
  ShardingLookup lookup_ = [this](const Instruction* instruction) -> const Sharding* {
    int32_t n = NodeOf(instruction);
    return n < 0 ? nullptr : ShardingOf(n);
  };
};

}  // namespace gspmd::propagation::driver
