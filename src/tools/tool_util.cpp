// Helpers shared by the CLI subcommands: reading inputs, checking them, writing outputs.
#include "tools/tool_util.h"

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <system_error>

#include "io/array_source.h"
#include "io/npy.h"
#include "runtime/spmd/like_module.h"
#include "support/diagnostic.h"

namespace gspmd::tools {

api::Program LoadProgramArgument(const std::string& path) {
  if (path != "-") return api::Program::Load(path);
  std::ostringstream text;
  text << std::cin.rdbuf();
  return api::Program::FromText(text.str(), "<stdin>");
}

std::unique_ptr<Module> LoadProgram(const std::string& path) {
  return std::move(LoadProgramArgument(path)).TakeModule();
}

std::vector<Literal> ReadInputs(const std::vector<std::string>& paths) {
  std::vector<Literal> inputs;
  inputs.reserve(paths.size());
  for (const std::string& path : paths) inputs.push_back(ReadArrayFile(path));
  return inputs;
}

void CheckInputCount(const Module& module, const std::string& hlo_path, size_t input_count) {
  GSPMD_CHECK(module.entry() != nullptr, "parsed module has no entry computation");
  const int64_t expected = module.entry()->num_parameters();
  if (static_cast<int64_t>(input_count) == expected) return;
  ThrowUserErrorAt(SourceLocation{hlo_path, 0, 0},
                   StrCat("the entry computation '", module.entry()->name(), "' takes ", expected,
                          " parameter(s) but ", input_count, " input file(s) were given with -i (expected ",
                          expected, " .npy files, one per parameter in order)"));
}

void CheckInputShapes(const Module& module, const std::string& hlo_path, const std::vector<Literal>& inputs,
                      const std::vector<std::string>& input_paths) {
  CheckInputCount(module, hlo_path, inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Instruction* parameter = module.entry()->parameter(static_cast<int64_t>(i));
    const Shape& expected = parameter->shape();
    if (!expected.IsArray())
      ThrowUserErrorAt(SourceLocation{hlo_path, 0, 0},
                       StrCat("parameter ", i, " (%", parameter->name(), ") has shape ", expected.ToString(false),
                              ", which a .npy file cannot hold (expected array parameters only)"));
    if (inputs[i].shape().Compatible(expected)) continue;
    ThrowUserErrorAt(SourceLocation{input_paths[i], 0, 0},
                     InputMismatchMessage(inputs[i].shape(), expected, static_cast<int64_t>(i), parameter->name(),
                                          hlo_path));
  }
}

std::string InputMismatchMessage(const Shape& input, const Shape& expected, int64_t parameter_number,
                                 const std::string& parameter_name, const std::string& hlo_path) {
  std::string message = StrCat("input holds ", input.ToString(false), " but parameter ", parameter_number, " (%",
                               parameter_name, ") of ", hlo_path, " expects ", expected.ToString(false));
  const bool only_the_type_differs = input.IsArray() && expected.IsArray() && input.dims() == expected.dims() &&
                                     input.element_type() != expected.element_type();
  if (only_the_type_differs)
    message += StrCat(" (the dims match but the element type does not: save the array with x.astype(",
                      NumpyDtypeName(expected.element_type()), "))");
  return message;
}

void WriteOutputs(const std::string& out_dir, const std::vector<Literal>& outputs) {
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (error)
    ThrowUserErrorAt(SourceLocation{out_dir, 0, 0},
                     "cannot create the output directory: " + error.message() + " (expected a writable path)");
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string path = (std::filesystem::path(out_dir) / ("out" + std::to_string(i) + ".npy")).string();
    if (!outputs[i].shape().IsArray())
      ThrowUserErrorAt(SourceLocation{path, 0, 0},
                       StrCat("output ", i, " has shape ", outputs[i].shape().ToString(false),
                              ", which a .npy file cannot hold (expected an array)"));
    WriteNpy(path, outputs[i]);
    std::printf("%s %s\n", path.c_str(), outputs[i].shape().ToString(false).c_str());
  }
}

void WriteText(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  // Written beside the target and renamed into place, so a failure leaves no partial file.
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary);
    if (out) out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (out) out.close();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      ThrowUserErrorAt(SourceLocation{path, 0, 0}, "cannot write the output file (expected a writable path)");
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    ThrowUserErrorAt(SourceLocation{path, 0, 0}, "cannot write the output file (expected a writable path)");
  }
}

int64_t ParseDeviceCount(const std::string& text, const std::string& command) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  const bool is_whole_number = error == std::errc() && ptr == end;
  if (!is_whole_number || value < 1 || value > kMaxDevices)
    GSPMD_USER_ERROR("gspmd ", command, ": error: --devices '", text,
                     "' is not a valid device count (expected an integer from 1 to ", kMaxDevices, ")");
  return value;
}

void CheckGlobalOutputsKnown(const Module& per_device, const std::string& file, int64_t devices) {
  GSPMD_CHECK(per_device.entry() != nullptr, "parsed module has no entry computation");
  const Instruction& root = *per_device.entry()->root();
  const int64_t device_count = devices > 0 ? devices : per_device.num_partitions() * per_device.replica_count();
  const bool one_device = device_count <= 1;  // its outputs are the global arrays
  const bool records_global_shapes = !ModuleFrontendAttribute(per_device, kGlobalResultShapesAttribute).empty();
  if (one_device || root.sharding().has_value() || records_global_shapes) return;
  ThrowUserErrorAt(SourceLocation{file, 0, 0},
                   StrCat("the root %", root.name(), " of this per-device program has no sharding, so the global "
                          "output shapes cannot be known (expected --like GLOBAL naming the global program it was "
                          "partitioned from, e.g. XLA's propagated.hlo; or a sharding on the root, "
                          "sharding={replicated} if every device holds the whole result)"));
}

void AddBoundaryOptions(CLI::App& command, BoundaryFlags& flags) {
  command
      .add_option("--propagate-to-parameters", flags.to_parameters,
                  "whether propagation may choose the entry parameters' shardings: true, false, or one value per "
                  "parameter (default: propagate into unannotated parameters, keep annotated ones)")
      ->type_name("BOOL[,BOOL...]");
  command
      .add_option("--propagate-to-outputs", flags.to_outputs,
                  "whether propagation may choose the result's shardings: true, false, or one value per result "
                  "element (default: propagate into unannotated results, keep annotated ones)")
      ->type_name("BOOL[,BOOL...]");
}

void PrintWarnings(const std::string& file, const std::vector<std::string>& warnings) {
  std::fflush(stdout);
  for (const std::string& warning : warnings) std::fprintf(stderr, "%s: warning: %s\n", file.c_str(), warning.c_str());
}

CompiledPartition PartitionForCli(Module& module, const std::string& file, int64_t requested_devices,
                                  const BoundaryFlags& boundary, bool print_warnings) {
  CompiledPartition partition = api::PartitionGlobal(module, file, requested_devices, boundary);
  if (print_warnings) PrintWarnings(file, partition.partitioned.warnings);
  return partition;
}

}  // namespace gspmd::tools
