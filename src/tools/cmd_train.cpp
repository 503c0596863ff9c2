// `gspmd train FILE --steps N [-i IN0.npy ...] [--devices N] [--carry OUT:IN,...] [--data DIR]
// [--check] [--save DIR] [--plot FILE.svg] [--backend threads|mpi]`: partitions a training step once and runs it
// N times on simulated devices, feeding its carried outputs back as inputs; shows loss and
// throughput per step. Under `mpirun ... --backend mpi` each rank keeps its devices' shards of
// the carry between steps (nothing is gathered).
#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/comm_report.h"
#include "api/gspmd.h"
#include "runtime/comm/mpi/mpi_communicator.h"
#include "runtime/comm/mpi/mpi_session.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_mpi.h"
#include "support/diagnostic.h"
#include "text/printer.h"
#include "tools/commands.h"
#include "tools/tool_util.h"
#include "train/loss_plot.h"
#include "train/progress_display.h"
#include "train/sharded_trainer.h"
#include "train/trainer.h"

namespace gspmd::tools {
namespace {

constexpr double kDefaultCollectiveTimeoutSeconds = 300;

struct TrainCommandOptions {
  std::string file;
  std::string steps = "1";
  std::vector<std::string> inputs;
  std::string devices;
  std::string carry;
  std::string data;
  bool check = false;
  double rtol = 1e-4;
  double atol = 1e-6;
  std::string save;
  std::string plot;
  uint64_t seed = 0;
  std::string progress = "auto";
  std::string backend = "threads";
  int64_t devices_per_rank = 0;
  double collective_timeout = 0;
};

int64_t ParseSteps(const std::string& text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1)
    GSPMD_USER_ERROR("gspmd train: error: --steps '", text, "' is not a positive number of steps");
  return value;
}

TrainSettings SettingsFrom(const TrainCommandOptions& options, const Module& original) {
  TrainSettings settings;
  settings.carry = options.carry;
  settings.data_dir = options.data;
  settings.check = options.check;
  settings.rtol = options.rtol;
  settings.atol = options.atol;
  settings.seed = options.seed;
  if (!options.inputs.empty()) {
    settings.first_inputs = ReadInputs(options.inputs);
    CheckInputShapes(original, options.file, settings.first_inputs, options.inputs);
  }
  return settings;
}

// The step as written (its attributes describe it; the interpreter checks it) and the copy
// that is propagated and partitioned.
struct CompiledStep {
  std::unique_ptr<Module> original;
  std::unique_ptr<Module> compiled;
  CompiledPartition partition;
  SpmdRunOptions run_options;
};

// `job` (under MPI): the ranks x devices text, said when the module states another count.
CompiledStep Compile(const TrainCommandOptions& options, int64_t devices, bool print_warnings,
                     const std::string& job = "") {
  CompiledStep step;
  step.original = LoadProgram(options.file);
  if (!job.empty() && !step.original->Attribute("num_partitions").empty() &&
      step.original->num_partitions() != devices)
    ThrowUserErrorAt(SourceLocation{options.file, 0, 0},
                     StrCat("the step is written for num_partitions=", step.original->num_partitions(),
                            " devices but the job has ", job, " = ", devices,
                            " (expected mpirun -np R and --devices-per-rank K with R x K = ",
                            step.original->num_partitions(), ")"));
  step.compiled = LoadProgram(options.file);
  step.partition = PartitionForCli(*step.compiled, options.file, devices, BoundaryFlags{}, print_warnings);
  const Module& per_device = *step.partition.partitioned.module;
  step.run_options =
      WithFileContext(options.file, [&] { return OptionsFromLikeModule(per_device, step.compiled.get()); });
  step.run_options.num_devices = step.partition.num_devices;
  return step;
}

// --plot: the first shown metric (the loss) of every step; UserError when the step has none.
class LossCurve {
 public:
  LossCurve(const TrainCommandOptions& options, const std::vector<std::string>& metrics) : options_(options) {
    if (options.plot.empty()) return;
    if (metrics.empty())
      GSPMD_USER_ERROR(options.file, ": error: --plot needs a loss: the step's output 0 is not a float scalar and "
                                     "the module names no metrics (gspmd.metrics)");
    metric_ = metrics[0];
  }
  void Add(const std::vector<double>& metrics) {
    if (!metric_.empty() && !metrics.empty()) values_.push_back(metrics[0]);
  }
  void Write(const std::string& model, int64_t devices) const {
    if (metric_.empty()) return;
    const std::string name = model.empty() ? std::filesystem::path(options_.file).filename().string() : model;
    WriteLossPlot(options_.plot, StrCat(name, ": ", metric_, " per step on ", devices, " devices"), metric_, values_);
    if (options_.progress != "quiet")
      std::printf("wrote %s (%s of %zu steps)\n", options_.plot.c_str(), metric_.c_str(), values_.size());
  }

 private:
  const TrainCommandOptions& options_;
  std::string metric_;
  std::vector<double> values_;
};

// The threads backend: api::Training compiles the step once and runs it; this shows it.
void TrainOnThreads(const TrainCommandOptions& options, int64_t steps, int64_t requested) {
  const api::Program program = api::Program::Load(options.file);
  api::Training training(program, requested);
  PrintWarnings(options.file, training.warnings());
  api::TrainOptions train_options;
  train_options.carry = options.carry;
  train_options.data_dir = options.data;
  train_options.check = options.check;
  train_options.rtol = options.rtol;
  train_options.atol = options.atol;
  train_options.seed = options.seed;
  if (!options.inputs.empty()) {
    train_options.inputs = ReadInputs(options.inputs);
    CheckInputShapes(program.module(), options.file, train_options.inputs, options.inputs);
    train_options.input_names = options.inputs;
  }
  training.Start(std::move(train_options));
  const std::string model = ModuleFrontendAttribute(program.module(), "gspmd.model");
  const Module& per_device = training.per_device().module();
  if (options.progress != "quiet")
    PrintTrainHeader(options.file, model, training.num_devices(), "", training.signature(),
                     AnalyzeCommunication(per_device));
  const std::vector<std::string> metrics = training.metric_names();
  LossCurve curve(options, metrics);
  StepDisplay display(options.progress, steps, training.tokens_per_step(), metrics);
  StepResult last;
  for (int64_t i = 0; i < steps; ++i) {
    StepResult result = training.Step();
    std::vector<double> values;
    for (size_t k = 0; k < metrics.size(); ++k) values.push_back(result.outputs[k].GetAsDouble(0));
    display.Show(result.step, values, result.seconds, result.check_seconds, result.mismatch);
    curve.Add(values);
    if (!result.mismatch.empty()) {
      display.EndLine();
      throw training.MismatchError(result);
    }
    last = std::move(result);
  }
  display.Finish(options.check);
  if (!options.save.empty()) WriteOutputs(options.save, last.outputs);
  curve.Write(model, training.num_devices());
}

uint64_t Fingerprint(const std::string& text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

// A device's failure on this rank ends the job (every rank stops).
[[noreturn]] void EndJob(MpiSession& session, std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& failure) {
    session.FailJob(failure.what());
  } catch (...) {
    session.FailJob("unknown error");
  }
}

// Every rank compiles the same step, makes its devices' shards of the first step's values and
// agrees that this worked; then the steps run with the carry kept sharded; rank 0 reports.
void TrainOnMpi(const TrainCommandOptions& options, int64_t steps, int64_t requested) {
  if (options.check)
    GSPMD_USER_ERROR("gspmd train: error: --check needs the threads backend (under MPI the carry stays sharded on the "
                     "ranks, and checking a step against one device would gather it)");
  MpiSessionOptions session_options;
  session_options.collective_timeout_seconds =
      options.collective_timeout > 0 ? options.collective_timeout : kDefaultCollectiveTimeoutSeconds;
  const int64_t per_rank = options.devices_per_rank > 0 ? options.devices_per_rank : 1;
  int failed_rank = -1;
  {
    MpiSession session(session_options);
    LimitKernelThreadsToRankShare(session);
    const int64_t total = per_rank * session.size();
    const bool reporter = session.rank() == 0;
    const std::string layout = StrCat(session.size(), " MPI rank", session.size() == 1 ? "" : "s", " x ", per_rank,
                                      " device", per_rank == 1 ? "" : "s", " per rank");
    CompiledStep step;
    std::unique_ptr<ShardedTrainer> trainer;
    std::optional<LossCurve> curve;  // every rank checks --plot; rank 0 writes it
    std::string error;
    try {
      if (requested > 0 && requested != total)
        GSPMD_USER_ERROR("gspmd train: error: --devices ", requested, " does not match ", layout, " = ", total,
                         " devices (expected --devices ", total, " or no --devices)");
      step = Compile(options, total, reporter, layout);
      if (step.partition.num_devices != total)
        ThrowUserErrorAt(SourceLocation{options.file, 0, 0},
                         StrCat("the step runs on ", step.partition.num_devices, " devices but the job has ", layout,
                                " = ", total, " (expected mpirun -np R and --devices-per-rank K with R x K = ",
                                step.partition.num_devices, ")"));
      std::vector<int64_t> local;
      for (int64_t d = 0; d < per_rank; ++d) local.push_back(session.rank() * per_rank + d);
      trainer = WithFileContext(options.file, [&] {
        return std::make_unique<ShardedTrainer>(
            *step.original, *step.partition.partitioned.module, step.run_options, local,
            [&session, per_rank] { return std::make_unique<MpiCommunicator>(session, per_rank); },
            SettingsFrom(options, *step.original), [&session](std::exception_ptr e) { EndJob(session, e); });
      });
      curve.emplace(options, ShownMetrics(trainer->signature()));
    } catch (const UserError& user_error) {
      error = user_error.what();
    }
    failed_rank = AgreeAndReportFailure(session, "compiling the step and its first inputs", error);
    if (failed_rank < 0) {
      const Module& per_device = *step.partition.partitioned.module;
      if (!session.AllRanksAgree(Fingerprint(PrintModule(per_device)), "comparing the compiled steps"))
        session.FailJob("the ranks compiled different per-device programs from " + options.file +
                        " (is FILE the same file on every machine?)");
      const std::string mode = reporter ? options.progress : "quiet";
      if (mode != "quiet")
        PrintTrainHeader(options.file, ModuleFrontendAttribute(*step.original, "gspmd.model"), total,
                         layout + ", sharded carry", trainer->signature(), AnalyzeCommunication(per_device));
      const std::vector<std::string> metrics = ShownMetrics(trainer->signature());
      StepDisplay display(mode, steps, trainer->tokens_per_step(), metrics);
      for (int64_t i = 0; i < steps; ++i) {
        ShardedStepResult result = trainer->Step();
        display.Show(result.step, result.metrics, result.seconds);
        if (reporter) curve->Add(result.metrics);
      }
      display.Finish(false);
      if (!options.save.empty()) {
        MpiRunOptions save;
        save.devices_per_rank = per_rank;
        save.out_dir = options.save;
        WriteResultsOverMpi(session, per_device, trainer->plan(), trainer->last_results(), save);
      }
      if (reporter) curve->Write(ModuleFrontendAttribute(*step.original, "gspmd.model"), total);
    }
  }  // MPI_Finalize
  if (failed_rank < 0) return;
  std::fflush(stdout);
  std::exit(1);
}

void RunTrainCommand(const TrainCommandOptions& options) {
  if (options.progress != "auto" && options.progress != "bar" && options.progress != "lines" &&
      options.progress != "quiet")
    GSPMD_USER_ERROR("gspmd train: error: --progress ", options.progress, ": expected auto, bar, lines or quiet");
  if (!(options.rtol >= 0) || !(options.atol >= 0))
    GSPMD_USER_ERROR("gspmd train: error: --rtol and --atol must be >= 0");
  const int64_t steps = ParseSteps(options.steps);
  if (!options.plot.empty()) CheckPlotPath(options.plot);
  const int64_t requested = options.devices.empty() ? 0 : ParseDeviceCount(options.devices, "train");
  const bool mpi = options.backend == "mpi";
  if (!mpi && options.devices_per_rank > 0)
    GSPMD_USER_ERROR("gspmd train: error: --devices-per-rank needs --backend mpi");
  if (!mpi && options.collective_timeout > 0)
    GSPMD_USER_ERROR("gspmd train: error: --collective-timeout needs --backend mpi");
  if (mpi) {
    TrainOnMpi(options, steps, requested);
    return;
  }
  TrainOnThreads(options, steps, requested);
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
  command->add_flag("--check", options->check, "also run every step on one device and stop at the first mismatch");
  command->add_option("--rtol", options->rtol, "--check tolerance: relative L2 error per output (default 1e-4)")
      ->type_name("R");
  command->add_option("--atol", options->atol,
                      "--check: an output also matches when its RMS difference is at most this (default 1e-6)")
      ->type_name("A");
  command->add_option("--save", options->save, "write the last step's outputs as DIR/out0.npy, out1.npy, ...")
      ->type_name("DIR");
  command->add_option("--plot", options->plot, "write the loss per step as an SVG line chart")
      ->type_name("FILE.svg");
  command->add_option("--seed", options->seed, "seed of the initial values and the synthetic batches (default 0)")
      ->type_name("S");
  command->add_option("--progress", options->progress,
                      "auto (a bar on a terminal, else a line per step), bar, lines or quiet")
      ->type_name("MODE");
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
  command->callback([options] { RunTrainCommand(*options); });
}

}  // namespace gspmd::tools
