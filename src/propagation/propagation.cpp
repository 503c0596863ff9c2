// Sharding propagation driver: a worklist fixed point over rule priority levels, forward and
// backward, from the user's annotations to a sharding on every instruction.
#include "propagation/propagation.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <unordered_map>

#include "propagation/annotations.h"
#include "propagation/control_flow.h"
#include "propagation/op_rules.h"
#include "propagation/sharding_algebra.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace propagation {
namespace {

constexpr int kUserPriority = -1;
constexpr int kUnsetPriority = 1 << 20;

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
  std::optional<Sharding> composed;    // tuple-shaped nodes: the leaves as one tuple sharding
  bool composed_valid = false;
};

int64_t Tiles(const Sharding& sharding) { return NumDataTiles(sharding); }

Sharding ReplicatedFor(const Shape& shape) {
  if (!shape.IsTuple()) return Sharding::Replicated();
  std::vector<Sharding> elements;
  for (const Shape& element : shape.tuple_shapes()) elements.push_back(ReplicatedFor(element));
  return Sharding::Tuple(std::move(elements));
}

// Flattens a (possibly nested) tuple sharding into `leaves`; a non-tuple sharding of a tuple
// shape applies to every leaf.
void FlattenSharding(const Sharding& sharding, const Shape& shape, std::vector<Sharding>& leaves) {
  if (!shape.IsTuple()) {
    leaves.push_back(sharding);
    return;
  }
  bool per_element = sharding.IsTuple() && static_cast<int64_t>(sharding.tuple_elements().size()) == shape.tuple_size();
  bool flat = sharding.IsTuple() && static_cast<int64_t>(sharding.tuple_elements().size()) == LeafCount(shape);
  if (!per_element && flat) {
    for (const Sharding& element : sharding.tuple_elements()) leaves.push_back(element);
    return;
  }
  for (int64_t i = 0; i < shape.tuple_size(); ++i) {
    FlattenSharding(per_element ? sharding.tuple_elements()[i] : sharding, shape.tuple_shape(i), leaves);
  }
}

// Builds the nested tuple sharding of `shape` from its leaves, starting at leaves[*next].
Sharding NestLeaves(const Shape& shape, const std::vector<const Sharding*>& leaves, size_t* next) {
  if (!shape.IsTuple()) return *leaves[(*next)++];
  std::vector<Sharding> elements;
  for (const Shape& element : shape.tuple_shapes()) elements.push_back(NestLeaves(element, leaves, next));
  return Sharding::Tuple(std::move(elements));
}

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
  Driver(Module& module, int64_t num_devices, bool record_origins)
      : module_(module), num_devices_(num_devices), record_origins_(record_origins) {}

  PropagationResult Run() {
    annotations_ = ReadAnnotations(module_, num_devices_);
    BuildNodes();
    BuildLinks();
    // Shardy's user priorities: a whole propagation per priority, lower numbers first (one
    // when no annotation has priorities).
    const std::vector<int64_t>& rounds = annotations_.priority_rounds;
    SeedAnnotations(rounds.empty() ? 0 : rounds[0]);
    for (size_t round = 0; round < std::max<size_t>(rounds.size(), 1); ++round) {
      if (round > 0) StartRound(rounds[round]);
      for (int level = 0; level <= kMaxPriorityLevel; ++level) RunLevel(level);
    }
    FillDefaults();
    MakeGroupsConsistent();
    MakeLoopsConsistent();
    return WriteBack();
  }

 private:
  // ---------------- Graph ----------------

  void BuildNodes() {
    std::vector<Instruction*> order = FlowOrder(module_);
    nodes_.reserve(order.size());
    int64_t slot_count = 0;
    for (Instruction* instruction : order) {
      Node node;
      node.instruction = instruction;
      node.first_slot = slot_count;
      node.leaf_count = LeafCount(instruction->shape());
      node.rule_op = !IsDriverHandled(*instruction);
      auto manual = annotations_.manual_computations.find(instruction->parent());
      if (manual != annotations_.manual_computations.end()) node.manual = &manual->second;
      slot_count += node.leaf_count;
      node_of_.Add(instruction, static_cast<int32_t>(nodes_.size()));
      nodes_.push_back(std::move(node));
    }
    // Neighbours as node numbers (-1: not propagated through, e.g. in a reducer).
    for (Node& node : nodes_) {
      const Instruction& instruction = *node.instruction;
      node.is_tuple = instruction.shape().IsTuple();
      node.forward_priority = static_cast<int8_t>(RulePriority(instruction, /*forward=*/true));
      node.backward_priority = static_cast<int8_t>(RulePriority(instruction, /*forward=*/false));
      node.operands_begin = static_cast<int32_t>(operand_nodes_.size());
      for (const Instruction* operand : instruction.operands()) operand_nodes_.push_back(NodeOf(operand));
      node.operands_end = static_cast<int32_t>(operand_nodes_.size());
      node.users_begin = static_cast<int32_t>(user_nodes_.size());
      for (const Instruction* user : instruction.users()) user_nodes_.push_back(NodeOf(user));
      node.users_end = static_cast<int32_t>(user_nodes_.size());
    }
    slots_.resize(slot_count);
    slot_node_.resize(slot_count);
    for (size_t n = 0; n < nodes_.size(); ++n) {
      for (int64_t leaf = 0; leaf < nodes_[n].leaf_count; ++leaf) slot_node_[nodes_[n].first_slot + leaf] = static_cast<int32_t>(n);
    }
    links_.resize(slot_count);
    in_forward_.assign(nodes_.size(), false);
    in_backward_.assign(nodes_.size(), false);
  }

  int32_t NodeOf(const Instruction* instruction) const {
    return node_of_.Find(instruction);
  }

  int64_t SlotOf(const Instruction* instruction, int64_t leaf) const {
    int32_t node = NodeOf(instruction);
    if (node < 0 || leaf >= nodes_[node].leaf_count) return -1;
    return nodes_[node].first_slot + leaf;
  }

  const Shape& SlotShape(int64_t slot) const {
    const Node& node = nodes_[slot_node_[slot]];
    return LeafShape(node.instruction->shape(), slot - node.first_slot);
  }

  // Links carry shardings both ways, except a barrier's (b is the operand, a the result).
  void AddLink(int64_t a, int64_t b, LinkKind kind) {
    if (a < 0 || b < 0 || a == b) return;
    if (kind != LinkKind::kBackwardOnly) links_[b].push_back({a, kind});
    if (kind != LinkKind::kForwardOnly) links_[a].push_back({b, kind});
  }

  void BuildLinks() {
    std::vector<LeafLink> links;
    for (const Node& node : nodes_) AppendLinks(*node.instruction, links);
    for (const LeafLink& link : links) {
      int64_t a = SlotOf(link.a, link.a_leaf), b = SlotOf(link.b, link.b_leaf);
      AddLink(a, b, link.kind);
      if (link.kind == LinkKind::kWhileValue) loop_ties_.push_back({a, b});
    }
    for (const ShardGroupMembers& group : annotations_.groups) {
      const std::vector<const Instruction*>& members = group.members;
      for (size_t i = 1; i < members.size(); ++i) {
        int32_t first = NodeOf(members[0]), other = NodeOf(members[i]);
        if (first < 0 || other < 0 || nodes_[first].leaf_count != nodes_[other].leaf_count) continue;
        for (int64_t leaf = 0; leaf < nodes_[first].leaf_count; ++leaf) {
          AddLink(nodes_[first].first_slot + leaf, nodes_[other].first_slot + leaf, LinkKind::kShardGroup);
        }
      }
    }
  }

  // ---------------- Annotations ----------------

  void SeedAnnotations(int64_t round) {
    for (size_t n = 0; n < nodes_.size(); ++n) {
      Node& node = nodes_[n];
      auto fixed = annotations_.fixed.find(node.instruction);
      if (fixed != annotations_.fixed.end()) {
        const UserAnnotation annotation = fixed->second.ForRound(round);
        std::vector<Sharding> leaves;
        FlattenSharding(annotation.sharding, node.instruction->shape(), leaves);
        if (static_cast<int64_t>(leaves.size()) != node.leaf_count) {
          GSPMD_USER_ERROR("%", node.instruction->name(), ": sharding ", fixed->second.sharding.ToString(),
                           " does not fit the shape ", node.instruction->shape().ToString());
        }
        const Instruction* from = fixed->second.from;
        for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf) {
          Slot& slot = slots_[node.first_slot + leaf];
          slot.sharding = leaves[leaf];
          slot.fixed = true;
          slot.user = from == nullptr;
          slot.priority = kUserPriority;
          slot.source = from == nullptr ? static_cast<int32_t>(n) : NodeOf(from);
          slot.rule = RuleName{from == nullptr ? "user annotation" : "sharding constraint"};
          if (node.leaf_count == 1) slot.open_dims = annotation.open_dims;
        }
        continue;
      }
      if (node.manual != nullptr && node.manual->fully_manual) {
        for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf) Fix(node.first_slot + leaf, Sharding::Manual(),
                                                                  Intern("manual region of %" + node.manual->source));
        continue;
      }
      if (!ComputedWhole(*node.instruction)) continue;
      node.rule_op = false;
      for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf) {
        const Shape& shape = SlotShape(node.first_slot + leaf);
        if (!shape.IsArray()) continue;
        Sharding whole = node.manual != nullptr ? node.manual->Template(shape.rank()) : Sharding::Replicated();
        Fix(node.first_slot + leaf, std::move(whole), RuleName{"computed whole"});
      }
    }
    for (int64_t s = 0; s < static_cast<int64_t>(slots_.size()); ++s) {
      if (slots_[s].sharding) link_stack_.push_back(s);
    }
    PropagateLinks();
    for (const SeedProposal& seed : annotations_.seeds) {
      int64_t slot = SlotOf(seed.instruction, seed.leaf);
      if (slot < 0) continue;
      int32_t source = NodeOf(seed.from);
      if (Improve(slot, seed.sharding, 0, source, RuleName{seed.rule.c_str()})) PropagateLinks();
    }
  }

  // A rule name built at run time, kept for as long as the driver (one copy per distinct text).
  RuleName Intern(std::string text) {
    auto [it, inserted] = interned_rules_.insert(std::move(text));
    return RuleName{it->c_str()};
  }

  // A sharding propagation must not change that is not the user's.
  void Fix(int64_t s, Sharding sharding, RuleName rule) {
    Slot& slot = slots_[s];
    slot.sharding = std::move(sharding);
    slot.fixed = true;
    slot.priority = kUserPriority;
    slot.rule = rule;
  }

  // The next user priority: what earlier rounds decided is kept (later proposals may add to
  // it, not replace it), and the annotations' dims of this priority take effect.
  void StartRound(int64_t round) {
    for (Slot& slot : slots_) slot.kept = slot.kept || (slot.sharding && !slot.fixed);
    for (Node& node : nodes_) {
      auto fixed = annotations_.fixed.find(node.instruction);
      if (fixed == annotations_.fixed.end() || fixed->second.dim_priorities.empty() || node.leaf_count != 1) continue;
      const UserAnnotation annotation = fixed->second.ForRound(round);
      Slot& slot = slots_[node.first_slot];
      slot.open_dims = annotation.open_dims;
      if (*slot.sharding == annotation.sharding) continue;
      slot.sharding = annotation.sharding;
      OnChanged(node.first_slot);
    }
    PropagateLinks();
  }

  // ---------------- Improving one slot ----------------

  // Refines the open dims of a fixed sharding with `proposal`; the written dims stay.
  bool RefineOpenDims(int64_t s, const Sharding& proposal, int32_t source, const RuleName& rule) {
    Slot& slot = slots_[s];
    if (slot.open_dims.empty() || !slot.sharding || !proposal.IsTiled()) return false;
    const Shape& shape = SlotShape(s);
    std::vector<int64_t> written;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (std::find(slot.open_dims.begin(), slot.open_dims.end(), d) == slot.open_dims.end()) written.push_back(d);
    }
    Sharding open_part = ReplicateDims(proposal, written);
    std::optional<Sharding> merged = MergeShardings(*slot.sharding, open_part, shape);
    if (!merged || Tiles(*merged) <= Tiles(*slot.sharding)) return false;
    for (int64_t d : written) {
      if (DimTiles(*merged, d) != DimTiles(*slot.sharding, d)) return false;
    }
    slot.sharding = std::move(*merged);
    slot.refined = true;
    if (source >= 0) {
      slot.rule = Intern("user annotation, open dims from %" + nodes_[source].instruction->name() + " via " + rule.ToString());
    }
    return true;
  }

  bool Acceptable(int64_t s, const Sharding& proposal) const {
    const Shape& shape = SlotShape(s);
    if (!shape.IsArray() || proposal.IsTuple() || proposal.IsUnknown()) return false;
    if (proposal.IsTiled() && proposal.TiledDataRank() != shape.rank()) return false;
    const Node& node = nodes_[slot_node_[s]];
    // Inside a shard_map body only shardings manual over the body's axes fit.
    return node.manual == nullptr || node.manual->Accepts(proposal, shape.rank());
  }

  // Offers `proposal` (from a rule of priority `priority`) for slot `s`. True when the slot's
  // sharding changed: set, merged with the proposal, or replaced by a more specific one.
  bool Improve(int64_t s, Sharding proposal, int priority, int32_t source, const RuleName& rule) {
    if (!Acceptable(s, proposal)) return false;
    proposal.set_shard_group(std::nullopt);
    Slot& slot = slots_[s];
    if (slot.fixed) {
      if (!RefineOpenDims(s, proposal, source, rule)) return false;
      OnChanged(s);
      return true;
    }
    if (!slot.sharding) return Set(s, std::move(proposal), priority, source, rule);
    const Sharding& current = *slot.sharding;
    if (current == proposal) return false;
    std::optional<Sharding> merged = MergeShardings(current, proposal, SlotShape(s));
    if (merged && Tiles(*merged) > Tiles(current)) {
      return Set(s, std::move(*merged), std::min(priority, slot.priority), source, rule);
    }
    if (Tiles(proposal) <= Tiles(current) || !IsMoreSpecific(proposal, current)) return false;
    bool weak_current = Tiles(current) <= 1 || (priority <= slot.priority && !slot.kept);
    if (!weak_current) return false;
    return Set(s, std::move(proposal), priority, source, rule);
  }

  bool Set(int64_t s, Sharding sharding, int priority, int32_t source, const RuleName& rule) {
    Slot& slot = slots_[s];
    slot.sharding = std::move(sharding);
    slot.priority = std::max(priority, 0);
    slot.source = source;
    slot.rule = rule;
    OnChanged(s);
    return true;
  }

  // A slot changed: its links are offered the new sharding, and the rules next to it run again.
  void OnChanged(int64_t s) {
    int32_t n = slot_node_[s];
    Node& node = nodes_[n];
    node.composed_valid = false;
    link_stack_.push_back(s);
    for (int32_t k = node.users_begin; k < node.users_end; ++k) {
      int32_t u = user_nodes_[k];
      if (u >= 0 && nodes_[u].rule_op) PushForward(u);
    }
    if (node.rule_op) {
      for (int32_t k = node.operands_begin; k < node.operands_end; ++k) {
        int32_t o = operand_nodes_[k];
        if (o < 0) continue;
        PushBackward(o);
        if (nodes_[o].rule_op) PushForward(o);  // rules may look ahead at their users
      }
    }
  }

  void PropagateLinks() {
    while (!link_stack_.empty()) {
      int64_t s = link_stack_.back();
      link_stack_.pop_back();
      if (!slots_[s].sharding) continue;
      for (const auto& [t, kind] : links_[s]) {
        const Slot& from = slots_[s];
        Improve(t, *from.sharding, std::max(from.priority, 0), from.source, RuleName{LinkRuleName(kind)});
      }
    }
  }

  // ---------------- Rules ----------------

  const Sharding* ShardingOf(int32_t n) {
    Node& node = nodes_[n];
    if (!node.is_tuple) {
      const Slot& slot = slots_[node.first_slot];
      return slot.sharding ? &*slot.sharding : nullptr;
    }
    if (!node.composed_valid) {
      node.composed_valid = true;
      node.composed.reset();
      std::vector<const Sharding*> leaves;
      for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf) {
        const Slot& slot = slots_[node.first_slot + leaf];
        if (!slot.sharding && SlotShape(node.first_slot + leaf).IsArray()) return nullptr;
        leaves.push_back(slot.sharding ? &*slot.sharding : &replicated_);
      }
      size_t next = 0;
      node.composed = NestLeaves(node.instruction->shape(), leaves, &next);
    }
    return node.composed ? &*node.composed : nullptr;
  }

  // The current shardings of node `n`'s operands, in `shardings` (reused between calls).
  void OperandShardings(int32_t n, std::vector<const Sharding*>& shardings) {
    const Node& node = nodes_[n];
    shardings.clear();
    for (int32_t k = node.operands_begin; k < node.operands_end; ++k) {
      int32_t o = operand_nodes_[k];
      shardings.push_back(o < 0 ? nullptr : ShardingOf(o));
    }
  }

  bool AllFixed(const Node& node) const {
    for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf) {
      const Slot& slot = slots_[node.first_slot + leaf];
      if (!slot.fixed || !slot.open_dims.empty()) return false;
    }
    return true;
  }

  // Offers a rule's proposal for every leaf of node `n`.
  void Apply(int32_t n, const Sharding& proposal, int priority, int32_t source, const RuleName& rule) {
    const Node& node = nodes_[n];
    if (!node.is_tuple) {
      Improve(node.first_slot, proposal, priority, source, rule);
    } else {
      std::vector<Sharding> leaves;
      FlattenSharding(proposal, node.instruction->shape(), leaves);
      if (static_cast<int64_t>(leaves.size()) != node.leaf_count) return;
      for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf) Improve(node.first_slot + leaf, leaves[leaf], priority, source, rule);
    }
    PropagateLinks();
  }

  int32_t SourceOf(int32_t n) const {
    const Node& node = nodes_[n];
    for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf) {
      int32_t source = slots_[node.first_slot + leaf].source;
      if (source >= 0) return source;
    }
    return -1;
  }

  void Forward(int32_t n, int level) {
    Node& node = nodes_[n];
    const Instruction& instruction = *node.instruction;
    if (!node.rule_op || AllFixed(node)) return;
    int priority = node.forward_priority;
    if (priority > level) return;
    std::vector<const Sharding*>& operands = forward_operands_;
    OperandShardings(n, operands);
    int32_t source = -1;
    int64_t best_tiles = -1;
    for (int64_t i = 0; i < instruction.operand_count(); ++i) {
      if (operands[i] == nullptr) continue;
      int32_t o = operand_nodes_[node.operands_begin + i];
      int64_t tiles = Tiles(*operands[i]);
      if (tiles > best_tiles) {
        best_tiles = tiles;
        source = SourceOf(o);
      }
    }
    if (best_tiles < 0 && instruction.operand_count() > 0) return;
    std::optional<Proposal> proposal = InferResultSharding(instruction, operands, lookup_);
    if (!proposal) return;
    Apply(n, proposal->sharding, priority, source, proposal->rule);
  }

  void Backward(int32_t n, int level) {
    Node& node = nodes_[n];
    if (AllFixed(node)) return;
    const int32_t users_begin = node.users_begin, users_end = node.users_end;
    for (int32_t k = users_begin; k < users_end; ++k) {
      const int32_t u = user_nodes_[k];
      if (u < 0 || !nodes_[u].rule_op) continue;
      if (std::find(user_nodes_.begin() + users_begin, user_nodes_.begin() + k, u) != user_nodes_.begin() + k) continue;  // seen
      int priority = nodes_[u].backward_priority;
      if (priority > level) continue;
      const Instruction* user = nodes_[u].instruction;
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (operand_nodes_[nodes_[u].operands_begin + i] != n) continue;
        const Sharding* user_sharding = ShardingOf(u);
        if (user_sharding == nullptr) break;
        std::vector<const Sharding*>& operands = backward_operands_;
        OperandShardings(u, operands);
        std::optional<Proposal> proposal = InferOperandSharding(*user, i, *user_sharding, operands, lookup_);
        if (!proposal) continue;
        Sharding sharding = proposal->sharding;  // user_sharding may move when n changes
        Apply(n, sharding, priority, SourceOf(u), proposal->rule);
      }
    }
  }

  // ---------------- Worklists ----------------

  void PushForward(int32_t n) {
    if (in_forward_[n]) return;
    in_forward_[n] = true;
    forward_.push(n);
  }
  void PushBackward(int32_t n) {
    if (in_backward_[n]) return;
    in_backward_[n] = true;
    backward_.push(n);
  }

  // Runs the rules of priority <= level to a fixed point: forward sweeps in program order,
  // backward sweeps in reverse, each visiting only nodes next to a change.
  void RunLevel(int level) {
    forward_ = {};
    backward_ = {};
    in_forward_.assign(nodes_.size(), false);
    in_backward_.assign(nodes_.size(), false);
    // Rules of lower priorities are at their fixed point already: start from the rules this
    // level enables (every rule at level 0); changes bring in their neighbours.
    for (int32_t n = 0; n < static_cast<int32_t>(nodes_.size()); ++n) {
      const Node& node = nodes_[n];
      if (!node.rule_op) {
        if (level == 0) PushBackward(n);
        continue;
      }
      if (level == 0 || node.forward_priority == level) PushForward(n);
      if (level != 0 && node.backward_priority != level) continue;
      for (int32_t k = node.operands_begin; k < node.operands_end; ++k) {
        if (operand_nodes_[k] >= 0) PushBackward(operand_nodes_[k]);
      }
    }
    while (!forward_.empty() || !backward_.empty()) {
      while (!forward_.empty()) {
        int32_t n = forward_.top();
        forward_.pop();
        in_forward_[n] = false;
        Forward(n, level);
      }
      while (!backward_.empty()) {
        int32_t n = backward_.top();
        backward_.pop();
        in_backward_[n] = false;
        Backward(n, level);
      }
    }
  }

  // ---------------- Finishing ----------------

  void FillDefaults() {
    for (int64_t s = 0; s < static_cast<int64_t>(slots_.size()); ++s) {
      Slot& slot = slots_[s];
      if (slot.sharding) continue;
      const Node& node = nodes_[slot_node_[s]];
      const Shape& shape = SlotShape(s);
      if (node.manual != nullptr && shape.IsArray()) {
        slot.sharding = node.manual->Template(shape.rank());
        slot.rule = Intern("manual region of %" + node.manual->source);
      } else {
        slot.sharding = Sharding::Replicated();
        slot.rule = RuleName{"default (replicated)"};
      }
    }
  }

  // shard_as members end with one sharding: the most specific one a member has (a user's
  // annotation first).
  void MakeGroupsConsistent() {
    for (const ShardGroupMembers& group : annotations_.groups) {
      if (!group.same_sharding) continue;
      std::vector<int32_t> members;
      for (const Instruction* member : group.members) {
        int32_t n = NodeOf(member);
        if (n < 0) continue;
        if (!members.empty() && nodes_[n].leaf_count != nodes_[members[0]].leaf_count) continue;
        members.push_back(n);
      }
      if (members.empty()) continue;
      for (int64_t leaf = 0; leaf < nodes_[members[0]].leaf_count; ++leaf) {
        int64_t best = -1;
        for (int32_t n : members) {
          int64_t s = nodes_[n].first_slot + leaf;
          if (best < 0) {
            best = s;
            continue;
          }
          const Slot& b = slots_[best];
          const Slot& c = slots_[s];
          bool better = c.fixed != b.fixed ? c.fixed : Tiles(*c.sharding) > Tiles(*b.sharding);
          if (better) best = s;
        }
        for (int32_t n : members) {
          Slot& slot = slots_[nodes_[n].first_slot + leaf];
          if (slot.fixed || &slot == &slots_[best]) continue;
          slot.sharding = slots_[best].sharding;
          slot.source = slots_[best].source;
          slot.rule = RuleName{LinkRuleName(LinkKind::kShardGroup)};
        }
      }
    }
  }

  // A while's body parameter, body root and condition parameter take the loop's sharding, so
  // the loop carries its value without resharding.
  void MakeLoopsConsistent() {
    for (const auto& [loop, tied] : loop_ties_) {
      Slot& target = slots_[tied];
      if (target.fixed || *target.sharding == *slots_[loop].sharding) continue;
      target.sharding = slots_[loop].sharding;
      target.source = slots_[loop].source;
      target.rule = RuleName{LinkRuleName(LinkKind::kWhileValue)};
    }
  }

  ShardingOrigin OriginOf(const Node& node) const {
    ShardingOrigin origin;
    const Slot* chosen = &slots_[node.first_slot];
    for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf) {
      const Slot& slot = slots_[node.first_slot + leaf];
      if (slot.source >= 0 && chosen->source < 0) chosen = &slot;
    }
    if (node.leaf_count == 0) return origin;
    origin.user = chosen->user;
    origin.rule = chosen->rule.ToString();
    if (chosen->source >= 0) origin.source = nodes_[chosen->source].instruction->name();
    return origin;
  }

  PropagationResult WriteBack() {
    PropagationResult result;
    result.num_partitions = num_devices_;
    for (const Node& node : nodes_) {
      Instruction* instruction = node.instruction;
      if (record_origins_) result.origins[instruction->parent()->name() + "/" + instruction->name()] = OriginOf(node);
      auto fixed = annotations_.fixed.find(instruction);
      bool refined = false;
      for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf) refined |= slots_[node.first_slot + leaf].refined;
      if (fixed != annotations_.fixed.end() && fixed->second.written && !refined) continue;  // kept as written
      std::vector<const Sharding*> leaves;
      for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf) leaves.push_back(&*slots_[node.first_slot + leaf].sharding);
      size_t next = 0;
      Sharding sharding = NestLeaves(instruction->shape(), leaves, &next);
      if (refined && instruction->sharding()) sharding.set_shard_group(instruction->sharding()->shard_group());
      instruction->set_sharding(Compact(sharding));
    }
    // Computations propagation does not flow through (reducers, comparators, ...).
    for (const auto& computation : module_.computations()) {
      for (const auto& instruction : computation->instructions()) {
        if (NodeOf(instruction.get()) >= 0) continue;
        ShardingOrigin origin;
        if (instruction->sharding() && !instruction->sharding()->IsUnknown()) {
          origin.user = true;
          origin.source = instruction->name();
          origin.rule = "user annotation";
        } else {
          instruction->set_sharding(ReplicatedFor(instruction->shape()));
          origin.rule = "default (replicated)";
        }
        if (record_origins_) result.origins[computation->name() + "/" + instruction->name()] = std::move(origin);
      }
    }
    return result;
  }

  Module& module_;
  int64_t num_devices_;
  bool record_origins_;
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

int64_t ChooseDeviceCount(const Module& module, const PropagationOptions& options) {
  if (options.num_partitions > 0) return options.num_partitions;
  int64_t count = RequiredDeviceCount(module);
  if (!module.Attribute("num_partitions").empty()) count = std::max(count, module.num_partitions());
  return std::max<int64_t>(count, 1);
}

}  // namespace
}  // namespace propagation

PropagationResult PropagateShardings(Module& module, const PropagationOptions& options) {
  if (module.entry() == nullptr) GSPMD_USER_ERROR("module ", module.name(), " has no ENTRY computation");
  int64_t num_devices = propagation::ChooseDeviceCount(module, options);
  module.set_num_partitions(num_devices);
  return propagation::Driver(module, num_devices, options.record_origins).Run();
}

}  // namespace gspmd
