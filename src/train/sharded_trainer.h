// ShardedTrainer: the training loop with the carry kept as each device's shards, so nothing is
// gathered between steps. It runs the devices of this process (all of them on the threads
// backend, one rank's under MPI) over a communicator made fresh for every step.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/array_source.h"
#include "ir/module.h"
#include "runtime/comm/communicator.h"
#include "runtime/spmd/spmd_plan.h"
#include "train/step_inputs.h"
#include "train/trainer.h"

namespace gspmd {

struct ShardedStepResult {
  int64_t step = 0;
  std::vector<double> metrics;  // outputs 0..k-1 (replicated scalars), from the first local device
  double seconds = 0;
};

class ShardedTrainer {
 public:
  using CommunicatorFactory = std::function<std::unique_ptr<Communicator>()>;

  // `global` describes the step (its attributes) and gives the first step's values; every
  // carried output must have its input's sharding (else a UserError naming the pair: the
  // carry is never resharded). `on_first_error` sees a device's failure before the step's
  // communicator is aborted (MPI ends the job there). settings.check is not supported here.
  ShardedTrainer(const Module& global, const Module& per_device, const SpmdRunOptions& run_options,
                 std::vector<int64_t> local_devices, CommunicatorFactory communicators, TrainSettings settings,
                 std::function<void(std::exception_ptr)> on_first_error = nullptr);

  const StepSignature& signature() const { return signature_; }
  const SpmdPlan& plan() const { return plan_; }
  int64_t tokens_per_step() const { return batches_->tokens_per_step(); }
  const std::vector<int64_t>& local_devices() const { return devices_; }

  // Runs the next step. Memory running out is a UserError saying so; under MPI,
  // `on_first_error` ends the job with it (also outside the devices: the batch, the carry).
  ShardedStepResult Step();
  // The last step's result leaves of each local device (per_device[j] for local_devices()[j]).
  const std::vector<std::vector<Literal>>& last_results() const { return results_; }

  // Continues after a checkpoint: `steps_done` steps are done, and each carried input i takes
  // its value from carried[i] (the global array stored somewhere; each device reads only its
  // shard's region, in parallel). Call before the first Step(). A shape that differs from the
  // input's is a UserError naming the source.
  void Restore(int64_t steps_done, const std::vector<const ArraySource*>& carried);
  // Steps done so far (the next Step() runs step steps_done(), 0-based).
  int64_t steps_done() const { return next_step_; }
  // Local device j's shard of input `input` for the next step (for a carried input: the value
  // the last step carried), what a checkpoint stores.
  const Literal& NextInputShard(size_t j, int64_t input) const { return arguments_[j][input]; }

 private:
  void MakeFirstArguments(const SpmdRunOptions& run_options);
  // Runs fn (work of this process between the devices' runs); an error (memory running out
  // as a UserError) goes to on_first_error_ first, as a device's would.
  template <typename Fn>
  void OutsideDevices(std::string_view context, Fn&& fn);

  const Module& per_device_;
  TrainSettings settings_;
  StepSignature signature_;
  SpmdPlan plan_;
  std::vector<int64_t> devices_;
  CommunicatorFactory communicators_;
  std::function<void(std::exception_ptr)> on_first_error_;
  std::unique_ptr<BatchSource> batches_;
  std::vector<std::vector<Literal>> arguments_;  // [local device][parameter]
  std::vector<std::vector<Literal>> results_;
  std::vector<Shape> global_shapes_;             // of each parameter, for the batch fill
  int64_t next_step_ = 0;
};

}  // namespace gspmd
