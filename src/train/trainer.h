// Trainer: runs a training step again and again, feeding its carried outputs back as the
// next step's inputs, the other inputs from the batch source; optionally checks every step
// against the single-device interpreter.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/literal.h"
#include "ir/module.h"
#include "runtime/spmd/spmd_executor.h"
#include "train/step_inputs.h"
#include "train/step_signature.h"

namespace gspmd {

struct TrainSettings {
  std::string carry;                  // --carry OUT:IN,... ("" = the module's, else inferred)
  std::string data_dir;               // --data DIR ("" = the module's task / fixed inputs)
  std::vector<Literal> first_inputs;  // -i values (empty: made from the inputs' init)
  bool check = false;                 // also run every step on the interpreter
  double rtol = 1e-4;                 // --check tolerance: relative L2 error per output, ...
  double atol = 1e-6;                 // ... or root-mean-square absolute error (values near zero)
  uint64_t seed = 0;                  // init and task seed
  // ShardedTrainer: the carried inputs will come from a checkpoint (ShardedTrainer::Restore),
  // so their first values are not made (no global array of them is built).
  bool carry_from_checkpoint = false;
};

struct StepResult {
  int64_t step = 0;                   // 0-based
  std::vector<Literal> outputs;       // leaves of the result (global values)
  double seconds = 0;                 // the sharded run
  double check_seconds = 0;           // the interpreter run (with --check)
  std::string mismatch;               // with --check: why the step differs from one device ("" = it matches)
};

// Runs one step of the per-device program on all devices: global inputs in, global outputs
// out. One implementation per backend.
class StepRunner {
 public:
  virtual ~StepRunner() = default;
  virtual std::vector<Literal> Run(const std::vector<Literal>& inputs) = 0;
};

// The threads backend: RunSpmd with fixed run options.
std::unique_ptr<StepRunner> ThreadsRunner(const Module& per_device, SpmdRunOptions options);
// One device: the reference interpreter on the global program.
std::unique_ptr<StepRunner> InterpreterRunner(const Module& global);

// `global` is the step as written (or propagated): its attributes describe the step, and the
// interpreter runs it for --check. The runner runs the partitioned program. Bad settings
// (-i count or shapes, carry, data) are UserErrors.
class Trainer {
 public:
  Trainer(const Module& global, std::unique_ptr<StepRunner> runner, TrainSettings settings);

  const StepSignature& signature() const { return signature_; }
  int64_t tokens_per_step() const { return batches_->tokens_per_step(); }
  // Runs the next step; the carried outputs become the following step's inputs.
  StepResult Step();
  // The inputs the next step will take.
  const std::vector<Literal>& inputs() const { return inputs_; }

 private:
  const Module& global_;
  std::unique_ptr<StepRunner> runner_;
  TrainSettings settings_;
  StepSignature signature_;
  std::unique_ptr<BatchSource> batches_;
  std::vector<Literal> inputs_;
  int64_t next_step_ = 0;
};

// Compares `actual` (the sharded run) with `expected` (the interpreter), leaf by leaf:
// floats match when the relative L2 error is <= rtol or the root-mean-square difference is
// <= atol (gradients and optimizer moments near zero after convergence differ by rounding
// far beyond any rtol), integers exactly. Returns "" or the first difference.
std::string CompareStepOutputs(const std::vector<Literal>& actual, const std::vector<Literal>& expected,
                               const StepSignature& signature, double rtol, double atol);

}  // namespace gspmd
