// Partitions one computation: walks its instructions in order, runs the handler of each, and
// keeps the partitioned value of every original instruction.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "partitioner/op_context.h"
#include "propagation/partial_sums.h"

namespace gspmd {

class ModulePartitioner;

class ComputationPartitioner {
 public:
  // `parameter_shardings[i]` is how the caller lays out parameter i; `root_sharding` is how
  // the caller wants the result.
  ComputationPartitioner(ModulePartitioner& module_partitioner, const Computation& source,
                         Computation* output, std::vector<Sharding> parameter_shardings,
                         Sharding root_sharding, bool is_entry);

  void Run();

  SpmdContext& spmd();
  HloBuilder& builder() { return builder_; }
  ModulePartitioner& module_partitioner() { return module_partitioner_; }
  const PartitionedValue& ValueOf(const Instruction* original) const;
  PartitionedValue ReshardCached(const Instruction* original, const Sharding& sharding);
  // `original` made again in `sharding` from its scalar, where it is a broadcast of a
  // replicated scalar (through sharding constraints and copies); nullopt otherwise.
  std::optional<PartitionedValue> SplatIn(const Instruction* original, const Sharding& sharding);
  // `original` made again in `sharding` as an iota, where its value is one (an iota through
  // reshapes, transposes, broadcasts, copies and widening converts); nullopt otherwise.
  std::optional<PartitionedValue> IotaIn(const Instruction* original, const Sharding& sharding);
  // `original`, a broadcast of a value held replicated, broadcast again into `sharding` from
  // the operand's piece there; nullopt otherwise.
  std::optional<PartitionedValue> BroadcastIn(const Instruction* original, const Sharding& sharding);
  // A data-movement op (slice, pad, concatenate, reverse, reshape, transpose, dynamic slices)
  // whose operands are laid out split but computed by cheap ops from values held whole:
  // computed whole and cut to `target` (WholeExpressionIn), where its handler would move the
  // split pieces (oracle seed 121128: a flat slice of a broadcast of a replicated value, split
  // by propagation, a 72 B permute); nullopt otherwise.
  std::optional<PartitionedValue> MovedDataComputedWhole(const Instruction& instruction, const Sharding& target);
  // Whether `original` is made in any layout without communication (SplatIn, IotaIn,
  // WholeExpressionIn or BroadcastIn applies), so that a handler may read it as replicated.
  bool FreeInAnyLayout(const Instruction* original);
  // `original` computed again whole on every device and cut to `sharding` there, where it is
  // computed by cheap ops (ExpressionOf) from constants, iotas and values held replicated;
  // nullopt otherwise.
  std::optional<PartitionedValue> WholeExpressionIn(const Instruction* original, const Sharding& sharding);
  std::vector<const Instruction*> WholeExpressionOf(const Instruction* original) const;
  // `original`, a reshape, made again from its operand in `sharding` when that moves fewer
  // bytes than `moving` (what moving its result there costs).
  std::optional<PartitionedValue> ReshapeIn(const Instruction* original, const Sharding& sharding, double moving);
  // Whether a user not partitioned yet takes `original` whole anyway (a tuple, such as the
  // result, that holds it replicated).
  bool WholeWantedLater(const Instruction* original) const;
  // A form of `original`'s value computed for another instruction (through copies and sharding
  // constraints, their operand; for a tuple element, the tuple's forms, element `element`)
  // that reshards into `sharding` for less than `below`; nullopt when there is none.
  struct SameValueForm {
    PartitionedValue value;
    int64_t element = -1;  // >= 0: that element of the tuple `value`
    double cost = 0;
  };
  std::optional<SameValueForm> CheapestSameValueForm(const Instruction* original, const Sharding& sharding,
                                                     std::optional<double> below);

 private:
  void PartitionInstruction(const Instruction& instruction);
  // Retries the handlers with device orders they can reason about (see the .cpp); false when
  // that does not apply or does not help.
  bool PartitionInIotaOrder(const Instruction& instruction);
  PartitionedValue PartitionParameter(const Instruction& parameter);
  // Partial sums (partial_sums.h). An op computed partial from partial operands runs on their
  // pieces; a dot, convolution or reduce can leave its own sum pending; an op that needs its
  // operands whole gets them reduced first (once per value and layout).
  bool PartitionOnPieces(const Instruction& instruction, const Sharding& target);
  bool PartitionKeepingSum(const Instruction& instruction, const Sharding& target);
  using SavedValues = std::vector<std::pair<const Instruction*, PartitionedValue>>;
  SavedValues ReducePartialOperands(const Instruction& instruction, const Sharding& target);
  void Restore(const SavedValues& saved);

  ModulePartitioner& module_partitioner_;
  const Computation& source_;
  Computation* output_;
  HloBuilder builder_;
  std::vector<Sharding> parameter_shardings_;
  Sharding root_sharding_;
  bool is_entry_;
  std::unordered_map<const Instruction*, PartitionedValue> values_;  // lookup only, never iterated
  std::map<std::pair<const Instruction*, std::string>, PartitionedValue> reshards_;
};

// Module-wide partitioning state: the context, and the computations already produced.
class ModulePartitioner {
 public:
  ModulePartitioner(const Module& source, Module* output, int64_t num_devices);

  SpmdContext& spmd() { return spmd_; }
  // The shardings of the partial-sum plan (partial_sums.h), which override the instructions'
  // own; nullptr for none.
  void set_partial_plan(const PartialSumPlan* plan) { plan_ = plan; }
  // The sharding `instruction` is partitioned to: the plan's, else EffectiveSharding.
  Sharding ShardingOf(const Instruction& instruction) const;
  // The partial layout the plan computes `instruction` in before reduce-scattering it into
  // its own sharding (nullptr when it does not).
  const Sharding* ComputedAs(const Instruction& instruction) const;
  // Whether the plan keeps `instruction` (a dot) partial where its handler would gather.
  bool PartialInsteadOfGathering(const Instruction& instruction) const;
  Computation* Clone(const Computation* computation);
  Computation* Partition(const Computation* computation, const std::vector<Sharding>& parameter_shardings,
                         const Sharding& root_sharding, bool is_entry = false);

 private:
  const Module& source_;
  SpmdContext spmd_;
  std::map<const Computation*, Computation*> clones_;
  std::map<std::string, Computation*> partitioned_;  // by name + shardings
  const PartialSumPlan* plan_ = nullptr;
};

// The sharding an instruction is partitioned to (its own, or replicated when it has none).
Sharding EffectiveSharding(const Instruction& instruction);

}  // namespace gspmd
