// The windowed-einsum cost check (windowed_cost.h).
#include "simulate/windowed_cost.h"

#include <algorithm>

#include <memory>

#include "ir/attributes.h"
#include "ir/instruction.h"
#include "simulate/collective_model.h"
#include "simulate/op_counts.h"
#include "support/diagnostic.h"
#include "support/units.h"

namespace gspmd::simulate {

double DotKernelSeconds(double flops, double hbm_bytes, const std::string& element_type, const std::string& precision,
                        const ChipSpec& chip) {
  MatrixMode mode{element_type, 1};
  if (element_type == "f32" || element_type == "f64") {
    auto it = chip.f32_dot.find(element_type == "f64" ? std::string("HIGHEST") : precision);
    if (it == chip.f32_dot.end()) it = chip.f32_dot.find("DEFAULT");
    if (it != chip.f32_dot.end()) mode = it->second;
  }
  auto rate = chip.matrix_flops.find(mode.compute_type);
  if (rate == chip.matrix_flops.end()) rate = chip.matrix_flops.find("bf16");
  if (rate == chip.matrix_flops.end()) rate = chip.matrix_flops.begin();
  GSPMD_CHECK(rate != chip.matrix_flops.end(), "chip ", chip.name, " has no matrix rate");
  const double matrix_s = flops * mode.passes / (rate->second * chip.Efficiency("dot"));
  const double memory_s = hbm_bytes / (chip.hbm_bandwidth * chip.Efficiency("memory"));
  return chip.op_overhead_s + std::max(matrix_s, memory_s);
}

namespace {

// One ring step of every ring: ring[j + 1] -> ring[j], and back when both ways.
std::vector<SourceTargetPair> RingSteps(const std::vector<std::vector<int64_t>>& rings, bool both_ways) {
  std::vector<SourceTargetPair> pairs;
  for (const std::vector<int64_t>& ring : rings) {
    const size_t n = ring.size();
    if (n < 2) continue;
    for (size_t j = 0; j < n; ++j) {
      pairs.push_back({ring[(j + 1) % n], ring[j]});
      if (both_ways && n > 2) pairs.push_back({ring[j], ring[(j + 1) % n]});
    }
  }
  return pairs;
}

}  // namespace

WindowedLoopCost PriceWindowedLoop(const WindowedLoopCandidate& candidate, const ChipSpec& chip,
                                   const Topology& topology) {
  GSPMD_CHECK(candidate.collective == Opcode::kAllGather || candidate.collective == Opcode::kReduceScatter,
              "a windowed loop replaces an all-gather or a reduce-scatter, not ", OpcodeName(candidate.collective));
  WindowedLoopCost cost;
  cost.trips = candidate.trips;
  const std::vector<std::vector<int64_t>>& groups =
      candidate.collective_groups.empty() ? candidate.rings : candidate.collective_groups;
  size_t n = 1;
  for (const std::vector<int64_t>& group : groups) n = std::max(n, group.size());
  const double devices = static_cast<double>(n);
  const double trips = static_cast<double>(std::max<int64_t>(candidate.trips, 0));
  GSPMD_CHECK(!(candidate.bidirectional && candidate.unrolled), "an unrolled windowed loop is unidirectional");
  const int64_t dots_per_trip = candidate.bidirectional || candidate.unrolled ? 2 : 1;
  // Ring steps per trip, one after the other (bidirectional: both at once).
  const double steps_per_trip = candidate.unrolled ? 2 : 1;

  // Native: the collective, then (or after) the one dot of all the windows.
  const bool gathers = candidate.collective == Opcode::kAllGather;
  const double whole = candidate.collective_bytes, piece = whole / devices;
  cost.collective_s = EstimateGroupCollective(candidate.collective, groups, gathers ? whole : piece,
                                              gathers ? piece : whole, topology, chip)
                          .time_s;
  const double total_flops = trips * candidate.flops_per_trip + candidate.peeled_flops;
  const double hbm_per_flop =
      candidate.flops_per_trip > 0 ? candidate.dot_hbm_bytes_per_trip / candidate.flops_per_trip : 0;
  const double native_hbm =
      candidate.native_dot_hbm_bytes > 0 ? candidate.native_dot_hbm_bytes : total_flops * hbm_per_flop;
  cost.dot_s = DotKernelSeconds(total_flops, native_hbm, candidate.element_type, candidate.precision, chip);
  cost.native_s = (candidate.collective_stays ? 0 : cost.collective_s) + cost.dot_s;

  // The loop: each trip's permute moves the next windows while its partial dots run.
  auto dots = [&](double flops, int64_t kernels) {
    if (kernels == 0) return 0.0;
    const double each = flops / static_cast<double>(kernels);
    return static_cast<double>(kernels) *
           DotKernelSeconds(each, each * hbm_per_flop, candidate.element_type, candidate.precision, chip);
  };
  const std::vector<SourceTargetPair> steps = RingSteps(candidate.rings, candidate.bidirectional);
  const double per_message = candidate.bytes_per_trip / static_cast<double>(dots_per_trip);
  const CollectiveEstimate permute = EstimatePermutePairs(steps, per_message, topology, chip);
  cost.dot_trip_s = dots(candidate.flops_per_trip, dots_per_trip);
  cost.permute_trip_s = steps_per_trip * permute.time_s;
  cost.permute_bandwidth_s = steps_per_trip * permute.bandwidth_s;
  // Unrolled, each step's dot overlaps its own permute: the steps are alike, so the trip's
  // max(dots, bandwidth) is the steps' sum of theirs.
  cost.overhead_trip_s =
      steps_per_trip * permute.latency_s + static_cast<double>(candidate.loop_kernels) * chip.op_overhead_s;
  cost.loop_s = trips * (std::max(cost.dot_trip_s, cost.permute_bandwidth_s) + cost.overhead_trip_s);
  if (candidate.unrolled && candidate.peeled_flops > 0) {
    // Odd N: the one step left over, its partial dot alone (nothing to send).
    cost.peeled_s = dots(candidate.peeled_flops, 1);
    cost.loop_s += cost.peeled_s;
  } else if (candidate.peeled_flops > 0 || candidate.peeled_bytes > 0) {
    // The peeled partial dots (one per window: the own one, and for even N the farthest).
    const int64_t peeled_dots =
        candidate.flops_per_trip > 0
            ? std::max<int64_t>(1, static_cast<int64_t>(candidate.peeled_flops /
                                                        (candidate.flops_per_trip / dots_per_trip) + 0.5))
            : 1;
    const CollectiveEstimate sent =
        EstimatePermutePairs(steps, candidate.peeled_bytes / static_cast<double>(dots_per_trip), topology, chip);
    cost.peeled_s = std::max(dots(candidate.peeled_flops, peeled_dots), sent.bandwidth_s) + sent.latency_s;
    cost.loop_s += cost.peeled_s;
  }
  if (!candidate.pre_gather_groups.empty()) {
    size_t k = 1;
    for (const std::vector<int64_t>& group : candidate.pre_gather_groups) k = std::max(k, group.size());
    cost.pre_gather_s = EstimateGroupCollective(Opcode::kAllGather, candidate.pre_gather_groups,
                                                candidate.pre_gather_bytes,
                                                candidate.pre_gather_bytes / static_cast<double>(k), topology, chip)
                            .time_s;
    cost.loop_s += cost.pre_gather_s;
  }
  cost.windowed_is_faster = cost.loop_s < cost.native_s;
  cost.collective = std::string(OpcodeName(candidate.collective));
  return cost;
}

WindowedLoopCandidate LoopCandidateOf(const WindowedEinsumCandidate& candidate, std::optional<ElementType> float_type) {
  WindowedLoopCandidate loop;
  loop.collective =
      candidate.kind == WindowedEinsumCandidate::Kind::kAllGather ? Opcode::kAllGather : Opcode::kReduceScatter;
  loop.rings = candidate.rings;
  loop.bidirectional = candidate.bidirectional;
  loop.unrolled = candidate.unrolled;
  loop.trips = candidate.trips;
  if (candidate.unrolled) loop.loop_kernels = 4;  // two updates, one counter, one condition
  double scale = 1;
  if (candidate.dot != nullptr) {
    const MatrixOperands operands = MatrixOperandsOf(*candidate.dot);
    loop.element_type = operands.element_type;
    loop.precision = operands.precision;
    const ElementType type = candidate.dot->operand(0)->shape().element_type();
    if (float_type && IsFloatingPoint(type) && ElementByteSize(type) > 0) {
      scale = static_cast<double>(ElementByteSize(*float_type)) / static_cast<double>(ElementByteSize(type));
      loop.element_type = std::string(ElementTypeName(*float_type));
    }
  }
  loop.bytes_per_trip = scale * static_cast<double>(candidate.window_bytes_per_trip);
  loop.flops_per_trip = candidate.flops_per_trip;
  loop.dot_hbm_bytes_per_trip = scale * static_cast<double>(candidate.hbm_bytes_per_trip);
  loop.native_dot_hbm_bytes = scale * static_cast<double>(candidate.native_dot_hbm_bytes);
  loop.collective_stays = candidate.collective_shared;
  loop.peeled_flops = candidate.peeled_flops;
  loop.peeled_bytes = scale * static_cast<double>(candidate.peeled_bytes);
  loop.collective_bytes = scale * static_cast<double>(candidate.collective_bytes);
  loop.pre_gather_groups = candidate.pre_gather_groups;
  loop.pre_gather_bytes = scale * static_cast<double>(candidate.pre_gather_bytes);
  loop.collective_groups = candidate.collective_groups;
  return loop;
}

WindowedEinsumCostCheck ChipWindowedCostCheck(const ChipSpec& chip, const Topology& topology,
                                              std::optional<ElementType> float_type) {
  auto model = std::make_shared<const std::pair<ChipSpec, Topology>>(chip, topology);
  return [model, float_type](const WindowedEinsumCandidate& candidate) {
    // A ring on devices the topology does not have (another device count): not priced, refused.
    for (const std::vector<int64_t>& ring : candidate.rings)
      for (int64_t device : ring)
        if (device < 0 || device >= model->second.num_partitions()) return false;
    const WindowedLoopCost own = PriceWindowedLoop(LoopCandidateOf(candidate, float_type), model->first, model->second);
    if (!own.windowed_is_faster) return false;
    for (const WindowedEinsumCandidate& alternative : candidate.alternatives)
      if (PriceWindowedLoop(LoopCandidateOf(alternative, float_type), model->first, model->second).loop_s < own.loop_s)
        return false;
    return true;
  };
}

std::string WindowedLoopCost::ToString() const {
  std::string loop = StrCat("loop ", trips, " x (max(dot ", FormatSeconds(dot_trip_s), ", permute ",
                            FormatSeconds(permute_bandwidth_s), ") + ", FormatSeconds(overhead_trip_s), ")");
  if (peeled_s > 0) loop += " + peeled " + FormatSeconds(peeled_s);
  if (pre_gather_s > 0) loop += " + all-gather first " + FormatSeconds(pre_gather_s);
  return StrCat(loop, " = ", FormatSeconds(loop_s), " vs ", collective, " ", FormatSeconds(collective_s), " + dot ",
                FormatSeconds(dot_s), " = ", FormatSeconds(native_s), windowed_is_faster ? ": windowed" : ": native");
}

}  // namespace gspmd::simulate
