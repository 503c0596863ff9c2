// Reshards of partial sums (unreduced shardings): a value whose pieces on some devices still
// have to be reduced, moved to a layout that may keep part of that reduction pending.
#pragma once

#include <optional>
#include <vector>

#include "ir/hlo_builder.h"
#include "partitioner/reshard_plan.h"
#include "partitioner/spmd_context.h"

namespace gspmd {

// A reshard problem whose source or target has unreduced axes, rewritten as one the planner
// solves: the source's unreduced axes join the partial axes (to reduce); the target's
// unreduced axes stay pending, so they become manual axes on both sides (every digit of them
// reshards its own pieces, and nothing is reduced over them). A target unreduced axis the
// source holds whole is masked first (`mask_axes`): one device of its group keeps the value,
// the others the reduction's identity, so their sum is the value again (no communication).
// nullopt when a target unreduced axis splits a dim of the source or is manual there.
struct PartialReshard {
  ReshardProblem problem;
  std::vector<DeviceAxis> mask_axes;
};
std::optional<PartialReshard> PlanKeepingUnreducedAxes(const ReshardProblem& problem);

// The reduction's identity for an element type: 0 for a sum, 1 for a product, the lowest
// value for a max, the highest for a min, all-ones for and, zero for or.
Instruction* ReductionIdentity(HloBuilder& b, ElementType type, Sharding::Reduction reduction);

// The collective reduction of an unreduced sharding (kAdd for kSum, ...), and back.
Opcode ReductionOpcode(Sharding::Reduction reduction);
std::optional<Sharding::Reduction> ReductionOfOpcode(Opcode opcode);

// `local` with only the devices whose digits of `axes` are all 0 keeping their value; the
// others hold `reduction`'s identity. Turns a whole value into a partial one over `axes`.
Instruction* MaskToOneDevicePerGroup(HloBuilder& b, SpmdContext& context, Instruction* local,
                                     const std::vector<DeviceAxis>& axes, Sharding::Reduction reduction);

}  // namespace gspmd
