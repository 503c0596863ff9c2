// ShardedTrainer: first-step shards, per-step batch shards, the device run, the sharded carry.
#include "train/sharded_trainer.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>

#include "io/array_source.h"
#include "io/box.h"
#include "runtime/spmd/device_runner.h"
#include "runtime/spmd/spmd_executor.h"
#include "support/allocation.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// Whether input i's first value is left to a checkpoint (FirstInputs made none).
bool Restored(const TrainSettings& settings, const StepSignature& s, size_t i, const Literal& value) {
  return settings.carry_from_checkpoint && s.IsCarried(static_cast<int64_t>(i)) &&
         value.shape().element_type() == ElementType::kInvalid;
}

// A stand-in for a carried input a checkpoint will restore: zeros, read box by box, so no
// global array of it is built.
class ZeroSource final : public ArraySource {
 public:
  explicit ZeroSource(Shape shape) : shape_(std::move(shape)) {}
  const Shape& shape() const override { return shape_; }
  const std::string& name() const override { return name_; }
  void ReadBox(const Box& box, uint8_t* dst, const std::vector<int64_t>& dst_dims,
               const std::vector<int64_t>& dst_offsets) const override {
    const int64_t size = ElementByteSize(shape_.element_type());
    ForEachBoxRun(shape_.dims(), box.offsets, dst_dims, dst_offsets, box.sizes, [&](int64_t, int64_t at, int64_t run) {
      std::memset(dst + at * size, 0, static_cast<size_t>(run * size));
    });
  }

 private:
  Shape shape_;
  std::string name_ = "a value restored from a checkpoint";
};

// The first step's global values, as Trainer makes them: -i values, else each input's init;
// the batch of step 0 filled by `batches`. With carry_from_checkpoint, carried inputs are
// left empty (MakeFirstArguments reads them as zeros until Restore).
std::vector<Literal> FirstInputs(const StepSignature& s, TrainSettings& settings, const BatchSource& batches) {
  std::vector<Literal> inputs;
  if (!settings.first_inputs.empty()) {
    if (settings.first_inputs.size() != s.inputs.size())
      GSPMD_USER_ERROR("the step takes ", s.inputs.size(), " inputs but ", settings.first_inputs.size(),
                       " were given with -i (expected one .npy per entry parameter, in order)");
    inputs = std::move(settings.first_inputs);
  } else {
    for (size_t i = 0; i < s.inputs.size(); ++i) {
      const StepInput& input = s.inputs[i];
      if (input.init.empty())
        GSPMD_USER_ERROR("input %", input.name, " says nothing about its first value (no gspmd.init attribute); "
                         "give the first step's inputs with -i");
      if (batches.Feeds(static_cast<int64_t>(i))) {
        inputs.emplace_back(input.shape);
        continue;
      }
      if (settings.carry_from_checkpoint && s.IsCarried(static_cast<int64_t>(i))) {
        inputs.emplace_back();
        continue;
      }
      inputs.push_back(InitialValue(input, static_cast<int64_t>(i), settings.seed));
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!Restored(settings, s, i, inputs[i]) && !inputs[i].shape().Compatible(s.inputs[i].shape))
      GSPMD_USER_ERROR("-i input ", i, " holds ", inputs[i].shape().ToString(false), " but input ", i, " (%",
                       s.inputs[i].name, ") is ", s.inputs[i].shape.ToString(false));
  batches.Fill(0, inputs);
  return inputs;
}

}  // namespace

ShardedTrainer::ShardedTrainer(const Module& global, const Module& per_device, const SpmdRunOptions& run_options,
                               std::vector<int64_t> local_devices, CommunicatorFactory communicators,
                               TrainSettings settings, std::function<void(std::exception_ptr)> on_first_error)
    : per_device_(per_device), settings_(std::move(settings)), signature_(ReadStepSignature(global, settings_.carry)),
      devices_(std::move(local_devices)), communicators_(std::move(communicators)),
      on_first_error_(std::move(on_first_error)) {
  GSPMD_CHECK(!settings_.check, "ShardedTrainer does not check against one device");
  ReportingOutOfMemory("while making the first step's inputs", [&] { MakeFirstArguments(run_options); });
}

void ShardedTrainer::MakeFirstArguments(const SpmdRunOptions& run_options) {
  const bool draw_task = settings_.first_inputs.empty();
  batches_ = std::make_unique<BatchSource>(signature_, settings_.data_dir, settings_.seed, draw_task);
  std::vector<Literal> first = FirstInputs(signature_, settings_, *batches_);

  std::vector<std::unique_ptr<ArraySource>> sources;
  std::vector<GlobalArgument> arguments;
  for (size_t i = 0; i < first.size(); ++i) {
    const Literal& value = first[i];
    const bool restored = Restored(settings_, signature_, i, value);
    const Shape& shape = restored ? signature_.inputs[i].shape : value.shape();
    sources.push_back(restored ? std::make_unique<ZeroSource>(shape) : MakeLiteralSource(value));
    arguments.push_back({shape, {sources.back().get()}});
    global_shapes_.push_back(shape);
  }
  plan_ = PlanSpmdRun(per_device_, arguments, run_options);
  for (const CarryPair& pair : signature_.carry) {
    const SpmdLeaf& out = plan_.results[pair.output];
    const SpmdLeaf& in = plan_.arguments[pair.input][0];
    if (out.sharding == in.sharding && out.local.Compatible(in.local)) continue;
    GSPMD_USER_ERROR("carry ", pair.output, ":", pair.input, ": output ", pair.output, " is sharded ",
                     out.sharding.ToString(), " but input ", pair.input, " (%", signature_.inputs[pair.input].name,
                     ") is sharded ", in.sharding.ToString(),
                     "; a sharded carry is never gathered, so both must have the same sharding");
  }
  for (int64_t device : devices_) arguments_.push_back(ReadDeviceArguments(plan_, arguments, device));
}

void ShardedTrainer::Restore(int64_t steps_done, const std::vector<const ArraySource*>& carried) {
  GSPMD_CHECK(next_step_ == 0, "ShardedTrainer::Restore after a step");
  for (const CarryPair& pair : signature_.carry) {
    const ArraySource* source = carried[pair.input];
    GSPMD_CHECK(source != nullptr, "no stored value for carried input ", pair.input);
    const Shape& want = global_shapes_[pair.input];
    if (source->shape().element_type() != want.element_type() || source->shape().dims() != want.dims())
      GSPMD_USER_ERROR(source->name(), ": error: holds ", source->shape().ToString(false), " but input ", pair.input,
                       " (%", signature_.inputs[pair.input].name, ") is ", want.ToString(false));
  }
  // One thread per local device, each reading the regions its shards need.
  std::vector<std::exception_ptr> errors(devices_.size());
  std::vector<std::thread> threads;
  for (size_t j = 0; j < devices_.size(); ++j)
    threads.emplace_back([&, j] {
      try {
        for (const CarryPair& pair : signature_.carry)
          arguments_[j][pair.input] =
              ReadShard(*carried[pair.input], plan_.arguments[pair.input][0].sharding, devices_[j]);
      } catch (...) {
        errors[j] = std::current_exception();
      }
    });
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
  next_step_ = steps_done;
}

template <typename Fn>
void ShardedTrainer::OutsideDevices(std::string_view context, Fn&& fn) {
  try {
    ReportingOutOfMemory(context, std::forward<Fn>(fn));
  } catch (...) {
    if (on_first_error_) on_first_error_(std::current_exception());  // MPI ends the job here
    throw;
  }
}

ShardedStepResult ShardedTrainer::Step() {
  ShardedStepResult result;
  result.step = next_step_;
  const size_t n = signature_.inputs.size();
  if (next_step_ > 0) {
    OutsideDevices("while making the step's batch shards", [&] {
      std::vector<Literal> batch(n);
      batches_->Fill(next_step_, batch);
      for (size_t i = 0; i < n; ++i) {
        if (!batches_->Feeds(static_cast<int64_t>(i))) continue;
        for (size_t j = 0; j < devices_.size(); ++j)
          arguments_[j][i] = ShardOfGlobal(batch[i], plan_.arguments[i][0].sharding, devices_[j]);
      }
    });
  }
  std::vector<bool> carried(n, false);
  for (const CarryPair& pair : signature_.carry) carried[pair.input] = true;

  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<Communicator> communicator = communicators_();
  DeviceRunHooks hooks;
  hooks.arguments = [&](int64_t device) {
    const size_t j = static_cast<size_t>(std::find(devices_.begin(), devices_.end(), device) - devices_.begin());
    std::vector<Literal> values;
    values.reserve(n);
    for (size_t i = 0; i < n; ++i) values.push_back(carried[i] ? std::move(arguments_[j][i]) : arguments_[j][i]);
    return values;
  };
  hooks.on_first_error = on_first_error_;
  results_ = RunDevicesOnThreads(per_device_, plan_, *communicator, devices_, hooks);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  OutsideDevices("while carrying the outputs to the next step", [&] {
    for (size_t j = 0; j < devices_.size(); ++j)
      for (const CarryPair& pair : signature_.carry) arguments_[j][pair.input] = results_[j][pair.output];
  });
  const size_t metrics = signature_.metrics.empty() ? 1 : signature_.metrics.size();
  for (size_t k = 0; k < metrics && k < results_[0].size(); ++k)
    if (results_[0][k].shape().IsArray() && results_[0][k].element_count() == 1)
      result.metrics.push_back(results_[0][k].GetAsDouble(0));
  ++next_step_;
  return result;
}

}  // namespace gspmd
