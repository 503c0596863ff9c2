// The α-β time of one collective on a Topology.
//
// Each replica group is laid onto the slice: along every physical dim it spans it uses k
// nodes, evenly strided by s or not. Per device and direction a dim gives
//   b = link bandwidth / (devices sharing the node's links) x directions / s,
// where directions is 2 for a ring closed by wraparound (the group walks the whole ring) and
// 1 for a line, and s groups share each link when the group is strided. A switch level gives
// its port bandwidth over the devices sharing the port. With V the bytes of the full
// (gathered / reduced) buffer, n the group size and α the per-hop (per-step) latency:
//   all-gather, reduce-scatter: one phase per network level, the levels of the group in the
//     order that is fastest (slow levels on the small pieces); the dims of a torus level run
//     at once, each device taking in (n_l - 1) x piece bytes at the sum of their b;
//     time = sum over levels / efficiency + α x ring steps (k - 1 per dim, halved on rings)
//   all-reduce: reduce-scatter then all-gather of the operand
//   all-to-all: V = the result; the slowest of the bisection of each torus dim
//     (V x floor(k/2) x ceil(k/2) / (k x b)), the bytes leaving a switch node
//     (V (1 - 1/n_l) / b) and each device's injection (V (n-1)/n / sum of b);
//     / efficiency + α x the group's diameter in hops + (n - 1) x the chip's per-piece cost
//     (all_to_all_message_s: each of the n - 1 pieces is a transfer of its own)
//   collective-permute: every pair's message is routed (switch levels: up through the source
//     node's port, down through the target node's; torus dims in order, each the shortest way
//     round where it wraps, half of the bytes each way when both are equally short, straight
//     along a line otherwise) and the busiest directed link or port sets the time: the bytes
//     crossing it / its bandwidth (per node, so devices sharing a node add up), / efficiency,
//     + α x the longest route's hops. A ring shifted by one on a wrapped dim, a folded ring
//     0,2,4,..,5,3,1 on a line and even a ring in line order (its closing message runs back
//     against the others) load every link direction with one message each.
//   collective-broadcast: V at the slowest level's bandwidth, pipelined
// Groups of one device, and permutes whose pairs stay put, cost nothing.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/instruction.h"
#include "ir/module.h"
#include "simulate/chip_spec.h"
#include "simulate/topology.h"

namespace gspmd::simulate {

struct CollectiveEstimate {
  double bytes = 0;         // sent per device per execution: `gspmd report`'s ring model
  int64_t group_size = 1;   // largest replica group (2 for a permute with pairs)
  std::string algorithm;    // "ring", "hierarchical ring (ici, core)", "bisection", "point-to-point", "none"
  std::string links;        // dims used: "x:8 ring + y:8 line + core:2 switch"; for a permute the
                            // longest route per dim and the busiest link ("x:7 hops + core:switch;
                            // busiest x- link 1 message")
  double bandwidth_s = 0;   // the β part, after efficiency
  double latency_s = 0;     // the α part
  double time_s = 0;        // bandwidth_s + latency_s
};

// A collective-permute of `bytes` sent by each source of `pairs` (the model above). `bytes`
// of the estimate is `bytes` (0 without pairs).
CollectiveEstimate EstimatePermutePairs(const std::vector<SourceTargetPair>& pairs, double bytes,
                                        const Topology& topology, const ChipSpec& chip);

// A collective over replica groups (any kind but collective-permute) whose result and operand
// have these bytes per device; `bytes` of the estimate is gspmd report's ring model over the
// largest group.
CollectiveEstimate EstimateGroupCollective(Opcode opcode, const std::vector<std::vector<int64_t>>& groups,
                                           double result_bytes, double operand_bytes, const Topology& topology,
                                           const ChipSpec& chip);

// The estimate of one collective instruction (all-reduce, all-gather, reduce-scatter,
// all-to-all, collective-permute, collective-broadcast), per execution.
CollectiveEstimate EstimateCollective(const Instruction& collective, const Topology& topology, const ChipSpec& chip);

// Every collective instruction of `module` (all computations), keyed by (computation name,
// instruction name), per execution (loops are not multiplied out: gspmd simulate's report
// does that). For tools that annotate a program with estimated times, e.g.
//   const ChipSpec chip = LoadChipSpec("tpu-v3");
//   auto times = EstimateCollectiveTimes(module, chip, Topology::Build(chip, module.num_partitions()));
using CollectiveKey = std::pair<std::string, std::string>;
std::map<CollectiveKey, CollectiveEstimate> EstimateCollectiveTimes(const Module& module, const ChipSpec& chip,
                                                                    const Topology& topology);

}  // namespace gspmd::simulate
