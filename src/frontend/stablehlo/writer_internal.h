// The StableHLO writer's state: writer.cpp writes the module, functions, regions and value
// names; writer_ops.cpp writes each opcode's syntax. Internal to src/frontend/stablehlo.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "frontend/stablehlo/writer.h"
#include "ir/module.h"

namespace gspmd::stablehlo {

class Writer {
 public:
  Writer(const Module& module, const StableHloWriteOptions& options) : module_(module), options_(options) {}
  std::string Write();

  // ---- For writer_ops.cpp ----
  bool generic() const { return options_.generic; }
  // How a value is referred to: %5, %5#1, %arg0 (or the enclosing value a branch parameter
  // stands for).
  std::string Ref(const Instruction* instruction);
  std::string Refs(const std::vector<Instruction*>& instructions);
  // The values a computation returns: a tuple root's elements when `flatten_root` and the
  // root is a tuple instruction or a multi-result op, else the root.
  std::vector<std::string> ReturnedRefs(const Computation& computation, bool flatten_root);
  std::vector<Shape> ReturnedTypes(const Computation& computation, bool flatten_root);
  // Whether the op written for a tuple-shaped `instruction` has one result per tuple element
  // (sort, reduce, calls of functions returning several values, ...) rather than one tuple.
  bool Flattens(const Instruction& instruction);
  bool ReturnsFlat(const Computation& computation);
  // How many values the op written for `instruction` defines.
  int64_t ResultCount(const Instruction& instruction);
  // A region: `computation`'s body between braces at `indent`. Its parameters are block
  // arguments named `arg_names` (fresh names when empty), or, when `captured` is given,
  // stand for those enclosing values (no block arguments).
  std::string Region(const Computation& computation, int indent, bool flatten_root,
                     const std::vector<std::string>& arg_names = {}, const std::vector<std::string>* captured = nullptr);
  std::string FunctionName(const Computation& computation);
  int64_t num_devices() const;
  std::string FreshName(std::string_view prefix = "");
  // " {mhlo.sharding = ..., mhlo.frontend_attributes = {...}}" or "".
  std::string AttrDict(const Instruction& instruction, const std::vector<std::string>& more = {});
  std::string Location(const Instruction& instruction);

  // The op lines of one instruction, defining `def` (writer_ops.cpp); "" when it writes nothing.
  std::string WriteOp(const Instruction& instruction, const std::string& def, int indent);

 private:
  void WriteFunction(const Computation& computation, bool is_entry, std::string& out);
  std::string WriteBody(const Computation& computation, int indent);

  const Module& module_;
  StableHloWriteOptions options_;
  std::unordered_map<const Instruction*, std::string> names_;  // lookups only
  std::unordered_map<const Instruction*, std::string> multi_bases_;  // %5 of a %5:2 = ... op
  std::unordered_map<const Computation*, std::string> function_names_;
  int64_t next_value_ = 0;
};

// Helpers of both files.
std::string JoinText(const std::vector<std::string>& parts, const char* separator = ", ");
std::string IntList(const std::vector<int64_t>& values);       // [1, 2]
std::string DenseArray(const std::vector<int64_t>& values);    // array<i64: 1, 2>
std::string QuoteText(std::string_view text);
std::string Indent(int indent);
std::string TypeList(const std::vector<Shape>& types);          // T1, T2
std::string FunctionTypeText(const std::vector<Shape>& inputs, const std::vector<Shape>& results);

}  // namespace gspmd::stablehlo
