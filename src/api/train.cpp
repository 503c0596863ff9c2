// api::Training and api::Train: a training step partitioned once and run step after step on
// simulated devices (threads), its carried outputs fed back as the next step's inputs.
#include "api/file_context.h"
#include "api/gspmd.h"
#include "api/pipeline.h"
#include "runtime/spmd/like_module.h"
#include "train/progress_display.h"

namespace gspmd::api {

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

Training::Training(const Program& step, int64_t devices) {
  const std::string& name = step.name();
  std::unique_ptr<Module> compiled = step.CopyModule();
  CompiledPartition partition = PartitionGlobal(*compiled, name, devices);
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
  TrainSettings settings;
  settings.carry = std::move(options.carry);
  settings.data_dir = std::move(options.data_dir);
  settings.first_inputs = std::move(options.inputs);
  settings.check = options.check;
  settings.rtol = options.rtol;
  settings.atol = options.atol;
  settings.seed = options.seed;
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

}  // namespace gspmd::api
