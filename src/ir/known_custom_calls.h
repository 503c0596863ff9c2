// Custom-call targets whose meaning propagation, the partitioner and the interpreter share:
// ones that pass their data through unchanged, and the propagation barriers.
#pragma once

#include <string_view>

#include "ir/instruction.h"

namespace gspmd {

// Targets whose result is their operands' data position by position (a layout constraint, a
// move between device and host memory, XLA's recombination of the two 32-bit halves of a
// 64-bit value): a sharding passes through them unchanged, and they run on each device's
// piece. Their operands have the result's dims (element types may differ).
inline bool IsDataPassThroughCustomCall(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kCustomCall || !instruction.shape().IsArray()) return false;
  const std::string_view target = instruction.custom_call_target;
  const bool known = target == "X64Combine" || target == "LayoutConstraint" || target == "MoveToHost" ||
                     target == "MoveToDevice" || target == "PinToDevice" || target == "PinToDeviceSram";
  if (!known || instruction.operand_count() < 1) return false;
  if (target != "X64Combine" && instruction.operand_count() != 1) return false;
  for (const Instruction* operand : instruction.operands())
    if (!operand->shape().IsArray() || operand->shape().dims() != instruction.shape().dims()) return false;
  return true;
}

// ShardBarrierFrom: no sharding flows from its operand to its users (backward it passes).
// ShardBarrierTo: no sharding flows from its users to its operand (forward it passes).
// Both are identities on their operand and do not survive propagation.
inline bool IsShardBarrierFrom(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kCustomCall && instruction.custom_call_target == "ShardBarrierFrom" &&
         instruction.operand_count() == 1;
}
inline bool IsShardBarrierTo(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kCustomCall && instruction.custom_call_target == "ShardBarrierTo" &&
         instruction.operand_count() == 1;
}
inline bool IsShardBarrier(const Instruction& instruction) {
  return IsShardBarrierFrom(instruction) || IsShardBarrierTo(instruction);
}

}  // namespace gspmd
