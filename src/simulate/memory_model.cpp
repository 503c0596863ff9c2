// Peak memory with its split by role, from the live-range peak of analysis/comm_report.
#include "simulate/memory_model.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <unordered_map>
#include <vector>

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

// Tuple elements of a while loop's state that its body passes through unchanged (the root's
// element i is the body parameter's element i): XLA keeps them in the operand's buffer.
std::vector<bool> PassThroughElements(const Instruction& loop) {
  const Computation* body = loop.while_body();
  std::vector<bool> through;
  if (body == nullptr || !loop.shape().IsTuple()) return through;
  through.assign(loop.shape().tuple_size(), false);
  const Instruction* root = body->root();
  if (root == nullptr || root->opcode() != Opcode::kTuple || body->num_parameters() != 1) return through;
  for (int64_t i = 0; i < root->operand_count() && i < static_cast<int64_t>(through.size()); ++i) {
    const Instruction* element = root->operand(i);
    through[i] = element->opcode() == Opcode::kGetTupleElement && element->tuple_index == i &&
                 element->operand(0) == body->parameter(0);
  }
  return through;
}

// Bytes of the state elements a loop passes through.
int64_t PassThroughBytes(const Instruction& loop) {
  const std::vector<bool> through = PassThroughElements(loop);
  int64_t bytes = 0;
  for (size_t i = 0; i < through.size(); ++i)
    if (through[i]) bytes += loop.shape().tuple_shape(static_cast<int64_t>(i)).byte_size();
  return bytes;
}

// A dynamic-update-slice that XLA runs in place: its buffer (operand 0) dies there.
bool UpdatesInPlace(const Instruction& instruction, const std::vector<size_t>& last_use,
                    const std::unordered_map<const Instruction*, size_t>& position) {
  if (instruction.opcode() != Opcode::kDynamicUpdateSlice) return false;
  auto it = position.find(BufferOwner(instruction.operand(0)));
  auto self = position.find(&instruction);
  if (it == position.end() || self == position.end()) return true;  // the caller's buffer (a parameter)
  return last_use[it->second] <= self->second;
}

// A dot whose one use is a dynamic-update-slice's update: written into the buffer in place
// (kernel_plan.h fuses the two).
bool WrittenIntoSlice(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kDot || instruction.users().size() != 1) return false;
  const Instruction* user = instruction.users()[0];
  return user->opcode() == Opcode::kDynamicUpdateSlice && user->operand(1) == &instruction;
}

std::vector<size_t> LastUsesOf(const Computation& computation) {
  const auto& instructions = computation.instructions();
  std::unordered_map<const Instruction*, size_t> position;
  for (size_t i = 0; i < instructions.size(); ++i) position[instructions[i].get()] = i;
  std::vector<size_t> last_use(instructions.size(), 0);
  for (size_t i = 0; i < instructions.size(); ++i) {
    last_use[i] = i;
    for (const Instruction* user : instructions[i]->users()) last_use[i] = std::max(last_use[i], position.at(user));
    if (instructions[i].get() == computation.root()) last_use[i] = instructions.size();
  }
  return last_use;
}

// The peak of a called computation as XLA allocates loops (on top of the caller's live
// values): its parameters, tuples and get-tuple-elements alias; a while loop's state takes
// no new buffer for the elements its body passes through; a dynamic-update-slice whose buffer
// dies there updates it in place, and a dot written only into such a slice takes no buffer.
int64_t CalleePeak(const Computation& computation, std::unordered_map<const Computation*, int64_t>& memo) {
  if (auto it = memo.find(&computation); it != memo.end()) return it->second;
  memo[&computation] = 0;  // recursion guard
  const auto& instructions = computation.instructions();
  std::unordered_map<const Instruction*, size_t> position;
  for (size_t i = 0; i < instructions.size(); ++i) position[instructions[i].get()] = i;
  const std::vector<size_t> last_use = LastUsesOf(computation);
  std::vector<int64_t> own(instructions.size(), 0);
  std::vector<std::vector<size_t>> frees_after(instructions.size() + 1);
  int64_t live = 0, peak = 0;
  for (size_t i = 0; i < instructions.size(); ++i) {
    const Instruction& instruction = *instructions[i];
    frees_after[last_use[i]].push_back(i);
    int64_t callee = 0;
    for (const Computation* called : instruction.called_computations()) callee = std::max(callee, CalleePeak(*called, memo));
    switch (instruction.opcode()) {
      case Opcode::kParameter: case Opcode::kTuple: case Opcode::kGetTupleElement: case Opcode::kBitcast:
      case Opcode::kOptimizationBarrier:
        break;
      case Opcode::kWhile:
        own[i] = instruction.shape().byte_size() - PassThroughBytes(instruction);
        break;
      default:
        if (UpdatesInPlace(instruction, last_use, position) || WrittenIntoSlice(instruction)) break;
        own[i] = instruction.shape().byte_size();
        break;
    }
    live += own[i];
    peak = std::max(peak, live + callee);
    for (size_t freed : frees_after[i]) live -= own[freed];
  }
  memo[&computation] = peak;
  return peak;
}

// Applies XLA's in-place loops and updates to the entry's live ranges (CalleePeak): a while
// loop's passed-through state stays in its operand's buffer, which then lives as long as the
// loop's result; a dynamic-update-slice whose buffer dies there writes into it, which then
// lives as long as the update's result; a dot written only into such a slice takes no buffer;
// called computations add CalleePeak.
void ApplyInPlaceLoops(EntryLiveRanges& ranges) {
  std::unordered_map<const Instruction*, size_t> position;
  for (size_t i = 0; i < ranges.values.size(); ++i) position[ranges.values[i].value] = i;
  std::vector<size_t> last_use(ranges.values.size());
  for (size_t i = 0; i < ranges.values.size(); ++i) last_use[i] = ranges.values[i].end;
  std::unordered_map<const Computation*, int64_t> memo;
  auto extend = [&](const Instruction* value, size_t end) {
    auto it = position.find(BufferOwner(value));
    if (it != position.end()) ranges.values[it->second].end = std::max(ranges.values[it->second].end, end);
  };
  for (size_t i = 0; i < ranges.values.size(); ++i) {
    LiveRange& range = ranges.values[i];
    const Instruction& instruction = *range.value;
    int64_t callee = 0;
    for (const Computation* called : instruction.called_computations()) callee = std::max(callee, CalleePeak(*called, memo));
    range.callee_peak = callee;
    if (instruction.opcode() == Opcode::kWhile && instruction.operand_count() == 1) {
      const std::vector<bool> through = PassThroughElements(instruction);
      const Instruction* init = instruction.operand(0);
      const bool tuple_init = init->opcode() == Opcode::kTuple;
      // The elements read after the loop: each lives, from the loop on, as long as its
      // get-tuple-elements are used (the first one holds its bytes); the rest of the state
      // dies with the loop. Passed-through ones stay in the operand's buffer.
      bool all_elements = true;
      for (const Instruction* user : instruction.users()) all_elements = all_elements && user->opcode() == Opcode::kGetTupleElement;
      std::map<int64_t, size_t> holder;  // element -> position of the get-tuple-element holding it
      for (const Instruction* user : instruction.users()) {
        auto at = position.find(user);
        if (!all_elements || at == position.end()) break;
        const int64_t e = user->tuple_index;
        if (e < static_cast<int64_t>(through.size()) && through[e]) {
          if (tuple_init && e < init->operand_count()) extend(init->operand(e), ranges.values[at->second].end);
          continue;
        }
        auto [held, first] = holder.emplace(e, at->second);
        LiveRange& element = ranges.values[held->second];
        if (first) {
          element.bytes = instruction.shape().tuple_shape(e).byte_size();
          element.begin = i;
          range.bytes -= element.bytes;
        } else {
          element.end = std::max(element.end, ranges.values[at->second].end);
        }
      }
      for (size_t e = 0; e < through.size(); ++e) {
        if (!through[e] || !tuple_init || static_cast<int64_t>(e) >= init->operand_count()) continue;
        range.bytes -= instruction.shape().tuple_shape(static_cast<int64_t>(e)).byte_size();
        extend(init->operand(static_cast<int64_t>(e)), range.end);
      }
    } else if (UpdatesInPlace(instruction, last_use, position)) {
      range.bytes = 0;
      extend(instruction.operand(0), range.end);
    } else if (WrittenIntoSlice(instruction)) {
      range.bytes = 0;
    }
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
  ApplyInPlaceLoops(ranges);
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
    plan = PlanRematerialization(ranges, capacity_bytes, options.recompute_seconds, options.recompute_counts);
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
