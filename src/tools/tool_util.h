// Helpers shared by the CLI subcommands: reading inputs, checking them, writing outputs (the
// file-level ones live in the library, api/cli_files.h, which the jobs of run and train share).
#pragma once

#include <cstdint>
#include <memory>
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

}  // namespace gspmd::tools
