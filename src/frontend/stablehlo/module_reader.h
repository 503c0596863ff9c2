// ModuleReader: the state of one StableHLO text read. It walks the module (sdy.mesh,
// func.func), reads each operation in its generic or pretty form into an OpSyntax, hands it
// to the op's converter (op_table.h) and binds the results; regions are read into Regions in
// nested scopes (values of enclosing regions become captures). At the end it assembles the
// Module (assembly.cpp): computations in call order, composites inlined, locations turned
// into metadata. Internal to src/frontend/stablehlo.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "frontend/stablehlo/attributes.h"
#include "frontend/stablehlo/cursor.h"
#include "frontend/stablehlo/instruction_names.h"
#include "frontend/stablehlo/locations.h"
#include "frontend/stablehlo/op_syntax.h"
#include "ir/hlo_builder.h"
#include "ir/module.h"
#include "ir/shape_inference.h"
#include "sharding/mesh.h"

namespace gspmd::stablehlo {

// A block argument an op's syntax declares itself (while's %iterArg, reduce's reducer(...)).
struct RegionArg {
  std::string_view name;
  Shape type;
  size_t pos = 0;
};

class ModuleReader {
 public:
  ModuleReader(std::string_view text, std::string filename);
  std::unique_ptr<Module> Read();

  // ---- For the op parsers (pretty syntax) ----
  Cursor& cursor() { return cursor_; }
  const ParseEnv& env() const { return env_; }
  // %x or %x#i at the cursor, appended to op's operands.
  Instruction* ReadOperand(OpSyntax& op);
  // Zero or more comma-separated operands (stops at anything that is not '%').
  void ReadOperands(OpSyntax& op);
  // An attribute dictionary when '{' is next (merged into op.attributes).
  void ReadOptionalAttrDict(OpSyntax& op);
  Shape ReadType();
  // A region at the cursor ('{'). With `args` empty the region may declare its block
  // arguments (^bb0(%a: tensor<f32>, ...):); isolated regions see no enclosing values.
  std::unique_ptr<Region> ReadRegion(std::vector<RegionArg> args, bool isolated = false);
  // "(%a: tensor<f32>, %b: tensor<f32>)" block arguments written by an op's syntax.
  std::vector<RegionArg> ReadRegionArgs();

  // ---- For the converters ----
  [[noreturn]] void Error(size_t pos, const std::string& message) const { cursor_.ErrorAt(pos, message); }
  // Stages an instruction in the current region (named after its opcode unless named).
  Instruction* Add(std::unique_ptr<Instruction> instruction);
  Instruction* AddOp(Opcode opcode, Shape shape, const std::vector<Instruction*>& operands);
  Instruction* Gte(Instruction* tuple, int64_t index);
  Instruction* Tuple(const std::vector<Instruction*>& elements);
  // The per-result view of `producer`: its tuple elements when op has several results.
  Converted Results(const OpSyntax& op, Instruction* producer);
  // Checks an instruction with the IR's per-instruction rules; errors point at `pos`.
  void Verify(const Instruction& instruction, size_t pos) const;

  // A new computation whose instructions are given now or later (DefineComputation);
  // computations are added to the module in call order at the end.
  Computation* NewComputation(std::string_view base_name);
  // Its instructions (parameters first, in order) and root.
  void DefineComputation(Computation* computation, std::vector<std::unique_ptr<Instruction>> instructions,
                         Instruction* root);
  // The computation of function @name (defined before or after this use). The call's
  // operand and result shapes are checked against the function at the end.
  // check_signature=false for references that are not calls (custom_call's called_computations).
  Computation* FunctionFor(const std::string& name, size_t pos, const std::vector<Shape>& operand_shapes,
                           const std::vector<Shape>& result_shapes, bool check_signature = true);
  // `call` is replaced by its callee's instructions when the module is assembled.
  void InlineAtAssembly(Instruction* call) { inline_calls_.insert(call); }

  // The terminator of the region being read (stablehlo.return, func.return, sdy.return).
  void SetReturn(const OpSyntax& op);
  // The Shardy meshes declared so far (sdy.mesh), by name.
  const std::map<std::string, Mesh>& meshes() const { return meshes_; }
  InstructionNames& names() { return names_; }
  // Parsed mhlo.sharding strings by their text (programs repeat a few shardings many times).
  std::unordered_map<std::string, Sharding>& sharding_cache() { return sharding_cache_; }
  // Reducers of the compact `applies stablehlo.add` form, by opcode and argument types: one
  // computation serves every reduce that applies the same op to the same types, as in XLA's text.
  std::unordered_map<std::string, Computation*>& compact_reducers() { return compact_reducers_; }

 private:
  friend class Assembler;

  // Values of one region: name -> results (a name may define several: %0:3).
  struct Scope {
    Region* region = nullptr;
    bool isolated = false;
    // Names MLIR numbers (%0, %1, ...) by number from the first number bound here (a region's
    // numbers continue its parent's), others hashed: (first value, count), count 0 for none.
    std::vector<std::pair<uint32_t, uint32_t>> numbered;
    int64_t numbered_base = -1;
    std::unordered_map<std::string_view, std::pair<uint32_t, uint32_t>> names;
    std::vector<Instruction*> values;
    std::map<std::pair<std::string_view, int64_t>, Instruction*> captured;
  };

  // A computation and its instructions until they are added to it: at once when defined,
  // or, when it inlines a composite whose decomposition is not finished yet, at the end.
  struct PendingComputation {
    std::unique_ptr<Computation> computation;
    std::vector<std::unique_ptr<Instruction>> instructions;
    Instruction* root = nullptr;
    bool defined = false;
    bool finished = false;
  };

  struct FunctionInfo {
    Computation* computation = nullptr;
    size_t first_use = 0;
    bool defined = false;
    bool is_public = false;
    std::vector<Shape> inputs, results;
  };
  struct CallCheck {
    std::string name;
    size_t pos;
    std::vector<Shape> operands, results;
  };

  // Top level (module_reader.cpp).
  void ReadTopLevel();
  void ReadAliasDefinition();
  void ReadModuleOp();
  void ReadModuleItem();
  void ReadMesh();
  void ReadFunction();

  // Operations.
  void ReadOperation();
  void ReadGenericOp(OpSyntax& op);
  void ApplyOpAttributes(OpSyntax& op, const Converted& converted);
  // The text inside a trailing loc(...), when there is one.
  std::optional<std::string_view> ReadTrailingLocation();
  void BindResults(const std::vector<std::pair<std::string_view, uint32_t>>& names, size_t pos,
                   const std::vector<Instruction*>& results);

  // Computations (assembly.cpp).
  bool Finished(const Computation* computation) const;
  bool ReadyToFinish(const PendingComputation& pending) const;
  void FinishComputation(PendingComputation& pending);
  Instruction* InlineCall(Computation& computation, Instruction& call);
  void RunChecks(const Instruction& instruction, size_t pos) const;

  // Values and scopes.
  Instruction* Lookup(std::string_view name, int64_t index, size_t pos);
  Instruction* CaptureInto(size_t scope_index, Instruction* outer, std::string_view name, int64_t index, size_t pos);
  void Bind(Scope& scope, std::string_view name, size_t pos, std::span<Instruction* const> values);
  Scope& current() { return *scopes_.back(); }
  std::unique_ptr<Instruction> MakePlaceholder(const Shape& shape, int64_t number, std::string_view name);

  Cursor cursor_;
  TypeAliases type_aliases_;
  AttrAliases attr_aliases_;
  ParseEnv env_;
  Locations locations_;
  std::vector<std::unique_ptr<Scope>> scopes_;
  std::vector<std::unique_ptr<OpSyntax>> op_pool_;  // by depth (see ReadOperation)
  size_t op_depth_ = 0;
  std::unique_ptr<Module> module_;
  std::string module_name_ = "main";
  std::vector<std::pair<std::string, std::string>> module_attributes_;
  std::map<std::string, Mesh> meshes_;
  std::vector<std::pair<std::string, std::string>> mesh_texts_;  // in declaration order
  std::vector<PendingComputation> computations_;
  std::unordered_map<const Computation*, size_t> pending_index_;
  std::map<std::string, FunctionInfo> functions_;
  std::vector<std::string> function_order_;
  std::vector<CallCheck> call_checks_;
  std::set<const Instruction*> inline_calls_;
  std::vector<std::unique_ptr<Instruction>> inlined_calls_;  // replaced by their callees
  std::unique_ptr<Instruction> detached_;  // the operand inlined calls are left with
  // Instructions whose called computations were not finished when they were converted.
  std::vector<std::pair<const Instruction*, size_t>> deferred_checks_;
  // Inlined copies (copy, original, composite call): metadata is copied once locations are read.
  std::vector<std::tuple<Instruction*, const Instruction*, const Instruction*>> inlined_copies_;
  DeviceCounts device_counts_;
  std::unordered_map<std::string, Sharding> sharding_cache_;
  std::unordered_map<std::string, Computation*> compact_reducers_;
  InstructionNames names_;
  NameUniquer computation_names_;
  std::string entry_name_;
  bool saw_module_ = false;
};

}  // namespace gspmd::stablehlo
