// Windowed einsum (collective matmul): a dot whose placement all-gathers one operand over some
// device axes (or reduce-scatters its partial sums) runs instead as a loop over the devices of
// those axes, each trip a partial dot while the windows (or accumulators) move one step round a
// ring of those devices (both ways round when bidirectional: WindowedEinsumDirection; two ring
// steps per trip when unrolled: WindowedEinsumUnroll).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "partitioner/handlers/dot_strategies.h"
#include "partitioner/op_context.h"

namespace gspmd {

// The folded ring over n axis positions, in ring order: 0, 2, 4, ..., (last even), (last odd),
// ..., 5, 3, 1. Every two ring neighbours (the last and the first too) are at most 2 axis
// positions apart, so a ring step costs at most 2 hops on a line of chips as on a torus. The
// loops pass windows and accumulators around it (dot_windowed_loops.cpp).
std::vector<int64_t> FoldedRing(int64_t n);

// Operand `i` of the dot resharded to `layout`, with the padding of its uneven contracting
// dims zeroed (what the dot handler feeds its local dot).
using PrepareDotOperand = std::function<Instruction*(int64_t i, const AxisSharding& layout)>;

// The local dot of `placement` (laid out as placement.out, its partial axes still pending), as
// a windowed loop instead of an all-gather followed by one dot; nullptr when the options say
// no, when the placement's operand reshards are not one all-gather over one dim (batch, free
// or contracting) with even windows or windows that make the dim whole, or when the options
// prefer the reduce-scatter loop of WindowedScatteredDot for this dot (the caller then tries
// that, and else takes the ordinary path). Among several candidates (either operand, the
// result's reduce-scatter) the one replacing the largest collective that the options accept
// wins (WindowedEinsumOptions::cost_check). With a cost check, a gathered window is also offered
// grouped (WindowedEinsumCandidate::group): all-gathered among its minor devices first, then
// looped round rings of the rest with windows of several shards.
//
//   %x = f32[8,16] (rows split 4 ways over the axis)   %w = f32[16,32] (replicated)
//   ordinary:  all-gather(%x) -> f32[32,16]; dot -> f32[32,32]
//   windowed:  while (i < 4) { r[k rows] = dot(window, w); window = permute(window) }
// where the device at ring position p holds window k = FoldedRing(4)[(p + i) % 4] on trip i.
Instruction* WindowedLocalDot(OpContext& op, const DotProblem& problem, const DotPlacement& placement,
                              const PrepareDotOperand& prepare);

// The dot's result, when the placement leaves partial sums that the wanted sharding resolves
// with one reduce-scatter onto an output dim (evenly): a loop of N trips passing the
// accumulator of one output chunk around while each device adds its partial dot of that chunk.
// nullopt when the options say no (or chose WindowedLocalDot's all-gather loop) or the
// resolution is anything else.
//
//   %x = f32[8,16] (columns split 4 ways)   %w = f32[16,32] (rows split 4 ways)   result {devices=[1,4]}
//   ordinary:  dot -> f32[8,32] partial; reduce-scatter -> f32[8,8]
//   windowed:  while (i < 4) { acc = permute(acc) + dot(x, w[:, chunk k]) }
// where k = FoldedRing(4)[(p + i + 1) % 4] at ring position p: the last trip adds its own chunk.
std::optional<PartitionedValue> WindowedScatteredDot(OpContext& op, const DotProblem& problem,
                                                     const DotPlacement& placement, const PrepareDotOperand& prepare);

}  // namespace gspmd
