// `gspmd simulate FILE --chip NAME [--topology SHAPE] [--placement DIMS] [--devices N] [--json]`:
// estimated step time, FLOPs, HBM traffic, communication, peak memory and utilization of a
// program on a chip and cluster; a global program is propagated and partitioned first.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "api/gspmd.h"
#include "simulate/chip_spec.h"
#include "simulate/simulator.h"
#include "simulate/topology.h"
#include "text/parser.h"
#include "tools/commands.h"
#include "tools/tool_util.h"

namespace gspmd::tools {
namespace {

struct SimulateCommandOptions {
  std::string file;
  std::string mesh;  // --mesh AXIS=N,...
  std::string chip;
  std::string topology;
  std::string placement;
  std::string devices;  // validated by ParseDeviceCount
  std::string compute_type;
  std::string mixed_precision;
  std::string breakdown = "op_name";
  int64_t breakdown_depth = 0;
  int64_t top = 15;
  bool json = false;
  std::string out;
  ProgramKindFlags kind;
  bool no_remat = false;
  std::string windowed_einsum = api::kWindowedEinsumDefault;
};

void RunSimulate(const SimulateCommandOptions& options) {
  api::SimulateOptions simulate;
  simulate.chip = options.chip;
  simulate.topology = options.topology;
  simulate.placement = options.placement;
  simulate.devices = options.devices.empty() ? 0 : ParseDeviceCount(options.devices, "simulate");
  simulate.compute_type = options.compute_type;
  simulate.mixed_precision = options.mixed_precision;
  simulate.breakdown = options.breakdown;
  simulate.breakdown_depth = options.breakdown_depth;
  simulate.rematerialize = !options.no_remat;
  simulate.per_device = options.kind.Override();
  simulate.windowed_einsum = options.windowed_einsum;
  api::Program program =
      LoadProgramOfKind(options.file, options.kind, "simulate", /*stated_kind=*/true).WithMesh(options.mesh, "simulate");
  const simulate::SimulationReport report = api::Simulate(std::move(program), simulate);
  if (options.json) {
    WriteText(options.out, simulate::SimulationReportToJson(report).dump(2) + "\n");
    std::fflush(stdout);
    for (const std::string& warning : report.warnings)
      std::fprintf(stderr, "%s: warning: %s\n", options.file.c_str(), warning.c_str());
    return;
  }
  WriteText(options.out, simulate::FormatSimulationReport(report, options.top));
}

}  // namespace

void AddSimulateCommand(CLI::App& app) {
  auto options = std::make_shared<SimulateCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "simulate",
      "Estimate a program's step on a chip and cluster: per-device FLOPs, HBM traffic, communication per collective "
      "(bytes, algorithm, links, time), peak memory and whether it fits, step time with and without overlap, MFU, and a "
      "breakdown by source op. A global program is propagated and partitioned first. The cost model is in docs/simulate.md");
  command
      ->add_option("FILE", options->file,
                   "HLO text or StableHLO (.mlir) text: a per-device program, or a global one to partition; - for "
                   "standard input")
      ->required()
      ->type_name("FILE");
  command->add_option("--chip", options->chip,
                      "chip description: a built-in name (" + [] {
                        std::string names;
                        for (const std::string& name : simulate::BuiltinChipNames()) names += (names.empty() ? "" : ", ") + name;
                        return names;
                      }() + "), a NAME.json in $GSPMD_CHIP_PATH, or a path to a .json file")
      ->required()
      ->type_name("NAME|FILE");
  command->add_option("--topology", options->topology,
                      "shape of the outermost network level, e.g. 8x8 (TPU v3 chips) or 16 (GPU nodes); default: the "
                      "smallest standard slice that holds the program")
      ->type_name("SHAPE");
  command->add_option("--placement", options->placement,
                      "network dims from the fastest-varying partition-id digit to the slowest, e.g. core,x,y (the "
                      "default: innermost level first); decides which links each mesh axis uses")
      ->type_name("DIMS");
  command->add_option("--devices", options->devices, "partition count (must equal the program's num_partitions if it states one)")
      ->type_name("N");
  command->add_option("--compute-type", options->compute_type,
                      "re-type the program's floating-point math (e.g. bf16) for the estimate, without other changes")
      ->type_name("TYPE");
  command->add_option("--mixed-precision", options->mixed_precision,
                      "re-type the math to TYPE (e.g. bf16) but keep the parameters, the optimizer state and the "
                      "weight update in their types, as mixed-precision training does")
      ->type_name("TYPE");
  command->add_option("--breakdown", options->breakdown, "group the breakdown by op_name (default), layer or opcode")
      ->type_name("KIND");
  command->add_option("--breakdown-depth", options->breakdown_depth, "keep this many op_name components (0: all)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--top", options->top, "lines of the collective and breakdown tables in text output (default 15)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);
  command->add_flag("--json", options->json,
                    "print one JSON object: step_time_s, mfu, flops_per_device, comm_bytes_per_device, "
                    "peak_bytes_per_device, fits_memory, and everything the text shows");
  command->get_option("--top")->excludes("--json");  // JSON has every line: --top would be ignored
  command->add_flag("--no-remat", options->no_remat,
                    "do not estimate XLA's rematerialization when the program exceeds the chip's memory");
  AddProgramKindOptions(*command, options->kind, "propagated and partitioned first");
  AddWindowedEinsumOption(*command, options->windowed_einsum);
  command->add_option("-o,--out", options->out, "write the estimate (text or --json) to OUT instead of stdout")
      ->type_name("OUT");
  AddMeshOption(*command, options->mesh);
  command->callback([options] { RunSimulate(*options); });
}

}  // namespace gspmd::tools
