// The library's one public entry: load a program, propagate, partition, report, lint, show,
// simulate, evaluate and run it. Options go in structs, results come back as values, and bad
// input is a located, typed UserError (support/diagnostic.h). The CLI's subcommands and the
// Python package are thin layers over these functions.
//
//   gspmd::api::Program program = gspmd::api::Program::Load("pre.hlo");
//   gspmd::api::Partitioned p = gspmd::api::Partition(program, {.devices = 8});
//   gspmd::CommReport report = gspmd::api::Report(p.per_device);
//   std::vector<gspmd::Literal> out = gspmd::api::Run(program, inputs, {.devices = 8});
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/comm_report.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "lint/lint.h"
#include "propagation/propagation.h"
#include "simulate/simulator.h"

namespace gspmd::api {

// How a program's text is written.
enum class Format {
  kAuto,       // by the file name: ".mlir" is StableHLO, anything else HLO text
  kHlo,        // XLA's HLO text
  kStableHlo,  // StableHLO MLIR text (with Shardy or mhlo.sharding annotations)
};

// One program (global or per-device) and the name errors about it use. Cheap to copy: copies
// share the module, which no pass changes in place: a pass given a copy works on a fresh module
// of its own (read again from the text), one given the last holder (std::move) takes its module.
class Program {
 public:
  // Reads a file (Format::kAuto decides by its name). Errors name FILE:LINE:COL.
  static Program Load(const std::string& path, Format format = Format::kAuto);
  // Parses text; `name` stands for the file in error messages and in kAuto's choice.
  static Program FromText(std::string text, const std::string& name = "<text>", Format format = Format::kAuto);
  // Takes a module built in memory (the builder, a model, a pass).
  static Program FromModule(std::unique_ptr<Module> module, const std::string& name = "<module>");

  const Module& module() const;
  const std::string& name() const;
  // The module as XLA's HLO text.
  std::string Text() const;
  // A module the caller may change: a fresh copy, or this program's own when it is an rvalue
  // that no other Program shares (the program is then empty).
  std::unique_ptr<Module> CopyModule() const;
  std::unique_ptr<Module> TakeModule() &&;
  // A per-device (partitioned) program: the partitioner's output, or one with collectives or
  // partition-id outside manual regions.
  bool IsPerDevice() const;
  // Whether some instruction still lacks a sharding (propagation would choose it).
  bool NeedsPropagation() const;

 private:
  struct State;
  explicit Program(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

// Whether propagation may choose the shardings of the entry parameters / the result:
// "" (the default: keep written ones, propagate unwritten ones), "true", "false", or one value
// per parameter / result element ("true,false").
struct BoundaryOptions {
  std::string to_parameters;
  std::string to_outputs;
};

struct PropagateOptions {
  int64_t devices = 0;   // 0: from the module
  bool explain = false;  // record where each sharding came from
  BoundaryOptions boundary;
};

struct Propagated {
  Program program;  // every instruction sharded
  PropagationResult result;
  // HLO text; with `explain` each instruction carries /* from %w (user) via dot backward */.
  std::string Text(bool explain) const;
};

// Assigns a sharding to every instruction of a global program.
Propagated Propagate(Program program, const PropagateOptions& options = {});

struct PartitionOptions {
  int64_t devices = 0;  // 0: num_partitions, else derived from the shardings
  BoundaryOptions boundary;
};

struct Partitioned {
  Program global;      // after propagation
  Program per_device;  // the SPMD program, num_partitions set
  int64_t num_devices = 0;
  std::vector<std::string> warnings;  // "involuntary full rematerialization of %x ..."
};

// Propagates (where needed) and partitions a global program into one per-device program.
// A per-device program is refused (it would be partitioned twice).
Partitioned Partition(Program program, const PartitionOptions& options = {});

// Bytes sent per device by collective kind (ring model), collective counts, peak live bytes of
// a per-device program.
CommReport Report(const Program& per_device);

struct ShowOptions {
  std::vector<std::string> values;  // instruction names; empty: the entry parameters and result
  int64_t devices = 0;
  bool color = false;
};
// Tile grids (1-D/2-D) or dims tables of how values are laid out over the devices; a global
// program is propagated first.
std::string Show(const Program& program, const ShowOptions& options = {});

// Lint findings of a global program (lint::LintOptions: thresholds, device count, budget).
lint::LintReport Lint(const Program& program, const lint::LintOptions& options = {});

struct SimulateOptions {
  std::string chip = "tpu-v3";  // a built-in name, NAME.json in $GSPMD_CHIP_PATH, or a path
  std::string topology;         // e.g. "8x8"; "": the smallest standard slice
  std::string placement;        // e.g. "core,x,y"
  int64_t devices = 0;
  std::string compute_type;     // re-type the float math (e.g. "bf16")
  std::string mixed_precision;  // re-type the math but keep parameters and state
  std::string breakdown = "op_name";  // op_name, layer or opcode
  int64_t breakdown_depth = 0;
  bool rematerialize = true;
  // Whether the program is per-device: nullopt decides by Program::IsPerDevice.
  std::optional<bool> per_device;
};
// One step of the program on a chip and cluster; a global program is partitioned first.
simulate::SimulationReport Simulate(Program program, const SimulateOptions& options = {});

// Evaluates a global program on one device with the reference interpreter: one array per entry
// parameter in, the leaves of the result out. A program with manual (shard_map) regions runs on
// its devices instead (one device cannot run per-device code alone).
std::vector<Literal> Eval(const Program& program, const std::vector<Literal>& inputs);

struct RunOptions {
  int64_t devices = 0;  // 0: num_partitions, else derived from the shardings
  BoundaryOptions boundary;
  // For a per-device program: the global program it came from, supplying the parameter and
  // root shardings and global shapes it lacks (XLA's propagated.hlo for its partitioned.hlo).
  const Program* like = nullptr;
};
// Runs on simulated devices (threads of this process): global arrays in, global arrays out.
// A global program is partitioned first; a per-device one runs as it is.
std::vector<Literal> Run(const Program& program, const std::vector<Literal>& inputs, const RunOptions& options = {});

// Each input must have its entry parameter's shape and element type (UserError naming the
// input, the parameter and both shapes). `input_names` (optional) name the inputs in messages.
void CheckInputs(const Program& program, const std::vector<Literal>& inputs,
                 const std::vector<std::string>& input_names = {});

}  // namespace gspmd::api
