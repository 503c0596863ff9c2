// Helpers shared by the CLI subcommands: reading inputs, checking them, writing outputs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/literal.h"
#include "ir/module.h"
#include "support/diagnostic.h"

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

// --devices must agree with a num_partitions the module states explicitly (UserError naming
// the file and both numbers).
void CheckDevicesMatchModule(const Module& module, const std::string& file, int64_t devices);

// Runs fn; a UserError whose message names no location ("...: error: ...") is rethrown as
// "file: error: message", so every error the CLI prints says which file it is about.
template <typename Fn>
decltype(auto) WithFileContext(const std::string& file, Fn&& fn) {
  try {
    return fn();
  } catch (const UserError& error) {
    if (error.HasLocation()) throw;
    throw UserError(file + ": error: " + error.what());
  }
}

}  // namespace gspmd::tools
