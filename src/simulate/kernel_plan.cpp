// Groups a computation's instructions into estimated XLA kernels (rules in kernel_plan.h).
#include "simulate/kernel_plan.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace gspmd::simulate {
namespace {

constexpr int64_t kNoGroup = -1;
constexpr int64_t kConflict = -2;

bool LooksThrough(const Instruction& user) {
  const OpClass op_class = ClassifyOp(user);
  return op_class == OpClass::kDuplicable || op_class == OpClass::kView;
}

struct Grouping {
  std::unordered_map<const Instruction*, int64_t> group;
  std::vector<bool> accepts_producers;
  std::vector<const Instruction*> roots;

  int64_t NewGroup(const Instruction* root, bool accepts) {
    accepts_producers.push_back(accepts);
    roots.push_back(root);
    group[root] = static_cast<int64_t>(roots.size()) - 1;
    return group[root];
  }

  int64_t GroupOf(const Instruction* instruction) const {
    auto it = group.find(instruction);
    return it == group.end() ? kNoGroup : it->second;
  }

  // The one group every use of `instruction` runs in (looking through duplicable users,
  // which are copied into their consumers, and views), kNoGroup / kConflict otherwise.
  int64_t ConsumerGroup(const Instruction* instruction) const {
    int64_t target = kNoGroup;
    for (const Instruction* user : instruction->users()) {
      int64_t group_of_user = LooksThrough(*user) ? ConsumerGroup(user) : GroupOf(user);
      if (group_of_user < 0) return kConflict;
      if (target != kNoGroup && target != group_of_user) return kConflict;
      target = group_of_user;
    }
    return target;
  }
};

bool ReadsOnlyItsResult(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kSlice || instruction.opcode() == Opcode::kDynamicSlice;
}

bool IsScalarConstant(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kConstant && instruction.shape().IsArray() && instruction.shape().element_count() <= 1;
}

double Bytes(const Instruction& instruction) { return static_cast<double>(instruction.shape().byte_size()); }

}  // namespace

KernelPlan PlanKernels(const Computation& computation) {
  const auto& instructions = computation.instructions();
  Grouping grouping;
  for (auto it = instructions.rbegin(); it != instructions.rend(); ++it) {
    const Instruction* instruction = it->get();
    switch (ClassifyOp(*instruction)) {
      case OpClass::kFree: case OpClass::kView: case OpClass::kDuplicable: case OpClass::kCollective:
      case OpClass::kControl:
        break;
      case OpClass::kLoop: {
        const int64_t target = instruction == computation.root() ? kConflict : grouping.ConsumerGroup(instruction);
        if (target >= 0 && grouping.accepts_producers[target]) grouping.group[instruction] = target;
        else grouping.NewGroup(instruction, true);
        break;
      }
      case OpClass::kMatrix: {
        // Output fusion: a dot written only into a slice of a buffer (a windowed einsum's
        // result) writes it there in place, and one only added to another value (a bias, an
        // accumulator) adds it on the way out: one kernel with the update or the add.
        const Instruction* user = instruction->users().size() == 1 ? instruction->users()[0] : nullptr;
        const bool updates = user != nullptr && user->opcode() == Opcode::kDynamicUpdateSlice && user->operand(1) == instruction;
        const bool adds = user != nullptr && user->opcode() == Opcode::kAdd && user->shape() == instruction->shape();
        if ((updates || adds) && instruction != computation.root() && grouping.GroupOf(user) >= 0 &&
            grouping.accepts_producers[grouping.GroupOf(user)]) {
          grouping.group[instruction] = grouping.GroupOf(user);
          break;
        }
        grouping.NewGroup(instruction, true);
        break;
      }
      case OpClass::kReduce: case OpClass::kInPlace:
        grouping.NewGroup(instruction, true);
        break;
      case OpClass::kOpaque:
        grouping.NewGroup(instruction, false);
        break;
    }
  }

  // Kernels in program order of their roots.
  std::unordered_map<const Instruction*, size_t> position;
  for (size_t i = 0; i < instructions.size(); ++i) position[instructions[i].get()] = i;
  std::vector<int64_t> order(grouping.roots.size());
  for (size_t g = 0; g < order.size(); ++g) order[g] = static_cast<int64_t>(g);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return position.at(grouping.roots[a]) < position.at(grouping.roots[b]);
  });
  std::vector<int64_t> kernel_index(order.size());
  for (size_t k = 0; k < order.size(); ++k) kernel_index[order[k]] = static_cast<int64_t>(k);

  KernelPlan plan;
  plan.kernels.resize(order.size());
  for (size_t k = 0; k < order.size(); ++k) plan.kernels[k].root = grouping.roots[order[k]];
  for (const auto& owned : instructions) {
    const int64_t g = grouping.GroupOf(owned.get());
    if (g < 0) continue;
    const int64_t k = kernel_index[g];
    plan.kernel_of[owned.get()] = k;
    plan.kernels[k].members.push_back(owned.get());
  }

  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    Kernel& kernel = plan.kernels[k];
    std::map<const Instruction*, double> partial;  // sliced reads, summed
    std::set<const Instruction*> full;
    auto in_kernel = [&](const Instruction* value) {
      auto it = plan.kernel_of.find(value);
      return it != plan.kernel_of.end() && it->second == static_cast<int64_t>(k);
    };
    // Records a read of `value`: all of it, or `sliced` bytes of it (a slice or dynamic-slice
    // reads only its result); duplicable producers and views are looked through.
    std::function<void(const Instruction*, double)> read = [&](const Instruction* value, double sliced) {
      if (in_kernel(value)) return;
      const OpClass op_class = ClassifyOp(*value);
      if (op_class == OpClass::kView) return read(value->operand(0), sliced);
      if (op_class == OpClass::kDuplicable) {
        if (value->opcode() == Opcode::kConstant && !IsScalarConstant(*value)) full.insert(value);
        for (const Instruction* operand : value->operands()) read(operand, -1);
        return;
      }
      if (sliced >= 0) partial[value] += sliced;
      else full.insert(value);
    };
    for (const Instruction* member : kernel.members) {
      OpCounts counts = CountOp(*member);
      kernel.counts.matrix_flops += counts.matrix_flops;
      kernel.counts.vector_flops += counts.vector_flops;
      kernel.counts.transcendentals += counts.transcendentals;
      kernel.counts.unfused_bytes += counts.unfused_bytes;
      const bool in_place = ClassifyOp(*member) == OpClass::kInPlace;
      for (int64_t i = 0; i < member->operand_count(); ++i) {
        if (in_place && i == 0) continue;  // the buffer it updates is not read
        read(member->operand(i), ReadsOnlyItsResult(*member) && i == 0 ? Bytes(*member) : -1);
      }
      bool used_outside = member == computation.root() || member->users().empty();
      for (const Instruction* user : member->users()) {
        const bool copied_in = LooksThrough(*user) && grouping.ConsumerGroup(user) == order[k];
        used_outside = used_outside || !(in_kernel(user) || copied_in);
      }
      if (!used_outside) continue;
      kernel.bytes_written += in_place && member->operand_count() > 1 ? Bytes(*member->operand(1)) : Bytes(*member);
    }
    std::set<const Instruction*> inputs(full.begin(), full.end());
    for (const auto& [value, bytes] : partial) inputs.insert(value);
    // Inputs in program order (values from outside the computation last, by id), so that the
    // byte sum is the same on every run.
    std::vector<const Instruction*> sorted(inputs.begin(), inputs.end());
    std::sort(sorted.begin(), sorted.end(), [&](const Instruction* a, const Instruction* b) {
      auto pa = position.find(a), pb = position.find(b);
      const size_t ia = pa == position.end() ? SIZE_MAX : pa->second, ib = pb == position.end() ? SIZE_MAX : pb->second;
      return ia != ib ? ia < ib : a->unique_id() < b->unique_id();
    });
    for (const Instruction* value : sorted)
      kernel.bytes_read += full.count(value) ? Bytes(*value) : std::min(Bytes(*value), partial[value]);
    kernel.inputs = std::move(sorted);
  }
  return plan;
}

}  // namespace gspmd::simulate
