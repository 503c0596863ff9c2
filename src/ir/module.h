// Module: a set of computations with one entry, plus module-level attributes.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/computation.h"

namespace gspmd {

// The debug tables XLA prints after the header (FileNames, FunctionNames, FileLocations,
// StackFrames), kept as their verbatim lines.
struct DebugTables {
  std::vector<std::string> file_names;
  std::vector<std::string> function_names;
  std::vector<std::string> file_locations;
  std::vector<std::string> stack_frames;
  bool present = false;
};

// An HLO module:
//   HloModule jit_f, entry_computation_layout={(f32[8]{0})->f32[8]{0}}, num_partitions=8
// Computations are kept in text order; called computations precede their callers.
class Module {
 public:
  explicit Module(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  Computation* AddComputation(std::unique_ptr<Computation> computation, bool is_entry = false);
  // Adds a computation before all existing ones (callees print before their callers).
  Computation* AddComputationFront(std::unique_ptr<Computation> computation);
  const std::vector<std::unique_ptr<Computation>>& computations() const { return computations_; }
  Computation* entry() const { return entry_; }
  Computation* FindComputation(const std::string& name) const;
  // Removes computations that no instruction reachable from the entry calls.
  void RemoveUnusedComputations();

  // Module attributes, all kept verbatim in the order written, e.g.
  // {"entry_computation_layout", "{(f32[8]{0})->f32[8]{0}}"}, {"num_partitions", "8"}.
  std::vector<std::pair<std::string, std::string>> attributes;
  std::string Attribute(const std::string& key) const;  // "" when absent
  void SetAttribute(const std::string& key, std::string value);  // replaces or appends
  // num_partitions / replica_count attributes as numbers (1 when absent).
  int64_t num_partitions() const;
  int64_t replica_count() const;
  void set_num_partitions(int64_t n) { SetAttribute("num_partitions", std::to_string(n)); }

  DebugTables debug_tables;

 private:
  std::string name_;
  std::vector<std::unique_ptr<Computation>> computations_;
  Computation* entry_ = nullptr;
};

}  // namespace gspmd
