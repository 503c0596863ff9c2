// PartitionModule: the module-level entry point of the SPMD partitioner.
#include "partitioner/partitioner.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "partitioner/async_permutes.h"
#include "partitioner/cleanup.h"
#include "partitioner/computation_partitioner.h"
#include "partitioner/handlers/dot_strategies.h"
#include "propagation/partial_sums.h"
#include "runtime/spmd/like_module.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

void CheckShardingFits(const Instruction& instruction, const Sharding& sharding, int64_t num_devices) {
  if (sharding.IsTuple()) {
    for (const Sharding& element : sharding.tuple_elements()) CheckShardingFits(instruction, element, num_devices);
    return;
  }
  if (sharding.RequiredDeviceCount() > num_devices) {
    GSPMD_USER_ERROR("sharding ", sharding.ToString(), " of %", instruction.name(), " uses device ",
                     sharding.RequiredDeviceCount() - 1, " but the program has ", num_devices,
                     " partitions");
  }
  if (sharding.IsTiled() && instruction.shape().IsArray() &&
      sharding.TiledDataRank() != instruction.shape().rank()) {
    GSPMD_USER_ERROR("sharding ", sharding.ToString(), " of %", instruction.name(), " tiles ",
                     sharding.TiledDataRank(), " dims but the shape ", instruction.shape().ToString(),
                     " has rank ", instruction.shape().rank());
  }
}

std::string EntryLayoutText(const Computation& entry) {
  std::string text = "{(";
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    if (i > 0) text += ", ";
    text += entry.parameter(i)->shape().ToString(true);
  }
  return text + ")->" + entry.root()->shape().ToString(true) + "}";
}

// The largest channel_id any instruction of `module` uses (0 when none does).
int64_t LargestChannelId(const Module& module) {
  int64_t largest = 0;
  for (const auto& computation : module.computations())
    for (const auto& instruction : computation->instructions())
      if (instruction->channel_id.has_value()) largest = std::max(largest, *instruction->channel_id);
  return largest;
}

// The dot handler's answer for one dot, with the shardings it was asked about (held, so that
// their identities in the key stay theirs).
struct DotAnswer {
  Sharding lhs, rhs, out;
  std::optional<DotChoice> choice;
};

std::optional<DotChoice> AskDotHandler(SpmdContext& context, const Instruction& dot, const DotAnswer& answer) {
  std::optional<DotPlacement> placement = DotPlacementFor(context, dot, answer.lhs, answer.rhs, answer.out);
  if (!placement) return std::nullopt;
  return DotChoice{placement->partial, placement->cost_bytes};
}

PartialSumPlan PlanWith(SpmdContext& context, const Module& module) {
  // The handler's choice depends only on the dot's shapes, dimension numbers and the three
  // shardings, and layers repeat: ask once per distinct dot. Shardings are keyed by identity
  // (the parser shares equal shardings), which misses nothing but a repeat.
  std::unordered_map<std::string, DotAnswer> answers;
  std::string key;
  DotChoiceOracle oracle = [&](const Instruction& instruction, const Sharding* out) -> std::optional<DotChoice> {
    if (instruction.opcode() != Opcode::kDot || instruction.operand_count() != 2) return std::nullopt;
    DotAnswer answer{EffectiveSharding(*instruction.operand(0)).WithoutUnreduced(),
                     EffectiveSharding(*instruction.operand(1)).WithoutUnreduced(),
                     out != nullptr ? *out : EffectiveSharding(instruction).WithoutUnreduced(), std::nullopt};
    key.clear();
    for (const Sharding* sharding : {&answer.lhs, &answer.rhs, &answer.out})
      AppendKey(key, static_cast<int64_t>(reinterpret_cast<intptr_t>(sharding->identity())));
    const Instruction* const parts[] = {instruction.operand(0), instruction.operand(1), &instruction};
    for (const Instruction* part : parts) {
      if (!part->shape().IsArray()) return AskDotHandler(context, instruction, answer);
      AppendKey(key, static_cast<int64_t>(part->shape().element_type()));
      AppendKey(key, part->shape().dims());
    }
    const DotDimensionNumbers& dims = instruction.dot_dims();
    for (const auto* list : {&dims.lhs_batch_dims, &dims.rhs_batch_dims, &dims.lhs_contracting_dims,
                             &dims.rhs_contracting_dims})
      AppendKey(key, *list);
    if (auto found = answers.find(key); found != answers.end()) return found->second.choice;
    answer.choice = AskDotHandler(context, instruction, answer);
    return answers.emplace(key, std::move(answer)).first->second.choice;
  };
  return PlanPartialSums(module, context.num_devices(), oracle);
}

}  // namespace

PartialSumPlan PlanPartialSumsForPartitioning(const Module& module, int64_t num_devices) {
  Module scratch(module.name());
  SpmdContext context(&scratch, num_devices);
  return PlanWith(context, module);
}

PartitionResult PartitionModule(const Module& module, const PartitionOptions& options) {
  int64_t num_devices = options.num_partitions > 0 ? options.num_partitions : module.num_partitions();
  if (num_devices < 1) GSPMD_USER_ERROR("the number of partitions must be at least 1, not ", num_devices);
  const Computation* entry = module.entry();
  if (entry == nullptr) GSPMD_USER_ERROR("module ", module.name(), " has no ENTRY computation");
  for (const auto& computation : module.computations())
    for (const auto& instruction : computation->instructions())
      if (instruction->sharding()) CheckShardingFits(*instruction, *instruction->sharding(), num_devices);

  auto output = std::make_unique<Module>(module.name());
  output->attributes = module.attributes;
  output->debug_tables = module.debug_tables;
  output->set_num_partitions(num_devices);
  ModulePartitioner partitioner(module, output.get(), num_devices);
  partitioner.spmd().set_windowed_einsum(options.windowed_einsum);
  PartialSumPlan plan;
  if (options.partial_sums) plan = PlanWith(partitioner.spmd(), module);
  partitioner.set_partial_plan(&plan);
  partitioner.spmd().collectives().set_next_channel_id(LargestChannelId(module) + 1);
  std::vector<Sharding> parameter_shardings;
  for (const Instruction* parameter : entry->parameters()) parameter_shardings.push_back(EffectiveSharding(*parameter));
  partitioner.Partition(entry, parameter_shardings, EffectiveSharding(*entry->root()), /*is_entry=*/true);
  if (!output->Attribute("entry_computation_layout").empty())
    output->SetAttribute("entry_computation_layout", EntryLayoutText(*output->entry()));
  CleanupPartitionedModule(*output);
  // The windowed einsum loops' permutes run while their trip's dot does.
  ConvertPermutesToAsync(*output, AsyncPermuteScope::kWindowedLoops);
  // Self-describing: `gspmd run --spmd` crops uneven results to these shapes without --like.
  SetModuleFrontendAttribute(*output, kGlobalResultShapesAttribute, entry->root()->shape().ToString(false));
  PartitionResult result;
  result.warnings = partitioner.spmd().warnings();
  result.module = std::move(output);
  return result;
}

}  // namespace gspmd
