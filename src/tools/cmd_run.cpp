// `gspmd run FILE [--spmd [--like OTHER]] [--devices N] -i ... -o OUTDIR`: runs a program on N
// simulated devices with global inputs and outputs. Without --spmd, FILE is a global program:
// it is propagated (when not fully sharded) and partitioned first. With --spmd, FILE is
// already a per-device program.
#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"
#include "support/diagnostic.h"
#include "tools/commands.h"
#include "tools/partition_pipeline.h"
#include "tools/tool_util.h"

namespace gspmd::tools {
namespace {

struct RunOptions {
  std::string file;
  bool spmd = false;
  std::string like;
  std::string devices;  // validated by ParseDeviceCount
  std::vector<std::string> inputs;
  std::string out_dir;
};

// FILE is a per-device program: split the inputs by its entry shardings and run it as is.
void RunPerDeviceProgram(const RunOptions& options, int64_t devices) {
  std::unique_ptr<Module> module = LoadProgram(options.file);
  std::unique_ptr<Module> like;
  if (!options.like.empty()) like = LoadProgram(options.like);
  if (devices > 0) CheckDevicesMatchModule(*module, options.file, devices);
  CheckInputCount(*module, options.file, options.inputs.size());
  std::vector<Literal> inputs = ReadInputs(options.inputs);

  SpmdRunOptions run_options = WithFileContext(
      options.like.empty() ? options.file : options.like, [&] { return OptionsFromLikeModule(*module, like.get()); });
  if (devices > 0) run_options.num_devices = devices;
  std::vector<Literal> outputs = WithFileContext(options.file, [&] { return RunSpmd(*module, inputs, run_options); });
  WriteOutputs(options.out_dir, outputs);
}

// FILE is a global program: partition it onto the devices, then run the per-device program
// with the global program's shapes and shardings.
void RunGlobalProgram(const RunOptions& options, int64_t devices) {
  std::unique_ptr<Module> module = LoadProgram(options.file);
  if (devices > 0) CheckDevicesMatchModule(*module, options.file, devices);
  std::vector<Literal> inputs = ReadInputs(options.inputs);
  CheckInputShapes(*module, options.file, inputs, options.inputs);

  std::vector<Literal> outputs = PartitionAndRun(*module, options.file, devices, inputs);
  WriteOutputs(options.out_dir, outputs);
}

void RunCommand(const RunOptions& options) {
  if (!options.like.empty() && !options.spmd)
    GSPMD_USER_ERROR("gspmd run: error: --like needs --spmd (it describes the program a per-device FILE was "
                     "partitioned from; without --spmd FILE is that program)");
  const int64_t devices = options.devices.empty() ? 0 : ParseDeviceCount(options.devices, "run");
  if (options.spmd) {
    RunPerDeviceProgram(options, devices);
    return;
  }
  RunGlobalProgram(options, devices);
}

}  // namespace

void AddRunCommand(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand(
      "run",
      "Run a program on simulated devices with global inputs and outputs: FILE is partitioned first "
      "(propagating shardings if needed), unless --spmd says it is a per-device program already");
  command->add_option("FILE", options->file, "HLO text file, or StableHLO (.mlir) text")->required()->type_name("FILE");
  command->add_flag("--spmd", options->spmd,
                    "FILE is a per-device (partitioned) program: run it on every device as is");
  command->add_option("--like", options->like,
                      "with --spmd: HLO module whose entry supplies parameter/root shardings and global "
                      "result shapes FILE lacks (e.g. XLA's propagated.hlo for its partitioned.hlo)")
      ->type_name("OTHER");
  command->add_option("--devices", options->devices,
                      "number of simulated devices (default: num_partitions, else derived from the shardings)")
      ->type_name("N");
  command->add_option("-i,--inputs", options->inputs, "one global .npy value per entry parameter, in order")
      ->type_name("NPY");
  command->add_option("-o,--out", options->out_dir, "output directory (created) for out0.npy, out1.npy, ...")
      ->required()
      ->type_name("DIR");
  command->callback([options] { RunCommand(*options); });
}

}  // namespace gspmd::tools
