// The file-level steps the CLI's jobs share (reading a program argument and input files,
// checking them against the entry parameters, writing outputs, printing the compile's
// warnings), in the library so that api::RunJob and api::TrainJob run the same steps the other
// subcommands do.
#include "api/cli_files.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <system_error>

#include "io/array_source.h"
#include "io/npy.h"
#include "runtime/spmd/like_module.h"
#include "support/diagnostic.h"

namespace gspmd::api {

Program LoadProgramArgument(const std::string& path) {
  if (path != "-") return Program::Load(path);
  std::ostringstream text;
  text << std::cin.rdbuf();
  return Program::FromText(text.str(), "<stdin>");
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

void PrintWarnings(const std::string& file, const std::vector<std::string>& warnings) {
  std::fflush(stdout);
  for (const std::string& warning : warnings) std::fprintf(stderr, "%s: warning: %s\n", file.c_str(), warning.c_str());
}

CompiledPartition PartitionForCli(Module& module, const std::string& file, int64_t requested_devices,
                                  const BoundaryFlags& boundary, bool print_warnings,
                                  const WindowedEinsumOptions& windowed_einsum) {
  CompiledPartition partition = PartitionGlobal(module, file, requested_devices, boundary, windowed_einsum);
  if (print_warnings) PrintWarnings(file, partition.partitioned.warnings);
  return partition;
}

}  // namespace gspmd::api
