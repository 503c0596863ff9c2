// `gspmd run FILE --spmd [--like OTHER] [--devices N] -i ... -o OUTDIR`: runs a per-device
// program on N simulated devices, splitting global inputs and assembling global outputs.
#include <CLI/CLI.hpp>

#include <charconv>
#include <memory>
#include <string>
#include <vector>

#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"
#include "support/diagnostic.h"
#include "text/parser.h"
#include "tools/commands.h"
#include "tools/tool_util.h"

namespace gspmd::tools {
namespace {

constexpr int64_t kMaxDevices = 4096;

struct RunOptions {
  std::string file;
  bool spmd = false;
  std::string like;
  std::string devices;  // validated by ParseDeviceCount
  std::vector<std::string> inputs;
  std::string out_dir;
};

// A positive integer no larger than kMaxDevices.
int64_t ParseDeviceCount(const std::string& text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  const bool is_whole_number = error == std::errc() && ptr == end;
  if (!is_whole_number || value < 1 || value > kMaxDevices)
    GSPMD_USER_ERROR("gspmd run: error: --devices '", text, "' is not a valid device count (expected an integer from 1 to ",
                     kMaxDevices, ")");
  return value;
}

// --devices must agree with a num_partitions the module states explicitly.
void CheckDevicesMatchModule(const Module& module, const std::string& file, int64_t devices) {
  if (module.Attribute("num_partitions").empty() || module.num_partitions() == devices) return;
  ThrowUserErrorAt(SourceLocation{file, 0, 0},
                   StrCat("--devices ", devices, " does not match the module's num_partitions=",
                          module.num_partitions(), " (expected --devices ", module.num_partitions(),
                          " or no --devices)"));
}

void RunSpmdCommand(const RunOptions& options) {
  if (!options.spmd)
    ThrowUserErrorAt(SourceLocation{options.file, 0, 0},
                     "partitioning is not implemented yet; use --spmd for per-device programs");
  const int64_t devices = options.devices.empty() ? 0 : ParseDeviceCount(options.devices);
  std::unique_ptr<Module> module = ParseModuleFile(options.file);
  std::unique_ptr<Module> like;
  if (!options.like.empty()) like = ParseModuleFile(options.like);
  if (devices > 0) CheckDevicesMatchModule(*module, options.file, devices);
  CheckInputCount(*module, options.file, options.inputs.size());
  std::vector<Literal> inputs = ReadInputs(options.inputs);

  SpmdRunOptions run_options = WithFileContext(
      options.like.empty() ? options.file : options.like, [&] { return OptionsFromLikeModule(*module, like.get()); });
  if (devices > 0) run_options.num_devices = devices;
  std::vector<Literal> outputs = WithFileContext(options.file, [&] { return RunSpmd(*module, inputs, run_options); });
  WriteOutputs(options.out_dir, outputs);
}

}  // namespace

void AddRunCommand(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand(
      "run", "Run a program on simulated devices; with --spmd, FILE is already a per-device program");
  command->add_option("FILE", options->file, "HLO text file")->required()->type_name("FILE");
  command->add_flag("--spmd", options->spmd,
                    "FILE is a per-device (partitioned) program: run it on every device as is");
  command->add_option("--like", options->like,
                      "HLO module whose entry supplies parameter/root shardings FILE lacks "
                      "(e.g. XLA's propagated.hlo for its partitioned.hlo)")
      ->type_name("OTHER");
  command->add_option("--devices", options->devices, "number of simulated devices (default: num_partitions)")
      ->type_name("N");
  command->add_option("-i,--inputs", options->inputs, "one global .npy value per entry parameter, in order")
      ->type_name("NPY");
  command->add_option("-o,--out", options->out_dir, "output directory (created) for out0.npy, out1.npy, ...")
      ->required()
      ->type_name("DIR");
  command->callback([options] { RunSpmdCommand(*options); });
}

}  // namespace gspmd::tools
