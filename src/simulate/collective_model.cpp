// α-β times of collectives over a Topology (the model is stated in collective_model.h).
#include "simulate/collective_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "analysis/comm_report.h"
#include "support/diagnostic.h"

namespace gspmd::simulate {
namespace {

// How a group uses one physical dim.
struct DimUse {
  int64_t dim = 0;
  int64_t k = 1;       // nodes of the group along it
  int64_t stride = 1;  // hops between neighbouring members
  bool ring = false;   // a closed ring (both directions usable)
  double bandwidth = 0;  // per device and direction, after sharing and striding
};

// One replica group laid onto the slice.
struct GroupLayout {
  std::vector<DimUse> dims;
  int64_t size = 1;

  std::string Signature() const {
    std::string out;
    for (const DimUse& use : dims) out += StrCat(use.dim, ":", use.k, ":", use.stride, use.ring ? "r" : "l", ";");
    return out;
  }
};

GroupLayout LayOut(const std::vector<int64_t>& group, const Topology& topology) {
  GroupLayout layout;
  layout.size = static_cast<int64_t>(group.size());
  const auto& dims = topology.dims();
  std::vector<int64_t> coords;
  for (size_t d = 0; d < dims.size(); ++d) {
    coords.clear();
    for (int64_t partition : group) coords.push_back(topology.Coordinates(partition)[d]);
    std::sort(coords.begin(), coords.end());
    coords.erase(std::unique(coords.begin(), coords.end()), coords.end());
    if (coords.size() < 2) continue;
    DimUse use;
    use.dim = static_cast<int64_t>(d);
    use.k = static_cast<int64_t>(coords.size());
    bool regular = true;
    for (size_t i = 2; i < coords.size(); ++i) regular = regular && coords[i] - coords[i - 1] == coords[1] - coords[0];
    const int64_t span = coords.back() - coords.front() + 1;
    use.stride = regular ? coords[1] - coords[0] : (span + use.k - 1) / use.k;
    if (dims[d].torus) {
      use.ring = dims[d].wraps && regular && use.k * use.stride == dims[d].extent;
      use.bandwidth = topology.LinkBandwidth(use.dim) * (use.ring ? 2.0 : 1.0) / static_cast<double>(use.stride);
    } else {
      use.stride = 1;
      use.bandwidth = topology.LinkBandwidth(use.dim);
    }
    layout.dims.push_back(use);
  }
  return layout;
}

// The group's dims collected per network level.
struct LevelUse {
  int64_t level = 0;
  int64_t n = 1;          // group members along the level
  double bandwidth = 0;   // sum over its dims
};

std::vector<LevelUse> Levels(const GroupLayout& layout, const Topology& topology) {
  std::map<int64_t, LevelUse> by_level;
  for (const DimUse& use : layout.dims) {
    LevelUse& level = by_level[topology.dims()[use.dim].level];
    level.level = topology.dims()[use.dim].level;
    level.n *= use.k;
    level.bandwidth += use.bandwidth;
  }
  std::vector<LevelUse> levels;
  for (const auto& [index, level] : by_level) levels.push_back(level);
  return levels;
}

double HopLatency(const DimUse& use, const Topology& topology) {
  return topology.levels()[topology.dims()[use.dim].level].latency_s * static_cast<double>(use.stride);
}

// α of a ring collective: k - 1 steps per dim, halved on closed rings.
double RingLatency(const GroupLayout& layout, const Topology& topology) {
  double latency = 0;
  for (const DimUse& use : layout.dims) {
    const double steps = use.ring ? std::ceil((use.k - 1) / 2.0) : static_cast<double>(use.k - 1);
    latency += steps * HopLatency(use, topology);
  }
  return latency;
}

std::string LinksText(const GroupLayout& layout, const Topology& topology) {
  std::string out;
  for (const DimUse& use : layout.dims) {
    const PhysicalDim& dim = topology.dims()[use.dim];
    out += (out.empty() ? "" : " + ") + StrCat(dim.name, ":", use.k, dim.torus ? (use.ring ? " ring" : " line") : " switch");
    if (use.stride > 1) out += StrCat(" stride ", use.stride);
  }
  return out.empty() ? "(none)" : out;
}

// β of gathering V bytes (each member starts with V / n): the fastest order of the levels.
double GatherSeconds(double bytes, const GroupLayout& layout, const std::vector<LevelUse>& levels, std::string* order_text,
                     const Topology& topology) {
  std::vector<size_t> order(levels.size());
  std::iota(order.begin(), order.end(), 0);
  double best = -1;
  std::vector<size_t> best_order;
  do {
    double chunk = bytes / static_cast<double>(layout.size), seconds = 0;
    for (size_t i : order) {
      seconds += chunk * static_cast<double>(levels[i].n - 1) / levels[i].bandwidth;
      chunk *= static_cast<double>(levels[i].n);
    }
    if (best < 0 || seconds < best) {
      best = seconds;
      best_order = order;
    }
  } while (std::next_permutation(order.begin(), order.end()));
  if (order_text != nullptr) {
    std::string text;
    for (size_t i : best_order) text += (text.empty() ? "" : ", ") + topology.levels()[levels[i].level].name;
    *order_text = text;
  }
  return std::max(0.0, best);
}

double AllToAllSeconds(double bytes, const GroupLayout& layout, const std::vector<LevelUse>& levels, const Topology& topology) {
  const double n = static_cast<double>(layout.size);
  double total_bandwidth = 0;
  double slowest = 0;
  for (const DimUse& use : layout.dims) {
    total_bandwidth += use.bandwidth;
    if (!topology.dims()[use.dim].torus) continue;
    const double k = static_cast<double>(use.k);
    slowest = std::max(slowest, bytes * std::floor(k / 2) * std::ceil(k / 2) / (k * use.bandwidth));
  }
  for (const LevelUse& level : levels) {
    if (topology.levels()[level.level].kind != NetworkLevel::Kind::kSwitch) continue;
    slowest = std::max(slowest, bytes * (1 - 1.0 / static_cast<double>(level.n)) / level.bandwidth);
  }
  if (total_bandwidth > 0) slowest = std::max(slowest, bytes * (n - 1) / n / total_bandwidth);
  return slowest;
}

double DiameterLatency(const GroupLayout& layout, const Topology& topology) {
  double latency = 0;
  for (const DimUse& use : layout.dims) {
    const double hops = use.ring ? std::floor(use.k / 2.0) : static_cast<double>(use.k - 1);
    latency += hops * HopLatency(use, topology);
  }
  return latency;
}

double OperandBytes(const Instruction& instruction) {
  double bytes = 0;
  for (const Instruction* operand : instruction.operands()) bytes += static_cast<double>(operand->shape().byte_size());
  return bytes;
}

CollectiveEstimate EstimatePermute(const Instruction& permute, const Topology& topology, const ChipSpec& chip, CollectiveEstimate estimate) {
  const auto& dims = topology.dims();
  std::vector<int64_t> longest(dims.size(), 0);
  double latency = 0;
  for (const SourceTargetPair& pair : permute.source_target_pairs()) {
    if (pair.source == pair.target || pair.source >= topology.num_partitions() || pair.target >= topology.num_partitions()) continue;
    const int64_t* from = topology.Coordinates(pair.source);
    const int64_t* to = topology.Coordinates(pair.target);
    double route_latency = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      int64_t distance = std::abs(from[d] - to[d]);
      if (dims[d].torus && dims[d].wraps) distance = std::min(distance, dims[d].extent - distance);
      if (!dims[d].torus) distance = distance > 0 ? 1 : 0;
      longest[d] = std::max(longest[d], distance);
      route_latency += static_cast<double>(distance) * topology.levels()[dims[d].level].latency_s;
    }
    latency = std::max(latency, route_latency);
  }
  const double bytes = OperandBytes(permute);
  double seconds = 0;
  std::string links;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (longest[d] == 0) continue;
    seconds = std::max(seconds, bytes * static_cast<double>(longest[d]) / topology.LinkBandwidth(static_cast<int64_t>(d)));
    links += (links.empty() ? "" : " + ") + StrCat(dims[d].name, ":", longest[d], dims[d].torus ? " hops" : " switch");
  }
  estimate.group_size = links.empty() ? 1 : 2;
  estimate.algorithm = links.empty() ? "none" : "point-to-point";
  estimate.links = links.empty() ? "(none)" : links;
  estimate.bandwidth_s = seconds / chip.CollectiveEfficiency("collective-permute");
  estimate.latency_s = links.empty() ? 0 : latency;
  estimate.time_s = estimate.bandwidth_s + estimate.latency_s;
  return estimate;
}

}  // namespace

CollectiveEstimate EstimateCollective(const Instruction& collective, const Topology& topology, const ChipSpec& chip) {
  GSPMD_CHECK(IsCollective(collective.opcode()), "not a collective: %", collective.name());
  CollectiveEstimate estimate;
  estimate.bytes = CollectiveBytesPerDevice(collective, topology.num_partitions());
  if (collective.opcode() == Opcode::kCollectivePermute) return EstimatePermute(collective, topology, chip, estimate);

  const std::string kind(OpcodeName(collective.opcode()));
  const double result_bytes = static_cast<double>(collective.shape().byte_size());
  const double operand_bytes = OperandBytes(collective);
  double worst = -1;
  std::map<std::string, bool> seen;
  for (const std::vector<int64_t>& group : collective.replica_groups().Groups(topology.num_partitions())) {
    const GroupLayout layout = LayOut(group, topology);
    if (!seen.emplace(layout.Signature(), true).second) continue;
    CollectiveEstimate candidate = estimate;
    candidate.group_size = layout.size;
    candidate.links = LinksText(layout, topology);
    const std::vector<LevelUse> levels = Levels(layout, topology);
    if (levels.empty()) {
      candidate.algorithm = "none";
    } else if (collective.opcode() == Opcode::kAllToAll) {
      candidate.algorithm = "bisection";
      candidate.bandwidth_s = AllToAllSeconds(result_bytes, layout, levels, topology) / chip.CollectiveEfficiency(kind);
      candidate.latency_s = DiameterLatency(layout, topology) + static_cast<double>(layout.size - 1) * chip.all_to_all_message_s;
    } else if (collective.opcode() == Opcode::kCollectiveBroadcast) {
      double slowest = 0;
      for (const LevelUse& level : levels) slowest = std::max(slowest, operand_bytes / level.bandwidth);
      candidate.algorithm = "pipelined ring";
      candidate.bandwidth_s = slowest / chip.CollectiveEfficiency(kind);
      candidate.latency_s = RingLatency(layout, topology);
    } else {
      std::string order;
      const bool gathers = collective.opcode() == Opcode::kAllGather;
      const double bytes = gathers ? result_bytes : operand_bytes;
      double seconds = GatherSeconds(bytes, layout, levels, &order, topology);
      double latency = RingLatency(layout, topology);
      if (collective.opcode() == Opcode::kAllReduce) {
        seconds *= 2;  // reduce-scatter, then all-gather
        latency *= 2;
      }
      candidate.algorithm = levels.size() == 1 ? "ring" : "hierarchical ring (" + order + ")";
      candidate.bandwidth_s = seconds / chip.CollectiveEfficiency(kind);
      candidate.latency_s = latency;
    }
    candidate.time_s = candidate.bandwidth_s + candidate.latency_s;
    if (candidate.time_s > worst) {
      worst = candidate.time_s;
      estimate = candidate;
    }
  }
  if (worst < 0) estimate.algorithm = "none";
  return estimate;
}

}  // namespace gspmd::simulate
