// Counts collectives and the bytes they send (ring model), and the peak live memory.
#include "analysis/comm_report.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>

#include "analysis/trip_count.h"
#include "support/units.h"

namespace gspmd {
namespace {

int64_t GroupSize(const Instruction& collective, int64_t num_devices) {
  if (collective.opcode() == Opcode::kCollectivePermute || collective.opcode() == Opcode::kCollectivePermuteStart)
    return 1;
  std::vector<std::vector<int64_t>> groups = collective.replica_groups().Groups(num_devices);
  int64_t size = 0;
  for (const auto& group : groups) size = std::max<int64_t>(size, static_cast<int64_t>(group.size()));
  return size == 0 ? num_devices : size;
}

int64_t OperandBytes(const Instruction& instruction) {
  int64_t bytes = 0;
  for (const Instruction* operand : instruction.operands()) bytes += operand->shape().byte_size();
  return bytes;
}

void Visit(const Computation& computation, int64_t num_devices, double multiplier,
           const std::function<void(const Instruction&, double)>& visit, std::vector<std::string>& warnings);

// One branch of a conditional runs: the one that sends the most bytes is visited (the first of
// equals), so that a step counts what it can send, not the sum of every branch's collectives.
void VisitCostliestBranch(const Instruction& conditional, int64_t num_devices, double multiplier,
                          const std::function<void(const Instruction&, double)>& visit,
                          std::vector<std::string>& warnings) {
  std::vector<std::pair<const Instruction*, double>> best;
  double best_bytes = -1;
  for (const Computation* branch : conditional.called_computations()) {
    std::vector<std::pair<const Instruction*, double>> seen;
    double bytes = 0;
    Visit(*branch, num_devices, multiplier, [&](const Instruction& collective, double times) {
      seen.emplace_back(&collective, times);
      bytes += times * CollectiveBytesPerDevice(collective, num_devices);
    }, warnings);
    if (bytes > best_bytes) {
      best_bytes = bytes;
      best = std::move(seen);
    }
  }
  for (const auto& [collective, times] : best) visit(*collective, times);
}

void Visit(const Computation& computation, int64_t num_devices, double multiplier,
           const std::function<void(const Instruction&, double)>& visit, std::vector<std::string>& warnings) {
  for (const auto& owned : computation.instructions()) {
    const Instruction& instruction = *owned;
    // An asynchronous permute counts once, at its start.
    if (IsCollective(instruction.opcode()) || instruction.opcode() == Opcode::kCollectivePermuteStart)
      visit(instruction, multiplier);
    double inner = multiplier;
    if (instruction.opcode() == Opcode::kWhile) {
      std::optional<int64_t> trips = WhileTripCount(instruction);
      if (!trips) {
        warnings.push_back(StrCat("trip count of %", instruction.name(),
                                  " is not known statically; its body is counted once"));
      }
      inner = multiplier * static_cast<double>(trips.value_or(1));
    }
    if (instruction.opcode() == Opcode::kConditional) {
      VisitCostliestBranch(instruction, num_devices, inner, visit, warnings);
      continue;
    }
    for (const Computation* called : instruction.called_computations()) {
      bool is_reducer = instruction.opcode() != Opcode::kWhile && instruction.opcode() != Opcode::kCall;
      if (is_reducer) continue;  // scalar reducers and comparators hold no collectives
      Visit(*called, num_devices, inner, visit, warnings);
    }
  }
}

bool AliasesOperand(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kBitcast:
    case Opcode::kOptimizationBarrier:
      return true;
    case Opcode::kParameter:
      return !instruction.parent()->is_entry;
    default:
      return false;
  }
}

// Last use of each value of `computation`: the position of its last user (the root, and the
// entry's parameters, live to the end: position instructions.size()).
std::vector<size_t> LastUses(const Computation& computation) {
  const auto& instructions = computation.instructions();
  std::unordered_map<const Instruction*, size_t> position;
  for (size_t i = 0; i < instructions.size(); ++i) position[instructions[i].get()] = i;
  std::vector<size_t> last_use(instructions.size(), 0);
  for (size_t i = 0; i < instructions.size(); ++i) {
    last_use[i] = i;
    for (const Instruction* user : instructions[i]->users())
      last_use[i] = std::max(last_use[i], position.at(user));
    bool lives_to_end = instructions[i].get() == computation.root() ||
                        (computation.is_entry && instructions[i]->opcode() == Opcode::kParameter);
    if (lives_to_end) last_use[i] = instructions.size();
  }
  return last_use;
}

int64_t OwnBytes(const Instruction& instruction) {
  if (AliasesOperand(instruction)) return 0;
  // A collective-permute-start's tuple holds its operand (aliased) and the buffer it receives
  // into (its own, until the done).
  if (instruction.opcode() == Opcode::kCollectivePermuteStart && instruction.shape().IsTuple() &&
      instruction.shape().tuple_size() >= 2)
    return instruction.shape().tuple_shape(1).byte_size();
  return instruction.shape().byte_size();
}

int64_t ComputationPeak(const Computation& computation, std::unordered_map<const Computation*, int64_t>& memo) {
  if (auto it = memo.find(&computation); it != memo.end()) return it->second;
  const auto& instructions = computation.instructions();
  const std::vector<size_t> last_use = LastUses(computation);
  std::vector<std::vector<size_t>> frees_after(instructions.size() + 1);
  for (size_t i = 0; i < instructions.size(); ++i) frees_after[last_use[i]].push_back(i);

  int64_t live = 0, peak = 0;
  for (size_t i = 0; i < instructions.size(); ++i) {
    const Instruction& instruction = *instructions[i];
    int64_t callee_peak = 0;
    for (const Computation* called : instruction.called_computations())
      callee_peak = std::max(callee_peak, ComputationPeak(*called, memo));
    live += OwnBytes(instruction);
    peak = std::max(peak, live + callee_peak);
    for (size_t freed : frees_after[i]) live -= OwnBytes(*instructions[freed]);
  }
  memo[&computation] = peak;
  return peak;
}

}  // namespace

std::string_view CollectiveKindName(const Instruction& collective) {
  if (collective.opcode() == Opcode::kCollectivePermuteStart) return OpcodeName(Opcode::kCollectivePermute);
  return OpcodeName(collective.opcode());
}

double CollectiveBytesPerDevice(const Instruction& collective, int64_t num_devices) {
  double n = static_cast<double>(GroupSize(collective, num_devices));
  double result_bytes = static_cast<double>(collective.shape().byte_size());
  double operand_bytes = static_cast<double>(OperandBytes(collective));
  switch (collective.opcode()) {
    case Opcode::kAllReduce: return n <= 1 ? 0 : 2 * (n - 1) / n * operand_bytes;
    case Opcode::kAllGather: return n <= 1 ? 0 : (n - 1) / n * result_bytes;
    case Opcode::kAllToAll: return n <= 1 ? 0 : (n - 1) / n * result_bytes;
    case Opcode::kReduceScatter: return n <= 1 ? 0 : (n - 1) / n * operand_bytes;
    case Opcode::kCollectiveBroadcast: return n <= 1 ? 0 : (n - 1) / n * operand_bytes;
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart: return collective.source_target_pairs().empty() ? 0 : operand_bytes;
    default: return 0;
  }
}

int64_t PeakLiveBytes(const Module& module) {
  std::unordered_map<const Computation*, int64_t> memo;
  return module.entry() ? ComputationPeak(*module.entry(), memo) : 0;
}

EntryLiveRanges LiveRangesOfEntry(const Module& module) {
  EntryLiveRanges ranges;
  const Computation* entry = module.entry();
  if (entry == nullptr) return ranges;
  const std::vector<size_t> last_use = LastUses(*entry);
  std::unordered_map<const Computation*, int64_t> memo;
  for (size_t i = 0; i < entry->instructions().size(); ++i) {
    const Instruction& instruction = *entry->instructions()[i];
    int64_t callee_peak = 0;
    for (const Computation* called : instruction.called_computations())
      callee_peak = std::max(callee_peak, ComputationPeak(*called, memo));
    ranges.values.push_back(LiveRange{&instruction, OwnBytes(instruction), i, last_use[i], callee_peak});
  }
  return ranges;
}

std::vector<std::string> ForEachCollective(const Module& module,
                                           const std::function<void(const Instruction&, double)>& visit) {
  std::vector<std::string> warnings;
  if (module.entry()) Visit(*module.entry(), module.num_partitions(), 1.0, visit, warnings);
  return warnings;
}

CommReport AnalyzeCommunication(const Module& module) {
  CommReport report;
  if (!module.entry()) return report;
  const int64_t num_devices = module.num_partitions();
  report.warnings = ForEachCollective(module, [&](const Instruction& collective, double multiplier) {
    CollectiveStats& stats = report.by_kind[std::string(CollectiveKindName(collective))];
    stats.count += static_cast<int64_t>(multiplier);
    double bytes = multiplier * CollectiveBytesPerDevice(collective, num_devices);
    stats.bytes += bytes;
    report.comm_bytes_per_device += bytes;
  });
  report.peak_bytes_per_device = PeakLiveBytes(module);
  return report;
}

std::string FormatCommReport(const CommReport& report) {
  std::string out;
  out += "comm_bytes_per_device: " + FormatBytes(report.comm_bytes_per_device) + "\n";
  out += "collectives:\n";
  if (report.by_kind.empty()) out += "  (none)\n";
  for (const auto& [kind, stats] : report.by_kind)
    out += StrCat("  ", kind, ": count=", stats.count, " bytes=", FormatBytes(stats.bytes), "\n");
  out += "peak_bytes_per_device: " + FormatBytes(report.peak_bytes_per_device) + "\n";
  for (const std::string& warning : report.warnings) out += "warning: " + warning + "\n";
  return out;
}

nlohmann::json CommReportToJson(const CommReport& report) {
  nlohmann::json json;
  json["comm_bytes_per_device"] = report.comm_bytes_per_device;
  nlohmann::json counts = nlohmann::json::object();
  nlohmann::json bytes = nlohmann::json::object();
  for (const auto& [kind, stats] : report.by_kind) {
    counts[kind] = stats.count;
    bytes[kind] = stats.bytes;
  }
  json["collectives"] = counts;
  json["comm_bytes_by_kind"] = bytes;
  json["peak_bytes_per_device"] = report.peak_bytes_per_device;
  json["warnings"] = report.warnings;
  return json;
}

}  // namespace gspmd
