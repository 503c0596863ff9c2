// The partial-sum planner's value graph: values, their uses and loop carries, made on demand.
#include "propagation/partial_sum_graph.h"

#include <algorithm>
#include <set>

#include "partitioner/computation_partitioner.h"

namespace gspmd::partial_sums {
namespace {

// How many times a loop body is taken to run per run of its caller, for the costs of the
// reductions in it (any count above one favours reducing after the loop).
constexpr double kLoopWeight = 16;

constexpr int32_t kNotLookedUp = -2;

bool RunsAsControlFlow(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kWhile || instruction.opcode() == Opcode::kConditional ||
         instruction.opcode() == Opcode::kCall;
}

// The instruction's sharding, for leaf `leaf` (-1: the array itself); nullopt when a tuple
// sharding does not match the shape.
std::optional<Sharding> LeafSharding(const Instruction& instruction, int64_t leaf) {
  Sharding sharding = EffectiveSharding(instruction);
  if (leaf < 0) return sharding.IsTuple() ? std::nullopt : std::optional<Sharding>(sharding);
  if (!sharding.IsTuple()) return sharding;
  if (leaf >= static_cast<int64_t>(sharding.tuple_elements().size())) return std::nullopt;
  const Sharding& element = sharding.tuple_elements()[leaf];
  if (element.IsTuple()) return std::nullopt;
  return element;
}

}  // namespace

ValueGraph::ValueGraph(const Module& module, int64_t num_devices) : module_(module), num_devices_(num_devices) {
  CollectComputations();
  TieLoopCarries();
}

// The entry and what it runs as control flow, depth first from the entry.
void ValueGraph::CollectComputations() {
  if (module_.entry() == nullptr) return;
  std::map<const Computation*, double> weights{{module_.entry(), 1.0}};
  std::map<const Computation*, std::vector<const Instruction*>> callers;
  std::vector<const Computation*> stack{module_.entry()};
  std::set<const Computation*> seen;
  while (!stack.empty()) {
    const Computation* computation = stack.back();
    stack.pop_back();
    if (!seen.insert(computation).second) continue;
    PlannedComputation planned;
    planned.computation = computation;
    index_[computation] = static_cast<int32_t>(computations_.size());
    computations_.push_back(std::move(planned));
    const double weight = weights[computation];
    for (const auto& instruction : computation->instructions()) {
      if (!RunsAsControlFlow(*instruction)) continue;
      const double called_weight = instruction->opcode() == Opcode::kWhile ? weight * kLoopWeight : weight;
      for (const Computation* called : instruction->called_computations()) {
        double& w = weights[called];
        w = std::max(w, called_weight);
        stack.push_back(called);
        callers[called].push_back(instruction.get());
      }
    }
  }
  for (PlannedComputation& planned : computations_) {
    planned.weight = weights[planned.computation];
    planned.callers = callers[planned.computation];
    std::vector<Instruction*> order = planned.computation->MakePostOrder();
    planned.post_order.assign(order.begin(), order.end());
    int64_t largest_id = -1;
    for (const Instruction* instruction : order) largest_id = std::max(largest_id, instruction->unique_id());
    planned.slots.resize(static_cast<size_t>(largest_id + 1));
    for (size_t i = 0; i < order.size(); ++i)
      planned.slots[static_cast<size_t>(order[i]->unique_id())].position = static_cast<int32_t>(i);
  }
}

// A while's carry: its result, body parameter and condition parameter, leaf by leaf.
void ValueGraph::TieLoopCarries() {
  for (int32_t c = 0; c < computation_count(); ++c) {
    for (const Instruction* instruction : computations_[c].post_order) {
      if (instruction->opcode() != Opcode::kWhile) continue;
      const Instruction* body = instruction->while_body()->parameter(0);
      const Instruction* condition = instruction->while_condition()->parameter(0);
      const int64_t count = LeafCount(instruction);
      if (LeafCount(body) != count || LeafCount(condition) != count) continue;
      for (int64_t k = 0; k < count; ++k) {
        const int32_t carry = LeafId(instruction, k);
        if (carry < 0) continue;
        const int32_t body_leaf = LeafId(body, k);
        const int32_t condition_leaf = LeafId(condition, k);
        ties_.push_back({carry, body_leaf});
        ties_.push_back({carry, condition_leaf});
      }
    }
  }
}

double ValueGraph::Weight(const Computation* computation) const {
  auto it = index_.find(computation);
  return it == index_.end() ? 1.0 : computations_[it->second].weight;
}

ValueGraph::Slot* ValueGraph::SlotOf(const Instruction* instruction) {
  // Nearly every look-up is in the entry (the first computation) or the one looked at last.
  const Computation* computation = instruction->parent();
  if (computations_.empty()) return nullptr;
  if (computations_[last_].computation != computation) {
    if (computations_[0].computation == computation) {
      last_ = 0;
    } else {
      auto it = index_.find(computation);
      if (it == index_.end()) return nullptr;
      last_ = it->second;
    }
  }
  std::vector<Slot>& slots = computations_[last_].slots;
  const int64_t id = instruction->unique_id();
  if (id < 0 || id >= static_cast<int64_t>(slots.size()) || slots[id].position < 0) return nullptr;
  return &slots[id];
}

int32_t ValueGraph::IdOf(const Instruction* instruction, int64_t leaf) {
  Slot* slot = SlotOf(instruction);
  if (slot == nullptr) return kNone;
  const Shape& shape = instruction->shape();
  if (leaf < 0) {
    if (!shape.IsArray()) return kNone;
    if (slot->array == kNotLookedUp) slot->array = AddValue(*instruction, -1, shape, Value::Order{last_, slot->position});
    return slot->array;
  }
  if (!shape.IsTuple() || leaf >= shape.tuple_size()) return kNone;
  if (slot->leaves.empty()) slot->leaves.assign(static_cast<size_t>(shape.tuple_size()), kNotLookedUp);
  int32_t& id = slot->leaves[static_cast<size_t>(leaf)];
  if (id == kNotLookedUp) id = AddValue(*instruction, leaf, shape.tuple_shape(leaf), Value::Order{last_, slot->position});
  return id;
}

int32_t ValueGraph::AddValue(const Instruction& instruction, int64_t leaf, const Shape& shape, Value::Order order) {
  std::optional<Sharding> sharding = LeafSharding(instruction, leaf);
  if (!sharding || !shape.IsArray()) return kNone;
  Value value;
  value.instruction = &instruction;
  value.leaf = leaf;
  value.shape = &shape;
  value.order = order;
  value.whole = sharding->WithoutUnreduced();
  if (sharding->HasUnreduced()) value.fixed = *sharding;
  if (value.whole.IsTiled() || value.whole.IsReplicated()) {
    auto [it, added] = decomposed_.try_emplace({value.whole.identity(), shape.rank()});
    if (added) {
      it->second.id = static_cast<int32_t>(decomposed_.size()) - 1;
      it->second.axes = DecomposeSharding(value.whole, shape.rank(), num_devices_);
    }
    value.sharding_id = it->second.id;
    if (it->second.axes) value.axes = &*it->second.axes;
  }
  values_.push_back(std::move(value));
  uses_.emplace_back();
  uses_known_.push_back(0);
  return static_cast<int32_t>(values_.size()) - 1;
}

int64_t ValueGraph::LeafCount(const Instruction* instruction) const {
  if (instruction->shape().IsArray()) return 1;
  return instruction->shape().IsTuple() ? instruction->shape().tuple_size() : 0;
}

// Leaf k as a value id: the array itself for an array, else tuple element k.
int32_t ValueGraph::LeafId(const Instruction* instruction, int64_t k) {
  return instruction->shape().IsArray() ? IdOf(instruction, -1) : IdOf(instruction, k);
}

void ValueGraph::AddSame(int64_t k, const Instruction* from, const Instruction* to, std::vector<Use>& uses) {
  if (LeafCount(from) != LeafCount(to)) {
    uses.push_back({UseKind::kSink});
    return;
  }
  const int32_t same = LeafId(to, k);
  if (same < 0) {
    uses.push_back({UseKind::kSink});
  } else {
    uses.push_back({UseKind::kIdentity, same});
  }
}

const std::vector<Use>& ValueGraph::UsesOf(int32_t v) {
  std::vector<Use>& uses = uses_[static_cast<size_t>(v)];
  if (uses_known_[static_cast<size_t>(v)]) return uses;
  uses_known_[static_cast<size_t>(v)] = 1;
  const Instruction* instruction = value(v).instruction;
  const int64_t leaf = value(v).leaf;
  const int64_t k = leaf < 0 ? 0 : leaf;  // its place among the instruction's leaves
  const bool is_array = instruction->shape().IsArray();
  const Computation* computation = instruction->parent();
  const PlannedComputation& planned = computations_[static_cast<size_t>(value(v).order.computation)];

  // As its computation's result: the entry's is needed whole; a called computation's is the
  // caller's value (call) or the loop carry (while body); anything else needs it whole.
  if (computation->root() == instruction) {
    if (computation == module_.entry()) {
      uses.push_back({UseKind::kSink});
    } else {
      for (const Instruction* caller : planned.callers) {
        if (caller->opcode() == Opcode::kCall ||
            (caller->opcode() == Opcode::kWhile && caller->while_body() == computation)) {
          AddSame(k, instruction, caller, uses);
        } else {
          uses.push_back({UseKind::kSink});
        }
      }
    }
  }

  // As an operand, users in post order (a user using it twice counts twice).
  std::vector<std::pair<int32_t, const Instruction*>> users;
  for (const Instruction* user : instruction->users()) {
    const Slot* slot = SlotOf(user);
    if (slot != nullptr) users.emplace_back(slot->position, user);
  }
  std::sort(users.begin(), users.end());
  users.erase(std::unique(users.begin(), users.end()), users.end());
  for (const auto& [position, user] : users) {
    switch (user->opcode()) {
      case Opcode::kTuple:
        for (int64_t j = 0; j < user->operand_count(); ++j) {
          if (user->operand(j) != instruction) continue;
          const int32_t to = IdOf(user, j);
          if (!is_array || to < 0) {
            uses.push_back({UseKind::kSink});
          } else {
            uses.push_back({UseKind::kIdentity, to});
          }
        }
        break;
      case Opcode::kGetTupleElement:
        if (leaf >= 0 && user->tuple_index == leaf) {
          const int32_t to = IdOf(user, -1);
          if (to < 0) {
            uses.push_back({UseKind::kSink});
          } else {
            uses.push_back({UseKind::kIdentity, to});
          }
        }
        break;
      case Opcode::kWhile:
        // The init is the carry; the carry's leaves are tied together (TieLoopCarries).
        if (user->operand(0) == instruction) AddSame(k, instruction, user, uses);
        break;
      case Opcode::kCall: {
        const Computation* callee = user->to_apply();
        for (int64_t j = 0; j < user->operand_count() && j < callee->num_parameters(); ++j)
          if (user->operand(j) == instruction) AddSame(k, instruction, callee->parameter(j), uses);
        break;
      }
      default: {
        const bool annotation = user->opcode() == Opcode::kCustomCall;
        const int32_t to = user->shape().IsArray() ? IdOf(user, -1) : kNone;
        for (int64_t j = 0; j < user->operand_count(); ++j) {
          if (user->operand(j) != instruction) continue;
          if (annotation || to < 0 || !is_array) {
            uses.push_back({UseKind::kSink});
          } else {
            uses.push_back({UseKind::kOperand, to, j});
          }
        }
        break;
      }
    }
  }
  return uses;
}

}  // namespace gspmd::partial_sums
