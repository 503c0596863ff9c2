// The simulation driver: costs every kernel and collective of a per-device program, schedules
// them with and without overlap, and totals FLOPs, bytes, memory and the breakdown.
#include "simulate/simulator.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>
#include <unordered_map>
#include <unordered_set>

#include "analysis/comm_report.h"
#include "analysis/trip_count.h"
#include "partitioner/sdy_attributes.h"
#include "sharding/partition_spec.h"
#include "simulate/kernel_plan.h"
#include "simulate/op_counts.h"
#include "support/diagnostic.h"

namespace gspmd::simulate {
namespace {

double CeilTo(double value, double multiple) { return std::ceil(value / multiple) * multiple; }

// Fraction of the matrix unit's k x n tiles that a dot fills; XLA may hold either operand, so
// the better orientation counts.
double TileUse(const MatrixDims& dims, int64_t tile) {
  if (tile <= 1) return 1;
  const double t = static_cast<double>(tile);
  auto use = [&](double k, double n) { return (k / CeilTo(k, t)) * (n / CeilTo(n, t)); };
  return std::max(use(dims.k, dims.n), use(dims.k, dims.m));
}

bool IsRematerialized(const Instruction& instruction) {
  if (instruction.name().find(".remat") != std::string::npos) return true;
  if (instruction.FrontendAttribute("gspmd.remat") == "true") return true;
  // JAX's jax.checkpoint, and builder/remat.h's "remat(layer_3/mlp)".
  const std::string op_name = OpNameOf(instruction);
  return op_name.find("rematted_computation") != std::string::npos || op_name.find("remat(") != std::string::npos;
}

// Splits an op_name path at '/' outside parentheses: "jit(f)/jvp(a/b)/dot" -> 3 parts.
std::vector<std::string> PathComponents(const std::string& path) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  for (char c : path) {
    if (c == '(') ++depth;
    if (c == ')') depth = std::max(0, depth - 1);
    if (c == '/' && depth == 0) {
      parts.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  if (!current.empty() || !parts.empty()) parts.push_back(current);
  return parts;
}

class Simulator {
 public:
  Simulator(const Module& module, const ChipSpec& chip, const Topology& topology, const SimulateOptions& options)
      : module_(module), chip_(chip), topology_(topology), options_(options), named_mesh_(NamedMeshOf(module)) {}

  SimulationReport Run() {
    report_.chip = chip_.name;
    report_.chip_path = chip_.path;
    report_.topology = topology_.Describe();
    if (named_mesh_) report_.mesh = MeshFlagText(*named_mesh_);
    report_.devices = topology_.num_partitions();
    report_.comm = AnalyzeCommunication(module_);
    report_.warnings = report_.comm.warnings;
    if (module_.entry() != nullptr) report_.step_time_s = Schedule(*module_.entry(), 1.0);

    MemoryOptions memory_options;
    memory_options.rematerialize = options_.rematerialize;
    memory_options.recompute_seconds = [this](const Instruction& instruction) { return OpSeconds(instruction); };
    memory_options.recompute_counts = [this](const Instruction& instruction) {
      auto it = loop_counts_.find(&instruction);
      return it != loop_counts_.end() ? it->second : CountOp(instruction);
    };
    report_.memory = EstimateMemory(module_, chip_.hbm_bytes, memory_options);
    // Recomputation runs on the core, serially with the rest.
    report_.compute_s += report_.memory.remat_seconds;
    report_.step_time_s += report_.memory.remat_seconds;
    report_.matrix_flops += report_.memory.remat_matrix_flops;
    report_.vector_flops += report_.memory.remat_flops - report_.memory.remat_matrix_flops;
    report_.remat_flops += report_.memory.remat_flops;
    report_.model_flops = report_.matrix_flops - remat_matrix_flops_ - report_.memory.remat_matrix_flops;
    report_.step_time_no_overlap_s = report_.compute_s + report_.comm_s;

    // Utilization against the rate of the compute type most matrix FLOPs ran at.
    std::string type = "bf16";
    double most = -1;
    for (const auto& [candidate, flops] : flops_by_compute_type_)
      if (flops > most) most = flops, type = candidate;
    if (!chip_.matrix_flops.count(type)) type = chip_.matrix_flops.begin()->first;
    report_.peak_compute_type = type;
    report_.peak_flops_per_s = chip_.matrix_flops.at(type);
    report_.mfu = report_.step_time_s > 0 ? report_.model_flops / (report_.step_time_s * report_.peak_flops_per_s) : 0;
    report_.hfu = report_.step_time_s > 0 ? report_.matrix_flops / (report_.step_time_s * report_.peak_flops_per_s) : 0;

    for (auto& [key, entry] : breakdown_) report_.breakdown.push_back(entry);
    std::stable_sort(report_.breakdown.begin(), report_.breakdown.end(), [](const BreakdownEntry& a, const BreakdownEntry& b) {
      return a.compute_s + a.comm_s > b.compute_s + b.comm_s;
    });
    for (const std::string& warning : warned_) report_.warnings.push_back(warning);
    return std::move(report_);
  }

 private:
  void Warn(const std::string& warning) {
    if (std::find(warned_.begin(), warned_.end(), warning) == warned_.end()) warned_.push_back(warning);
  }

  std::string BreakdownKey(const Instruction& instruction) { return BreakdownKeyOf(instruction, options_); }

  BreakdownEntry& Entry(const std::string& key) {
    BreakdownEntry& entry = breakdown_[key];
    entry.key = key;
    return entry;
  }

  // The matrix mode a dot or convolution runs in, with a warning when the chip lacks its type.
  MatrixMode ModeOf(const Instruction& matrix_op) {
    const MatrixOperands operands = MatrixOperandsOf(matrix_op);
    if (operands.element_type == "f32") return chip_.f32_dot.at(operands.precision);
    if (chip_.matrix_flops.count(operands.element_type)) return MatrixMode{operands.element_type, 1};
    if (operands.element_type == "f64") {
      Warn(StrCat(chip_.name, " has no f64 matrix rate; f64 dots are costed as f32 at HIGHEST"));
      return chip_.f32_dot.at("HIGHEST");
    }
    std::string fallback = chip_.matrix_flops.count("bf16") ? "bf16" : chip_.matrix_flops.begin()->first;
    Warn(StrCat(chip_.name, " has no matrix rate for ", operands.element_type, "; those dots are costed at ", fallback));
    return MatrixMode{fallback, 1};
  }

  // Seconds of one instruction run alone (unfused), for recomputation.
  double OpSeconds(const Instruction& instruction) {
    if (auto it = loop_seconds_.find(&instruction); it != loop_seconds_.end()) return it->second;
    const OpClass op_class = ClassifyOp(instruction);
    if (RunsNoKernel(op_class) || op_class == OpClass::kDuplicable) return 0;
    if (op_class == OpClass::kCollective) return EstimateOf(instruction).time_s;
    const OpCounts counts = CountOp(instruction);
    double matrix_s = 0;
    if (op_class == OpClass::kMatrix) {
      const MatrixMode mode = ModeOf(instruction);
      const std::string kind = instruction.opcode() == Opcode::kDot ? "dot" : "convolution";
      matrix_s = counts.matrix_flops * mode.passes /
                 (chip_.matrix_flops.at(mode.compute_type) * chip_.Efficiency(kind) * TileUse(MatrixDimsOf(instruction), chip_.matrix_tile));
    }
    const double vector_s = (counts.vector_flops + counts.transcendentals * chip_.transcendental_cost) /
                            (chip_.vector_flops * chip_.Efficiency("vector"));
    const double memory_s = counts.unfused_bytes / (chip_.hbm_bandwidth * chip_.Efficiency("memory"));
    return chip_.op_overhead_s + std::max({matrix_s, vector_s, memory_s});
  }

  double KernelSeconds(const Kernel& kernel, double multiplier) {
    double matrix_s = 0;
    for (const Instruction* member : kernel.members) {
      if (ClassifyOp(*member) != OpClass::kMatrix) continue;
      const OpCounts counts = CountOp(*member);
      const MatrixMode mode = ModeOf(*member);
      const std::string kind = member->opcode() == Opcode::kDot ? "dot" : "convolution";
      const double rate = chip_.matrix_flops.at(mode.compute_type) * chip_.Efficiency(kind) *
                          TileUse(MatrixDimsOf(*member), chip_.matrix_tile);
      matrix_s += counts.matrix_flops * mode.passes / rate;
      flops_by_compute_type_[mode.compute_type] += counts.matrix_flops * multiplier;
    }
    const double vector_s = (kernel.counts.vector_flops + kernel.counts.transcendentals * chip_.transcendental_cost) /
                            (chip_.vector_flops * chip_.Efficiency("vector"));
    const double memory_s = (kernel.bytes_read + kernel.bytes_written) / (chip_.hbm_bandwidth * chip_.Efficiency("memory"));
    return chip_.op_overhead_s + std::max({matrix_s, vector_s, memory_s});
  }

  const CollectiveEstimate& EstimateOf(const Instruction& collective) {
    std::string key = StrCat(OpcodeName(collective.opcode()), "|", collective.shape().byte_size(), "|");
    for (const Instruction* operand : collective.operands()) key += StrCat(operand->shape().byte_size(), ",");
    const bool start = collective.opcode() == Opcode::kCollectivePermuteStart;  // priced as its permute
    if (collective.opcode() == Opcode::kCollectivePermute || start) {
      for (const SourceTargetPair& pair : collective.source_target_pairs()) key += StrCat(pair.source, ">", pair.target, ",");
    } else {
      key += collective.replica_groups().ToString();
    }
    auto it = collective_cache_.find(key);
    if (it == collective_cache_.end() && start) {
      const double bytes = CollectiveBytesPerDevice(collective, topology_.num_partitions());
      it = collective_cache_.emplace(key, EstimatePermutePairs(collective.source_target_pairs(), bytes, topology_, chip_))
               .first;
    }
    if (it == collective_cache_.end()) it = collective_cache_.emplace(key, EstimateCollective(collective, topology_, chip_)).first;
    return it->second;
  }

  // Totals for one kernel run `multiplier` times per step.
  void AccountKernel(const Kernel& kernel, double seconds, double multiplier) {
    report_.kernels += multiplier;
    report_.matrix_flops += kernel.counts.matrix_flops * multiplier;
    report_.vector_flops += kernel.counts.vector_flops * multiplier;
    report_.transcendentals += kernel.counts.transcendentals * multiplier;
    report_.hbm_bytes += (kernel.bytes_read + kernel.bytes_written) * multiplier;
    report_.hbm_bytes_unfused += kernel.counts.unfused_bytes * multiplier;
    report_.compute_s += seconds * multiplier;
    for (const Instruction* member : kernel.members) {
      if (!IsRematerialized(*member)) continue;
      const OpCounts counts = CountOp(*member);
      report_.remat_flops += (counts.matrix_flops + counts.vector_flops) * multiplier;
      remat_matrix_flops_ += counts.matrix_flops * multiplier;
    }
    report_.model_flops = report_.matrix_flops - remat_matrix_flops_;
    BreakdownEntry& entry = Entry(BreakdownKey(*kernel.root));
    entry.compute_s += seconds * multiplier;
    entry.matrix_flops += kernel.counts.matrix_flops * multiplier;
    entry.vector_flops += kernel.counts.vector_flops * multiplier;
    entry.hbm_bytes += (kernel.bytes_read + kernel.bytes_written) * multiplier;
    entry.kernels += multiplier;
  }

  // Returns the index of its line in report_.collectives.
  size_t AccountCollective(const Instruction& collective, const CollectiveEstimate& estimate, double multiplier) {
    CollectiveLine line;
    line.name = collective.name();
    line.kind = std::string(CollectiveKindName(collective));
    line.source = BreakdownKey(collective);
    line.executions = multiplier;
    line.estimate = estimate;
    // The named axes it runs over (a collective-permute has pairs, not groups).
    if (named_mesh_ && collective.opcode() != Opcode::kCollectivePermute &&
        collective.opcode() != Opcode::kCollectivePermuteStart)
      line.axes = MeshAxesOfGroups(collective.replica_groups().Groups(topology_.num_partitions()), *named_mesh_)
                      .value_or("");
    report_.collectives.push_back(line);
    KindTotals& totals = report_.comm_by_kind[line.kind];
    totals.count += multiplier;
    totals.bytes += estimate.bytes * multiplier;
    totals.time_s += estimate.time_s * multiplier;
    report_.comm_s += estimate.time_s * multiplier;
    BreakdownEntry& entry = Entry(line.source);
    entry.comm_s += estimate.time_s * multiplier;
    entry.comm_bytes += estimate.bytes * multiplier;
    entry.collectives += multiplier;
    return report_.collectives.size() - 1;
  }

  // The time of [start, finish) that no interval of `busy` (sorted, disjoint) covers.
  static double Uncovered(double start, double finish, const std::vector<std::pair<double, double>>& busy) {
    double covered = 0;
    auto it = std::upper_bound(busy.begin(), busy.end(), std::make_pair(start, start));
    if (it != busy.begin()) --it;
    for (; it != busy.end() && it->first < finish; ++it)
      covered += std::max(0.0, std::min(finish, it->second) - std::max(start, it->first));
    return std::max(0.0, finish - start - covered);
  }

  // The time of one run of a control-flow instruction's computations (each `multiplier`
  // times per step, for the totals).
  double ControlSeconds(const Instruction& instruction, double multiplier) {
    if (instruction.opcode() == Opcode::kWhile) {
      std::optional<int64_t> trips = WhileTripCount(instruction);
      const double n = static_cast<double>(trips.value_or(1));
      const double comm_before = link_busy_s_;
      const double seconds =
          n * (Schedule(*instruction.while_body(), multiplier * n) + Schedule(*instruction.while_condition(), multiplier * n));
      link_busy_s_ = comm_before + n * (link_busy_s_ - comm_before);
      return seconds;
    }
    if (instruction.opcode() == Opcode::kConditional) {
      // Each branch as if it ran (the totals count every branch once: an upper bound).
      double slowest = 0;
      for (const Computation* branch : instruction.called_computations()) slowest = std::max(slowest, Schedule(*branch, multiplier));
      if (instruction.called_computations().size() > 1)
        Warn("conditional branches are each counted as if they ran; the time takes the slowest");
      return slowest;
    }
    double seconds = 0;
    for (const Computation* called : instruction.called_computations()) seconds += Schedule(*called, multiplier);
    return seconds;
  }

  // Schedules one run of `computation` on the two streams and returns its makespan; adds its
  // work, `multiplier` times, to the totals.
  double Schedule(const Computation& computation, double multiplier) {
    const KernelPlan plan = PlanKernels(computation);
    std::unordered_map<const Instruction*, double> ready;
    auto ready_of = [&](const Instruction* value) {
      auto it = ready.find(value);
      return it == ready.end() ? 0.0 : it->second;
    };
    auto operands_ready = [&](const Instruction& instruction) {
      double time = 0;
      for (const Instruction* operand : instruction.operands()) time = std::max(time, ready_of(operand));
      return time;
    };
    double compute_free = 0, comm_free = 0, end = 0;
    std::vector<std::pair<double, double>> kernels_busy;  // compute stream, in time order
    struct Running {
      size_t line;
      double start, finish;
    };
    std::vector<Running> collectives;
    for (const auto& owned : computation.instructions()) {
      const Instruction& instruction = *owned;
      switch (ClassifyOp(instruction)) {
        case OpClass::kCollective: {
          const CollectiveEstimate& estimate = EstimateOf(instruction);
          const size_t line = AccountCollective(instruction, estimate, multiplier);
          const double start = std::max(comm_free, operands_ready(instruction));
          comm_free = start + estimate.time_s;
          link_busy_s_ += estimate.time_s;
          collectives.push_back({line, start, comm_free});
          ready[&instruction] = comm_free;
          break;
        }
        case OpClass::kControl: {
          // A collective still in flight when control flow starts runs on beside it (as XLA's
          // asynchronous collectives run across a while loop), in the link time the called
          // computations' own collectives leave free; what does not fit there delays the end.
          const double start = std::max(compute_free, operands_ready(instruction));
          const double matrix_before = report_.matrix_flops, vector_before = report_.vector_flops;
          const double link_before = link_busy_s_;
          const double seconds = ControlSeconds(instruction, multiplier);
          const double inner_link_s = link_busy_s_ - link_before;
          const double in_flight = std::max(0.0, comm_free - start);
          const double finish = start + seconds + std::max(0.0, in_flight - std::max(0.0, seconds - inner_link_s));
          if (finish > start) kernels_busy.emplace_back(start, finish);  // its own exposure is counted inside
          if (instruction.opcode() == Opcode::kWhile) {
            // One run of the loop, should the memory estimate recompute it.
            loop_seconds_[&instruction] = seconds;
            OpCounts& counts = loop_counts_[&instruction];
            counts.matrix_flops = (report_.matrix_flops - matrix_before) / multiplier;
            counts.vector_flops = (report_.vector_flops - vector_before) / multiplier;
          }
          compute_free = comm_free = finish;
          ready[&instruction] = finish;
          break;
        }
        default: {
          auto kernel_it = plan.kernel_of.find(&instruction);
          if (kernel_it == plan.kernel_of.end()) {
            ready[&instruction] = operands_ready(instruction);  // free, or copied into consumers
            break;
          }
          const Kernel& kernel = plan.kernels[kernel_it->second];
          if (kernel.root != &instruction) break;  // members finish with their kernel's root
          double start = compute_free;
          for (const Instruction* input : kernel.inputs) start = std::max(start, ready_of(input));
          for (const Instruction* member : kernel.members)
            for (const Instruction* operand : member->operands()) start = std::max(start, ready_of(operand));
          const double seconds = KernelSeconds(kernel, multiplier);
          AccountKernel(kernel, seconds, multiplier);
          compute_free = start + seconds;
          if (seconds > 0) kernels_busy.emplace_back(start, compute_free);
          for (const Instruction* member : kernel.members) ready[member] = compute_free;
          break;
        }
      }
      end = std::max({end, compute_free, comm_free});
    }
    // Control flow counts as busy: a collective in flight across it is not exposed there.
    for (const Running& running : collectives) {
      const double exposed = Uncovered(running.start, running.finish, kernels_busy);
      CollectiveLine& line = report_.collectives[running.line];
      line.exposed_s = exposed;
      report_.comm_by_kind[line.kind].exposed_s += exposed * multiplier;
      report_.exposed_comm_s += exposed * multiplier;
    }
    return end;
  }

  const Module& module_;
  const ChipSpec& chip_;
  const Topology& topology_;
  const SimulateOptions& options_;
  std::optional<Mesh> named_mesh_;  // the program's sdy.mesh (or --mesh): collectives name their axes
  SimulationReport report_;
  std::map<std::string, BreakdownEntry> breakdown_;
  std::map<std::string, double> flops_by_compute_type_;
  std::unordered_map<std::string, CollectiveEstimate> collective_cache_;
  std::unordered_map<const Instruction*, double> loop_seconds_;   // a while's time, per run
  std::unordered_map<const Instruction*, OpCounts> loop_counts_;  // and its FLOPs
  double link_busy_s_ = 0;  // collective seconds scheduled so far, one run of each called computation
  std::vector<std::string> warned_;
  double remat_matrix_flops_ = 0;
};

void RetypeShape(Shape& shape, ElementType type) {
  if (shape.IsTuple()) {
    for (Shape& element : shape.mutable_tuple_shapes()) RetypeShape(element, type);
    return;
  }
  if (shape.IsArray() && IsFloatingPoint(shape.element_type())) shape.set_element_type(type);
}

// Re-types every instruction but those in `kept`.
void RetypeAllBut(Module& module, ElementType type, const std::unordered_set<const Instruction*>& kept) {
  for (const auto& computation : module.computations())
    for (const auto& instruction : computation->instructions())
      if (!kept.count(instruction.get())) RetypeShape(instruction->mutable_shape(), type);
}

}  // namespace

SimulationReport Simulate(const Module& per_device, const ChipSpec& chip, const Topology& topology,
                          const SimulateOptions& options) {
  return Simulator(per_device, chip, topology, options).Run();
}

void RetypeFloatMath(Module& module, ElementType type) { RetypeAllBut(module, type, {}); }

void RetypeFloatMathKeepingState(Module& module, ElementType type) {
  const Computation* entry = module.entry();
  std::unordered_set<const Instruction*> kept;
  if (entry != nullptr) {
    std::vector<const Instruction*> stack{entry->root()};
    for (const Instruction* parameter : entry->parameters()) kept.insert(parameter);
    while (!stack.empty()) {
      const Instruction* instruction = stack.back();
      stack.pop_back();
      if (instruction->opcode() == Opcode::kDot || instruction->opcode() == Opcode::kConvolution) continue;
      if (!kept.insert(instruction).second) continue;
      for (const Instruction* operand : instruction->operands()) stack.push_back(operand);
    }
  }
  RetypeAllBut(module, type, kept);
}

std::string NearestOpNameOf(const Instruction& instruction) {
  std::string name = OpNameOf(instruction);
  if (!name.empty()) return name;
  std::vector<const Instruction*> frontier = {&instruction};
  for (int distance = 0; distance < 4 && !frontier.empty(); ++distance) {
    std::vector<const Instruction*> next;
    for (const Instruction* at : frontier) {
      for (const Instruction* neighbor : at->operands()) next.push_back(neighbor);
      for (const Instruction* neighbor : at->users()) next.push_back(neighbor);
    }
    for (const Instruction* neighbor : next)
      if (name = OpNameOf(*neighbor); !name.empty()) return name;
    frontier = std::move(next);
  }
  return "";
}

std::string BreakdownKeyOf(const Instruction& instruction, const SimulateOptions& options) {
  if (options.breakdown == "opcode") return std::string(OpcodeName(instruction.opcode()));
  std::vector<std::string> parts = PathComponents(NearestOpNameOf(instruction));
  if (!parts.empty() && parts.front().starts_with("jit(")) parts.erase(parts.begin());
  if (parts.empty()) return "(no op_name) " + std::string(OpcodeName(instruction.opcode()));
  if (options.breakdown == "layer") {
    // The first layer-like token (layer_3, layer3, block_2, l3, stage_1), forward and
    // backward (transpose(jvp(layer_3))) alike; the first component otherwise.
    static const std::regex layer(R"((?:^|[^a-z])((?:layer|block|stage|l)[_\-]?\d+))", std::regex::icase);
    std::smatch match;
    for (const std::string& part : parts)
      if (std::regex_search(part, match, layer)) return match[1].str();
    return parts.front();
  }
  if (options.breakdown_depth > 0 && static_cast<int64_t>(parts.size()) > options.breakdown_depth)
    parts.resize(options.breakdown_depth);
  std::string key;
  for (size_t i = 0; i < parts.size(); ++i) key += (i == 0 ? "" : "/") + parts[i];
  return key;
}

std::string OpNameOf(const Instruction& instruction) {
  const std::string& metadata = instruction.metadata;
  size_t pos = metadata.find("op_name=\"");
  if (pos == std::string::npos) return "";
  pos += 9;
  std::string name;
  for (size_t i = pos; i < metadata.size() && metadata[i] != '"'; ++i) {
    if (metadata[i] == '\\' && i + 1 < metadata.size()) ++i;
    name += metadata[i];
  }
  return name;
}

}  // namespace gspmd::simulate
