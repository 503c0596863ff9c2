// RematerializeRegions: the backward pass recomputes each region's inner values (see remat.h).
#include "builder/remat.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/computation.h"

namespace gspmd {
namespace {

bool ReadsStateOrHasEffects(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kParameter:
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kRngGetAndUpdateState:
      return true;
    case Opcode::kCustomCall:
      return instruction.custom_call_has_side_effect;
    default:
      return false;
  }
}

// metadata={op_name="X" ...} -> op_name="remat(X)"; without an op_name, op_name="remat(REGION)".
std::string RematMetadata(const std::string& metadata, const std::string& region) {
  const std::string key = "op_name=\"";
  const size_t at = metadata.find(key);
  if (at == std::string::npos) return key + "remat(" + region + ")\"" + (metadata.empty() ? "" : " " + metadata);
  const size_t begin = at + key.size();
  const size_t end = metadata.find('"', begin);
  if (end == std::string::npos) return metadata;
  return metadata.substr(0, begin) + "remat(" + metadata.substr(begin, end - begin) + ")" + metadata.substr(end);
}

}  // namespace

std::string LayerRegionOf(const Instruction& instruction) {
  const std::string key = "op_name=\"layer_";
  const size_t at = instruction.metadata.find(key);
  if (at == std::string::npos) return "";
  const size_t begin = at + key.size() - 6;  // at "layer_"
  size_t end = begin + 6;
  while (end < instruction.metadata.size() && std::isdigit(static_cast<unsigned char>(instruction.metadata[end]))) ++end;
  if (end == begin + 6) return "";
  return instruction.metadata.substr(begin, end - begin);
}

RematStats RematerializeRegions(HloBuilder& hlo, size_t forward_end,
                                const std::function<std::string(const Instruction&)>& region_of) {
  Computation& computation = *hlo.computation();
  std::vector<Instruction*> order;
  for (const auto& owned : computation.instructions()) order.push_back(owned.get());
  forward_end = std::min(forward_end, order.size());

  std::unordered_map<const Instruction*, size_t> position;  // forward instructions only
  std::unordered_map<const Instruction*, std::string> region;
  for (size_t i = 0; i < forward_end; ++i) {
    position[order[i]] = i;
    if (order[i]->opcode() == Opcode::kParameter) continue;
    std::string name = region_of(*order[i]);
    if (!name.empty()) region.emplace(order[i], std::move(name));
  }
  auto region_name = [&](const Instruction* instruction) -> const std::string* {
    auto it = region.find(instruction);
    return it == region.end() ? nullptr : &it->second;
  };
  // Recomputed: in a region, no state or effects, and used by no forward instruction outside it.
  std::unordered_map<const Instruction*, bool> recomputed_memo;
  auto recomputed = [&](const Instruction* value) {
    auto memo = recomputed_memo.find(value);
    if (memo != recomputed_memo.end()) return memo->second;
    const std::string* name = region_name(value);
    bool result = name != nullptr && !ReadsStateOrHasEffects(*value);
    for (const Instruction* user : value->users()) {
      if (!result) break;
      if (!position.count(user)) continue;  // a backward user
      const std::string* user_region = region_name(user);
      result = user_region != nullptr && *user_region == *name;
    }
    recomputed_memo.emplace(value, result);
    return result;
  };

  // The values each region recomputes: those the backward pass reads, and what they need.
  std::map<size_t, std::string> regions_in_order;  // first needed value's position -> region
  std::unordered_set<const Instruction*> needed;
  std::vector<const Instruction*> stack;
  for (size_t i = forward_end; i < order.size(); ++i)
    for (const Instruction* operand : order[i]->operands())
      if (position.count(operand) && recomputed(operand)) stack.push_back(operand);
  while (!stack.empty()) {
    const Instruction* value = stack.back();
    stack.pop_back();
    if (!needed.insert(value).second) continue;
    for (const Instruction* operand : value->operands())
      if (recomputed(operand) && *region_name(operand) == *region_name(value)) stack.push_back(operand);
  }
  std::map<std::string, std::vector<Instruction*>> members;  // region -> needed, forward order
  for (size_t i = 0; i < forward_end; ++i) {
    if (!needed.count(order[i])) continue;
    const std::string& name = *region_name(order[i]);
    if (members[name].empty()) regions_in_order.emplace(i, name);
    members[name].push_back(order[i]);
  }

  RematStats stats;
  std::unordered_map<const Instruction*, Instruction*> clone_of;
  const std::string saved_op_name = hlo.op_name();
  for (const auto& [first, name] : regions_in_order) {
    const std::vector<Instruction*>& values = members[name];
    // What the recomputation reads from outside: through one barrier.
    std::vector<Instruction*> leaves;
    std::unordered_set<const Instruction*> is_leaf;
    for (const Instruction* value : values)
      for (Instruction* operand : value->operands())
        if (!needed.count(operand) && is_leaf.insert(operand).second) leaves.push_back(operand);
    hlo.set_op_name("remat(" + name + ")");
    std::unordered_map<const Instruction*, Instruction*> inside;
    if (!leaves.empty()) {
      Instruction* tuple = hlo.Tuple(leaves);
      Instruction* barrier = hlo.AddOp(Opcode::kOptimizationBarrier, tuple->shape(), {tuple});
      for (size_t k = 0; k < leaves.size(); ++k) inside[leaves[k]] = hlo.GetTupleElement(barrier, static_cast<int64_t>(k));
    }
    for (const Instruction* value : values) {
      std::vector<Instruction*> operands;
      for (Instruction* operand : value->operands()) {
        auto it = clone_of.find(operand);
        operands.push_back(it != clone_of.end() ? it->second : inside.at(operand));
      }
      std::unique_ptr<Instruction> clone = value->CloneWithNewOperands(value->shape(), operands);
      clone->metadata = RematMetadata(value->metadata, name);
      clone_of[value] = hlo.Add(std::move(clone));
      ++stats.cloned;
    }
    ++stats.regions;
  }
  hlo.set_op_name(saved_op_name);
  if (clone_of.empty()) return stats;
  for (size_t i = forward_end; i < order.size(); ++i)
    for (int64_t k = 0; k < order[i]->operand_count(); ++k) {
      auto it = clone_of.find(order[i]->operand(k));
      if (it != clone_of.end()) order[i]->ReplaceOperand(k, it->second);
    }
  // Each recomputation just before its first user: the post order visits operands right
  // before the instruction that needs them and otherwise keeps the written order.
  computation.SortInPostOrder();
  return stats;
}

}  // namespace gspmd
