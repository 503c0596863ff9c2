// `gspmd train FILE --steps N [-i IN0.npy ...] [--devices N] [--carry OUT:IN,...] [--data DIR]
// [--check] [-o DIR] [--plot FILE.svg] [--backend threads|mpi] [--checkpoint-dir DIR
// [--checkpoint-every K] [--keep N] [--resume [--resume-fallback]]]`: partitions a training step once and runs it
// N times on simulated devices, feeding its carried outputs back as inputs; shows loss and
// throughput per step. Under `mpirun ... --backend mpi` each rank keeps its devices' shards of
// the carry between steps (nothing is gathered; --check assembles each step's outputs on rank
// 0). The job is api::TrainJob; this file reads the command line.
#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "api/gspmd.h"
#include "support/diagnostic.h"
#include "tools/commands.h"
#include "tools/tool_util.h"
#include "train/loss_plot.h"

namespace gspmd::tools {
namespace {

struct TrainCommandOptions {
  std::string file;
  std::string steps = "1";
  std::vector<std::string> inputs;
  std::string devices;
  std::string carry;
  std::string data;
  bool check = false;
  double rtol = kDefaultRtol;
  double atol = kDefaultAtol;
  std::string save;
  std::string plot;
  uint64_t seed = 0;
  std::string progress = "auto";
  bool json = false;
  std::string backend = "threads";
  int64_t devices_per_rank = 0;
  double collective_timeout = 0;
  api::CheckpointOptions checkpoint;
  std::string windowed_einsum = api::kWindowedEinsumDefault;
};

int64_t ParseSteps(const std::string& text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1)
    GSPMD_USER_ERROR("gspmd train: error: --steps '", text, "' is not a positive number of steps");
  return value;
}

void RunTrainCommand(const TrainCommandOptions& options) {
  if (options.progress != "auto" && options.progress != "bar" && options.progress != "lines" &&
      options.progress != "quiet")
    GSPMD_USER_ERROR("gspmd train: error: --progress ", options.progress, ": expected auto, bar, lines or quiet");
  CheckTolerances(options.rtol, options.atol, "train");
  const int64_t steps = ParseSteps(options.steps);
  if (!options.plot.empty()) CheckPlotPath(options.plot);
  const int64_t requested = options.devices.empty() ? 0 : ParseDeviceCount(options.devices, "train");
  const bool mpi = options.backend == "mpi";
  if (!mpi && options.devices_per_rank > 0)
    GSPMD_USER_ERROR("gspmd train: error: --devices-per-rank needs --backend mpi");
  if (!mpi && options.collective_timeout > 0)
    GSPMD_USER_ERROR("gspmd train: error: --collective-timeout needs --backend mpi");
  api::TrainJobOptions job;
  job.file = options.file;
  job.steps = steps;
  job.inputs = options.inputs;
  job.devices = requested;
  job.train.carry = options.carry;
  job.train.data_dir = options.data;
  job.train.check = options.check;
  job.train.rtol = options.rtol;
  job.train.atol = options.atol;
  job.train.seed = options.seed;
  job.save = options.save;
  job.plot = options.plot;
  job.progress = options.progress;
  job.json = options.json;
  job.checkpoint = options.checkpoint;
  job.windowed_einsum = options.windowed_einsum;
  const bool checkpoint_flags = options.checkpoint.every != 0 || options.checkpoint.keep != 0 ||
                                options.checkpoint.resume || options.checkpoint.fallback;
  if (options.checkpoint.dir.empty() && checkpoint_flags)
    GSPMD_USER_ERROR("gspmd train: error: --checkpoint-every, --keep and --resume need --checkpoint-dir DIR");
  if (mpi) {
    job.mpi.emplace();
    if (options.devices_per_rank > 0) job.mpi->devices_per_rank = options.devices_per_rank;
    if (options.collective_timeout > 0) job.mpi->collective_timeout_s = options.collective_timeout;
  }
  if (api::TrainJob(job)) return;
  std::fflush(stdout);  // an MPI job failed: its ranks have said why
  std::exit(1);
}

}  // namespace

void AddTrainCommand(CLI::App& app) {
  auto options = std::make_shared<TrainCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "train",
      "Run a training step repeatedly on simulated devices, feeding its outputs back as the next step's inputs");
  command->add_option("FILE", options->file,
                      "HLO text of one training step (gspmd model, or JAX's pre.hlo), or StableHLO (.mlir) text")
      ->required()
      ->type_name("FILE");
  command->add_option("--steps", options->steps, "number of steps (default 1)")->type_name("N");
  command->add_option("-i,--inputs", options->inputs,
                      "the first step's inputs, one .npy per entry parameter (default: made from the module's "
                      "gspmd.init attributes)")
      ->type_name("NPY");
  command->add_option("--devices", options->devices, "number of simulated devices (default: num_partitions)")
      ->type_name("N");
  command->add_option("--carry", options->carry,
                      "output OUT feeds input IN on the next step (default: the module's, else inferred from "
                      "trailing outputs and inputs that match)")
      ->type_name("OUT:IN,...");
  command->add_option("--data", options->data,
                      "batches: DIR/<input name>.npy or DIR/in<i>.npy of shape [N, ...]; step k takes row k mod N")
      ->type_name("DIR");
  CLI::Option* check =
      command->add_flag("--check", options->check, "also run every step on one device and stop at the first mismatch");
  AddToleranceOptions(*command, options->rtol, options->atol, "with --check, per output: ", check);
  command->add_option("-o,--out", options->save, "output directory (created) for the last step's outputs")
      ->type_name("DIR");
  AddHiddenOptionAlias(*command, "--save", options->save);  // the spelling before -o (one release)
  command->add_option("--plot", options->plot, "write the loss per step as an SVG line chart")
      ->type_name("FILE.svg");
  AddWindowedEinsumOption(*command, options->windowed_einsum);
  command->add_option("--seed", options->seed, "seed of the initial values and the synthetic batches (default 0)")
      ->type_name("S");
  command->add_option("--progress", options->progress,
                      "auto (a bar on a terminal, else a line per step), bar, lines or quiet")
      ->type_name("MODE");
  command->add_flag("--json", options->json,
                    "print the run as one JSON object at the end (per step loss, metrics and seconds; devices, "
                    "totals, the check) instead of the header and progress");
  command->add_option("--backend", options->backend,
                      "threads (default): devices are threads of this process; mpi: devices are spread over the "
                      "ranks of `mpirun -np R`, each keeping its shards of the carry")
      ->check(CLI::IsMember({"threads", "mpi"}))
      ->type_name("threads|mpi");
  command->add_option("--devices-per-rank", options->devices_per_rank,
                      "with --backend mpi: devices per rank, run as threads (default 1)")
      ->type_name("K");
  command->add_option("--collective-timeout", options->collective_timeout,
                      "with --backend mpi: end the job when a collective waits longer than this (default 300)")
      ->type_name("SECONDS");
  command->add_option("--checkpoint-dir", options->checkpoint.dir,
                      "write sharded checkpoints (zarr v2 arrays + checkpoint.json) to DIR/step-N; --steps is "
                      "then the total, counting a resumed checkpoint's steps")
      ->type_name("DIR");
  command->add_option("--checkpoint-every", options->checkpoint.every,
                      "with --checkpoint-dir: also checkpoint after every K-th step (default: after the last only)")
      ->type_name("K");
  command->add_option("--keep", options->checkpoint.keep,
                      "with --checkpoint-dir: keep the newest N complete checkpoints (default: all)")
      ->type_name("N");
  command->add_flag("--resume", options->checkpoint.resume,
                    "with --checkpoint-dir: continue from the newest complete checkpoint (refused when it is "
                    "corrupt or from another program)");
  command->add_flag("--resume-fallback", options->checkpoint.fallback,
                    "with --resume: a corrupt newest checkpoint gives way to the previous one that verifies");
  command->callback([options] { RunTrainCommand(*options); });
}

}  // namespace gspmd::tools
