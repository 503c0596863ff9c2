// α-β times of collectives over a Topology (the model is stated in collective_model.h).
#include "simulate/collective_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <cstdio>
#include <numeric>
#include <unordered_map>
#include <vector>

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

std::string Plural(double count, const char* one, const char* many) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", count);
  return StrCat(buffer, " ", count == 1 ? one : many);
}

// The load of a permute's messages on every directed link (collective_model.h): torus links
// are keyed by the node they leave, the dim and the direction; switch ports by the node, the
// dim and up (0) or down (1).
class LinkLoads {
 public:
  explicit LinkLoads(const Topology& topology) : topology_(topology), dims_(topology.dims()) {
    radix_.assign(dims_.size(), 1);
    for (size_t d = 1; d < dims_.size(); ++d) radix_[d] = radix_[d - 1] * dims_[d - 1].extent;
  }

  // Routes one message of weight 1 from `from` to `to`; returns its hops per dim.
  std::vector<int64_t> Route(const int64_t* from, const int64_t* to) {
    std::vector<int64_t> position(from, from + dims_.size());
    std::vector<int64_t> hops(dims_.size(), 0);
    for (size_t d = 0; d < dims_.size(); ++d) {
      if (from[d] == to[d]) continue;
      const PhysicalDim& dim = dims_[d];
      if (!dim.torus) {
        // Up through the source node's port, down through the target node's.
        std::vector<int64_t> target(position);
        target[d] = to[d];
        Add(position, d, 0, 1);
        Add(target, d, 1, 1);
        hops[d] = 1;
        position[d] = to[d];
        continue;
      }
      const int64_t forward = dim.wraps ? ((to[d] - from[d]) % dim.extent + dim.extent) % dim.extent : to[d] - from[d];
      if (!dim.wraps) {
        Walk(position, d, forward > 0 ? 1 : -1, std::abs(forward), 1);
        hops[d] = std::abs(forward);
      } else if (2 * forward == dim.extent) {
        // Halfway round: half of the bytes each way.
        Walk(position, d, 1, forward, 0.5);
        Walk(position, d, -1, forward, 0.5);
        hops[d] = forward;
      } else if (2 * forward < dim.extent) {
        Walk(position, d, 1, forward, 1);
        hops[d] = forward;
      } else {
        Walk(position, d, -1, dim.extent - forward, 1);
        hops[d] = dim.extent - forward;
      }
      position[d] = to[d];
    }
    return hops;
  }

  struct Busiest {
    double seconds = 0;  // messages x bytes / bandwidth
    double messages = 0;
    int64_t dim = -1;
    int direction = 0;
  };

  // The busiest link; among equally busy ones the first node's, innermost dim, + (out) first.
  Busiest Find(double bytes) const {
    Busiest busiest;
    int64_t busiest_key = -1;
    for (const auto& [key, messages] : load_) {
      const int64_t d = (key / 2) % static_cast<int64_t>(dims_.size());
      const double seconds = messages * bytes / topology_.levels()[dims_[d].level].bandwidth;
      if (seconds > busiest.seconds || (seconds == busiest.seconds && key < busiest_key)) {
        busiest = Busiest{seconds, messages, d, static_cast<int>(key % 2)};
        busiest_key = key;
      }
    }
    return busiest;
  }

 private:
  // `steps` hops along torus dim d from `position` (left unchanged), `direction` +1 or -1.
  void Walk(std::vector<int64_t> position, size_t d, int direction, int64_t steps, double weight) {
    for (int64_t s = 0; s < steps; ++s) {
      Add(position, d, direction > 0 ? 0 : 1, weight);
      position[d] = (position[d] + direction + dims_[d].extent) % dims_[d].extent;
    }
  }

  // The node of dim d's level at `position` (its coordinates on that level and above).
  void Add(const std::vector<int64_t>& position, size_t d, int direction, double weight) {
    int64_t node = 0;
    for (size_t e = 0; e < dims_.size(); ++e)
      if (dims_[e].level >= dims_[d].level) node += position[e] * radix_[e];
    load_[(node * static_cast<int64_t>(dims_.size()) + static_cast<int64_t>(d)) * 2 + direction] += weight;
  }

  const Topology& topology_;
  const std::vector<PhysicalDim>& dims_;
  std::vector<int64_t> radix_;
  std::unordered_map<int64_t, double> load_;
};

}  // namespace

CollectiveEstimate EstimatePermutePairs(const std::vector<SourceTargetPair>& pairs, double bytes, const Topology& topology,
                                        const ChipSpec& chip) {
  CollectiveEstimate estimate;
  const auto& dims = topology.dims();
  LinkLoads loads(topology);
  std::vector<int64_t> longest(dims.size(), 0);
  double latency = 0;
  bool moves = false;
  for (const SourceTargetPair& pair : pairs) {
    if (pair.source == pair.target || pair.source >= topology.num_partitions() || pair.target >= topology.num_partitions()) continue;
    moves = true;
    const std::vector<int64_t> hops = loads.Route(topology.Coordinates(pair.source), topology.Coordinates(pair.target));
    double route_latency = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      longest[d] = std::max(longest[d], hops[d]);
      route_latency += static_cast<double>(hops[d]) * topology.levels()[dims[d].level].latency_s;
    }
    latency = std::max(latency, route_latency);
  }
  estimate.bytes = pairs.empty() ? 0 : bytes;
  if (!moves) {
    estimate.algorithm = "none";
    estimate.links = "(none)";
    return estimate;
  }
  const LinkLoads::Busiest busiest = loads.Find(bytes);
  std::string links;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (longest[d] == 0) continue;
    links += (links.empty() ? "" : " + ") + (dims[d].torus ? StrCat(dims[d].name, ":", Plural(longest[d], "hop", "hops"))
                                                             : StrCat(dims[d].name, ":switch"));
  }
  if (busiest.dim >= 0) {
    const PhysicalDim& dim = dims[busiest.dim];
    links += StrCat("; busiest ", dim.name, dim.torus ? (busiest.direction == 0 ? "+ link " : "- link ")
                                                        : (busiest.direction == 0 ? " port out " : " port in "),
                    Plural(busiest.messages, "message", "messages"));
  }
  estimate.group_size = 2;
  estimate.algorithm = "point-to-point";
  estimate.links = links;
  estimate.bandwidth_s = busiest.seconds / chip.CollectiveEfficiency("collective-permute");
  estimate.latency_s = latency;
  estimate.time_s = estimate.bandwidth_s + estimate.latency_s;
  return estimate;
}

CollectiveEstimate EstimateGroupCollective(Opcode opcode, const std::vector<std::vector<int64_t>>& groups,
                                           double result_bytes, double operand_bytes, const Topology& topology,
                                           const ChipSpec& chip) {
  GSPMD_CHECK(IsCollective(opcode) && opcode != Opcode::kCollectivePermute, "not a collective over groups: ",
              OpcodeName(opcode));
  CollectiveEstimate estimate;
  double n = 1;
  for (const std::vector<int64_t>& group : groups) n = std::max(n, static_cast<double>(group.size()));
  switch (opcode) {  // gspmd report's ring model
    case Opcode::kAllReduce: estimate.bytes = 2 * (n - 1) / n * operand_bytes; break;
    case Opcode::kAllGather:
    case Opcode::kAllToAll: estimate.bytes = (n - 1) / n * result_bytes; break;
    default: estimate.bytes = (n - 1) / n * operand_bytes; break;
  }
  const std::string kind(OpcodeName(opcode));
  double worst = -1;
  std::map<std::string, bool> seen;
  for (const std::vector<int64_t>& group : groups) {
    const GroupLayout layout = LayOut(group, topology);
    if (!seen.emplace(layout.Signature(), true).second) continue;
    CollectiveEstimate candidate = estimate;
    candidate.group_size = layout.size;
    candidate.links = LinksText(layout, topology);
    const std::vector<LevelUse> levels = Levels(layout, topology);
    if (levels.empty()) {
      candidate.algorithm = "none";
    } else if (opcode == Opcode::kAllToAll) {
      candidate.algorithm = "bisection";
      candidate.bandwidth_s = AllToAllSeconds(result_bytes, layout, levels, topology) / chip.CollectiveEfficiency(kind);
      candidate.latency_s = DiameterLatency(layout, topology) + static_cast<double>(layout.size - 1) * chip.all_to_all_message_s;
    } else if (opcode == Opcode::kCollectiveBroadcast) {
      double slowest = 0;
      for (const LevelUse& level : levels) slowest = std::max(slowest, operand_bytes / level.bandwidth);
      candidate.algorithm = "pipelined ring";
      candidate.bandwidth_s = slowest / chip.CollectiveEfficiency(kind);
      candidate.latency_s = RingLatency(layout, topology);
    } else {
      std::string order;
      const bool gathers = opcode == Opcode::kAllGather;
      const double bytes = gathers ? result_bytes : operand_bytes;
      double seconds = GatherSeconds(bytes, layout, levels, &order, topology);
      double latency = RingLatency(layout, topology);
      if (opcode == Opcode::kAllReduce) {
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

CollectiveEstimate EstimateCollective(const Instruction& collective, const Topology& topology, const ChipSpec& chip) {
  GSPMD_CHECK(IsCollective(collective.opcode()), "not a collective: %", collective.name());
  CollectiveEstimate estimate =
      collective.opcode() == Opcode::kCollectivePermute
          ? EstimatePermutePairs(collective.source_target_pairs(), OperandBytes(collective), topology, chip)
          : EstimateGroupCollective(collective.opcode(), collective.replica_groups().Groups(topology.num_partitions()),
                                    static_cast<double>(collective.shape().byte_size()), OperandBytes(collective),
                                    topology, chip);
  estimate.bytes = CollectiveBytesPerDevice(collective, topology.num_partitions());
  return estimate;
}

std::map<CollectiveKey, CollectiveEstimate> EstimateCollectiveTimes(const Module& module, const ChipSpec& chip,
                                                                    const Topology& topology) {
  std::map<CollectiveKey, CollectiveEstimate> estimates;
  for (const auto& computation : module.computations())
    for (const auto& instruction : computation->instructions())
      if (IsCollective(instruction->opcode()))
        estimates.emplace(CollectiveKey{computation->name(), instruction->name()},
                          EstimateCollective(*instruction, topology, chip));
  return estimates;
}

}  // namespace gspmd::simulate
