// Helpers shared by the CLI subcommands: reading inputs, checking them, writing outputs (the
// file-level ones live in the library, api/cli_files.h, which the jobs of run and train share).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/literal.h"
#include "ir/module.h"
#include "api/cli_files.h"
#include "api/file_context.h"
#include "api/gspmd.h"
#include "api/pipeline.h"
#include "support/diagnostic.h"

namespace CLI {
class App;
class Option;
}

namespace gspmd::tools {

// Writes `text` to the file `path`, or to stdout when path is empty or "-" (UserError naming
// the path when it cannot be written).
void WriteText(const std::string& path, const std::string& text);

// --devices: a positive integer no larger than kMaxDevices ("gspmd COMMAND: error: --devices
// 'x' is not a valid device count ..." otherwise).
inline constexpr int64_t kMaxDevices = 4096;
int64_t ParseDeviceCount(const std::string& text, const std::string& command);

using api::BoundaryFlags;
using api::CheckGlobalOutputsKnown;
using api::CheckInputCount;
using api::CheckInputShapes;
using api::InputMismatchMessage;
using api::LoadProgram;
using api::LoadProgramArgument;
using api::PartitionForCli;
using api::PrintWarnings;
using api::ReadInputs;
using api::WriteOutputs;
using api::CheckDevicesMatchModule;
using api::CompiledPartition;
using api::HasManualRegion;
using api::IsPerDeviceProgram;
using api::NeedsPropagation;
using api::Propagate;
using api::WithFileContext;

// Adds --propagate-to-parameters and --propagate-to-outputs to a subcommand.
void AddBoundaryOptions(CLI::App& command, BoundaryFlags& flags);

// Adds --windowed-einsum auto|off|always (how dots' all-gathers are partitioned) to a subcommand.
void AddWindowedEinsumOption(CLI::App& command, std::string& mode);

// --mesh AXIS=N,...: names the mesh axes of a program that has none (HLO text; a StableHLO
// program's sdy.mesh names them already), so shardings print as PartitionSpecs beside XLA's
// text. The command passes it to api::Program::WithMesh.
void AddMeshOption(CLI::App& command, std::string& mesh);

// The CLI's grammar (README "One grammar"): every command that reads a program says what kind
// of file it took it for. --per-device / --global override the detection (api::Program's
// IsPerDevice); at most one may be given.
struct ProgramKindFlags {
  bool per_device = false;
  bool global = false;
  // nullopt: detect; true: per-device; false: global.
  std::optional<bool> Override() const;
};
// Adds --per-device and --global; `what_global_means` says what the command does with a global
// program ("partitioned first", ...). Returns the --per-device option, for hidden aliases.
CLI::Option* AddProgramKindOptions(CLI::App& command, ProgramKindFlags& flags, const std::string& what_global_means);
// For commands that take only a global program (partition, lint, autoshard): --global reads
// FILE as global even when it looks per-device (which they refuse otherwise).
void AddGlobalOverride(CLI::App& command, bool& global);
// FILE loaded, taken as global when `global` (else detected).
api::Program LoadGlobalProgram(const std::string& file, bool global);
// A flag with an old spelling kept for one release: accepted, not listed in --help.
void AddHiddenFlagAlias(CLI::App& command, const std::string& name, bool& target);
void AddHiddenOptionAlias(CLI::App& command, const std::string& name, std::string& target);
// Loads FILE and applies the override; prints to stderr how the file was taken when that was
// detected rather than given, e.g. "gspmd run: x.hlo: per-device program for 8 devices (detected;
// --global to read it as a global one)". `stated_kind`: which detected kind is worth a line
// (the one the command does not expect by default); nullopt: neither.
api::Program LoadProgramOfKind(const std::string& file, const ProgramKindFlags& flags, const std::string& command,
                               std::optional<bool> stated_kind);

// --rtol and --atol, with the same meaning and defaults in compare, run and train: floats
// match when the relative L2 error <= rtol or the root-mean-square difference <= atol;
// integers must be equal.
inline constexpr double kDefaultRtol = 1e-4;
inline constexpr double kDefaultAtol = 1e-6;
// `needs`: the option they apply to (--check), which then must be given with them.
void AddToleranceOptions(CLI::App& command, double& rtol, double& atol, const std::string& when,
                         CLI::Option* needs = nullptr);
// rtol/atol must be finite and >= 0 ("gspmd COMMAND: error: --rtol ..." otherwise).
void CheckTolerances(double rtol, double atol, const std::string& command);

}  // namespace gspmd::tools
