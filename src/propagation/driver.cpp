// The propagation driver's fixed point: the graph of leaf slots and links, seeding from the
// user's annotations, offering proposals to slots, and the rule worklists per priority level.
#include "propagation/driver.h"

#include <algorithm>
#include <string_view>

#include "ir/known_custom_calls.h"
#include "ir/sdy_custom_calls.h"
#include "propagation/manual_conversion.h"
#include "propagation/sharding_algebra.h"

namespace gspmd::propagation::driver {

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

PropagationResult Driver::Run() {
  annotations_ = ReadAnnotations(module_, num_devices_);
  boundary_ = ResolveBoundaryPolicies(module_, options_.propagate_to_parameters, options_.propagate_to_outputs);
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
  // shard_as members end with one sharding; a ShardBarrierFrom member hands it to its
  // operand, and what that changes propagates once more.
  if (AlignShardAsGroups()) Drain(kMaxPriorityLevel);
  while (CompletePartlyShardedTuples()) Drain(kMaxPriorityLevel);
  FillDefaults();
  ReplicateWhatUsersNeedWhole();
  GatherLoopInvariantsOnce();
  LayLoopInvariantsOutAsTheirReaders();
  MakeGroupsConsistent();
  MakeLoopsConsistent();
  ReplicateUnevenBoundaries();
  PropagationResult result = WriteBack();
  RemoveShardBarriers();
  return result;
}

void Driver::BuildNodes() {
  std::vector<Instruction*> order = FlowOrder(module_);
  nodes_.reserve(order.size());
  int64_t slot_count = 0;
  for (Instruction* instruction : order) {
    Node node;
    node.instruction = instruction;
    node.first_slot = slot_count;
    node.leaf_count = LeafCount(instruction->shape());
    node.rule_op = !IsDriverHandled(*instruction);
    node.whole = ComputedWhole(*instruction);
    node.barrier_to = IsShardBarrierTo(*instruction);
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

int32_t Driver::NodeOf(const Instruction* instruction) const {
  return node_of_.Find(instruction);
}

int64_t Driver::SlotOf(const Instruction* instruction, int64_t leaf) const {
  int32_t node = NodeOf(instruction);
  if (node < 0 || leaf >= nodes_[node].leaf_count) return -1;
  return nodes_[node].first_slot + leaf;
}

const Shape& Driver::SlotShape(int64_t slot) const {
  const Node& node = nodes_[slot_node_[slot]];
  return LeafShape(node.instruction->shape(), slot - node.first_slot);
}

void Driver::AddLink(int64_t a, int64_t b, LinkKind kind, bool a_to_b, bool b_to_a) {
  if (a < 0 || b < 0 || a == b) return;
  if (a_to_b) links_[a].push_back({b, kind});
  if (b_to_a) links_[b].push_back({a, kind});
}

void Driver::BuildLinks() {
  std::vector<LeafLink> links;
  for (const Node& node : nodes_) AppendLinks(*node.instruction, links);
  for (const LeafLink& link : links) {
    int64_t a = SlotOf(link.a, link.a_leaf), b = SlotOf(link.b, link.b_leaf);
    AddLink(a, b, link.kind, link.a_to_b, link.b_to_a);
    if (link.kind == LinkKind::kWhileValue) loop_ties_.push_back({a, b});
  }
  for (const ShardGroupMembers& group : annotations_.groups) {
    std::vector<int32_t> members;
    for (const Instruction* member : group.members) {
      int32_t n = NodeOf(member);
      if (n < 0 || (!members.empty() && nodes_[n].leaf_count != nodes_[members[0]].leaf_count)) continue;
      if (std::find(members.begin(), members.end(), n) == members.end()) members.push_back(n);
    }
    if (members.size() < 2) continue;
    // shard_like members only exchange proposals between sweeps (ExchangeShardLike).
    if (!group.same_sharding) {
      like_groups_.push_back(std::move(members));
      continue;
    }
    for (size_t i = 0; i < members.size(); ++i) {
      for (size_t j = i + 1; j < members.size(); ++j) {
        const Node& a = nodes_[members[i]];
        const Node& b = nodes_[members[j]];
        for (int64_t leaf = 0; leaf < a.leaf_count; ++leaf) {
          AddLink(a.first_slot + leaf, b.first_slot + leaf, LinkKind::kShardGroup, GroupMayOffer(a, b),
                  GroupMayOffer(b, a));
        }
      }
    }
  }
}

bool Driver::GroupMayOffer(const Node& from, const Node& to) {
  return !IsShardBarrierFrom(*from.instruction) && !to.barrier_to;
}

BoundaryPolicy Driver::PolicyOf(const Node& node, int64_t leaf) const {
  const Instruction& instruction = *node.instruction;
  const Computation* entry = module_.entry();
  BoundaryPolicy policy = BoundaryPolicy::kUnannotated;
  if (instruction.parent() == entry && instruction.opcode() == Opcode::kParameter &&
      instruction.parameter_number < static_cast<int64_t>(boundary_.parameters.size())) {
    const auto& leaves = boundary_.parameters[instruction.parameter_number];
    if (leaf < static_cast<int64_t>(leaves.size())) policy = leaves[leaf];
  }
  if (&instruction == entry->root() && leaf < static_cast<int64_t>(boundary_.root.size()) &&
      policy != BoundaryPolicy::kForbid) {
    policy = boundary_.root[leaf];
    // A Shardy result annotation is an xla.sdy.FuncResultSharding call feeding the root tuple
    // (the tuple itself carries none): that leaf is annotated, and =false keeps the annotation
    // rather than closing the leaf as replicated.
    if (policy == BoundaryPolicy::kForbid && instruction.opcode() == Opcode::kTuple) {
      int64_t first = 0;
      for (const Instruction* element : instruction.operands()) {
        const int64_t count = LeafCount(element->shape());
        if (leaf < first + count) {
          if (element->opcode() == Opcode::kCustomCall &&
              SdyTargetName(element->custom_call_target) == "FuncResultSharding")
            policy = BoundaryPolicy::kUnannotated;
          break;
        }
        first += count;
      }
    }
  }
  return policy;
}

bool Driver::IsBoundary(const Node& node) const {
  const Instruction& instruction = *node.instruction;
  return instruction.parent() == module_.entry() &&
         (instruction.opcode() == Opcode::kParameter || &instruction == module_.entry()->root());
}

void Driver::SeedAnnotations(int64_t round) {
  for (size_t n = 0; n < nodes_.size(); ++n) {
    Node& node = nodes_[n];
    const bool boundary = IsBoundary(node);
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
        const BoundaryPolicy policy = boundary ? PolicyOf(node, leaf) : BoundaryPolicy::kUnannotated;
        if (policy == BoundaryPolicy::kForbid && from != nullptr) {
          slot.closed = true;  // a constraint on a closed parameter applies after it
          continue;
        }
        slot.sharding = leaves[leaf];
        slot.fixed = policy != BoundaryPolicy::kAllow;
        slot.even_only = policy == BoundaryPolicy::kAllow;
        slot.user = from == nullptr;
        slot.priority = kUserPriority;
        slot.source = from == nullptr ? static_cast<int32_t>(n) : NodeOf(from);
        slot.rule = RuleName{from == nullptr ? "user annotation" : "sharding constraint"};
        if (node.leaf_count == 1 && slot.fixed) slot.open_dims = annotation.open_dims;
      }
      continue;
    }
    if (boundary) {
      for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf) {
        Slot& slot = slots_[node.first_slot + leaf];
        const BoundaryPolicy policy = PolicyOf(node, leaf);
        slot.closed = policy == BoundaryPolicy::kForbid;
        slot.even_only = policy == BoundaryPolicy::kAllow;
      }
    }
    if (node.manual != nullptr && node.manual->fully_manual) {
      for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf) Fix(node.first_slot + leaf, Sharding::Manual(),
                                                                Intern("manual region of %" + node.manual->source));
      continue;
    }
    if (!node.whole) continue;
    node.rule_op = false;
    for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf) {
      const Shape& shape = SlotShape(node.first_slot + leaf);
      if (!shape.IsArray()) continue;
      Sharding whole = node.manual != nullptr ? node.manual->Template(shape.rank()) : Sharding::Replicated();
      Fix(node.first_slot + leaf, std::move(whole), RuleName{"computed whole"});
    }
  }
  // Seeds spread through links in flow order (the stack is last in, first out): where two user
  // annotations reach one linked value, the earlier one holds it, as XLA's forward pass lays
  // out a loop's carry from its init before a constraint on the loop's result is seen.
  for (int64_t s = static_cast<int64_t>(slots_.size()) - 1; s >= 0; --s) {
    if (slots_[s].sharding) link_stack_.push_back(s);
  }
  PropagateLinks();
  for (int32_t n = 0; n < static_cast<int32_t>(nodes_.size()); ++n) MakeManualIfFedManual(n);
  for (const SeedProposal& seed : annotations_.seeds) {
    int64_t slot = SlotOf(seed.instruction, seed.leaf);
    if (slot < 0) continue;
    int32_t source = NodeOf(seed.from);
    if (Improve(slot, seed.sharding, 0, source, RuleName{seed.rule.c_str()})) PropagateLinks();
  }
}

void Driver::StartRound(int64_t round) {
  for (Slot& slot : slots_) slot.kept = slot.kept || (slot.sharding && !slot.fixed);
  for (Node& node : nodes_) {
    auto fixed = annotations_.fixed.find(node.instruction);
    if (fixed == annotations_.fixed.end() || fixed->second.dim_priorities.empty() || node.leaf_count != 1) continue;
    Slot& slot = slots_[node.first_slot];
    if (slot.closed || !slot.sharding) continue;
    const UserAnnotation annotation = fixed->second.ForRound(round);
    if (!slot.fixed) {
      // A boundary annotation propagation may refine (--propagate-to-*=true) is a proposal.
      Improve(node.first_slot, annotation.sharding, kUserPriority, slot.source, slot.rule);
      continue;
    }
    slot.open_dims = annotation.open_dims;
    if (*slot.sharding == annotation.sharding) continue;
    slot.sharding = annotation.sharding;
    OnChanged(node.first_slot);
  }
  PropagateLinks();
}

void Driver::MakeManualIfFedManual(int32_t n) {
  Node& node = nodes_[n];
  if (!node.whole || node.manual != nullptr || node.leaf_count == 0) return;
  if (slots_[node.first_slot].sharding && slots_[node.first_slot].sharding->IsManual()) return;
  const Instruction* fed_by = nullptr;
  for (int32_t k = node.operands_begin; k < node.operands_end && fed_by == nullptr; ++k) {
    const int32_t o = operand_nodes_[k];
    if (o < 0) continue;
    const Sharding* operand = ShardingOf(o);
    if (operand != nullptr && IsAllManualSharding(*operand)) fed_by = nodes_[o].instruction;
  }
  if (fed_by == nullptr) return;
  for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf) {
    const int64_t slot = node.first_slot + leaf;
    if (!SlotShape(slot).IsArray()) continue;
    Fix(slot, Sharding::Manual(), Intern("manual operand %" + fed_by->name()));
    OnChanged(slot);
  }
  PropagateLinks();
}

bool Driver::IsAllManualSharding(const Sharding& sharding) {
  if (sharding.IsManual()) return true;
  if (!sharding.IsTuple() || sharding.tuple_elements().empty()) return false;
  for (const Sharding& element : sharding.tuple_elements())
    if (!IsAllManualSharding(element)) return false;
  return true;
}

RuleName Driver::Intern(std::string text) {
  auto [it, inserted] = interned_rules_.insert(std::move(text));
  return RuleName{it->c_str()};
}

void Driver::Fix(int64_t s, Sharding sharding, RuleName rule) {
  Slot& slot = slots_[s];
  slot.sharding = std::move(sharding);
  slot.unreached = false;
  slot.fixed = true;
  slot.priority = kUserPriority;
  slot.rule = rule;
}

bool Driver::RefineOpenDims(int64_t s, const Sharding& proposal, int32_t source, const RuleName& rule) {
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

bool Driver::Acceptable(int64_t s, const Sharding& proposal) const {
  const Shape& shape = SlotShape(s);
  if (!shape.IsArray() || proposal.IsTuple() || proposal.IsUnknown()) return false;
  if (proposal.IsTiled() && proposal.TiledDataRank() != shape.rank()) return false;
  const Node& node = nodes_[slot_node_[s]];
  // Inside a shard_map body only shardings manual over the body's axes fit.
  return node.manual == nullptr || node.manual->Accepts(proposal, shape.rank());
}

bool Driver::Improve(int64_t s, Sharding proposal, int priority, int32_t source, const RuleName& rule) {
  if (slots_[s].closed || !Acceptable(s, proposal)) return false;
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

bool Driver::Set(int64_t s, Sharding sharding, int priority, int32_t source, const RuleName& rule) {
  Slot& slot = slots_[s];
  slot.sharding = std::move(sharding);
  slot.unreached = false;
  slot.priority = std::max(priority, 0);
  slot.source = source;
  slot.rule = rule;
  OnChanged(s);
  return true;
}

void Driver::OnChanged(int64_t s) {
  int32_t n = slot_node_[s];
  Node& node = nodes_[n];
  node.composed_valid = false;
  link_stack_.push_back(s);
  const bool manual = slots_[s].sharding && slots_[s].sharding->IsManual();
  for (int32_t k = node.users_begin; k < node.users_end; ++k) {
    int32_t u = user_nodes_[k];
    if (u >= 0 && nodes_[u].rule_op) {
      PushForward(u);
      // A sharded user's rule for its other operands may read this one (a scatter's indices
      // follow its updates, a dot's operand the other operand): they are asked again.
      if (ShardingOf(u) != nullptr) {
        for (int32_t j = nodes_[u].operands_begin; j < nodes_[u].operands_end; ++j)
          if (operand_nodes_[j] >= 0 && operand_nodes_[j] != n) PushBackward(operand_nodes_[j]);
      }
    }
    if (u >= 0 && manual && nodes_[u].whole) pending_manual_.push_back(u);
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

void Driver::PropagateLinks() {
  while (!link_stack_.empty() || !pending_manual_.empty()) {
    if (link_stack_.empty()) {
      int32_t n = pending_manual_.back();
      pending_manual_.pop_back();
      MakeManualIfFedManual(n);
      continue;
    }
    int64_t s = link_stack_.back();
    link_stack_.pop_back();
    if (!slots_[s].sharding) continue;
    for (const auto& [t, kind] : links_[s]) {
      const Slot& from = slots_[s];
      if (kind == LinkKind::kManualConversion) {
        OfferAcrossManualBoundary(s, t);
        continue;
      }
      if (nodes_[slot_node_[t]].barrier_to && kind != LinkKind::kBarrier) {
        // A user reaching a ShardBarrierTo through a link (tuple, loop, ...) is blocked too.
        Improve(t, Sharding::Replicated(), std::max(from.priority, 0), -1, RuleName{kBarrierToRule});
        continue;
      }
      // The operand of a ShardBarrierTo replicated in its users' place says so.
      const bool barrier_replicated =
          kind == LinkKind::kBarrier && std::string_view(from.rule.base) == kBarrierToRule;
      Improve(t, *from.sharding, std::max(from.priority, 0), from.source,
              barrier_replicated ? from.rule : RuleName{LinkRuleName(kind)});
    }
  }
}

void Driver::OfferAcrossManualBoundary(int64_t s, int64_t t) {
  const Slot& from = slots_[s];
  const Slot& to = slots_[t];
  if (!to.sharding || to.open_dims.empty()) return;
  std::optional<Sharding> proposal =
      RefineAcrossManualBoundary(*from.sharding, *to.sharding, to.open_dims, SlotShape(t).rank(), num_devices_);
  if (!proposal) return;
  Improve(t, std::move(*proposal), std::max(from.priority, 0), from.source, RuleName{LinkRuleName(LinkKind::kManualConversion)});
}

const Sharding* Driver::ShardingOf(int32_t n) {
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

void Driver::OperandShardings(int32_t n, std::vector<const Sharding*>& shardings) {
  const Node& node = nodes_[n];
  shardings.clear();
  for (int32_t k = node.operands_begin; k < node.operands_end; ++k) {
    int32_t o = operand_nodes_[k];
    shardings.push_back(o < 0 ? nullptr : ShardingOf(o));
  }
}

bool Driver::AllFixed(const Node& node) const {
  for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf) {
    const Slot& slot = slots_[node.first_slot + leaf];
    if (!slot.fixed || !slot.open_dims.empty()) return false;
  }
  return true;
}

void Driver::Apply(int32_t n, const Sharding& proposal, int priority, int32_t source, const RuleName& rule) {
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

int32_t Driver::SourceOf(int32_t n) const {
  const Node& node = nodes_[n];
  for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf) {
    int32_t source = slots_[node.first_slot + leaf].source;
    if (source >= 0) return source;
  }
  return -1;
}

void Driver::Forward(int32_t n, int level) {
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

void Driver::Backward(int32_t n, int level) {
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
      if (node.barrier_to) {
        // A ShardBarrierTo blocks what its users propose: XLA replicates it instead.
        Apply(n, ReplicatedFor(node.instruction->shape()), priority, -1, RuleName{kBarrierToRule});
        continue;
      }
      Sharding sharding = proposal->sharding;  // user_sharding may move when n changes
      Apply(n, sharding, priority, SourceOf(u), proposal->rule);
    }
  }
}

void Driver::PushForward(int32_t n) {
  if (in_forward_[n]) return;
  in_forward_[n] = true;
  forward_.push(n);
}

void Driver::PushBackward(int32_t n) {
  if (in_backward_[n]) return;
  in_backward_[n] = true;
  backward_.push(n);
}

void Driver::RunLevel(int level) {
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
  Drain(level);
}

void Driver::Drain(int level) {
  do {
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
  } while (ExchangeShardLike(level));
}

bool Driver::ExchangeShardLike(int level) {
  bool changed = false;
  for (const std::vector<int32_t>& members : like_groups_) {
    for (int32_t from : members) {
      for (int32_t to : members) {
        if (from == to || !GroupMayOffer(nodes_[from], nodes_[to])) continue;
        for (int64_t leaf = 0; leaf < nodes_[from].leaf_count; ++leaf) {
          const Slot& slot = slots_[nodes_[from].first_slot + leaf];
          if (!slot.sharding) continue;
          Sharding offer = *slot.sharding;
          changed |= Improve(nodes_[to].first_slot + leaf, std::move(offer), std::max(level, slot.priority),
                             slot.source, RuleName{"shard_like"});
        }
      }
    }
  }
  if (changed) PropagateLinks();
  return changed;
}

}  // namespace gspmd::propagation::driver
