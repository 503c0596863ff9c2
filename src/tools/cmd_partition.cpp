// `gspmd partition FILE [-o OUT] [--devices N] [--propagate-only [--explain]]
// [--propagate-to-parameters B] [--propagate-to-outputs B] [--windowed-einsum MODE [--chip NAME]]`: propagates
// shardings when the module is not fully sharded, partitions it, prints the per-device module
// and says on stderr in one line what it made (devices, collectives, bytes communicated).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "api/gspmd.h"
#include "support/diagnostic.h"
#include "support/units.h"
#include "tools/commands.h"
#include "tools/tool_util.h"

namespace gspmd::tools {
namespace {

struct PartitionCommandOptions {
  std::string file;
  std::string mesh;  // --mesh AXIS=N,...
  std::string out;
  std::string devices;  // validated by ParseDeviceCount
  bool propagate_only = false;
  bool explain = false;
  BoundaryFlags boundary;
  bool global = false;  // --global: partition FILE even when it looks per-device
  std::string windowed_einsum = api::kWindowedEinsumDefault;
  std::string chip;  // --chip: auto keeps the loops this chip's simulated step gains from
};

// "partitioned FILE for 8 devices: 12 collectives (4 all-reduce, 8 all-gather), 1.5 MiB per
// device communicated" ("partitioned FILE into OUT ..." with -o), counted as `gspmd report`
// counts them (loop bodies times their trip count).
std::string PartitionSummary(const std::string& file, const std::string& out, const api::Partitioned& partitioned) {
  const CommReport report = api::Report(partitioned.per_device);
  int64_t count = 0;
  std::string kinds;
  for (const auto& [kind, stats] : report.by_kind) {
    count += stats.count;
    kinds += StrCat(kinds.empty() ? "" : ", ", stats.count, " ", kind);
  }
  const bool to_file = !out.empty() && out != "-";
  const std::string line = StrCat("partitioned ", file, to_file ? " into " + out : "", " for ",
                                  partitioned.num_devices, " device", partitioned.num_devices == 1 ? "" : "s", ": ");
  if (count == 0) return line + "no collectives, nothing communicated";
  return StrCat(line, count, " collective", count == 1 ? "" : "s", " (", kinds, "), ",
                FormatBytes(report.comm_bytes_per_device), " per device communicated");
}

void RunPartitionCommand(const PartitionCommandOptions& options) {
  if (options.explain && !options.propagate_only)
    GSPMD_USER_ERROR("gspmd partition: error: --explain needs --propagate-only (it explains the propagated "
                     "shardings, not the per-device program)");
  const int64_t devices = options.devices.empty() ? 0 : ParseDeviceCount(options.devices, "partition");
  api::Program program = LoadProgramArgument(options.file).WithMesh(options.mesh, "partition");
  const std::string file = program.name();  // "<stdin>" for "-"
  // Partitioned again, its shard shapes would be taken for global ones.
  if (options.global) program.SetPerDevice(false);
  if (program.IsPerDevice())
    ThrowUserErrorAt(SourceLocation{file, 0, 0},
                     StrCat(options.propagate_only ? "propagation" : "partitioning",
                            " needs a global program; this one is per-device already (it has collectives or "
                            "partition-id, or is the partitioner's output): to measure or run it as it is, use "
                            "gspmd report, gspmd simulate or gspmd run on it (--global partitions it anyway)"));
  const api::BoundaryOptions boundary{options.boundary.to_parameters, options.boundary.to_outputs};
  if (options.propagate_only) {
    const api::Propagated propagated = api::Propagate(std::move(program), {devices, options.explain, boundary});
    WriteText(options.out, propagated.Text(options.explain));
    return;
  }
  const api::Partitioned partitioned = api::Partition(std::move(program), {devices, boundary, options.windowed_einsum, {}, options.chip});
  PrintWarnings(file, partitioned.warnings);
  if (!partitioned.windowed_einsum.empty()) std::fprintf(stderr, "windowed einsum: %s\n", partitioned.windowed_einsum.c_str());
  WriteText(options.out, partitioned.per_device.Text());
  std::fflush(stdout);
  std::fprintf(stderr, "%s\n", PartitionSummary(file, options.out, partitioned).c_str());
}

}  // namespace

void AddPartitionCommand(CLI::App& app) {
  auto options = std::make_shared<PartitionCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "partition",
      "Propagate shardings (when not every instruction has one) and partition a module into one per-device "
      "program with collectives; print it");
  command
      ->add_option("FILE", options->file,
                   "HLO text file (XLA's propagated.hlo, or pre.hlo), or StableHLO (.mlir) text; - for standard input")
      ->required()
      ->type_name("FILE");
  command->add_option("-o,--out", options->out, "write the module to OUT instead of stdout (- for stdout)")
      ->type_name("OUT");
  command->add_option("--devices", options->devices,
                      "number of partitions (default: num_partitions, else derived from the shardings)")
      ->type_name("N");
  command->add_flag("--propagate-only", options->propagate_only,
                    "print the module after sharding propagation, without partitioning it");
  command->add_flag("--explain", options->explain,
                    "with --propagate-only: annotate each instruction with where its sharding came from");
  AddBoundaryOptions(*command, options->boundary);
  AddWindowedEinsumOption(*command, options->windowed_einsum);
  command
      ->add_option("--chip", options->chip,
                   "with --windowed-einsum auto: keep the loops that make the step faster on this chip (as gspmd "
                   "simulate --chip, default topology) instead of the size threshold")
      ->type_name("NAME");
  AddGlobalOverride(*command, options->global);
  AddMeshOption(*command, options->mesh);
  command->callback([options] { RunPartitionCommand(*options); });
}

}  // namespace gspmd::tools
