// Peak memory with its split by role, from the live-range peak of analysis/comm_report.
#include "simulate/memory_model.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "analysis/comm_report.h"
#include "runtime/spmd/like_module.h"

namespace gspmd::simulate {
namespace {

enum class Role { kParameter, kOptimizerState, kBatch };

// Output tuple index -> parameter number, from gspmd.carry ("OUT:IN,...").
std::map<int64_t, int64_t> CarryAliases(const Module& module) {
  std::map<int64_t, int64_t> aliases;
  const std::string carry = ModuleFrontendAttribute(module, "gspmd.carry");
  static const std::regex pair(R"((\d+)\s*:\s*(\d+))");
  for (auto it = std::sregex_iterator(carry.begin(), carry.end(), pair); it != std::sregex_iterator(); ++it)
    aliases[std::stoll((*it)[1])] = std::stoll((*it)[2]);
  return aliases;
}

// Output tuple index -> parameter number, from input_output_alias={ {0}: (1, {}, may-alias), ...}
// (top-level tuple elements aliasing whole parameters).
std::map<int64_t, int64_t> InputOutputAliases(const Module& module) {
  std::map<int64_t, int64_t> aliases;
  const std::string text = module.Attribute("input_output_alias");
  static const std::regex entry(R"(\{\s*(\d*)\s*\}\s*:\s*\(\s*(\d+)\s*,\s*\{\s*\})");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry); it != std::sregex_iterator(); ++it) {
    const std::string output = (*it)[1];
    aliases[output.empty() ? 0 : std::stoll(output)] = std::stoll((*it)[2]);
  }
  return aliases;
}

// Looks through get-tuple-element of a tuple and bitcasts to the value that owns the bytes.
const Instruction* BufferOwner(const Instruction* value) {
  while (true) {
    if (value->opcode() == Opcode::kBitcast && value->operand_count() == 1) {
      value = value->operand(0);
      continue;
    }
    if (value->opcode() == Opcode::kGetTupleElement && value->operand(0)->opcode() == Opcode::kTuple &&
        value->tuple_index < value->operand(0)->operand_count()) {
      value = value->operand(0)->operand(value->tuple_index);
      continue;
    }
    return value;
  }
}

}  // namespace

MemoryEstimate EstimateMemory(const Module& per_device, int64_t capacity_bytes, const MemoryOptions& options) {
  MemoryEstimate estimate;
  estimate.capacity_bytes = capacity_bytes;
  const Computation* entry = per_device.entry();
  if (entry == nullptr) return estimate;

  std::map<int64_t, int64_t> aliases = CarryAliases(per_device);
  if (aliases.empty()) aliases = InputOutputAliases(per_device);
  const Instruction* root = entry->root();
  std::set<const Instruction*> in_place;  // outputs written into an input's buffer
  std::set<int64_t> aliased_parameters;
  if (root != nullptr && root->opcode() == Opcode::kTuple) {
    for (const auto& [output, parameter] : aliases) {
      if (output >= root->operand_count() || parameter >= entry->num_parameters()) continue;
      const Instruction* value = BufferOwner(root->operand(output));
      if (value->opcode() == Opcode::kParameter) continue;  // passed through: no new buffer anyway
      if (value->shape().byte_size() > entry->parameter(parameter)->shape().byte_size()) continue;
      in_place.insert(value);
      aliased_parameters.insert(parameter);
    }
  }
  estimate.aliased_outputs = static_cast<int64_t>(in_place.size());

  bool annotated = false;
  std::map<const Instruction*, Role> roles;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const Instruction* parameter = entry->parameter(i);
    const std::string role = parameter->FrontendAttribute("gspmd.role");
    annotated = annotated || !role.empty();
    if (role == "param") roles[parameter] = Role::kParameter;
    else if (role == "opt_state") roles[parameter] = Role::kOptimizerState;
    else if (role == "batch") roles[parameter] = Role::kBatch;
    else roles[parameter] = aliased_parameters.count(i) ? Role::kParameter : Role::kBatch;
  }
  estimate.roles_from = annotated ? "gspmd.role" : !aliased_parameters.empty() ? "aliases" : "none";

  estimate.live_range_peak_bytes = PeakLiveBytes(per_device);
  EntryLiveRanges ranges = LiveRangesOfEntry(per_device);
  for (LiveRange& range : ranges.values)
    if (in_place.count(range.value)) range.bytes = 0;

  RematPlan plan = NoRematerialization(ranges);
  std::vector<int64_t> live = LiveBytesByPosition(ranges, plan);
  auto peak_of = [](const std::vector<int64_t>& bytes) {
    return bytes.empty() ? size_t{0} : static_cast<size_t>(std::max_element(bytes.begin(), bytes.end()) - bytes.begin());
  };
  size_t peak = peak_of(live);
  estimate.peak_without_remat_bytes = live.empty() ? 0 : live[peak];
  if (options.rematerialize && estimate.peak_without_remat_bytes > capacity_bytes) {
    plan = PlanRematerialization(ranges, capacity_bytes, options.recompute_seconds);
    live = LiveBytesByPosition(ranges, plan);
    peak = peak_of(live);
    estimate.rematerialized = plan.recomputations > 0;
    estimate.recomputations = plan.recomputations;
    estimate.remat_flops = plan.flops;
    estimate.remat_matrix_flops = plan.matrix_flops;
    estimate.remat_seconds = plan.seconds;
  }
  estimate.peak_bytes = live.empty() ? 0 : live[peak];

  // What is live at the peak, by role.
  if (!live.empty()) estimate.activation_bytes = ranges.values[peak].callee_peak + plan.transient_bytes[peak];
  for (size_t i = 0; i < ranges.values.size() && !live.empty(); ++i) {
    const LiveRange& range = ranges.values[i];
    if (range.bytes == 0) continue;
    const bool live_at_peak = std::any_of(plan.segments[i].begin(), plan.segments[i].end(),
                                          [&](const auto& segment) { return segment.first <= peak && peak <= segment.second; });
    if (!live_at_peak) continue;
    auto role = roles.find(range.value);
    if (role == roles.end()) {
      estimate.activation_bytes += range.bytes;
      continue;
    }
    switch (role->second) {
      case Role::kParameter: estimate.parameter_bytes += range.bytes; break;
      case Role::kOptimizerState: estimate.optimizer_state_bytes += range.bytes; break;
      case Role::kBatch: estimate.batch_bytes += range.bytes; break;
    }
  }
  estimate.fits = estimate.peak_bytes <= capacity_bytes;
  return estimate;
}

}  // namespace gspmd::simulate
