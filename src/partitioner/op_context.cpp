// OpContext: operand access with resharding, and result recording, for handlers.
#include "partitioner/op_context.h"

#include "partitioner/computation_partitioner.h"
#include "support/diagnostic.h"

namespace gspmd {

OpContext::OpContext(ComputationPartitioner& partitioner, const Instruction& instruction,
                     std::optional<Sharding> sharding)
    : partitioner_(partitioner),
      instruction_(instruction),
      sharding_(sharding ? std::move(*sharding) : partitioner.module_partitioner().ShardingOf(instruction)) {}

Sharding OpContext::ShardingOf(const Instruction& instruction) const {
  return partitioner_.module_partitioner().ShardingOf(instruction);
}

bool OpContext::WholeWantedLater(const Instruction& original) const { return partitioner_.WholeWantedLater(&original); }

SpmdContext& OpContext::spmd() { return partitioner_.spmd(); }
HloBuilder& OpContext::builder() { return partitioner_.builder(); }

const PartitionedValue& OpContext::Operand(int64_t i) const {
  return partitioner_.ValueOf(instruction_.operand(i));
}

bool OpContext::OperandFreeInAnyLayout(int64_t i) {
  return partitioner_.FreeInAnyLayout(instruction_.operand(i));
}

const PartitionedValue& OpContext::ValueOfOriginal(const Instruction* original) const {
  return partitioner_.ValueOf(original);
}

PartitionedValue OpContext::OperandValueWith(int64_t i, const Sharding& sharding) {
  return partitioner_.ReshardCached(instruction_.operand(i), sharding);
}

Instruction* OpContext::OperandWith(int64_t i, const Sharding& sharding) {
  return OperandValueWith(i, sharding).hlo;
}

Computation* OpContext::ClonedComputation(const Computation* computation) {
  return partitioner_.module_partitioner().Clone(computation);
}

Computation* OpContext::PartitionedComputation(const Computation* computation,
                                               const std::vector<Sharding>& parameter_shardings,
                                               const Sharding& root_sharding) {
  return partitioner_.module_partitioner().Partition(computation, parameter_shardings, root_sharding);
}

void OpContext::SetResult(Instruction* hlo, const Sharding& sharding) {
  result_ = PartitionedValue{hlo, instruction_.shape(), sharding};
}

Instruction* OpContext::Clone(Shape shape, const std::vector<Instruction*>& operands) {
  auto clone = instruction_.CloneWithNewOperands(std::move(shape), operands);
  clone->set_sharding(std::nullopt);
  clone->set_name(instruction_.name());  // HloBuilder::Add makes it unique
  std::vector<Computation*> called;
  for (const Computation* computation : instruction_.called_computations())
    called.push_back(ClonedComputation(computation));
  clone->set_called_computations(called);
  return builder().Add(std::move(clone));
}

}  // namespace gspmd
