// The partitioning driver for one computation, and module-wide bookkeeping.
#include "partitioner/computation_partitioner.h"

#include <algorithm>
#include <optional>

#include "ir/instruction_error.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

Sharding TupleOfReplicated(const Shape& shape) {
  std::vector<Sharding> elements;
  for (const Shape& element : shape.tuple_shapes())
    elements.push_back(element.IsTuple() ? TupleOfReplicated(element) : Sharding::Replicated());
  return Sharding::Tuple(std::move(elements));
}

// A tuple-shaped value with a non-tuple sharding: the same sharding for every leaf.
Sharding ExpandForShape(const Sharding& sharding, const Shape& shape) {
  if (!shape.IsTuple() || sharding.IsTuple()) return sharding;
  std::vector<Sharding> elements;
  for (const Shape& element : shape.tuple_shapes()) elements.push_back(ExpandForShape(sharding, element));
  return Sharding::Tuple(std::move(elements));
}

bool RunHandlers(OpContext& op) {
  return PartitionCustomCall(op) || PartitionControlFlow(op) || PartitionManual(op) || PartitionBasic(op) ||
         PartitionElementwise(op) || PartitionDot(op) || PartitionShapeOp(op) || PartitionConvolution(op) ||
         PartitionGather(op) || PartitionScatter(op) || PartitionReduce(op) || PartitionReduceWindow(op) ||
         PartitionSort(op);
}

// The same tiling in iota device order, when `sharding` (of an array) covers every device in an
// order that is no product of device axes (XLA's reverse propagation gives such orders, e.g.
// {devices=[4]3,2,1,0}) while the iota order is. Tuples element-wise; nullopt when nothing
// changes.
std::optional<Sharding> IotaOrderFix(SpmdContext& spmd, const Sharding& sharding, const Shape& shape) {
  if (sharding.IsTuple() && shape.IsTuple()) {
    std::vector<Sharding> elements;
    bool changed = false;
    for (int64_t i = 0; i < shape.tuple_size() && i < static_cast<int64_t>(sharding.tuple_elements().size()); ++i) {
      std::optional<Sharding> fixed = IotaOrderFix(spmd, sharding.tuple_elements()[i], shape.tuple_shape(i));
      changed = changed || fixed.has_value();
      elements.push_back(fixed.value_or(sharding.tuple_elements()[i]));
    }
    if (!changed || elements.size() != sharding.tuple_elements().size()) return std::nullopt;
    return Sharding::Tuple(std::move(elements));
  }
  if (!sharding.IsTiled() || !shape.IsArray()) return std::nullopt;
  if (sharding.tile_assignment().num_elements() != spmd.num_devices()) return std::nullopt;
  if (spmd.Axes(sharding, shape.rank()).has_value()) return std::nullopt;
  Sharding ordered =
      Sharding::Tiled(TileAssignment::Iota(sharding.tile_assignment().dims()), sharding.subgroup_types());
  if (!spmd.Axes(ordered, shape.rank()).has_value()) return std::nullopt;
  return ordered;
}

}  // namespace

Sharding EffectiveSharding(const Instruction& instruction) {
  // An unannotated get-tuple-element (XLA's inline %tuple#1 references) is its element.
  if (!instruction.sharding() && instruction.opcode() == Opcode::kGetTupleElement) {
    Sharding tuple = EffectiveSharding(*instruction.operand(0));
    if (tuple.IsTuple() && instruction.tuple_index < static_cast<int64_t>(tuple.tuple_elements().size()))
      return ExpandForShape(tuple.tuple_elements()[instruction.tuple_index], instruction.shape());
  }
  if (!instruction.sharding()) {
    return instruction.shape().IsTuple() ? TupleOfReplicated(instruction.shape()) : Sharding::Replicated();
  }
  return ExpandForShape(*instruction.sharding(), instruction.shape());
}

ComputationPartitioner::ComputationPartitioner(ModulePartitioner& module_partitioner,
                                               const Computation& source, Computation* output,
                                               std::vector<Sharding> parameter_shardings,
                                               Sharding root_sharding, bool is_entry)
    : module_partitioner_(module_partitioner), source_(source), output_(output),
      builder_(output, &module_partitioner.spmd().names()),
      parameter_shardings_(std::move(parameter_shardings)), root_sharding_(std::move(root_sharding)),
      is_entry_(is_entry) {}

SpmdContext& ComputationPartitioner::spmd() { return module_partitioner_.spmd(); }

const PartitionedValue& ComputationPartitioner::ValueOf(const Instruction* original) const {
  auto it = values_.find(original);
  GSPMD_CHECK(it != values_.end(), "operand %", original->name(), " not partitioned yet");
  return it->second;
}

PartitionedValue ComputationPartitioner::ReshardCached(const Instruction* original, const Sharding& sharding) {
  const PartitionedValue& value = ValueOf(original);
  if (value.sharding == sharding) return value;
  auto key = std::make_pair(original, sharding.ToString());
  if (auto it = reshards_.find(key); it != reshards_.end()) return it->second;
  PartitionedValue resharded = Reshard(spmd(), builder_, value, sharding);
  reshards_[key] = resharded;
  return resharded;
}

PartitionedValue ComputationPartitioner::PartitionParameter(const Instruction& parameter) {
  int64_t number = parameter.parameter_number;
  Sharding incoming = number < static_cast<int64_t>(parameter_shardings_.size())
                          ? parameter_shardings_[number]
                          : EffectiveSharding(parameter);
  Shape shard_shape = parameter.shape();
  if (shard_shape.IsTuple()) {
    std::vector<Shape> elements;
    for (int64_t i = 0; i < shard_shape.tuple_size(); ++i)
      elements.push_back(ShardShapeOf(incoming.tuple_elements().at(i), shard_shape.tuple_shape(i)));
    shard_shape = Shape::Tuple(std::move(elements));
    // Nested tuples are not split further here.
  } else if (shard_shape.IsArray()) {
    shard_shape = ShardShapeOf(incoming, shard_shape);
  }
  auto clone = std::make_unique<Instruction>(Opcode::kParameter, shard_shape, parameter.name());
  clone->parameter_number = number;
  clone->metadata = parameter.metadata;
  clone->frontend_attributes = parameter.frontend_attributes;
  if (is_entry_) clone->set_sharding(parameter.sharding() ? *parameter.sharding() : incoming);
  Instruction* hlo = builder_.Add(std::move(clone));
  PartitionedValue value{hlo, parameter.shape(), incoming};
  return value;
}

void ComputationPartitioner::PartitionInstruction(const Instruction& instruction) {
  if (instruction.opcode() == Opcode::kParameter) {
    PartitionedValue value = PartitionParameter(instruction);
    Sharding wanted = EffectiveSharding(instruction);
    if (!(value.sharding == wanted)) value = Reshard(spmd(), builder_, value, wanted);
    values_[&instruction] = value;
    return;
  }
  OpContext op(*this, instruction);
  bool handled = RunHandlers(op);
  if (!handled && PartitionInIotaOrder(instruction)) return;
  if (!handled) PartitionByReplicating(op);
  GSPMD_CHECK(op.has_result(), "no result for %", instruction.name());
  PartitionedValue result = op.result();
  if (!(result.sharding == op.sharding())) result = Reshard(spmd(), builder_, result, op.sharding());
  if (result.hlo->metadata.empty()) result.hlo->metadata = instruction.metadata;
  values_[&instruction] = result;
}

// No handler took the instruction, and some operand or the result has a device order that is no
// product of device axes: collective-permute those operands into iota order, let the handlers
// aim for the result in iota order, and permute the result back (instead of replicating).
bool ComputationPartitioner::PartitionInIotaOrder(const Instruction& instruction) {
  Sharding wanted = EffectiveSharding(instruction);
  std::optional<Sharding> result_order = IotaOrderFix(spmd(), wanted, instruction.shape());
  std::vector<std::pair<const Instruction*, PartitionedValue>> saved;
  for (const Instruction* operand : instruction.operands()) {
    if (std::any_of(saved.begin(), saved.end(), [&](const auto& entry) { return entry.first == operand; })) continue;
    const PartitionedValue& value = ValueOf(operand);
    std::optional<Sharding> ordered = IotaOrderFix(spmd(), value.sharding, value.global_shape);
    if (!ordered) continue;
    saved.emplace_back(operand, value);
    values_[operand] = ReshardCached(operand, *ordered);
  }
  if (!result_order && saved.empty()) return false;
  OpContext op(*this, instruction, result_order.value_or(wanted));
  bool handled = RunHandlers(op);
  for (const auto& [operand, value] : saved) values_[operand] = value;
  if (!handled) return false;
  PartitionedValue result = op.result();
  if (!(result.sharding == wanted)) result = Reshard(spmd(), builder_, result, wanted);
  if (result.hlo->metadata.empty()) result.hlo->metadata = instruction.metadata;
  values_[&instruction] = result;
  return true;
}

void ComputationPartitioner::Run() {
  // What gets built for an instruction takes its source location, and errors found while
  // partitioning it name it.
  for (const Instruction* instruction : source_.MakePostOrder()) {
    builder_.set_source_instruction(instruction);
    WithInstructionContext(*instruction, [&] { PartitionInstruction(*instruction); });
  }
  builder_.set_source_instruction(source_.root());
  PartitionedValue root = ValueOf(source_.root());
  if (!(root.sharding == root_sharding_)) root = Reshard(spmd(), builder_, root, root_sharding_);
  Instruction* root_hlo = root.hlo;
  if (is_entry_ && root_hlo->opcode() == Opcode::kParameter) root_hlo = builder_.Copy(root_hlo);
  if (is_entry_) root_hlo->set_sharding(root_sharding_);
  output_->set_root(root_hlo);
}

ModulePartitioner::ModulePartitioner(const Module& source, Module* output, int64_t num_devices)
    : source_(source), spmd_(output, num_devices) {
  spmd_.names().ReserveAll(source);
}

Computation* ModulePartitioner::Clone(const Computation* computation) {
  if (auto it = clones_.find(computation); it != clones_.end()) return it->second;
  auto clone = std::make_unique<Computation>(spmd_.names().Unique(computation->name()));
  Computation* output = spmd_.output()->AddComputationFront(std::move(clone));
  clones_[computation] = output;
  std::map<const Instruction*, Instruction*> mapping;
  for (const Instruction* instruction : computation->MakePostOrder()) {
    std::vector<Instruction*> operands;
    for (const Instruction* operand : instruction->operands()) operands.push_back(mapping.at(operand));
    auto copy = instruction->CloneWithNewOperands(instruction->shape(), operands);
    copy->set_sharding(std::nullopt);
    std::vector<Computation*> called;
    for (const Computation* c : instruction->called_computations()) called.push_back(Clone(c));
    copy->set_called_computations(called);
    Instruction* added = output->AddInstruction(std::move(copy));
    mapping[instruction] = added;
  }
  output->set_root(mapping.at(computation->root()));
  return output;
}

Computation* ModulePartitioner::Partition(const Computation* computation,
                                          const std::vector<Sharding>& parameter_shardings,
                                          const Sharding& root_sharding, bool is_entry) {
  std::string key = computation->name() + "|";
  for (const Sharding& sharding : parameter_shardings) key += sharding.ToString() + ";";
  key += "|" + root_sharding.ToString();
  if (auto it = partitioned_.find(key); it != partitioned_.end()) return it->second;
  auto output = std::make_unique<Computation>(spmd_.names().Unique(computation->name() + "_spmd"));
  Computation* raw = output.get();
  partitioned_[key] = raw;
  ComputationPartitioner partitioner(*this, *computation, raw, parameter_shardings, root_sharding, is_entry);
  partitioner.Run();
  // Added once partitioned, after everything it calls (which may have been cloned earlier).
  spmd_.output()->AddComputation(std::move(output), is_entry);
  return raw;
}

}  // namespace gspmd
