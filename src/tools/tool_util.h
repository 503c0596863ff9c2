// Helpers shared by the CLI subcommands: reading inputs, checking them, writing outputs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/literal.h"
#include "ir/module.h"
#include "api/file_context.h"
#include "api/pipeline.h"
#include "support/diagnostic.h"

namespace CLI {
class App;
}

namespace gspmd::tools {

// Reads a program: StableHLO MLIR text when the path ends in ".mlir" (what JAX's
// lower().as_text() prints), HLO text otherwise. Errors name the file (FILE:LINE:COL).
std::unique_ptr<Module> LoadProgram(const std::string& path);

// Reads every .npy file in order (UserError naming the file on failure).
std::vector<Literal> ReadInputs(const std::vector<std::string>& paths);

// The number of inputs must equal the number of entry parameters of the module in hlo_path.
void CheckInputCount(const Module& module, const std::string& hlo_path, size_t input_count);

// Each input's shape (dims and element type) must equal its entry parameter's shape.
void CheckInputShapes(const Module& module, const std::string& hlo_path, const std::vector<Literal>& inputs,
                      const std::vector<std::string>& input_paths);

// Creates out_dir (and parents) and writes outputs[i] as out_dir/out<i>.npy; prints one line
// per file ("out_dir/out0.npy f32[8,16]") on stdout.
void WriteOutputs(const std::string& out_dir, const std::vector<Literal>& outputs);

// Writes `text` to the file `path`, or to stdout when path is empty (UserError naming the
// path when it cannot be written).
void WriteText(const std::string& path, const std::string& text);

// --devices: a positive integer no larger than kMaxDevices ("gspmd COMMAND: error: --devices
// 'x' is not a valid device count ..." otherwise).
inline constexpr int64_t kMaxDevices = 4096;
int64_t ParseDeviceCount(const std::string& text, const std::string& command);

using api::BoundaryFlags;
using api::CheckDevicesMatchModule;
using api::CompiledPartition;
using api::HasManualRegion;
using api::IsPerDeviceProgram;
using api::NeedsPropagation;
using api::Propagate;
using api::WithFileContext;

// Adds --propagate-to-parameters and --propagate-to-outputs to a subcommand.
void AddBoundaryOptions(CLI::App& command, BoundaryFlags& flags);

// api::PartitionGlobal, printing the partitioner's warnings to stderr as "FILE: warning: ..."
// unless print_warnings is false (the ranks of an MPI job other than rank 0, which compile the
// same program).
// Prints a compile's warnings to stderr as "FILE: warning: ...".
void PrintWarnings(const std::string& file, const std::vector<std::string>& warnings);

CompiledPartition PartitionForCli(Module& module, const std::string& file, int64_t requested_devices,
                                  const BoundaryFlags& boundary = {}, bool print_warnings = true);

}  // namespace gspmd::tools
