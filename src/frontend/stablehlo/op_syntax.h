// OpSyntax and Region: one StableHLO operation as written, with its operands already resolved
// to converted instructions, its attributes under their generic (property) names whichever
// syntax was used, its regions, and its types. The op converters (one file per op family,
// see op_table.h) turn an OpSyntax into HLO instructions.
//
//   %0 = stablehlo.broadcast_in_dim %x, dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
//   %0 = "stablehlo.broadcast_in_dim"(%x) <{broadcast_dimensions = array<i64: 0>}>
//            : (tensor<4xf32>) -> tensor<4x8xf32>
// both give name "stablehlo.broadcast_in_dim", one operand, attribute
// broadcast_dimensions = [0] and result type f32[4,8].
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/stablehlo/attributes.h"
#include "ir/instruction.h"

namespace gspmd::stablehlo {

// A region (the body of while/if/reduce/...): its block arguments as placeholder parameter
// instructions, its instructions in program order (not yet in any computation), the values
// its terminator returns, and the values it uses from enclosing regions. The op that owns
// the region decides how it becomes a computation (see regions.h).
struct Region {
  size_t pos = 0;                                      // the '{'
  std::vector<Instruction*> args;                      // kParameter placeholders, numbered 0..n-1
  std::vector<std::unique_ptr<Instruction>> owned_args;
  std::vector<std::unique_ptr<Instruction>> body;      // program order
  std::vector<Instruction*> returned;                  // operands of the terminator
  size_t return_pos = 0;
  bool has_terminator = false;
  // A value of an enclosing region used here: `placeholder` stands for `outer` inside.
  struct Capture {
    Instruction* outer = nullptr;
    Instruction* placeholder = nullptr;
    size_t use_pos = 0;
  };
  std::vector<Capture> captures;
  std::vector<std::unique_ptr<Instruction>> owned_captures;
};

struct OpSyntax {
  std::string_view name;                // "stablehlo.add" (func.call for a bare "call")
  size_t pos = 0;                       // where the op name starts
  size_t num_results = 0;               // values the op defines (%0:3 = ... is 3)
  std::vector<Instruction*> operands;
  std::vector<size_t> operand_pos;
  std::vector<NamedAttr> attributes;    // properties <{...}> and the attribute dictionary
  std::vector<std::unique_ptr<Region>> regions;
  std::vector<Shape> operand_types;     // as written (empty when the syntax has none)
  bool operands_like_result = false;    // ": T": every operand has the result type (not copied)
  bool operand_types_checked = false;   // the written operand types were checked while read
  // The names the op's results are bound to, with their counts (%0:2 -> {"0", 2}).
  std::vector<std::pair<std::string_view, uint32_t>> result_names;

  // Empties the op for the next one at the same depth, keeping the vectors' storage.
  void Reset() {
    name = {};
    pos = 0;
    num_results = 0;
    operands.clear();
    operand_pos.clear();
    attributes.clear();
    regions.clear();
    operand_types.clear();
    result_types.clear();
    result_names.clear();
    generic = operands_like_result = operand_types_checked = false;
  }
  std::vector<Shape> result_types;
  bool generic = false;

  const NamedAttr* Find(std::string_view attr_name) const {
    for (const NamedAttr& attr : attributes)
      if (attr.name == attr_name) return &attr;
    return nullptr;
  }
  // Adds an attribute read by a pretty-syntax parser under its generic name (the reference
  // is valid until the next Add).
  Attr& Add(std::string_view attr_name, size_t attr_pos) {
    NamedAttr& added = attributes.emplace_back();
    added.name = attr_name;
    added.pos = attr_pos;
    added.value.pos = attr_pos;
    return added.value;
  }
};

// What a converter made of one op: one instruction per MLIR result, and the instruction that
// carries the op's own attributes (sharding, frontend attributes): the tuple-shaped
// instruction of a multi-result op, or the single result.
struct Converted {
  std::vector<Instruction*> results;
  Instruction* primary = nullptr;
};

}  // namespace gspmd::stablehlo
