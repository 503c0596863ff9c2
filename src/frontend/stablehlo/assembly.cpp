// The end of a StableHLO read: calls checked against their functions, the entry chosen,
// locations turned into metadata, computations put in call order (callees first) with
// composite calls inlined, and the Module's attributes (entry layout, partitions, meshes).
#include <functional>

#include "frontend/stablehlo/module_reader.h"
#include "frontend/stablehlo/types.h"

namespace gspmd::stablehlo {

class Assembler {
 public:
  explicit Assembler(ModuleReader& reader) : reader_(reader) {}

  std::unique_ptr<Module> Assemble() {
    CheckFunctions();
    Computation* entry = ChooseEntry();
    reader_.locations_.Resolve(reader_.cursor_);
    std::vector<Computation*> order;
    std::vector<int> state(reader_.computations_.size(), 0);  // 0 new, 1 visiting, 2 done
    Visit(entry, state, order);
    auto module = std::make_unique<Module>(reader_.module_name_);
    for (Computation* computation : order) Finish(computation);
    for (Computation* computation : order) {
      auto& pending = reader_.computations_[reader_.pending_index_.at(computation)];
      module->AddComputation(std::move(pending.computation), computation == entry);
    }
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
    for (const auto& instruction : pending.instructions)
      for (Computation* called : instruction->called_computations()) Visit(called, state, order);
    state[index] = 2;
    order.push_back(computation);
  }

  // Adds a computation's instructions, inlining the marked calls (their callees are done).
  void Finish(Computation* computation) {
    Pending& pending = PendingOf(computation);
    Instruction* root = pending.root;
    std::vector<Instruction*> inlined;
    for (auto& owned : pending.instructions) {
      Instruction* instruction = owned.get();
      if (reader_.inline_calls_.count(instruction)) {
        Instruction* replacement = Inline(*computation, *instruction);
        instruction->ReplaceAllUsesWith(replacement);
        if (root == instruction) root = replacement;
        inlined.push_back(instruction);
      }
      computation->AddInstruction(std::move(owned));
    }
    pending.instructions.clear();
    computation->set_root(root);
    for (Instruction* call : inlined) computation->RemoveInstruction(call);
  }

  // The callee's instructions copied into `computation` with the call's operands for its
  // parameters; returns the copy of its root.
  Instruction* Inline(Computation& computation, const Instruction& call) {
    const Computation& callee = *call.to_apply();
    std::unordered_map<const Instruction*, Instruction*> copies;  // lookups only
    for (const auto& instruction : callee.instructions()) {
      if (instruction->opcode() == Opcode::kParameter) {
        copies[instruction.get()] = call.operand(instruction->parameter_number);
        continue;
      }
      std::vector<Instruction*> operands;
      for (const Instruction* operand : instruction->operands()) operands.push_back(copies.at(operand));
      auto copy = instruction->CloneWithNewOperands(instruction->shape(), operands);
      copy->set_name(reader_.names_.Unique(instruction->name()));
      if (copy->metadata.empty()) copy->metadata = call.metadata;
      copies[instruction.get()] = computation.AddInstruction(std::move(copy));
    }
    return copies.at(callee.root());
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

std::unique_ptr<Module> ModuleReader::Read() {
  ReadTopLevel();
  return Assembler(*this).Assemble();
}

}  // namespace gspmd::stablehlo
