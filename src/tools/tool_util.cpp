// Helpers shared by the CLI subcommands: writing text, reading --devices, the options of the
// CLI's grammar (program kind, tolerances, hidden aliases), the boundary options (reading
// inputs and checking them live in api/cli_files.cpp).
#include "tools/tool_util.h"

#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "support/diagnostic.h"

namespace gspmd::tools {

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

void AddWindowedEinsumOption(CLI::App& command, std::string& mode) {
  command
      .add_option("--windowed-einsum", mode,
                  "turn the all-gather of a dot's operand into a loop of partial dots passing windows between "
                  "devices (collective matmul): auto (default: where the chip's model finds the step faster, with "
                  "--chip; otherwise operands of at least 1 GiB per device over at most 64 devices), off or always")
      ->check(CLI::IsMember({"auto", "off", "always"}))
      ->type_name("auto|off|always");
}

void AddMeshOption(CLI::App& command, std::string& mesh) {
  command
      .add_option("--mesh", mesh,
                  "name the mesh axes, major first (e.g. data=2,model=4), so shardings also print as "
                  "PartitionSpecs (P('data', None)); for HLO text, which has no sdy.mesh")
      ->type_name("AXIS=N,...");
}

std::optional<bool> ProgramKindFlags::Override() const {
  if (per_device) return true;
  if (global) return false;
  return std::nullopt;
}

CLI::Option* AddProgramKindOptions(CLI::App& command, ProgramKindFlags& flags, const std::string& what_global_means) {
  CLI::Option* per_device = command.add_flag(
      "--per-device", flags.per_device,
      "FILE is one device's program (partitioned: ours or XLA's); default: detected (collectives or partition-id)");
  CLI::Option* global = command.add_flag("--global", flags.global,
                                         "FILE is a global program, " + what_global_means + "; default: detected");
  per_device->excludes(global);
  return per_device;
}

void AddGlobalOverride(CLI::App& command, bool& global) {
  command.add_flag("--global", global,
                   "FILE is a global program even when it looks per-device (default: detected; a per-device FILE is "
                   "refused)");
}

api::Program LoadGlobalProgram(const std::string& file, bool global) {
  api::Program program = LoadProgramArgument(file);
  if (global) program.SetPerDevice(false);
  return program;
}

void AddHiddenFlagAlias(CLI::App& command, const std::string& name, bool& target) {
  command.add_flag(name, target, "")->group("");
}

void AddHiddenOptionAlias(CLI::App& command, const std::string& name, std::string& target) {
  command.add_option(name, target, "")->group("");
}

api::Program LoadProgramOfKind(const std::string& file, const ProgramKindFlags& flags, const std::string& command,
                               std::optional<bool> stated_kind) {
  api::Program program = LoadProgramArgument(file);
  program.SetPerDevice(flags.Override());
  if (flags.Override() || !stated_kind) return program;
  const bool per_device = program.IsPerDevice();
  if (per_device != *stated_kind) return program;
  const int64_t devices = program.module().num_partitions();
  std::fprintf(stderr, "gspmd %s: %s: %s program%s (detected; %s reads it as a %s one)\n", command.c_str(),
               program.name().c_str(), per_device ? "per-device" : "global",
               per_device && devices > 1 ? StrCat(" for ", devices, " devices").c_str() : "",
               per_device ? "--global" : "--per-device", per_device ? "global" : "per-device");
  return program;
}

void AddToleranceOptions(CLI::App& command, double& rtol, double& atol, const std::string& when,
                         CLI::Option* needs) {
  CLI::Option* relative =
      command.add_option("--rtol", rtol, when + "floats match when the relative L2 error ||a-e||/||e|| <= RTOL "
                                                "(default 1e-4)")
          ->type_name("RTOL");
  CLI::Option* absolute =
      command.add_option("--atol", atol, when + "... or when the root-mean-square difference <= ATOL (values near "
                                                "zero; default 1e-6); integers must be equal")
          ->type_name("ATOL");
  if (needs != nullptr) {
    relative->needs(needs);
    absolute->needs(needs);
  }
}

void CheckTolerances(double rtol, double atol, const std::string& command) {
  if (!(rtol >= 0) || !std::isfinite(rtol))
    GSPMD_USER_ERROR("gspmd ", command, ": error: --rtol ", rtol, " is invalid (expected a finite value >= 0)");
  if (!(atol >= 0) || !std::isfinite(atol))
    GSPMD_USER_ERROR("gspmd ", command, ": error: --atol ", atol, " is invalid (expected a finite value >= 0)");
}

}  // namespace gspmd::tools
