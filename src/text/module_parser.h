// ModuleParser: the state of one HLO text parse (module header, debug tables,
// computations, instructions and their attributes). Internal to src/text.
#pragma once

#include <map>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/module.h"
#include "text/scanner.h"

namespace gspmd::hlo_text {

class ModuleParser {
 public:
  ModuleParser(std::string_view text, std::string filename) : scanner_(text, std::move(filename)) {}
  std::unique_ptr<Module> Parse();

 private:
  // What the parser knows about the computation being parsed.
  struct ComputationState {
    Computation* computation = nullptr;
    std::unordered_map<std::string_view, Instruction*> names;
    // %t#i operands: one get-tuple-element per (tuple, index), named at the end.
    std::map<std::pair<const Instruction*, int64_t>, Instruction*> tuple_refs;
    std::vector<Instruction*> synthesized;
    std::vector<bool> has_parameter;
    Instruction* root = nullptr;
    Instruction* last = nullptr;
  };

  // parser.cpp: module structure.
  void ParseHeader();
  void ParseDebugTables();
  void CheckEntryComputationLayout();
  void ParseComputation();
  void FinishComputation(ComputationState& state, size_t name_pos);
  Computation* ResolveComputation(std::string_view name, size_t pos);

  // instruction_parser.cpp: one instruction line.
  void ParseInstruction(ComputationState& state);
  Instruction* ParseInstructionRhs(ComputationState& state, std::string name, size_t start, int depth);
  void ParseOperands(ComputationState& state, Instruction& instruction, int depth);
  Instruction* ResolveOperand(ComputationState& state, std::string_view name, size_t pos);
  Instruction* TupleElementRef(ComputationState& state, Instruction* tuple, int64_t index, size_t pos);

  // attribute_parser.cpp: the ", name=value" list of an instruction.
  struct CalledSlots;
  void ParseAttributes(Instruction& instruction, size_t opcode_pos, bool allow_attributes);
  void ParseShardingAttribute(Instruction& instruction);
  void ParseReplicaGroupsAttribute(Instruction& instruction);
  void ParseComparisonOrderAttribute(Instruction& instruction);
  std::optional<Sharding> ParseWithFullyUnreducedLeaves(const std::string& text);
  void ResolveFullyUnreducedShardings();
  std::vector<Computation*> ParseComputationList();
  std::string_view ReadShapedLiteralText();
  void ReadShapedLiteral(int depth);

  Scanner scanner_;
  std::unique_ptr<Module> module_;
  std::vector<std::unique_ptr<Computation>> computations_;  // added to module_ at the end
  std::unordered_map<std::string_view, Computation*> computation_names_;
  Computation* entry_ = nullptr;
  int64_t num_partitions_ = 0;  // 0: the module does not say
  int64_t replica_count_ = 0;   // 0: the module does not say
  size_t sharding_pos_ = 0;
  bool headerless_ = false;      // no "HloModule" line: named module_<entry> at the end
  size_t layout_pos_ = 0;        // where entry_computation_layout's value starts (0: none)      // where the current instruction's sharding= value starts
  std::unordered_map<std::string, Sharding> sharding_cache_;  // by comment-free text
  // {unreduced} leaves (newer XLA: a partial sum over every device) of the instruction being
  // read, then of every instruction: flat leaf index and reduction. They read as {unknown}
  // until the module's device count is known, then become tiled unreduced shardings.
  struct UnreducedLeaf {
    size_t leaf = 0;
    Sharding::Reduction reduction = Sharding::Reduction::kSum;
  };
  std::vector<UnreducedLeaf> pending_unreduced_;
  std::vector<std::pair<Instruction*, std::vector<UnreducedLeaf>>> unreduced_instructions_;
};

}  // namespace gspmd::hlo_text
