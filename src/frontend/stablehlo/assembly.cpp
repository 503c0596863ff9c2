// The end of a StableHLO read: calls checked against their functions, the entry chosen,
// locations turned into metadata, computations put in call order (callees first) with
// composite calls inlined, and the Module's attributes (entry layout, partitions, meshes).
#include <functional>
#include <unordered_map>

#include "frontend/stablehlo/module_reader.h"
#include "frontend/stablehlo/types.h"
#include "ir/verifier.h"

namespace gspmd::stablehlo {

class Assembler {
 public:
  explicit Assembler(ModuleReader& reader) : reader_(reader) {}

  std::unique_ptr<Module> Assemble() {
    CheckFunctions();
    Computation* entry = ChooseEntry();
    reader_.locations_.Resolve(reader_.cursor_);  // before inlining copies metadata
    std::vector<Computation*> order;
    std::vector<int> state(reader_.computations_.size(), 0);  // 0 new, 1 visiting, 2 done
    Visit(entry, state, order);
    // What could not be finished while reading (composites of later functions), callees first.
    for (Computation* computation : order) {
      Pending& pending = PendingOf(computation);
      if (!pending.finished) reader_.FinishComputation(pending);
    }
    for (const auto& [instruction, pos] : reader_.deferred_checks_)
      if (!reader_.inline_calls_.count(instruction)) reader_.RunChecks(*instruction, pos);
    for (const auto& [copy, original, call] : reader_.inlined_copies_)
      if (copy->metadata.empty()) copy->metadata = original->metadata.empty() ? call->metadata : original->metadata;
    auto module = std::make_unique<Module>(reader_.module_name_);
    for (Computation* computation : order) {
      auto& pending = reader_.computations_[reader_.pending_index_.at(computation)];
      module->AddComputation(std::move(pending.computation), computation == entry);
    }
    module->RemoveUnusedComputations();  // inlined decompositions
    SetModuleAttributes(*module);
    return module;
  }

 private:
  using Pending = ModuleReader::PendingComputation;

  Pending& PendingOf(const Computation* computation) {
    return reader_.computations_[reader_.pending_index_.at(computation)];
  }

  void CheckFunctions() {
    const Cursor& cursor = reader_.cursor_;
    if (reader_.function_order_.empty()) cursor.ErrorAt(cursor.text().size(), "the module has no func.func: expected a function @main");
    for (const auto& [name, info] : reader_.functions_) {
      if (!info.defined) cursor.ErrorAt(info.first_use, StrCat("call to undefined function @", name));
    }
    for (const ModuleReader::CallCheck& check : reader_.call_checks_) {
      const ModuleReader::FunctionInfo& info = reader_.functions_.at(check.name);
      CheckTypes(check, "operand", check.operands, info.inputs);
      CheckTypes(check, "result", check.results, info.results);
    }
  }

  void CheckTypes(const ModuleReader::CallCheck& check, std::string_view what, const std::vector<Shape>& actual,
                  const std::vector<Shape>& expected) {
    const Cursor& cursor = reader_.cursor_;
    if (actual.size() != expected.size())
      cursor.ErrorAt(check.pos, StrCat("@", check.name, " takes ", expected.size(), " ", what, "s but the call has ", actual.size()));
    for (size_t i = 0; i < actual.size(); ++i) {
      if (actual[i].Compatible(expected[i])) continue;
      cursor.ErrorAt(check.pos, StrCat(what, " ", i, " of the call to @", check.name, " is ", MlirTypeName(actual[i]),
                                       " but the function's is ", MlirTypeName(expected[i])));
    }
  }

  // @main, else the only public function.
  Computation* ChooseEntry() {
    auto main = reader_.functions_.find("main");
    if (main != reader_.functions_.end()) return main->second.computation;
    const ModuleReader::FunctionInfo* only = nullptr;
    int public_count = 0;
    for (const std::string& name : reader_.function_order_) {
      const ModuleReader::FunctionInfo& info = reader_.functions_.at(name);
      if (!info.is_public) continue;
      ++public_count;
      only = &info;
    }
    if (public_count != 1)
      reader_.cursor_.ErrorAt(0, StrCat("no function @main and ", public_count,
                                        " public functions: expected @main (or exactly one public function) as the entry"));
    return only->computation;
  }

  // Post order over called computations: callees before callers.
  void Visit(Computation* computation, std::vector<int>& state, std::vector<Computation*>& order) {
    const size_t index = reader_.pending_index_.at(computation);
    if (state[index] == 2) return;
    if (state[index] == 1)
      reader_.cursor_.ErrorAt(0, StrCat("function @", computation->name(), " calls itself (directly or through other ",
                                        "functions): recursion is not supported"));
    state[index] = 1;
    Pending& pending = reader_.computations_[index];
    GSPMD_CHECK(pending.defined, "computation ", computation->name(), " was never defined");
    const auto& instructions = pending.finished ? computation->instructions() : pending.instructions;
    for (const auto& instruction : instructions)
      for (Computation* called : instruction->called_computations()) Visit(called, state, order);
    state[index] = 2;
    order.push_back(computation);
  }

  void SetModuleAttributes(Module& module) {
    const Computation& entry = *module.entry();
    std::string layout = "{(";
    for (int64_t i = 0; i < entry.num_parameters(); ++i) layout += (i ? ", " : "") + entry.parameter(i)->shape().ToString();
    layout += ")->" + entry.root()->shape().ToString() + "}";
    module.attributes.emplace_back("entry_computation_layout", std::move(layout));
    std::string frontend;
    for (auto& [key, value] : reader_.module_attributes_) {
      if (key == "frontend_attributes") {
        frontend = value;
        continue;
      }
      module.attributes.emplace_back(key, value);
    }
    if (!reader_.mesh_texts_.empty()) {
      std::string meshes = "xla.sdy.meshes={";
      for (size_t i = 0; i < reader_.mesh_texts_.size(); ++i)
        meshes += StrCat(i ? ", " : "", reader_.mesh_texts_[i].first, " = ", reader_.mesh_texts_[i].second);
      meshes += "}";
      frontend = frontend.empty() ? meshes : frontend + "," + meshes;
    }
    if (!frontend.empty()) module.attributes.emplace_back("frontend_attributes", "{" + frontend + "}");
  }

  ModuleReader& reader_;
};

bool ModuleReader::Finished(const Computation* computation) const {
  auto it = pending_index_.find(computation);
  return it == pending_index_.end() || computations_[it->second].finished;
}

bool ModuleReader::ReadyToFinish(const PendingComputation& pending) const {
  for (const auto& instruction : pending.instructions)
    if (inline_calls_.count(instruction.get()) && !Finished(instruction->to_apply())) return false;
  return true;
}

void ModuleReader::FinishComputation(PendingComputation& pending) {
  Computation* computation = pending.computation.get();
  Instruction* root = pending.root;
  for (auto& owned : pending.instructions) {
    Instruction* instruction = owned.get();
    if (!inline_calls_.count(instruction)) {
      computation->AddInstruction(std::move(owned));
      continue;
    }
    Instruction* replacement = InlineCall(*computation, *instruction);
    instruction->ReplaceAllUsesWith(replacement);
    if (root == instruction) root = replacement;
    // The call stays alive (locations and copies refer to it) but leaves its operands' users.
    if (!detached_) detached_ = std::make_unique<Instruction>(Opcode::kTuple, Shape::Tuple({}), "detached");
    for (int64_t i = 0; i < instruction->operand_count(); ++i) instruction->ReplaceOperand(i, detached_.get());
    inlined_calls_.push_back(std::move(owned));
  }
  pending.instructions.clear();
  computation->set_root(root);
  pending.finished = true;
}

// The callee's instructions copied into `computation` with the call's operands for its
// parameters; returns the copy of its root.
Instruction* ModuleReader::InlineCall(Computation& computation, Instruction& call) {
  const Computation& callee = *call.to_apply();
  GSPMD_CHECK(Finished(&callee), "inlining ", callee.name(), " before it is finished");
  std::unordered_map<const Instruction*, Instruction*> copies;  // lookups only
  for (const auto& instruction : callee.instructions()) {
    if (instruction->opcode() == Opcode::kParameter) {
      copies[instruction.get()] = call.operand(instruction->parameter_number);
      continue;
    }
    std::vector<Instruction*> operands;
    for (const Instruction* operand : instruction->operands()) operands.push_back(copies.at(operand));
    auto copy = instruction->CloneWithNewOperands(instruction->shape(), operands);
    copy->set_name(names_.ForOpcode(copy->opcode()));
    copy->CopySourceFrom(call);
    inlined_copies_.emplace_back(copy.get(), instruction.get(), &call);
    copies[instruction.get()] = computation.AddInstruction(std::move(copy));
  }
  return copies.at(callee.root());
}

void ModuleReader::RunChecks(const Instruction& instruction, size_t pos) const {
  std::string error = CheckOperandCount(instruction);
  if (error.empty()) error = CheckCalledComputations(instruction);
  if (error.empty()) error = CheckInstruction(instruction, device_counts_);
  if (!error.empty()) cursor_.ErrorAt(pos, error);
}

std::unique_ptr<Module> ModuleReader::Read() {
  ReadTopLevel();
  return Assembler(*this).Assemble();
}

}  // namespace gspmd::stablehlo
