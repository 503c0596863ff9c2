// Trainer: the step loop, its carry and batches, and the per-step check on one device.
#include "train/trainer.h"

#include <chrono>
#include <cmath>

#include "analysis/literal_compare.h"
#include "runtime/interp/evaluator.h"
#include "support/allocation.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class SpmdThreadsRunner : public StepRunner {
 public:
  SpmdThreadsRunner(const Module& per_device, SpmdRunOptions options) : module_(per_device), options_(std::move(options)) {}
  std::vector<Literal> Run(const std::vector<Literal>& inputs) override { return RunSpmd(module_, inputs, options_); }

 private:
  const Module& module_;
  SpmdRunOptions options_;
};

class SingleDeviceRunner : public StepRunner {
 public:
  explicit SingleDeviceRunner(const Module& global) : module_(global) {}
  std::vector<Literal> Run(const std::vector<Literal>& inputs) override {
    return FlattenTuple(EvaluateModule(module_, inputs));
  }

 private:
  const Module& module_;
};

std::string OutputName(const StepSignature& s, size_t i) {
  if (i < s.metrics.size()) return StrCat("output ", i, " (", s.metrics[i], ")");
  for (const CarryPair& pair : s.carry)
    if (pair.output == static_cast<int64_t>(i)) return StrCat("output ", i, " (next %", s.inputs[pair.input].name, ")");
  return StrCat("output ", i);
}

}  // namespace

std::unique_ptr<StepRunner> ThreadsRunner(const Module& per_device, SpmdRunOptions options) {
  return std::make_unique<SpmdThreadsRunner>(per_device, std::move(options));
}

std::unique_ptr<StepRunner> InterpreterRunner(const Module& global) {
  return std::make_unique<SingleDeviceRunner>(global);
}

std::string CompareStepOutputs(const std::vector<Literal>& actual, const std::vector<Literal>& expected,
                               const StepSignature& signature, double rtol, double atol) {
  if (actual.size() != expected.size()) return StrCat(actual.size(), " outputs but one device gave ", expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    const LiteralComparison comparison = CompareLiterals(actual[i], expected[i], rtol, atol);
    if (!comparison.matches) return StrCat(OutputName(signature, i), ": ", comparison.message);
  }
  return "";
}

Trainer::Trainer(const Module& global, std::unique_ptr<StepRunner> runner, TrainSettings settings)
    : global_(global), runner_(std::move(runner)), settings_(std::move(settings)),
      signature_(ReadStepSignature(global, settings_.carry)) {
  const size_t n = signature_.inputs.size();
  if (!settings_.first_inputs.empty()) {
    if (settings_.first_inputs.size() != n)
      GSPMD_USER_ERROR("the step takes ", n, " inputs but ", settings_.first_inputs.size(),
                       " were given with -i (expected one .npy per entry parameter, in order)");
    for (size_t i = 0; i < n; ++i)
      if (!settings_.first_inputs[i].shape().Compatible(signature_.inputs[i].shape))
        GSPMD_USER_ERROR("-i input ", i, " holds ", settings_.first_inputs[i].shape().ToString(false), " but input ",
                         i, " (%", signature_.inputs[i].name, ") is ", signature_.inputs[i].shape.ToString(false));
    inputs_ = std::move(settings_.first_inputs);
    // With -i, non-carried inputs keep their given value unless --data supplies them.
    batches_ = std::make_unique<BatchSource>(signature_, settings_.data_dir, settings_.seed, /*draw_task=*/false);
  } else {
    if (!signature_.SelfInitializing()) {
      for (const StepInput& input : signature_.inputs)
        if (input.init.empty())
          GSPMD_USER_ERROR("input %", input.name, " says nothing about its first value (no gspmd.init attribute); "
                           "give the first step's inputs with -i");
    }
    batches_ = std::make_unique<BatchSource>(signature_, settings_.data_dir, settings_.seed, /*draw_task=*/true);
    for (size_t i = 0; i < n; ++i) {
      const StepInput& input = signature_.inputs[i];
      if (batches_->Feeds(static_cast<int64_t>(i))) {
        inputs_.emplace_back(input.shape);  // filled per step
        continue;
      }
      if (input.init.rfind("task(", 0) == 0)
        GSPMD_USER_ERROR("input %", input.name, " comes from the task but is also carried; it needs a first value (-i)");
      inputs_.push_back(InitialValue(input, static_cast<int64_t>(i), settings_.seed));
    }
  }
}

StepResult Trainer::Step() {
  StepResult result;
  result.step = next_step_;
  ReportingOutOfMemory("while making the step's batch", [&] { batches_->Fill(next_step_, inputs_); });
  auto start = std::chrono::steady_clock::now();
  result.outputs = ReportingOutOfMemory("while running the step", [&] { return runner_->Run(inputs_); });
  result.seconds = SecondsSince(start);
  if (result.outputs.size() != signature_.outputs.size())
    GSPMD_USER_ERROR("the step returned ", result.outputs.size(), " outputs, expected ", signature_.outputs.size());
  if (settings_.check) {
    start = std::chrono::steady_clock::now();
    std::vector<Literal> expected = ReportingOutOfMemory("while checking the step on one device", [&] {
      return FlattenTuple(EvaluateModule(global_, inputs_));
    });
    result.check_seconds = SecondsSince(start);
    result.mismatch = CompareStepOutputs(result.outputs, expected, signature_, settings_.rtol, settings_.atol);
  }
  ReportingOutOfMemory("while carrying the outputs to the next step", [&] {
    for (const CarryPair& pair : signature_.carry) inputs_[pair.input] = result.outputs[pair.output];
  });
  ++next_step_;
  return result;
}

}  // namespace gspmd
