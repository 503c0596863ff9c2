// OpContext: what a per-op partitioning handler sees: the original instruction, its
// partitioned operands, the builder for the per-device program, and where the result goes.
#pragma once

#include <functional>
#include <map>
#include <optional>
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
  // `sharding`: the result sharding the handlers aim for, when not the instruction's own.
  OpContext(ComputationPartitioner& partitioner, const Instruction& instruction,
            std::optional<Sharding> sharding = std::nullopt);

  const Instruction& instruction() const { return instruction_; }
  // The sharding the result must end with (the instruction's, or replicated).
  const Sharding& sharding() const { return sharding_; }
  SpmdContext& spmd();
  HloBuilder& builder();
  // The sharding another instruction is partitioned to (its own, or the partial-sum plan's).
  Sharding ShardingOf(const Instruction& instruction) const;
  // Whether a user of `original` not partitioned yet takes it whole anyway (the result holds it
  // replicated): ComputationPartitioner::WholeWantedLater.
  bool WholeWantedLater(const Instruction& original) const;

  const PartitionedValue& Operand(int64_t i) const;
  // Whether operand i is made in any layout without communication (a splat, an iota, a value
  // of constants, a broadcast of a replicated value): ComputationPartitioner::FreeInAnyLayout.
  bool OperandFreeInAnyLayout(int64_t i);
  // The partitioned value of any instruction of the computation already visited (e.g. an
  // operand's operand, for ops that look through a pattern such as concat-of-slices).
  const PartitionedValue& ValueOfOriginal(const Instruction* original) const;
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
bool PartitionDot(OpContext& op);  // dot (einsum): handlers/dot.cpp
bool PartitionShapeOp(OpContext& op);  // broadcast, reshape, slice, pad, ...: handlers/shape_ops.cpp
bool PartitionConvolution(OpContext& op);  // convolution: handlers/convolution.cpp
bool PartitionGather(OpContext& op);  // gather: handlers/gather_scatter.cpp
bool PartitionScatter(OpContext& op);  // scatter: handlers/gather_scatter.cpp
bool PartitionReduce(OpContext& op);  // reduce (variadic too): handlers/reduce.cpp
bool PartitionReduceWindow(OpContext& op);  // reduce-window, select-and-scatter: handlers/reduce_window.cpp
bool PartitionSort(OpContext& op);  // sort, topk, the TopK custom-call: handlers/sort.cpp
bool PartitionCustomCall(OpContext& op);  // Sharding, SPMD*Shape, xla.sdy.*: handlers/custom_call.cpp
bool PartitionControlFlow(OpContext& op);  // while, conditional, call, opt-barrier: handlers/control_flow.cpp
bool PartitionManual(OpContext& op);  // ops inside manual (shard_map) regions: manual.cpp
bool PartitionBasic(OpContext& op);  // parameter, constant, tuple, get-tuple-element, copy...
// The last resort: replicate every operand, run the op unpartitioned, slice the result.
void PartitionByReplicating(OpContext& op);

}  // namespace gspmd
