// OpContext: what a per-op partitioning handler sees: the original instruction, its
// partitioned operands, the builder for the per-device program, and where the result goes.
#pragma once

#include <functional>
#include <map>
#include <vector>

#include "partitioner/reshard.h"
#include "partitioner/spmd_context.h"

namespace gspmd {

class ComputationPartitioner;

// Handlers read operands (resharded on request) and set the result:
//   Instruction* lhs = op.OperandWith(0, wanted);       // reshards if needed
//   op.SetResult(b.AddOp(...), op.sharding());          // driver reshards to op.sharding()
class OpContext {
 public:
  OpContext(ComputationPartitioner& partitioner, const Instruction& instruction);

  const Instruction& instruction() const { return instruction_; }
  // The sharding the result must end with (the instruction's, or replicated).
  const Sharding& sharding() const { return sharding_; }
  SpmdContext& spmd();
  HloBuilder& builder();

  const PartitionedValue& Operand(int64_t i) const;
  // Operand i resharded to `sharding`; the reshard is cached per (operand, sharding).
  Instruction* OperandWith(int64_t i, const Sharding& sharding);
  PartitionedValue OperandValueWith(int64_t i, const Sharding& sharding);

  // The output-module copy of a scalar computation the op applies (reducer, comparator).
  Computation* ClonedComputation(const Computation* computation);
  // Partitions a called computation (while body, branch, call target) whose parameters have
  // the given shardings; returns the per-device computation.
  Computation* PartitionedComputation(const Computation* computation,
                                      const std::vector<Sharding>& parameter_shardings,
                                      const Sharding& root_sharding);

  // The result: a per-device instruction whose value is laid out as `sharding`.
  void SetResult(Instruction* hlo, const Sharding& sharding);
  void SetResult(const PartitionedValue& value) { SetResult(value.hlo, value.sharding); }
  bool has_result() const { return result_.hlo != nullptr; }
  const PartitionedValue& result() const { return result_; }

  // The clone of the instruction with another shape and operands (attributes kept).
  Instruction* Clone(Shape shape, const std::vector<Instruction*>& operands);

 private:
  ComputationPartitioner& partitioner_;
  const Instruction& instruction_;
  Sharding sharding_;
  PartitionedValue result_;
};

// Handlers, one per family of ops (handlers/*.cpp). Each returns false when it does not
// handle the instruction's configuration, and the driver then uses the replicate fallback.
bool PartitionElementwise(OpContext& op);
bool PartitionBasic(OpContext& op);  // parameter, constant, tuple, get-tuple-element, copy...
// The last resort: replicate every operand, run the op unpartitioned, slice the result.
void PartitionByReplicating(OpContext& op);

}  // namespace gspmd
