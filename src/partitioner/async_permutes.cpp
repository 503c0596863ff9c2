// ConvertPermutesToAsync: collective-permute -> collective-permute-start / -done, placed apart.
#include "partitioner/async_permutes.h"

#include <algorithm>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/hlo_builder.h"

namespace gspmd {
namespace {

bool HoldsDot(const Computation& computation) {
  for (const auto& instruction : computation.instructions())
    if (instruction->opcode() == Opcode::kDot) return true;
  return false;
}

bool IsConvertible(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kCollectivePermute && instruction.operand_count() == 1 &&
         instruction.shape().IsArray() && instruction.operand(0)->shape().IsArray();
}

// The permutes the pass turns into pairs: one array operand (not the combined form with slices);
// with `need_dot`, only those with a dot between their operand and their first user in the
// order (something to overlap once the start moves up to the operand).
std::vector<Instruction*> PermutesOf(const Computation& computation, bool need_dot) {
  const auto& instructions = computation.instructions();
  std::unordered_map<const Instruction*, size_t> position;
  std::vector<size_t> dots;
  for (size_t i = 0; i < instructions.size(); ++i) {
    position[instructions[i].get()] = i;
    if (instructions[i]->opcode() == Opcode::kDot) dots.push_back(i);
  }
  std::vector<Instruction*> permutes;
  for (const auto& instruction : instructions) {
    if (!IsConvertible(*instruction)) continue;
    if (need_dot) {
      const size_t from = position.at(instruction->operand(0));
      size_t to = instructions.size();
      for (const Instruction* user : instruction->users()) to = std::min(to, position.at(user));
      if (std::none_of(dots.begin(), dots.end(), [&](size_t dot) { return from < dot && dot < to; })) continue;
    }
    permutes.push_back(instruction.get());
  }
  return permutes;
}

// The instruction at `index` of the computation's order.
Instruction* At(const Computation& computation, size_t index) { return computation.instructions()[index].get(); }

size_t IndexOf(const Computation& computation, const Instruction* instruction) {
  const auto& instructions = computation.instructions();
  auto it = std::find_if(instructions.begin(), instructions.end(),
                         [&](const auto& owned) { return owned.get() == instruction; });
  return static_cast<size_t>(it - instructions.begin());
}

void Convert(Computation& computation, Instruction* permute, NameUniquer& names) {
  Instruction* operand = permute->operand(0);
  const Shape& shape = permute->shape();
  const Shape u32(ElementType::kU32, {});
  auto start = std::make_unique<Instruction>(Opcode::kCollectivePermuteStart,
                                             Shape::Tuple({operand->shape(), shape, u32, u32}),
                                             names.Unique("collective-permute-start"));
  start->channel_id = permute->channel_id;
  start->mutable_source_target_pairs() = permute->source_target_pairs();
  start->metadata = permute->metadata;
  start->frontend_attributes = permute->frontend_attributes;
  start->CopySourceFrom(*permute);
  start->AppendOperand(operand);
  // As early as the operand allows: right after it.
  Instruction* started = computation.AddInstructionAfter(std::move(start), operand);

  auto done = std::make_unique<Instruction>(Opcode::kCollectivePermuteDone, shape,
                                            names.Unique("collective-permute-done"));
  done->metadata = permute->metadata;
  done->frontend_attributes = permute->frontend_attributes;
  done->set_sharding(permute->sharding());
  done->CopySourceFrom(*permute);
  done->AppendOperand(started);
  // Just before the permute's first user in the order (at the permute's place when it has none);
  // users follow the permute, which follows the start.
  size_t first_use = IndexOf(computation, permute) + 1;
  if (!permute->users().empty()) {
    first_use = computation.instructions().size();
    for (const Instruction* user : permute->users()) first_use = std::min(first_use, IndexOf(computation, user));
  }
  Instruction* finished = computation.AddInstructionAfter(std::move(done), At(computation, first_use - 1));
  permute->ReplaceAllUsesWith(finished);
  if (computation.root() == permute) computation.set_root(finished);
  computation.RemoveInstruction(permute);
}

}  // namespace

int64_t ConvertPermutesToAsync(Module& module, AsyncPermuteScope scope) {
  // Each computation to convert, and whether its permutes need a dot to overlap.
  std::vector<std::pair<Computation*, bool>> computations;
  if (scope == AsyncPermuteScope::kEverywhere) {
    for (const auto& computation : module.computations()) computations.emplace_back(computation.get(), false);
  } else {
    // The loops' bodies: every permute. The computations running such loops (a bidirectional
    // loop's peeled first dot overlaps the first windows leaving): permutes with a dot to overlap.
    std::unordered_set<const Computation*> bodies, callers;
    for (const auto& computation : module.computations())
      for (const auto& instruction : computation->instructions()) {
        if (instruction->opcode() != Opcode::kWhile || instruction->called_computations().size() != 2) continue;
        const Computation* body = instruction->while_body();
        const bool windowed = HoldsDot(*body) && std::any_of(body->instructions().begin(), body->instructions().end(),
                                                             [](const auto& owned) { return IsConvertible(*owned); });
        if (!windowed) continue;
        bodies.insert(body);
        callers.insert(computation.get());
      }
    for (const auto& computation : module.computations()) {
      if (bodies.count(computation.get())) computations.emplace_back(computation.get(), false);
      else if (callers.count(computation.get())) computations.emplace_back(computation.get(), true);
    }
  }
  NameUniquer names;
  bool reserved = false;
  int64_t converted = 0;
  for (const auto& [computation, need_dot] : computations) {
    std::vector<Instruction*> permutes = PermutesOf(*computation, need_dot);
    if (permutes.empty()) continue;
    if (!reserved) {
      names.ReserveAll(module);
      reserved = true;
    }
    for (Instruction* permute : permutes) Convert(*computation, permute, names);
    converted += static_cast<int64_t>(permutes.size());
  }
  return converted;
}

}  // namespace gspmd
