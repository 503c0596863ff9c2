// What the propagation driver does after its fixed point: defaults for unreached values,
// shard groups and loops made consistent, boundary values, shard barriers removed, and the
// shardings (with where they came from) written back to the module.
#include "propagation/driver.h"

#include <algorithm>

#include "analysis/trip_count.h"
#include "ir/known_custom_calls.h"
#include "propagation/sharding_algebra.h"

namespace gspmd::propagation::driver {

bool Driver::CompletePartlyShardedTuples() {
  bool changed = false;
  for (const Node& node : nodes_) {
    if (!node.is_tuple) continue;
    bool any = false;
    for (int64_t leaf = 0; leaf < node.leaf_count && !any; ++leaf) any = slots_[node.first_slot + leaf].sharding.has_value();
    if (!any) continue;
    for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf) {
      const int64_t s = node.first_slot + leaf;
      if (slots_[s].sharding || !SlotShape(s).IsArray()) continue;
      const Sharding whole = node.manual != nullptr ? node.manual->Template(SlotShape(s).rank()) : Sharding::Replicated();
      changed |= Improve(s, whole, kMaxPriorityLevel, -1, RuleName{kTupleElementRule});
    }
  }
  if (changed) PropagateLinks();
  return changed;
}

void Driver::FillDefaults() {
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
      slot.rule = RuleName{kUnreachedRule};
      slot.unreached = true;
    }
  }
}

namespace {

// Computed on each device from its operands alone: elementwise with every operand of the
// result's shape, or an op that moves, selects or reduces data within one value. Replicated
// operands make it replicated without communication, and a sharded user can slice it.
bool LocalFromOperands(const Instruction& instruction) {
  if (!instruction.shape().IsArray()) return false;
  for (const Instruction* operand : instruction.operands())
    if (!operand->shape().IsArray()) return false;
  switch (instruction.opcode()) {
    case Opcode::kReshape:
    case Opcode::kTranspose:
    case Opcode::kBroadcast:
    case Opcode::kSlice:
    case Opcode::kReverse:
    case Opcode::kPad:
    case Opcode::kConcatenate:
    case Opcode::kReduce:
    case Opcode::kIota:
      return true;
    default:
      break;
  }
  if (!IsElementwiseLike(instruction) || instruction.operand_count() == 0) return false;
  for (const Instruction* operand : instruction.operands())
    if (operand->shape().dims() != instruction.shape().dims()) return false;
  return true;
}

// Whether a reduce-window laid out as `slot` has windows that reach across the pieces of a
// split dim (a window of more than one element, or padding, along it).
bool WindowsCrossSplitDims(const Instruction& reduce_window, const Slot& slot) {
  if (!slot.sharding || !slot.sharding->IsTiled() || slot.sharding->IsManual()) return false;
  const Window& dims = reduce_window.window();
  for (size_t d = 0; d < dims.size(); ++d) {
    if (slot.sharding->tile_assignment().dim(static_cast<int64_t>(d)) == 1) continue;
    if (dims[d].size > 1 || dims[d].padding_low != 0 || dims[d].padding_high != 0) return true;
  }
  return false;
}

// The whole value on every device: replicated, or written as a split over no axis (Shardy's
// [{}, {}]).
bool Whole(const Sharding& sharding) {
  return sharding.IsReplicated() || (sharding.IsTiled() && NumDataTiles(sharding) == 1 && !sharding.HasUnreduced());
}

}  // namespace

void Driver::ReplicateWhatUsersNeedWhole() {
  const Computation* entry = module_.entry();
  if (entry == nullptr) return;
  std::vector<int32_t> grouped(nodes_.size(), 0);
  for (const std::vector<int32_t>& members : like_groups_)
    for (int32_t n : members) grouped[n] = 1;
  for (const ShardGroupMembers& group : annotations_.groups)
    for (const Instruction* member : group.members)
      if (int32_t n = NodeOf(member); n >= 0) grouped[n] = 1;
  auto replicated = [&](int32_t n) {
    const Node& node = nodes_[n];
    if (node.is_tuple) return false;
    const Slot& slot = slots_[node.first_slot];
    return slot.sharding.has_value() && Whole(*slot.sharding);
  };
  // Candidates: local values of the entry computation propagation chose a split for.
  std::vector<int32_t> candidate(nodes_.size(), 0);
  for (int32_t n = 0; n < static_cast<int32_t>(nodes_.size()); ++n) {
    const Node& node = nodes_[n];
    if (node.is_tuple || node.manual != nullptr || grouped[n] || node.instruction->parent() != entry ||
        !LocalFromOperands(*node.instruction))
      continue;
    const Slot& slot = slots_[node.first_slot];
    if (slot.fixed || slot.user || slot.kept || slot.closed || !slot.sharding || Whole(*slot.sharding) ||
        slot.sharding->IsManual() || slot.sharding->IsTuple())
      continue;
    candidate[n] = 1;
  }
  // Bytes each device receives to gather node n's value whole from its split (ring model).
  auto gather_bytes = [&](int32_t n) {
    const Sharding& sharding = *slots_[nodes_[n].first_slot].sharding;
    const double tiles = static_cast<double>(std::max<int64_t>(1, NumDataTiles(sharding)));
    return static_cast<double>(nodes_[n].instruction->shape().byte_size()) * (1.0 - 1.0 / tiles);
  };
  auto gatherable = [&](int32_t n) {
    const Node& node = nodes_[n];
    if (node.is_tuple || node.manual != nullptr || !node.instruction->shape().IsArray()) return false;
    const Slot& slot = slots_[node.first_slot];
    return slot.sharding.has_value() && slot.sharding->IsTiled() && !slot.sharding->HasUnreduced();
  };
  // Whole from replicated values: every operand is replicated, such a candidate, or split and
  // gathered, where what the gathers move (`whole_cost`, summed down the chain) is no more than
  // gathering the candidate itself: a concatenate or broadcast of a split value that a
  // replicated result returns gathers its (smaller) operand, not its result (nodes_ is in flow
  // order, operands first).
  std::vector<int32_t> supplied(nodes_.size(), 0);
  std::vector<double> whole_cost(nodes_.size(), 0.0);
  for (int32_t n = 0; n < static_cast<int32_t>(nodes_.size()); ++n) {
    if (!candidate[n]) continue;
    bool all = true;
    double cost = 0;
    for (int32_t k = nodes_[n].operands_begin; k < nodes_[n].operands_end && all; ++k) {
      const int32_t o = operand_nodes_[k];
      if (o < 0 || (!replicated(o) && !supplied[o] && !gatherable(o))) {
        all = false;
      } else if (!replicated(o)) {  // a replicated operand is sliced for free
        cost += supplied[o] ? whole_cost[o] : gather_bytes(o);
      }
    }
    supplied[n] = all && cost <= gather_bytes(n);
    whole_cost[n] = cost;
  }
  // An element-wise user whose array operands all share n's split, and whose result is smaller
  // than they are, runs split and moves its result instead (the partitioner's choice for a
  // compare, a narrowing convert or a select): it does not need n whole.
  auto moves_its_result = [&](int32_t n, const Instruction& user) {
    const Opcode opcode = user.opcode();
    const bool elementwise = IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode) || opcode == Opcode::kCompare ||
                             opcode == Opcode::kConvert || opcode == Opcode::kSelect || opcode == Opcode::kClamp;
    if (!elementwise || !user.shape().IsArray()) return false;
    const Sharding& split = *slots_[nodes_[n].first_slot].sharding;
    std::vector<const Instruction*> counted;
    int64_t operand_bytes = 0;
    for (const Instruction* operand : user.operands()) {
      if (!operand->shape().IsArray()) return false;
      if ((operand->shape().rank() == 0 && user.shape().rank() > 0) ||
          std::find(counted.begin(), counted.end(), operand) != counted.end())
        continue;
      counted.push_back(operand);
      const int64_t slot = SlotOf(operand, 0);
      if (slot < 0 || !slots_[slot].sharding || !(*slots_[slot].sharding == split)) return false;
      operand_bytes += operand->shape().byte_size();
    }
    return user.shape().byte_size() < operand_bytes;
  };
  // Needed whole: by the entry's result where it is replicated, or by a local user that is
  // replicated or becomes so (users come later in flow order).
  const Instruction* root = entry->root();
  std::vector<int32_t> whole(nodes_.size(), 0);
  for (int32_t n = static_cast<int32_t>(nodes_.size()) - 1; n >= 0; --n) {
    if (!supplied[n]) continue;
    const Instruction* value = nodes_[n].instruction;
    bool needed = false;
    for (int32_t k = nodes_[n].users_begin; k < nodes_[n].users_end && !needed; ++k) {
      const int32_t u = user_nodes_[k];
      if (u < 0) continue;
      const Instruction* user = nodes_[u].instruction;
      if (user == root && user->opcode() == Opcode::kTuple) {
        for (int64_t i = 0; i < user->operand_count() && !needed; ++i) {
          const Slot& leaf = slots_[nodes_[u].first_slot + i];
          needed = user->operand(i) == value && nodes_[u].leaf_count == user->operand_count() &&
                   leaf.sharding.has_value() && Whole(*leaf.sharding);
        }
      } else if (user->opcode() == Opcode::kCustomCall && (user->custom_call_target == "Sharding" ||
                                                            user->custom_call_target == "xla.sdy.FuncResultSharding")) {
        needed = replicated(u) && nodes_[u].manual == nullptr;  // a constraint or result that keeps it whole
      } else if (user->opcode() == Opcode::kReduceWindow && user->parent() == entry) {
        // A reduce-window split along a dim its windows cross moves halos or a scan's carries;
        // from operands available whole at no cost, each device computes it whole and slices
        // its piece, moving nothing (a cumsum of a reshaped replicated input, returned split).
        needed = whole_cost[n] == 0 && !nodes_[u].is_tuple && WindowsCrossSplitDims(*user, slots_[nodes_[u].first_slot]);
      } else if (LocalFromOperands(*user) && user->parent() == entry) {
        // A replicated slice or reduce reads a part of the value, or sums its split pieces:
        // it needs the value whole only where that moves nothing.
        const bool reads_part = user->opcode() == Opcode::kSlice || user->opcode() == Opcode::kReduce;
        needed = (replicated(u) && !nodes_[u].is_tuple && nodes_[u].manual == nullptr &&
                  (!reads_part || whole_cost[n] == 0) && !moves_its_result(n, *user)) ||
                 whole[u];
      }
    }
    whole[n] = needed;
  }
  const RuleName rule = Intern("replicated: computed whole from replicated values, which a user needs whole");
  const RuleName gathered = Intern(
      "replicated: computed whole from gathered operands, which move less than gathering it for a user that needs it "
      "whole");
  for (int32_t n = 0; n < static_cast<int32_t>(nodes_.size()); ++n) {
    if (!whole[n]) continue;
    Slot& slot = slots_[nodes_[n].first_slot];
    slot.sharding = Sharding::Replicated();
    slot.rule = whole_cost[n] > 0 ? gathered : rule;
    slot.source = -1;
    nodes_[n].composed_valid = false;
  }
}

namespace {

// The dims a dynamic-slice of `operand` reads at a run-time offset: sliced short, from a start
// that is not a constant.
std::vector<int64_t> RunTimeSlicedDims(const Instruction& slice) {
  std::vector<int64_t> dims;
  const Shape& shape = slice.operand(0)->shape();
  const std::vector<int64_t>& sizes = slice.dynamic_slice_sizes();
  if (static_cast<int64_t>(sizes.size()) != shape.rank() || slice.operand_count() != shape.rank() + 1) return dims;
  for (int64_t d = 0; d < shape.rank(); ++d)
    if (sizes[d] < shape.dim(d) && slice.operand(d + 1)->opcode() != Opcode::kConstant) dims.push_back(d);
  return dims;
}

}  // namespace

std::optional<Sharding> Driver::CommonReadLayout(const std::vector<const Instruction*>& reads, const Instruction* root,
                                                 const std::vector<int64_t>& sliced) const {
  std::optional<Sharding> common;
  for (const Instruction* read : reads) {
    for (const Instruction* reader : read->users()) {
      if (reader == root) continue;
      const int64_t slot = SlotOf(reader, 0);
      if (slot < 0 || !slots_[slot].sharding) return std::nullopt;
      const Sharding& layout = *slots_[slot].sharding;
      if (!layout.IsTiled() || layout.HasUnreduced() || layout.IsManual() || (common && !(layout == *common)))
        return std::nullopt;
      for (int64_t d : sliced)
        if (DimTiles(layout, d) != 1) return std::nullopt;
      common = layout;
    }
  }
  return common;
}

std::vector<Driver::LoopInvariant> Driver::FreeLoopInvariants() const {
  std::vector<LoopInvariant> found;
  for (const Node& node : nodes_) {
    const Instruction& loop = *node.instruction;
    if (loop.opcode() != Opcode::kWhile || !loop.shape().IsTuple() || node.manual != nullptr) continue;
    const Computation* body = loop.while_body();
    if (body == nullptr || body->num_parameters() != 1 || body->root() == nullptr ||
        body->root()->opcode() != Opcode::kTuple)
      continue;
    const Instruction* parameter = body->parameter(0);
    const Instruction* root = body->root();
    const std::vector<Shape>& elements = loop.shape().tuple_shapes();
    int64_t leaf = 0;
    for (int64_t k = 0; k < static_cast<int64_t>(elements.size()); leaf += LeafCount(elements[k]), ++k) {
      if (!elements[k].IsArray() || k >= root->operand_count()) continue;
      const Instruction* passed = root->operand(k);
      if (passed->opcode() != Opcode::kGetTupleElement || passed->operand(0) != parameter || passed->tuple_index != k)
        continue;
      const int64_t loop_slot = SlotOf(&loop, leaf);
      if (loop_slot < 0) continue;
      const Slot& carried = slots_[loop_slot];
      if (!carried.sharding || !carried.sharding->IsTiled() || carried.sharding->HasUnreduced() || carried.fixed ||
          carried.user || carried.kept)
        continue;
      LoopInvariant invariant{&loop, root, k, loop_slot, {}};
      bool free = true;
      for (const Instruction* user : parameter->users()) {
        free = user->opcode() == Opcode::kGetTupleElement;
        if (!free) break;
        if (user->tuple_index != k) continue;
        const int64_t slot = SlotOf(user, 0);
        free = slot >= 0 && !slots_[slot].fixed && !slots_[slot].user;
        for (int64_t i = 0; free && i < root->operand_count(); ++i) free = root->operand(i) != user || i == k;
        if (!free) break;
        invariant.reads.push_back(user);
      }
      if (free) found.push_back(std::move(invariant));
    }
  }
  return found;
}

void Driver::CarryLoopInvariantAs(const LoopInvariant& invariant, const Sharding& layout, RuleName rule) {
  slots_[invariant.slot].sharding = layout;
  slots_[invariant.slot].rule = rule;
  for (const Instruction* read : invariant.reads) {
    Slot& slot = slots_[SlotOf(read, 0)];
    slot.sharding = layout;
    slot.rule = rule;
  }
}

void Driver::GatherLoopInvariantsOnce() {
  const RuleName rule = Intern("gathered once before the loop: a loop invariant the body reads at run-time offsets");
  for (const LoopInvariant& invariant : FreeLoopInvariants()) {
    const Sharding carried = *slots_[invariant.slot].sharding;
    const Shape& element = invariant.loop->shape().tuple_shapes()[invariant.index];
    // Every read of the element in the body: a dynamic-slice at a run-time offset along some
    // split dim, or the root passing it on.
    std::vector<int64_t> dims;
    double read_bytes = 0;
    bool only_slices = true;
    for (const Instruction* read : invariant.reads) {
      for (const Instruction* reader : read->users()) {
        if (reader == invariant.root) continue;
        std::vector<int64_t> split;
        if (reader->opcode() == Opcode::kDynamicSlice && reader->operand(0) == read)
          for (int64_t d : RunTimeSlicedDims(*reader))
            if (DimTiles(carried, d) > 1) split.push_back(d);
        if (split.empty() || reader->operand(0) != read) {
          only_slices = false;
          break;
        }
        for (int64_t d : split)
          if (std::find(dims.begin(), dims.end(), d) == dims.end()) dims.push_back(d);
        read_bytes += static_cast<double>(reader->shape().byte_size());
      }
      if (!only_slices) break;
    }
    if (!only_slices || dims.empty()) continue;
    // A masked sum per trip moves about twice the slice; the gather, the value once.
    const std::optional<int64_t> trips = WhileTripCount(*invariant.loop);
    if (trips && 2.0 * read_bytes * static_cast<double>(*trips) < static_cast<double>(element.byte_size())) continue;
    std::sort(dims.begin(), dims.end());
    Sharding whole = ReplicateDims(carried, dims);
    // Where every slice read is laid out alike, split only along dims it keeps whole (a scan
    // of rows whose carry is split along the columns), the invariant takes that layout: it
    // moves once before the loop (an all-to-all) and every read stays local (oracle seed
    // 113070: xs split along its rows, 768 B gathered against XLA's 192 B all-to-all).
    if (std::optional<Sharding> read_layout = CommonReadLayout(invariant.reads, invariant.root, dims);
        read_layout && NumDataTiles(*read_layout) > NumDataTiles(whole))
      whole = *read_layout;
    CarryLoopInvariantAs(invariant, whole, rule);
  }
}

void Driver::LayLoopInvariantsOutAsTheirReaders() {
  const RuleName rule = Intern("moved once before the loop: a loop invariant its element-wise readers want in one layout");
  for (const LoopInvariant& invariant : FreeLoopInvariants()) {
    const Computation* condition = invariant.loop->while_condition();
    if (condition == nullptr || condition->num_parameters() != 1) continue;
    bool read_by_condition = false;
    for (const Instruction* user : condition->parameter(0)->users())
      read_by_condition |= user->opcode() != Opcode::kGetTupleElement || user->tuple_index == invariant.index;
    if (read_by_condition) continue;
    const std::vector<int64_t>& dims = invariant.loop->shape().tuple_shapes()[invariant.index].dims();
    std::optional<Sharding> wanted;
    bool ok = true;
    for (const Instruction* read : invariant.reads) {
      for (const Instruction* reader : read->users()) {
        if (reader == invariant.root) continue;
        const Opcode opcode = reader->opcode();
        const bool elementwise = IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode) ||
                                 opcode == Opcode::kCompare || opcode == Opcode::kSelect;
        const int64_t reader_slot = SlotOf(reader, 0);
        ok = elementwise && reader->shape().IsArray() && reader->shape().dims() == dims && reader_slot >= 0 &&
             slots_[reader_slot].sharding.has_value();
        if (!ok) break;
        const Sharding& layout = *slots_[reader_slot].sharding;
        ok = layout.IsTiled() && !layout.HasUnreduced() && !layout.IsManual() && (!wanted || layout == *wanted);
        if (!ok) break;
        wanted = layout;
      }
      if (!ok) break;
    }
    if (!ok || !wanted || invariant.reads.empty() || *wanted == *slots_[invariant.slot].sharding) continue;
    CarryLoopInvariantAs(invariant, *wanted, rule);
  }
}

bool Driver::AlignGroups(bool propagate) {
  bool changed = false;
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
      bool best_is_barrier = false;
      for (int32_t n : members) {
        int64_t s = nodes_[n].first_slot + leaf;
        const Slot& c = slots_[s];
        if (!c.sharding) continue;
        const bool barrier = IsShardBarrierFrom(*nodes_[n].instruction);
        if (best < 0) {
          best = s;
          best_is_barrier = barrier;
          continue;
        }
        const Slot& b = slots_[best];
        bool better = best_is_barrier != barrier ? best_is_barrier
                      : c.fixed != b.fixed     ? c.fixed
                                               : Tiles(*c.sharding) > Tiles(*b.sharding);
        if (better) {
          best = s;
          best_is_barrier = barrier;
        }
      }
      if (best < 0) continue;
      const Sharding chosen = *slots_[best].sharding;
      const int32_t source = slots_[best].source;
      for (int32_t n : members) {
        const int64_t s = nodes_[n].first_slot + leaf;
        Slot& slot = slots_[s];
        if (slot.fixed || slot.closed || s == best || nodes_[n].barrier_to) continue;
        if (slot.sharding && *slot.sharding == chosen) continue;
        changed = true;
        if (propagate) {
          Set(s, chosen, kMaxPriorityLevel, source, RuleName{LinkRuleName(LinkKind::kShardGroup)});
          continue;
        }
        slot.sharding = chosen;
        slot.unreached = slots_[best].unreached;
        slot.source = source;
        slot.rule = RuleName{LinkRuleName(LinkKind::kShardGroup)};
      }
    }
  }
  if (propagate && changed) PropagateLinks();
  return changed;
}

void Driver::ReplicateUnevenBoundaries() {
  for (int64_t s = 0; s < static_cast<int64_t>(slots_.size()); ++s) {
    Slot& slot = slots_[s];
    if (!slot.even_only || slot.fixed || !slot.sharding) continue;
    if (SplitsEvenly(SlotShape(s), *slot.sharding)) continue;
    // The dims that do not split evenly are made whole, the others keep their split (as XLA
    // lays out a result JAX left free: oracle seed 112993, a [16,6] result split over 2 x 4
    // keeps its 2-way rows, 240 B against 336 B gathering it all).
    const Shape& shape = SlotShape(s);
    std::vector<int64_t> uneven;
    if (slot.sharding->IsTiled() && shape.IsArray() && slot.sharding->TiledDataRank() == shape.rank()) {
      for (int64_t d = 0; d < shape.rank(); ++d)
        if (shape.dim(d) % slot.sharding->tile_assignment().dim(d) != 0) uneven.push_back(d);
      Sharding kept = ReplicateDims(*slot.sharding, uneven);
      if (SplitsEvenly(shape, kept) && !kept.IsReplicated()) {
        slot.sharding = std::move(kept);
        slot.rule = RuleName{"an unannotated boundary value: its uneven dims whole, the others split"};
        continue;
      }
    }
    slot.sharding = Sharding::Replicated();
    slot.rule = RuleName{"replicated: an unannotated boundary value splits evenly or not at all"};
  }
}

void Driver::RemoveShardBarriers() {
  for (const auto& computation : module_.computations()) {
    std::vector<Instruction*> barriers;
    for (const auto& instruction : computation->instructions())
      if (IsShardBarrier(*instruction)) barriers.push_back(instruction.get());
    for (Instruction* barrier : barriers) {
      Instruction* operand = barrier->operand(0);
      barrier->ReplaceAllUsesWith(operand);
      if (computation->root() == barrier) computation->set_root(operand);
      computation->RemoveInstruction(barrier);
    }
  }
}

void Driver::MakeLoopsConsistent() {
  for (const auto& [loop, tied] : loop_ties_) {
    Slot& target = slots_[tied];
    if (target.fixed || *target.sharding == *slots_[loop].sharding) continue;
    target.sharding = slots_[loop].sharding;
    target.unreached = slots_[loop].unreached;
    target.source = slots_[loop].source;
    target.rule = RuleName{LinkRuleName(LinkKind::kWhileValue)};
  }
}

bool Driver::LeftUnsharded(const Node& node) const {
  // A value written {unknown} is replicated when nothing reaches it, as XLA does.
  if (node.leaf_count == 0 || node.instruction->sharding()) return false;
  for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf)
    if (!slots_[node.first_slot + leaf].unreached) return false;
  return true;
}

ShardingOrigin Driver::OriginOf(const Node& node) const {
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

PropagationResult Driver::WriteBack() {
  PropagationResult result;
  result.num_partitions = num_devices_;
  for (const Node& node : nodes_) {
    Instruction* instruction = node.instruction;
    if (record_origins_) result.origins[instruction->parent()->name() + "/" + instruction->name()] = OriginOf(node);
    auto fixed = annotations_.fixed.find(instruction);
    bool refined = false, all_fixed = true;
    for (int64_t leaf = 0; leaf < node.leaf_count; ++leaf) {
      refined |= slots_[node.first_slot + leaf].refined;
      all_fixed &= slots_[node.first_slot + leaf].fixed;
    }
    if (fixed != annotations_.fixed.end() && fixed->second.written && !refined && all_fixed) continue;  // as written
    if (LeftUnsharded(node)) {
      instruction->set_sharding(std::nullopt);
      continue;
    }
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

}  // namespace gspmd::propagation::driver
