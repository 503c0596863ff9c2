// SplitConstantsAtManualBoundaries: which values are inside a manual region, which constant
// expressions are used on both sides, and the copies that separate them.
#include "propagation/constant_splitter.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "ir/sdy_custom_calls.h"

namespace gspmd::propagation {
namespace {

bool HasManualSharding(const Sharding& sharding) {
  if (sharding.IsManual()) return true;
  if (sharding.IsTuple()) {
    for (const Sharding& element : sharding.tuple_elements())
      if (HasManualSharding(element)) return true;
    return false;
  }
  if (!sharding.IsTiled()) return false;
  for (Sharding::SubgroupType type : sharding.subgroup_types())
    if (type == Sharding::SubgroupType::kManual) return true;
  return false;
}

bool IsCustomCallTo(const Instruction& instruction, std::string_view target, std::string_view sdy) {
  if (instruction.opcode() != Opcode::kCustomCall) return false;
  return instruction.custom_call_target == target || (!sdy.empty() && SdyTargetName(instruction.custom_call_target) == sdy);
}

// Values a manual region starts with: the local side of a full-to-shard conversion, and
// values annotated manual.
bool StartsManual(const Instruction& instruction) {
  if (IsCustomCallTo(instruction, "SPMDFullToShardShape", "GlobalToLocalShape")) return true;
  if (IsCustomCallTo(instruction, "SPMDShardToFullShape", "LocalToGlobalShape")) return false;
  return instruction.sharding() && HasManualSharding(*instruction.sharding());
}

bool LeavesManual(const Instruction& instruction) {
  return IsCustomCallTo(instruction, "SPMDShardToFullShape", "LocalToGlobalShape");
}

bool IsConstantExpression(const Instruction& instruction, const std::vector<char>& constant) {
  if (instruction.sharding().has_value() || !instruction.shape().IsArray()) return false;
  switch (instruction.opcode()) {
    case Opcode::kConstant: case Opcode::kIota:
      return true;
    case Opcode::kBroadcast: case Opcode::kReshape: case Opcode::kTranspose: case Opcode::kConvert:
    case Opcode::kCopy:
      break;
    default:
      return false;
  }
  for (const Instruction* operand : instruction.operands())
    if (operand->unique_id() < 0 || !constant[operand->unique_id()]) return false;
  return true;
}

std::string UniqueName(const Module& module, const std::string& base) {
  auto taken = [&](const std::string& name) {
    for (const auto& computation : module.computations())
      if (computation->FindInstruction(name) != nullptr) return true;
    return false;
  };
  std::string name = base;
  name.append(".manual");
  for (int64_t k = 1; taken(name); ++k) {
    name = base;
    name.append(".manual.").append(std::to_string(k));
  }
  return name;
}

class ComputationSplitter {
 public:
  ComputationSplitter(Module& module, Computation& computation) : module_(module), computation_(computation) {}

  int64_t Run() {
    std::vector<Instruction*> order = computation_.MakePostOrder();
    int64_t ids = 0;
    for (const Instruction* instruction : order) ids = std::max(ids, instruction->unique_id() + 1);
    constant_.assign(ids, 0);
    manual_.assign(ids, 0);
    bool any_manual = false;
    for (Instruction* instruction : order) {
      const int64_t id = instruction->unique_id();
      constant_[id] = IsConstantExpression(*instruction, constant_);
      if (constant_[id]) continue;
      bool manual = StartsManual(*instruction);
      if (!manual && !LeavesManual(*instruction)) {
        for (const Instruction* operand : instruction->operands()) manual = manual || manual_[operand->unique_id()];
      }
      manual_[id] = manual;
      any_manual = any_manual || manual;
    }
    if (!any_manual) return 0;
    // Which sides use each constant expression (users first).
    used_manual_.assign(ids, 0);
    used_outside_.assign(ids, 0);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const Instruction* instruction = *it;
      if (!constant_[instruction->unique_id()]) continue;
      for (const Instruction* user : instruction->users()) {
        const int64_t u = user->unique_id();
        const bool user_constant = constant_[u];
        used_manual_[instruction->unique_id()] |= user_constant ? used_manual_[u] : manual_[u];
        used_outside_[instruction->unique_id()] |= user_constant ? used_outside_[u] : !manual_[u];
      }
    }
    int64_t copies = 0;
    for (Instruction* instruction : order) {
      if (!Mixed(*instruction)) continue;
      std::vector<Instruction*> users = instruction->users();
      std::sort(users.begin(), users.end(), [](const Instruction* a, const Instruction* b) {
        return a->unique_id() < b->unique_id();
      });
      users.erase(std::unique(users.begin(), users.end()), users.end());
      for (Instruction* user : users) {
        const int64_t u = user->unique_id();
        const bool manual_user = constant_[u] ? !used_outside_[u] : manual_[u];
        if (!manual_user) continue;
        Instruction* copy = ManualCopy(instruction, copies);
        for (int64_t i = 0; i < user->operand_count(); ++i)
          if (user->operand(i) == instruction) user->ReplaceOperand(i, copy);
      }
    }
    return copies;
  }

 private:
  bool Mixed(const Instruction& instruction) const {
    const int64_t id = instruction.unique_id();
    return id >= 0 && id < static_cast<int64_t>(constant_.size()) && constant_[id] && used_manual_[id] &&
           used_outside_[id];
  }

  // The copy of `instruction` the manual uses take (itself when only manual code uses it).
  Instruction* ManualCopy(Instruction* instruction, int64_t& copies) {
    if (!Mixed(*instruction)) return instruction;
    auto it = copies_.find(instruction->unique_id());
    if (it != copies_.end()) return it->second;
    std::vector<Instruction*> operands;
    for (Instruction* operand : instruction->operands()) operands.push_back(ManualCopy(operand, copies));
    std::unique_ptr<Instruction> clone = instruction->CloneWithNewOperands(instruction->shape(), operands);
    clone->set_name(UniqueName(module_, instruction->name()));
    Instruction* copy = computation_.AddInstructionAfter(std::move(clone), instruction);
    copies_[instruction->unique_id()] = copy;
    ++copies;
    return copy;
  }

  Module& module_;
  Computation& computation_;
  std::vector<char> constant_, manual_, used_manual_, used_outside_;  // by instruction id
  std::map<int64_t, Instruction*> copies_;                             // by original's id
};

}  // namespace

int64_t SplitConstantsAtManualBoundaries(Module& module) {
  int64_t copies = 0;
  for (const auto& computation : module.computations()) copies += ComputationSplitter(module, *computation).Run();
  return copies;
}

}  // namespace gspmd::propagation
