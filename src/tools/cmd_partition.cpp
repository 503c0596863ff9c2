// `gspmd partition FILE [-o OUT] [--devices N] [--propagate-only [--explain]]`: propagates
// shardings when the module is not fully sharded, partitions it, prints the per-device module.
#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "support/diagnostic.h"
#include "text/printer.h"
#include "tools/commands.h"
#include "tools/partition_pipeline.h"
#include "tools/tool_util.h"

namespace gspmd::tools {
namespace {

struct PartitionCommandOptions {
  std::string file;
  std::string out;
  std::string devices;  // validated by ParseDeviceCount
  bool propagate_only = false;
  bool explain = false;
};

// --propagate-only: the module after propagation (with --explain, each instruction followed
// by where its sharding came from).
std::string PropagatedText(Module& module, const PartitionCommandOptions& options, int64_t devices) {
  if (devices > 0) CheckDevicesMatchModule(module, options.file, devices);
  PropagationResult propagation = Propagate(module, options.file, devices, /*record_origins=*/options.explain);
  if (options.explain) return PrintModuleWithOrigins(module, propagation);
  return PrintModule(module);
}

void RunPartitionCommand(const PartitionCommandOptions& options) {
  if (options.explain && !options.propagate_only)
    GSPMD_USER_ERROR("gspmd partition: error: --explain needs --propagate-only (it explains the propagated "
                     "shardings, not the per-device program)");
  const int64_t devices = options.devices.empty() ? 0 : ParseDeviceCount(options.devices, "partition");
  std::unique_ptr<Module> module = LoadProgram(options.file);
  if (options.propagate_only) {
    WriteText(options.out, PropagatedText(*module, options, devices));
    return;
  }
  CliPartition partition = PartitionForCli(*module, options.file, devices);
  WriteText(options.out, PrintModule(*partition.partitioned.module));
}

}  // namespace

void AddPartitionCommand(CLI::App& app) {
  auto options = std::make_shared<PartitionCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "partition",
      "Propagate shardings (when not every instruction has one) and partition a module into one per-device "
      "program with collectives; print it");
  command->add_option("FILE", options->file, "HLO text file (XLA's propagated.hlo, or pre.hlo), or StableHLO (.mlir) text")
      ->required()
      ->type_name("FILE");
  command->add_option("-o,--out", options->out, "write the module to OUT instead of stdout")->type_name("OUT");
  command->add_option("--devices", options->devices,
                      "number of partitions (default: num_partitions, else derived from the shardings)")
      ->type_name("N");
  command->add_flag("--propagate-only", options->propagate_only,
                    "print the module after sharding propagation, without partitioning it");
  command->add_flag("--explain", options->explain,
                    "with --propagate-only: annotate each instruction with where its sharding came from");
  command->callback([options] { RunPartitionCommand(*options); });
}

}  // namespace gspmd::tools
