// The cost check of a windowed einsum (collective matmul) against the native collective it
// replaces, from the simulator's chip model: does a loop of partial dots, each overlapped with
// a collective-permute of the next window (or accumulator), beat the all-gather (or
// reduce-scatter) and the one dot it feeds (or that feeds it)?
//
//   native   = collective + dot                  (the collective feeds the dot: no overlap;
//                                                 the dot alone when the collective stays)
//   loop     = trips x (max(trip's dots, trip's permute bandwidth) + per-trip overhead)
//              + peeled (bidirectional: max(peeled dots, their permute) + its latency;
//                        unrolled, odd N: the one partial dot left over)
//   per-trip overhead = the permute's latency + loop_kernels x the chip's kernel overhead
//   grouped: loop += the all-gather among each group of near devices before it
//
// An unrolled loop (two ring steps per trip, one after the other: each step's dot overlaps its
// own permute) has half the trips, twice the dots and the permutes' bandwidth per trip, and
// pays two permute latencies but its loop_kernels once per trip.
//
// Dots are priced as the simulator prices a kernel (simulator.h): kernel overhead + the
// larger of FLOPs x passes / (matrix rate x dot efficiency) and HBM bytes / (bandwidth x
// memory efficiency), one kernel per partial dot. The collective is EstimateGroupCollective
// over the rings (its replica groups); a trip's permute is EstimatePermutePairs over the ring
// steps on the same links (collective_model.h), both directions' pairs at once when
// bidirectional. So a ring laid out badly on the topology, or sharing links with other rings,
// costs what its busiest link carries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/element_type.h"
#include "ir/opcode.h"
#include "partitioner/windowed_einsum_options.h"
#include "simulate/chip_spec.h"
#include "simulate/topology.h"

namespace gspmd::simulate {

// One loop the partitioner could emit (the fields of its WindowedEinsumCandidate), per device.
struct WindowedLoopCandidate {
  Opcode collective = Opcode::kAllGather;  // what the loop replaces: kAllGather or kReduceScatter
  // Each ring's devices in ring order: a ring step passes ring[j + 1] -> ring[j] (and
  // ring[j] -> ring[j + 1] too when bidirectional). The collective's groups are the rings.
  std::vector<std::vector<int64_t>> rings;
  bool bidirectional = false;
  bool unrolled = false;         // two ring steps per trip, one way (not with bidirectional)
  int64_t trips = 0;             // of the loop
  double bytes_per_trip = 0;     // sent per trip (both directions together when bidirectional,
                                 // both steps when unrolled)
  double flops_per_trip = 0;     // the trip's partial dots (two when bidirectional or unrolled)
  double dot_hbm_bytes_per_trip = 0;  // HBM bytes they read and write (0: count FLOPs only)
  // HBM bytes of the one dot the loop replaces (0: the trips' bytes in proportion to FLOPs).
  double native_dot_hbm_bytes = 0;
  // The collective stays for other users whatever this dot does: the loop must beat the dot
  // alone.
  bool collective_stays = false;
  double peeled_flops = 0;       // bidirectional: partial dots outside the loop
  double peeled_bytes = 0;       //   and the bytes sent alongside them (both directions)
  double collective_bytes = 0;   // the all-gather's result, the reduce-scatter's operand
  std::string element_type = "f32";   // the dot's operand type (a key of the chip's rates, or f32)
  std::string precision = "DEFAULT";  // its precision_config (f32 only)
  // Per trip besides the dots: update/accumulate, counter, condition (LoopCandidateOf: 4 when
  // unrolled, an update per step).
  int64_t loop_kernels = 3;
  // Grouped (WindowedEinsumCandidate::group): the all-gather among each of `pre_gather_groups`
  // before the loop, to `pre_gather_bytes` per device; the replaced collective's groups are
  // `collective_groups` (empty: the rings).
  std::vector<std::vector<int64_t>> pre_gather_groups;
  double pre_gather_bytes = 0;
  std::vector<std::vector<int64_t>> collective_groups;
};

struct WindowedLoopCost {
  std::string collective;  // "all-gather", "reduce-scatter"
  int64_t trips = 0;
  double native_s = 0;  // collective_s + dot_s
  double collective_s = 0;
  double dot_s = 0;     // the whole dot, one kernel
  double loop_s = 0;
  double dot_trip_s = 0;      // one trip's partial dots
  double permute_trip_s = 0;  // one trip's permutes (both steps when unrolled), latency included
  double permute_bandwidth_s = 0;
  double overhead_trip_s = 0;
  double peeled_s = 0;
  double pre_gather_s = 0;    // grouped: the all-gather before the loop (in loop_s)
  bool windowed_is_faster = false;  // loop_s < native_s
  // "loop 8 x (max(dot 5.26 ms, permute 1.62 ms) + 22.0 us) = 42.3 ms vs all-gather 11.3 ms +
  // dot 42.1 ms = 53.4 ms: windowed"
  std::string ToString() const;
};

WindowedLoopCost PriceWindowedLoop(const WindowedLoopCandidate& candidate, const ChipSpec& chip,
                                   const Topology& topology);

// The partitioner's candidate as PriceWindowedLoop reads it. `float_type`, when set, prices a
// floating-point dot, and the bytes it moves, as that type (gspmd simulate's --compute-type and
// --mixed-precision re-type the program after it is partitioned).
WindowedLoopCandidate LoopCandidateOf(const WindowedEinsumCandidate& candidate,
                                      std::optional<ElementType> float_type = std::nullopt);

// The partitioner's cost check from this chip and topology (`--windowed-einsum auto` with a
// chip): a candidate is windowed where PriceWindowedLoop finds its loop faster than the
// collective and the dot it replaces, and no faster than none of its alternatives (the same
// loop grouped otherwise).
WindowedEinsumCostCheck ChipWindowedCostCheck(const ChipSpec& chip, const Topology& topology,
                                              std::optional<ElementType> float_type = std::nullopt);

// One dot kernel of `flops` FLOPs moving `hbm_bytes`, as the simulator prices it (without tile
// use: windowed dots are large).
double DotKernelSeconds(double flops, double hbm_bytes, const std::string& element_type, const std::string& precision,
                        const ChipSpec& chip);

}  // namespace gspmd::simulate
