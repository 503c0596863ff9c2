// The loops of windowed einsum (dot_windowed.h), as dot_windowed.cpp hands them over once it
// has found a collective to replace and decided to: the ring they pass windows around and the
// while loops themselves (dot_windowed_loops.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "partitioner/handlers/dot_strategies.h"
#include "partitioner/op_context.h"

namespace gspmd::windowed {

// One operand's all-gather as the placement asks for it.
struct GatheredWindow {
  int64_t operand = 0;           // the gathered operand: 0 lhs, 1 rhs
  int64_t dim = 0;               // its gathered dim
  int64_t slot = 0;              // that dim's role slot (DotRoles)
  int64_t paired_dim = -1;       // the other operand's dim of the same slot (batch, contracting)
  std::vector<DeviceAxis> axes;  // the axes gathered over, major first
  int64_t trips = 1;             // devices along `axes` (N)
  AxisSharding held;             // the operand's layout as it is: the placement's plus `axes` on `dim`
  int64_t window_bytes = 0;      // per device, one window (the shard held before the all-gather)
  int64_t gathered_bytes = 0;    // per device, after the all-gather the loop replaces
  // Grouped (GroupedWindow): the minor axes of the gather, all-gathered before the loop (held
  // already has them gathered; `axes` are the rest, round whose rings the loop runs).
  std::vector<DeviceAxis> pre_gathered;
};

// The placement's partial sums resolved by a reduce-scatter onto one output dim: the partial
// axes become the minor axes of that dim in the wanted result.
struct ScatteredResult {
  int64_t dim = 0;               // the output dim scattered
  std::vector<DeviceAxis> axes;  // the axes splitting it after the scatter, major first
  int64_t trips = 1;             // devices along `axes` (N)
  int64_t bytes = 0;             // of the local result before the scatter, per device
};

// Each subgroup over `axes` (GroupsOverAxes order), its devices in folded ring order
// (FoldedRing over the axis index).
std::vector<std::vector<int64_t>> RingsOverAxes(const std::vector<DeviceAxis>& axes, int64_t num_devices);

// The loop that replaces the all-gather of `window` before the dot: `held` is the operand as
// held (laid out as window.held), `other` the other operand as placed; returns the local
// result (laid out as the placement's output, shape `local_shape`). `unrolled` (ignored when
// bidirectional): two ring steps per trip (WindowedEinsumUnroll).
Instruction* EmitGatherLoop(OpContext& op, const DotRoles& roles, const GatheredWindow& window, Instruction* held,
                            Instruction* other, const Shape& local_shape, bool bidirectional, bool unrolled);

// The loop that replaces the dot and the reduce-scatter of its partial sums: `lhs` and `rhs`
// as placed, `local_shape` the local result before the scatter; returns the scattered result.
Instruction* EmitScatterLoop(OpContext& op, const DotRoles& roles, const ScatteredResult& scatter, Instruction* lhs,
                             Instruction* rhs, const Shape& local_shape, bool bidirectional, bool unrolled);

}  // namespace gspmd::windowed
