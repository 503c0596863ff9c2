// RemoveShardingAnnotations: clears instruction shardings and drops Sharding custom-calls,
// leaving manual (shard_map) regions as they are.
#include "builder/remove_annotations.h"

#include <algorithm>
#include <vector>

#include "ir/computation.h"

namespace gspmd {
namespace {

bool IsCustomCall(const Instruction& instruction, const char* target) {
  return instruction.opcode() == Opcode::kCustomCall && instruction.custom_call_target == target;
}

bool HasManualPart(const Instruction& instruction) {
  const std::optional<Sharding>& sharding = instruction.sharding();
  return sharding && (sharding->IsManual() || sharding->ToString().find("manual") != std::string::npos);
}

// A Sharding custom-call that states the whole-array side of a shard_map boundary.
bool BordersManualRegion(const Instruction& instruction) {
  for (const Instruction* user : instruction.users())
    if (IsCustomCall(*user, "SPMDFullToShardShape")) return true;
  return instruction.operand_count() == 1 && IsCustomCall(*instruction.operand(0), "SPMDShardToFullShape");
}

bool IsRemovableShardingCall(const Instruction& instruction) {
  return IsCustomCall(instruction, "Sharding") && instruction.operand_count() == 1 &&
         instruction.operand(0)->shape() == instruction.shape() && !BordersManualRegion(instruction) &&
         !HasManualPart(instruction);
}

constexpr char kSdySharding[] = "xla.sdy.sharding";

}  // namespace

std::string WithoutFrontendAttribute(const std::string& text, const std::string& key) {
  std::string kept;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t eq = text.find('=', pos);
    if (eq == std::string::npos) break;
    size_t end = eq + 1;
    if (end < text.size() && text[end] == '"') {
      for (++end; end < text.size() && text[end] != '"'; ++end)
        if (text[end] == '\\') ++end;
      ++end;
    } else {
      end = std::min(text.find(',', end), text.size());
    }
    if (text.substr(pos, eq - pos) != key) kept += (kept.empty() ? "" : ",") + text.substr(pos, end - pos);
    pos = end < text.size() && text[end] == ',' ? end + 1 : end;
  }
  return kept;
}

int64_t RemoveShardingAnnotations(Module& module, AnnotationsToRemove what) {
  int64_t removed = 0;
  const Computation* entry = module.entry();
  for (const auto& computation : module.computations()) {
    std::vector<Instruction*> calls;
    for (const auto& owned : computation->instructions()) {
      Instruction* instruction = owned.get();
      if (IsRemovableShardingCall(*instruction)) {
        calls.push_back(instruction);
        continue;
      }
      const bool sdy = !instruction->FrontendAttribute(kSdySharding).empty();
      if ((!instruction->sharding() && !sdy) || HasManualPart(*instruction)) continue;
      if (IsCustomCall(*instruction, "SPMDFullToShardShape") || IsCustomCall(*instruction, "SPMDShardToFullShape"))
        continue;
      const bool boundary = computation.get() == entry &&
                            (instruction->opcode() == Opcode::kParameter || instruction == computation->root());
      if (boundary && what == AnnotationsToRemove::kIntermediates) continue;
      instruction->set_sharding(std::nullopt);
      if (sdy) instruction->frontend_attributes = WithoutFrontendAttribute(instruction->frontend_attributes, kSdySharding);
      ++removed;
    }
    for (Instruction* call : calls) {
      Instruction* operand = call->operand(0);
      const bool was_root = call == computation->root();
      if (was_root && computation.get() == entry && what == AnnotationsToRemove::kIntermediates) continue;
      call->ReplaceAllUsesWith(operand);
      if (was_root) computation->set_root(operand);
      computation->RemoveInstruction(call);
      ++removed;
    }
  }
  return removed;
}

}  // namespace gspmd
