// api::Training and api::Train: a training step partitioned once and run step after step on
// simulated devices (threads), its carried outputs fed back as the next step's inputs; and
// api::TrainJob, `gspmd train` from files on threads or over the ranks of an MPI job.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/comm_report.h"
#include "api/cli_files.h"
#include "api/file_context.h"
#include "api/gspmd.h"
#include "api/pipeline.h"
#include "api/train_checkpoint.h"
#include "api/train_record.h"
#include "io/npy.h"
#include "runtime/comm/mpi/mpi_communicator.h"
#include "runtime/comm/mpi/mpi_session.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/result_files.h"
#include "runtime/spmd/spmd_mpi.h"
#include "text/printer.h"
#include "train/loss_plot.h"
#include "train/progress_display.h"
#include "train/saved_outputs.h"
#include "train/sharded_trainer.h"

namespace gspmd::api {
namespace {

// What the trainers take, from the options both backends are given.
TrainSettings SettingsFrom(TrainOptions options) {
  TrainSettings settings;
  settings.carry = std::move(options.carry);
  settings.data_dir = std::move(options.data_dir);
  settings.first_inputs = std::move(options.inputs);
  settings.check = options.check;
  settings.rtol = options.rtol;
  settings.atol = options.atol;
  settings.seed = options.seed;
  return settings;
}

}  // namespace

// The step as written (its attributes describe it; the interpreter checks it), the propagated
// copy and the per-device program, and the trainer once started.
struct Training::State {
  Program step;
  Program global;
  Program per_device;
  int64_t num_devices = 0;
  std::vector<std::string> warnings;
  SpmdRunOptions run_options;
  std::unique_ptr<Trainer> trainer;
  double rtol = 0;  // the check's tolerances, for MismatchError
  double atol = 0;
};

Training::Training(const Program& step, int64_t devices, const std::string& windowed_einsum) {
  const std::string& name = step.name();
  std::unique_ptr<Module> compiled = step.CopyModule();
  CompiledPartition partition = PartitionGlobal(*compiled, name, devices, {}, ParseWindowedEinsum(windowed_einsum));
  const Module& per_device = *partition.partitioned.module;
  SpmdRunOptions run_options = WithFileContext(name, [&] { return OptionsFromLikeModule(per_device, compiled.get()); });
  run_options.num_devices = partition.num_devices;
  partition.partitioned.module->set_num_partitions(partition.num_devices);
  state_ = std::make_unique<State>(State{step, Program::FromModule(std::move(compiled), name),
                                         Program::FromModule(std::move(partition.partitioned.module), name),
                                         partition.num_devices, std::move(partition.partitioned.warnings),
                                         std::move(run_options), nullptr, 0, 0});
}

Training::~Training() = default;
Training::Training(Training&&) noexcept = default;
Training& Training::operator=(Training&&) noexcept = default;

const std::vector<std::string>& Training::warnings() const { return state_->warnings; }
int64_t Training::num_devices() const { return state_->num_devices; }
const Program& Training::per_device() const { return state_->per_device; }
const Program& Training::step() const { return state_->step; }

void Training::Start(TrainOptions options) {
  GSPMD_CHECK(state_->trainer == nullptr, "Training::Start called twice");
  const Program& step = state_->step;
  if (!options.inputs.empty()) CheckInputs(step, options.inputs, options.input_names);
  state_->rtol = options.rtol;
  state_->atol = options.atol;
  TrainSettings settings = SettingsFrom(std::move(options));
  state_->trainer = WithFileContext(step.name(), [&] {
    return std::make_unique<Trainer>(step.module(), ThreadsRunner(state_->per_device.module(), state_->run_options),
                                     std::move(settings));
  });
}

const StepSignature& Training::signature() const {
  GSPMD_CHECK(state_->trainer != nullptr, "Training::signature before Start");
  return state_->trainer->signature();
}

std::vector<std::string> Training::metric_names() const { return ShownMetrics(signature()); }

int64_t Training::tokens_per_step() const {
  GSPMD_CHECK(state_->trainer != nullptr, "Training::tokens_per_step before Start");
  return state_->trainer->tokens_per_step();
}

StepResult Training::Step() {
  GSPMD_CHECK(state_->trainer != nullptr, "Training::Step before Start");
  return WithFileContext(state_->step.name(), [&] { return state_->trainer->Step(); });
}

UserError Training::MismatchError(const StepResult& result) const {
  return UserError(StrCat(state_->step.name(), ": error: step ", result.step + 1, " on ", state_->num_devices,
                          " devices differs from one device: ", result.mismatch, " (rtol ", state_->rtol, ", atol ",
                          state_->atol, ")"));
}

std::vector<Literal> Train(const Program& step, int64_t steps, TrainOptions options, int64_t devices,
                           const std::function<void(const TrainedStep&)>& on_step) {
  if (steps < 1) GSPMD_USER_ERROR("gspmd train: error: --steps ", steps, " is not a positive number of steps");
  Training training(step, devices);
  training.Start(std::move(options));
  const std::vector<std::string> metrics = training.metric_names();
  StepResult last;
  for (int64_t i = 0; i < steps; ++i) {
    StepResult result = training.Step();
    if (on_step) {
      TrainedStep report{result.step, metrics, {}, result.seconds, result.check_seconds};
      for (size_t k = 0; k < metrics.size(); ++k) report.metrics.push_back(result.outputs[k].GetAsDouble(0));
      on_step(report);
    }
    if (!result.mismatch.empty()) throw training.MismatchError(result);
    last = std::move(result);
  }
  return std::move(last.outputs);
}

namespace {

// The MPI trainer's settings: the job's options with the first inputs read from their files
// (checked against the step as written).
TrainSettings SettingsFromFiles(const TrainJobOptions& options, const Module& original) {
  TrainOptions train = options.train;
  if (!options.inputs.empty()) {
    train.inputs = ReadInputs(options.inputs);
    CheckInputShapes(original, options.file, train.inputs, options.inputs);
  }
  return SettingsFrom(std::move(train));
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
CompiledStep Compile(const TrainJobOptions& options, int64_t devices, bool print_warnings,
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
  step.partition = PartitionForCli(*step.compiled, options.file, devices, BoundaryFlags{}, print_warnings,
                                   ParseWindowedEinsum(options.windowed_einsum));
  const Module& per_device = *step.partition.partitioned.module;
  step.run_options =
      WithFileContext(options.file, [&] { return OptionsFromLikeModule(per_device, step.compiled.get()); });
  step.run_options.num_devices = step.partition.num_devices;
  return step;
}

// --plot: the first shown metric (the loss) of every step; UserError when the step has none.
class LossCurve {
 public:
  LossCurve(const TrainJobOptions& options, const std::vector<std::string>& metrics) : options_(options) {
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
      std::fprintf(options_.json ? stderr : stdout, "wrote %s (%s of %zu steps)\n", options_.plot.c_str(),
                   metric_.c_str(), values_.size());
  }

 private:
  const TrainJobOptions& options_;
  std::string metric_;
  std::vector<double> values_;
};

// --save: one line, "saved 57 arrays to DIR (and index.json naming them)", unless quiet; on stderr
// beside --json.
void SaidSaved(const TrainJobOptions& options, size_t files) {
  if (options.progress == "quiet") return;
  std::fprintf(options.json ? stderr : stdout, "saved %zu array%s to %s (and index.json naming them)\n", files,
               files == 1 ? "" : "s", options.save.c_str());
  std::fflush(options.json ? stderr : stdout);
}

// The threads backend: api::Training compiles the step once and runs it; this shows it.
void TrainOnThreads(const TrainJobOptions& options) {
  const int64_t steps = options.steps;
  const Program program = Program::Load(options.file);
  Training training(program, options.devices, options.windowed_einsum);
  PrintWarnings(options.file, training.warnings());
  TrainOptions train_options = options.train;
  if (!options.inputs.empty()) {
    train_options.inputs = ReadInputs(options.inputs);
    CheckInputShapes(program.module(), options.file, train_options.inputs, options.inputs);
    train_options.input_names = options.inputs;
  }
  training.Start(std::move(train_options));
  const std::string model = ModuleFrontendAttribute(program.module(), "gspmd.model");
  const Module& per_device = training.per_device().module();
  if (options.progress != "quiet" && !options.json)
    PrintTrainHeader(options.file, model, training.num_devices(), "", training.signature(),
                     AnalyzeCommunication(per_device));
  const std::vector<std::string> metrics = training.metric_names();
  LossCurve curve(options, metrics);
  StepDisplay display(options.json ? "quiet" : options.progress, steps, training.tokens_per_step(), metrics);
  TrainRecord record(options, model, training.num_devices(), metrics, training.tokens_per_step());
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
    record.Add(result.step, values, result.seconds, result.check_seconds, options.train.check);
    last = std::move(result);
  }
  display.Finish(options.train.check);
  if (!options.save.empty()) {
    WriteSavedOutputs(options.save, last.outputs, SavedOutputNames(training.signature(), metrics));
    SaidSaved(options, last.outputs.size());
    record.Saved(options.save, static_cast<int64_t>(last.outputs.size()));
  }
  curve.Write(model, training.num_devices());
  if (options.json) record.Print("");
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

// --check under MPI, on rank 0: a Trainer whose "run" is the sharded step's outputs, assembled
// from the ranks into a scratch folder (as -o writes them) and read back; the Trainer makes the
// step's global inputs as the sharded trainer does, runs them on the interpreter and compares.
class MpiStepCheck {
 public:
  MpiStepCheck(const Module& original, TrainSettings settings)
      : dir_((std::filesystem::temp_directory_path() / StrCat("gspmd-train-check-", ::getpid())).string()) {
    auto outputs = std::make_unique<AssembledOutputs>();
    outputs_ = outputs.get();
    trainer_ = std::make_unique<Trainer>(original, std::move(outputs), std::move(settings));
  }
  ~MpiStepCheck() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  MpiStepCheck(const MpiStepCheck&) = delete;
  MpiStepCheck& operator=(const MpiStepCheck&) = delete;

  const std::string& dir() const { return dir_; }
  // After the ranks wrote the step's outputs to dir(): checks the step (result.mismatch).
  StepResult Check() {
    std::vector<Literal> outputs;
    for (size_t i = 0; i < trainer_->signature().outputs.size(); ++i)
      outputs.push_back(ReadNpy(GlobalResultPath(dir_, i)));
    outputs_->Set(std::move(outputs));
    return trainer_->Step();
  }

 private:
  class AssembledOutputs final : public StepRunner {
   public:
    void Set(std::vector<Literal> outputs) { outputs_ = std::move(outputs); }
    std::vector<Literal> Run(const std::vector<Literal>&) override { return std::move(outputs_); }

   private:
    std::vector<Literal> outputs_;
  };

  std::string dir_;
  AssembledOutputs* outputs_ = nullptr;
  std::unique_ptr<Trainer> trainer_;
};

// Every rank compiles the same step, makes its devices' shards of the first step's values and
// agrees that this worked; then the steps run with the carry kept sharded; rank 0 reports.
// With --check the ranks also assemble every step's outputs on rank 0, which runs the step on
// one device (the interpreter) and compares; a difference ends the job after that step.
bool TrainOnMpi(const TrainJobOptions& options, const MpiOptions& mpi) {
  const int64_t steps = options.steps;
  const int64_t requested = options.devices;
  const bool check = options.train.check;
  MpiSessionOptions session_options;
  session_options.collective_timeout_seconds = mpi.collective_timeout_s;
  const int64_t per_rank = mpi.devices_per_rank;
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
    std::unique_ptr<MpiStepCheck> checker;  // rank 0 with --check
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
        TrainSettings sharded = SettingsFromFiles(options, *step.original);
        sharded.check = false;  // rank 0's checker does it
        return std::make_unique<ShardedTrainer>(
            *step.original, *step.partition.partitioned.module, step.run_options, local,
            [&session, per_rank] { return std::make_unique<MpiCommunicator>(session, per_rank); },
            std::move(sharded), [&session](std::exception_ptr e) { EndJob(session, e); });
      });
      if (check && reporter)
        checker = WithFileContext(options.file, [&] {
          return std::make_unique<MpiStepCheck>(*step.original, SettingsFromFiles(options, *step.original));
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
      const std::string mode = reporter && !options.json ? options.progress : "quiet";
      const std::string model = ModuleFrontendAttribute(*step.original, "gspmd.model");
      if (mode != "quiet")
        PrintTrainHeader(options.file, model, total, layout + ", sharded carry", trainer->signature(),
                         AnalyzeCommunication(per_device));
      const std::vector<std::string> metrics = ShownMetrics(trainer->signature());
      StepDisplay display(mode, steps, trainer->tokens_per_step(), metrics);
      TrainRecord record(options, model, total, metrics, trainer->tokens_per_step());
      for (int64_t i = 0; i < steps; ++i) {
        ShardedStepResult result = trainer->Step();
        StepResult checked;
        std::string error;
        if (check) {
          MpiRunOptions assemble;
          assemble.devices_per_rank = per_rank;
          assemble.out_dir = reporter ? checker->dir() : "";  // only rank 0 writes
          assemble.print_files = false;
          WriteResultsOverMpi(session, per_device, trainer->plan(), trainer->last_results(), assemble);
          if (reporter) {
            try {
              checked = WithFileContext(options.file, [&] { return checker->Check(); });
              if (!checked.mismatch.empty())
                error = StrCat(options.file, ": error: step ", result.step + 1, " on ", total,
                               " devices differs from one device: ", checked.mismatch, " (rtol ", options.train.rtol,
                               ", atol ", options.train.atol, ")");
            } catch (const std::exception& failure) {  // a UserError, or memory: the other ranks must hear
              error = failure.what();
            }
          }
        }
        display.Show(result.step, result.metrics, result.seconds, checked.check_seconds, checked.mismatch);
        if (check) {
          if (!error.empty()) display.EndLine();
          failed_rank = AgreeAndReportFailure(session, StrCat("checking step ", result.step + 1, " on one device"),
                                              error);
          if (failed_rank >= 0) break;
        }
        record.Add(result.step, result.metrics, result.seconds, checked.check_seconds, check);
        if (reporter) curve->Add(result.metrics);
      }
      if (failed_rank < 0) {
        display.Finish(check);
        if (!options.save.empty()) {
          const std::vector<SavedOutput> saved = SavedOutputNames(trainer->signature(), metrics);
          MpiRunOptions save;
          save.devices_per_rank = per_rank;
          save.out_dir = options.save;
          save.print_files = false;
          for (const SavedOutput& output : saved) save.result_files.push_back(output.file);
          WriteResultsOverMpi(session, per_device, trainer->plan(), trainer->last_results(), save);
          if (reporter) {
            WriteSavedOutputsIndex(options.save, saved, trainer->signature().outputs);
            SaidSaved(options, saved.size());
            record.Saved(options.save, static_cast<int64_t>(saved.size()));
          }
        }
        if (reporter) curve->Write(model, total);
        if (reporter && options.json) record.Print(layout);
      }
    }
  }  // MPI_Finalize
  return failed_rank < 0;
}

}  // namespace

bool TrainJob(const TrainJobOptions& options) {
  if (!options.checkpoint.dir.empty()) return TrainWithCheckpoints(options);
  if (options.mpi) return TrainOnMpi(options, *options.mpi);
  TrainOnThreads(options);
  return true;
}

}  // namespace gspmd::api
