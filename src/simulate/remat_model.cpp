// Greedy rematerialization of whole values until the peak fits (see remat_model.h).
#include "simulate/remat_model.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "simulate/op_counts.h"

namespace gspmd::simulate {
namespace {

constexpr int kMaxChainDepth = 16;
constexpr int64_t kKeepRatio = 4;  // an operand kept live instead of recomputed is at most 1/4 of the value dropped
constexpr int kMaxIterations = 100000;

bool Recomputable(const Instruction& instruction, bool loops) {
  switch (ClassifyOp(instruction)) {
    case OpClass::kLoop: case OpClass::kReduce: case OpClass::kMatrix: case OpClass::kDuplicable: case OpClass::kView:
      return true;
    case OpClass::kCollective:
      return instruction.opcode() == Opcode::kAllGather;  // gathered again, as fully sharded weights are
    case OpClass::kFree:
      // A loop's result read out of its state, and the state it starts from.
      return loops && (instruction.opcode() == Opcode::kGetTupleElement || instruction.opcode() == Opcode::kTuple);
    case OpClass::kControl:
      return loops && instruction.opcode() == Opcode::kWhile;  // run again, as a recomputed forward would
    default:
      return false;
  }
}

// The entry's dataflow by position.
struct Graph {
  std::vector<std::vector<size_t>> uses;      // sorted user positions
  std::vector<std::vector<size_t>> operands;  // operand positions
  std::vector<bool> recomputable;
  std::vector<bool> parameter;
};

Graph BuildGraph(const EntryLiveRanges& ranges, bool loops) {
  const size_t n = ranges.values.size();
  std::unordered_map<const Instruction*, size_t> position;
  for (size_t i = 0; i < n; ++i) position[ranges.values[i].value] = i;
  Graph graph;
  graph.uses.resize(n);
  graph.operands.resize(n);
  graph.recomputable.resize(n);
  graph.parameter.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const Instruction& value = *ranges.values[i].value;
    for (const Instruction* user : value.users()) graph.uses[i].push_back(position.at(user));
    std::sort(graph.uses[i].begin(), graph.uses[i].end());
    graph.uses[i].erase(std::unique(graph.uses[i].begin(), graph.uses[i].end()), graph.uses[i].end());
    for (const Instruction* operand : value.operands()) graph.operands[i].push_back(position.at(operand));
    graph.recomputable[i] = Recomputable(value, loops);
    graph.parameter[i] = value.opcode() == Opcode::kParameter;
  }
  return graph;
}

class Planner {
 public:
  Planner(const EntryLiveRanges& ranges, const RecomputeSeconds& cost, const RecomputeCounts& counts)
      : ranges_(ranges), graph_(BuildGraph(ranges, static_cast<bool>(counts))), cost_(cost), counts_(counts),
        pins_(ranges.values.size()) {}

  RematPlan Run(int64_t budget) {
    plan_ = NoRematerialization(ranges_);
    for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
      live_ = LiveBytesByPosition(ranges_, plan_);
      if (live_.empty()) break;
      const size_t peak = static_cast<size_t>(std::max_element(live_.begin(), live_.end()) - live_.begin());
      if (live_[peak] <= budget) break;
      ceiling_ = live_[peak];
      if (!DropAt(peak, live_[peak] - budget)) break;
    }
    return std::move(plan_);
  }

 private:
  struct Chain {
    std::vector<size_t> members;   // recomputed, operands before users; the dropped value last
    std::set<size_t> relied_on;    // live operands the recomputation reads
    std::set<size_t> extended;     // small operands kept live until the recomputation instead
    double seconds = 0;
  };

  struct Candidate {
    size_t value = 0;
    size_t segment = 0;
    size_t gap_begin = 0;  // last event at or before the peak: the value stays live through it
    size_t gap_end = 0;    // the use it is recomputed for
    double score = 0;
  };

  // The transient copy of `value` an earlier chain recomputed that a chain at `position` may
  // read instead of computing it again (as XLA's rematerialization rewires every later use to
  // its one clone): one that can be kept live until `position` without raising any position
  // it is added at above the peak being cut (so it never makes a new peak; later rounds cut
  // what it adds like any other value). Copies by value: the position each is made at -> the
  // last position it is live at.
  std::optional<std::pair<size_t, size_t>> RecomputedCopy(size_t value, size_t position) const {
    const auto found = recomputed_at_.find(value);
    if (found == recomputed_at_.end()) return std::nullopt;
    const int64_t bytes = ranges_.values[value].bytes;
    for (const auto& [begin, end] : found->second) {
      bool fits = true;
      for (size_t p = std::min(position, begin); p < begin && fits; ++p) fits = live_[p] + bytes <= ceiling_;
      for (size_t p = end + 1; p <= position && fits; ++p) fits = live_[p] + bytes <= ceiling_;
      if (fits) return std::make_pair(begin, end);
    }
    return std::nullopt;
  }

  // Keeps the copies a chain at `position` reads (through aliases) live until it.
  void KeepCopiesUntil(size_t value, size_t position) {
    if (graph_.parameter[value] || LiveAt(value, position)) return;
    if (const auto copy = RecomputedCopy(value, position)) {
      const auto [begin, end] = *copy;
      const int64_t bytes = ranges_.values[value].bytes;
      if (position < begin) AddTransient(position, begin - 1, bytes);
      if (position > end) AddTransient(end + 1, position, bytes);
      auto& copies = recomputed_at_[value];
      copies.erase(begin);
      copies[std::min(begin, position)] = std::max(end, position);
      return;
    }
    for (size_t operand : graph_.operands[value]) KeepCopiesUntil(operand, position);
  }

  void AddLive(size_t first, size_t last, int64_t bytes) {
    for (size_t p = first; p <= last && p < live_.size(); ++p) live_[p] += bytes;
  }

  void AddTransient(size_t first, size_t last, int64_t bytes) {
    for (size_t p = first; p <= last; ++p) plan_.transient_bytes[p] += bytes;
    AddLive(first, last, bytes);
  }

  bool LiveAt(size_t value, size_t position) const {
    for (const auto& [begin, end] : plan_.segments[value])
      if (begin <= position && position <= end) return true;
    return false;
  }

  // Whether `value` holds its data at `position` without recomputing: parameters, values
  // live there, and aliases (tuples, get-tuple-element) of such values.
  bool Available(size_t value, size_t position) const {
    if (graph_.parameter[value] || LiveAt(value, position) || RecomputedCopy(value, position)) return true;
    if (ranges_.values[value].bytes != 0 || graph_.operands[value].empty() || graph_.recomputable[value]) return false;
    for (size_t operand : graph_.operands[value])
      if (!Available(operand, position)) return false;
    return true;
  }

  // Adds what recomputing `value` at `position` needs to `chain`: operands that are live
  // there are read; the others are recomputed too, or, when that fails and they are small
  // next to `dropped_bytes`, kept live until then.
  bool Extend(size_t value, size_t position, int depth, int64_t dropped_bytes, Chain& chain, std::set<size_t>& visited) const {
    if (!visited.insert(value).second) return true;
    for (size_t operand : graph_.operands[value]) {
      if (Available(operand, position) || chain.extended.count(operand)) {
        chain.relied_on.insert(operand);
        continue;
      }
      const bool recomputed = depth < kMaxChainDepth && graph_.recomputable[operand] &&
                              Extend(operand, position, depth + 1, dropped_bytes, chain, visited);
      if (recomputed) continue;
      if (ranges_.values[operand].bytes * kKeepRatio > dropped_bytes || graph_.operands[operand].empty()) return false;
      chain.extended.insert(operand);
      chain.relied_on.insert(operand);
    }
    chain.members.push_back(value);
    chain.seconds += cost_(*ranges_.values[value].value);
    return true;
  }

  bool BuildChain(size_t value, size_t position, Chain& chain) const {
    std::set<size_t> visited;
    return Extend(value, position, 0, ranges_.values[value].bytes, chain, visited);
  }

  // Bytes the chain's kept-live operands add at `position`.
  int64_t ExtendedBytesAt(const Chain& chain, size_t position) const {
    int64_t bytes = 0;
    for (size_t operand : chain.extended) {
      const auto& segments = plan_.segments[operand];
      if (!segments.empty() && segments.back().second < position) bytes += ranges_.values[operand].bytes;
    }
    return bytes;
  }

  // The gap of `value` that spans `peak`, if it has one it may be dropped over.
  bool FindGap(size_t value, size_t peak, Candidate& candidate) const {
    const auto& segments = plan_.segments[value];
    for (size_t s = 0; s < segments.size(); ++s) {
      // Plain variables, not a structured binding: the lambda below captures them (clang 14,
      // the sanitizer build's compiler, cannot capture bindings).
      const size_t begin = segments[s].first, end = segments[s].second;
      if (peak < begin || peak > end) continue;
      if (end >= ranges_.values.size()) return false;  // an output: lives to the end
      // Uses, and the recomputations that read this value (pins), end gaps.
      size_t gap_begin = begin;
      size_t gap_end = 0;
      auto consider = [&](size_t use) {
        if (use <= begin || use > end) return;
        if (use <= peak) gap_begin = std::max(gap_begin, use);
        else if (gap_end == 0 || use < gap_end) gap_end = use;
      };
      for (size_t use : graph_.uses[value]) consider(use);
      for (size_t pin : pins_[value]) consider(pin);
      if (gap_begin == peak || gap_end == 0) return false;
      candidate = Candidate{value, s, gap_begin, gap_end, 0};
      return true;
    }
    return false;
  }

  void Apply(const Candidate& candidate, const Chain& chain) {
    auto& segments = plan_.segments[candidate.value];
    const auto [begin, end] = segments[candidate.segment];
    segments[candidate.segment] = {begin, candidate.gap_begin};
    AddLive(candidate.gap_begin + 1, candidate.gap_end - 1, -ranges_.values[candidate.value].bytes);
    segments.insert(segments.begin() + static_cast<std::ptrdiff_t>(candidate.segment) + 1, {candidate.gap_end, end});
    for (size_t member : chain.members) {
      const Instruction& recomputed = *ranges_.values[member].value;
      const OpCounts counts = counts_ ? counts_(recomputed) : CountOp(recomputed);
      plan_.flops += counts.matrix_flops + counts.vector_flops;
      plan_.matrix_flops += counts.matrix_flops;
      if (member != candidate.value) {
        AddTransient(candidate.gap_end, candidate.gap_end, ranges_.values[member].bytes);
        recomputed_at_[member].emplace(candidate.gap_end, candidate.gap_end);
      }
    }
    for (size_t operand : chain.extended) {
      // Live from its last segment on to the recomputation.
      auto& kept = plan_.segments[operand];
      auto last = kept.end();
      for (auto it = kept.begin(); it != kept.end(); ++it)
        if (it->first <= candidate.gap_end && (last == kept.end() || it->first > last->first)) last = it;
      if (last != kept.end() && last->second < candidate.gap_end) {
        AddLive(last->second + 1, candidate.gap_end, ranges_.values[operand].bytes);
        last->second = candidate.gap_end;
      }
    }
    for (size_t operand : chain.relied_on) {
      pins_[operand].push_back(candidate.gap_end);
      KeepCopiesUntil(operand, candidate.gap_end);
    }
    plan_.seconds += chain.seconds;
    ++plan_.recomputations;
  }

  // Drops values live across `peak` until `excess` bytes are gone; false when none can be.
  bool DropAt(size_t peak, int64_t excess) {
    std::vector<Candidate> candidates;
    for (size_t value = 0; value < ranges_.values.size(); ++value) {
      if (!graph_.recomputable[value] || ranges_.values[value].bytes <= 0) continue;
      Candidate candidate;
      if (!FindGap(value, peak, candidate)) continue;
      Chain chain;
      if (!BuildChain(value, candidate.gap_end, chain)) continue;
      candidate.score = static_cast<double>(ranges_.values[value].bytes) / (chain.seconds + 1e-12);
      candidates.push_back(candidate);
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
    bool dropped = false;
    for (const Candidate& found : candidates) {
      if (excess <= 0) break;
      // Earlier drops of this round may have pinned this value or removed an operand.
      Candidate candidate;
      Chain chain;
      if (!FindGap(found.value, peak, candidate) || !BuildChain(found.value, candidate.gap_end, chain)) continue;
      const int64_t freed = ranges_.values[found.value].bytes - ExtendedBytesAt(chain, peak);
      if (freed <= 0) continue;
      Apply(candidate, chain);
      excess -= freed;
      dropped = true;
    }
    return dropped;
  }

  const EntryLiveRanges& ranges_;
  const Graph graph_;
  const RecomputeSeconds& cost_;
  const RecomputeCounts& counts_;
  std::vector<std::vector<size_t>> pins_;
  // Chain members' transient copies (see RecomputedCopy).
  std::unordered_map<size_t, std::map<size_t, size_t>> recomputed_at_;
  RematPlan plan_;
  std::vector<int64_t> live_;  // live bytes by position under plan_
  int64_t ceiling_ = 0;        // live bytes at the peak being cut
};

}  // namespace

RematPlan NoRematerialization(const EntryLiveRanges& ranges) {
  RematPlan plan;
  plan.segments.reserve(ranges.values.size());
  for (const LiveRange& range : ranges.values) plan.segments.push_back({{range.begin, range.end}});
  plan.transient_bytes.assign(ranges.values.size(), 0);
  return plan;
}

std::vector<int64_t> LiveBytesByPosition(const EntryLiveRanges& ranges, const RematPlan& plan) {
  const size_t n = ranges.values.size();
  std::vector<int64_t> delta(n + 2, 0);
  for (size_t i = 0; i < n; ++i) {
    const int64_t bytes = ranges.values[i].bytes;
    if (bytes == 0) continue;
    for (const auto& [begin, end] : plan.segments[i]) {
      delta[begin] += bytes;
      delta[std::min(end, n) + 1] -= bytes;
    }
  }
  std::vector<int64_t> live(n, 0);
  int64_t running = 0;
  for (size_t p = 0; p < n; ++p) {
    running += delta[p];
    live[p] = running + ranges.values[p].callee_peak + plan.transient_bytes[p];
  }
  return live;
}

RematPlan PlanRematerialization(const EntryLiveRanges& ranges, int64_t budget, const RecomputeSeconds& cost,
                                const RecomputeCounts& counts) {
  return Planner(ranges, cost, counts).Run(budget);
}

}  // namespace gspmd::simulate
