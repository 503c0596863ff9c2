// Computation: instruction ownership, ordering and dead-code removal.
#include "ir/computation.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "support/diagnostic.h"

namespace gspmd {

Instruction* Computation::AddInstruction(std::unique_ptr<Instruction> instruction) {
  instruction->parent_ = this;
  instruction->unique_id_ = next_id_++;
  Instruction* raw = instruction.get();
  if (raw->opcode() == Opcode::kParameter) {
    int64_t number = raw->parameter_number;
    if (static_cast<int64_t>(parameters_.size()) <= number) parameters_.resize(number + 1, nullptr);
    GSPMD_CHECK(parameters_[number] == nullptr, "duplicate parameter number ", number, " in ", name_);
    parameters_[number] = raw;
  }
  instructions_.push_back(std::move(instruction));
  return raw;
}

Instruction* Computation::AddInstructionAfter(std::unique_ptr<Instruction> instruction, const Instruction* position) {
  Instruction* raw = AddInstruction(std::move(instruction));
  auto at = std::find_if(instructions_.begin(), instructions_.end(),
                         [&](const auto& owned) { return owned.get() == position; });
  GSPMD_CHECK(at != instructions_.end(), "instruction %", position->name(), " is not in ", name_);
  std::rotate(at + 1, instructions_.end() - 1, instructions_.end());
  return raw;
}

void Computation::RemoveInstruction(Instruction* instruction) {
  GSPMD_CHECK(instruction->users().empty(), "removing ", instruction->name(), " which has users");
  GSPMD_CHECK(instruction != root_, "removing the root ", instruction->name());
  for (int64_t i = 0; i < instruction->operand_count(); ++i) {
    auto& users = instruction->operand(i)->users_;
    auto it = std::find(users.begin(), users.end(), instruction);
    if (it != users.end()) users.erase(it);
  }
  if (instruction->opcode() == Opcode::kParameter) parameters_.at(instruction->parameter_number) = nullptr;
  auto it = std::find_if(instructions_.begin(), instructions_.end(),
                         [&](const auto& owned) { return owned.get() == instruction; });
  GSPMD_CHECK(it != instructions_.end(), "instruction not in computation");
  instructions_.erase(it);
}

void Computation::RemoveDeadInstructions() {
  std::unordered_set<const Instruction*> live;  // membership only, never iterated
  live.reserve(instructions_.size());
  std::vector<const Instruction*> stack;
  if (root_) stack.push_back(root_);
  for (const auto& instruction : instructions_) {
    bool side_effect = instruction->opcode() == Opcode::kParameter ||
                       (instruction->opcode() == Opcode::kCustomCall &&
                        instruction->custom_call_has_side_effect);
    if (side_effect) stack.push_back(instruction.get());
  }
  while (!stack.empty()) {
    const Instruction* instruction = stack.back();
    stack.pop_back();
    if (!live.insert(instruction).second) continue;
    for (const Instruction* operand : instruction->operands()) stack.push_back(operand);
  }
  // Detach the dead (users first: reverse order), then drop them in one pass (removing them
  // one by one is quadratic in the computation size).
  bool any_dead = false;
  for (int64_t i = static_cast<int64_t>(instructions_.size()) - 1; i >= 0; --i) {
    Instruction* instruction = instructions_[i].get();
    if (live.count(instruction)) continue;
    any_dead = true;
    GSPMD_CHECK(instruction->users().empty(), "removing ", instruction->name(), " which has users");
    for (int64_t k = 0; k < instruction->operand_count(); ++k) {
      auto& users = instruction->operand(k)->users_;
      auto it = std::find(users.begin(), users.end(), instruction);
      if (it != users.end()) users.erase(it);
    }
  }
  if (!any_dead) return;
  std::erase_if(instructions_, [&](const std::unique_ptr<Instruction>& owned) { return !live.count(owned.get()); });
}

void Computation::SortInPostOrder() {
  const std::vector<Instruction*> order = MakePostOrder();
  std::vector<std::unique_ptr<Instruction>> sorted;
  sorted.reserve(instructions_.size());
  std::unordered_map<const Instruction*, size_t> position;
  for (size_t i = 0; i < instructions_.size(); ++i) position[instructions_[i].get()] = i;
  for (Instruction* instruction : order) sorted.push_back(std::move(instructions_[position.at(instruction)]));
  instructions_ = std::move(sorted);
}

std::vector<Instruction*> Computation::MakePostOrder() const {
  std::vector<Instruction*> order;
  order.reserve(instructions_.size());
  std::vector<std::pair<Instruction*, size_t>> stack;
  // Indexed by unique_id: every instruction of this computation has an id below next_id_.
  std::vector<char> visited(static_cast<size_t>(next_id_), 0);
  auto visit = [&](const Instruction* instruction) {
    GSPMD_CHECK(instruction->parent_ == this && instruction->unique_id_ >= 0 && instruction->unique_id_ < next_id_,
                "post order reached ", instruction->name(), " which is not in ", name_);
    char& seen = visited[static_cast<size_t>(instruction->unique_id_)];
    if (seen) return false;
    seen = 1;
    return true;
  };
  // Iterative DFS from each instruction in text order: a valid topological order that keeps
  // the written order where possible.
  for (const auto& start : instructions_) {
    if (!visit(start.get())) continue;
    stack.assign(1, {start.get(), 0});
    while (!stack.empty()) {
      auto& [instruction, next] = stack.back();
      if (next < instruction->operands().size()) {
        Instruction* operand = instruction->operands()[next++];
        if (visit(operand)) stack.emplace_back(operand, 0);
        continue;
      }
      order.push_back(instruction);
      stack.pop_back();
    }
  }
  return order;
}

Instruction* Computation::FindInstruction(const std::string& name) const {
  for (const auto& instruction : instructions_)
    if (instruction->name() == name) return instruction.get();
  return nullptr;
}

}  // namespace gspmd
