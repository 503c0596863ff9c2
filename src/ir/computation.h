// Computation: an ordered list of instructions with parameters and a root.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/instruction.h"

namespace gspmd {

class Module;

// A computation owns its instructions, kept in a valid order (operands before users).
//   %region_0.1 (a: f32[], b: f32[]) -> f32[] {
//     %a = f32[] parameter(0)
//     %b = f32[] parameter(1)
//     ROOT %add = f32[] add(%a, %b)
//   }
class Computation {
 public:
  explicit Computation(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  Module* parent() const { return parent_; }

  // Appends an instruction (its operands must already be in this computation) and returns it.
  Instruction* AddInstruction(std::unique_ptr<Instruction> instruction);
  // The same, placed right after `position` in the order (so a later user may use it).
  Instruction* AddInstructionAfter(std::unique_ptr<Instruction> instruction, const Instruction* position);
  // Removes an instruction that has no users.
  void RemoveInstruction(Instruction* instruction);
  // Removes instructions that no path from the root (or a side-effecting op) reaches.
  void RemoveDeadInstructions();

  const std::vector<std::unique_ptr<Instruction>>& instructions() const { return instructions_; }
  int64_t instruction_count() const { return static_cast<int64_t>(instructions_.size()); }
  // Instructions in post order (operands first), starting from the root and keeping every
  // instruction (also unreachable ones, in their original relative order).
  std::vector<Instruction*> MakePostOrder() const;
  // Reorders the instructions into MakePostOrder's order (after a pass appended an
  // instruction that earlier ones now use).
  void SortInPostOrder();

  Instruction* root() const { return root_; }
  void set_root(Instruction* root) { root_ = root; }
  const std::vector<Instruction*>& parameters() const { return parameters_; }
  Instruction* parameter(int64_t i) const { return parameters_.at(i); }
  int64_t num_parameters() const { return static_cast<int64_t>(parameters_.size()); }

  Instruction* FindInstruction(const std::string& name) const;

  // Whether the text wrote a signature "(a: f32[]) -> f32[]" (kept for printing).
  bool printed_with_signature = true;
  bool is_entry = false;
  // XLA's ", execution_thread=\"name\"" after the body (empty: the main thread); kept for
  // printing.
  std::string execution_thread;

 private:
  friend class Module;
  std::string name_;
  Module* parent_ = nullptr;
  std::vector<std::unique_ptr<Instruction>> instructions_;
  std::vector<Instruction*> parameters_;  // by parameter number
  Instruction* root_ = nullptr;
  int64_t next_id_ = 0;
};

}  // namespace gspmd
