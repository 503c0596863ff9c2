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
//   collective-permute: V over the busiest link of the pairs' shortest routes (as many
//     flows as the longest route along that dim) + α x the longest route
//   collective-broadcast: V at the slowest level's bandwidth, pipelined
// Groups of one device, and permutes whose pairs stay put, cost nothing.
#pragma once

#include <cstdint>
#include <string>

#include "ir/instruction.h"
#include "simulate/chip_spec.h"
#include "simulate/topology.h"

namespace gspmd::simulate {

struct CollectiveEstimate {
  double bytes = 0;         // sent per device per execution: `gspmd report`'s ring model
  int64_t group_size = 1;   // largest replica group (2 for a permute with pairs)
  std::string algorithm;    // "ring", "hierarchical ring (ici, core)", "bisection", "point-to-point", "none"
  std::string links;        // dims used: "x:8 ring + y:8 line + core:2 switch"
  double bandwidth_s = 0;   // the β part, after efficiency
  double latency_s = 0;     // the α part
  double time_s = 0;        // bandwidth_s + latency_s
};

CollectiveEstimate EstimateCollective(const Instruction& collective, const Topology& topology, const ChipSpec& chip);

}  // namespace gspmd::simulate
