// The reference interpreter: evaluates a module (or one computation) on one device.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "ir/literal.h"
#include "ir/module.h"

namespace gspmd {

class Communicator;

// What a device knows about itself while running a per-device program. The reference
// interpreter runs with the defaults (device 0 of 1, no communicator); the SPMD executor gives
// each simulated device its own context.
struct DeviceContext {
  int64_t partition_id = 0;
  int64_t replica_id = 0;
  int64_t num_partitions = 1;
  Communicator* communicator = nullptr;  // required for collectives when num_partitions > 1
};

// Evaluates HLO on literals. Shardings are ignored; the annotation custom-calls (Sharding,
// xla.sdy.*, SPMDFullToShardShape / SPMDShardToFullShape) are the identity.
//
//   Evaluator evaluator(module);
//   Literal result = evaluator.Run({x, w});   // the entry computation
// An Evaluator caches per-computation plans and reuses its frames: use one per thread.
class Evaluator {
 public:
  explicit Evaluator(const Module& module, DeviceContext context = {});
  ~Evaluator();
  Evaluator(Evaluator&&) noexcept;

  // Runs the entry computation. Arguments must match the entry parameters' shapes; a mismatch
  // is a UserError naming the parameter.
  Literal Run(std::span<const Literal> arguments);

  // Runs any computation of the module (used by kernels for to_apply / comparators).
  Literal Call(const Computation& computation, std::span<const Literal* const> arguments);

  const DeviceContext& context() const { return context_; }

 private:
  Literal EvaluateInstruction(const Instruction& instruction,
                              std::span<const Literal* const> operands);

  struct State;  // per-computation evaluation plans and reusable frames (evaluator.cpp)

  const Module& module_;
  DeviceContext context_;
  std::unique_ptr<State> state_;
  uint64_t rng_counter_ = 0;  // Philox counter of the rng op (advances per call)
};

// Shorthand: evaluates the module's entry on one device.
Literal EvaluateModule(const Module& module, std::span<const Literal> arguments);

// Flattens a (possibly nested) tuple literal into its array leaves, in order.
std::vector<Literal> FlattenTuple(Literal value);

}  // namespace gspmd
