// Chooses how to partition a dot: which device axes sit on the batch, free and contracting
// dims of the local dot, by the estimated bytes of the operand reshards, the partial-sum
// resolution and the result reshard.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/attributes.h"
#include "partitioner/device_axes.h"
#include "partitioner/spmd_context.h"

namespace gspmd {

// The dims of a dot grouped by role. Output dims are batch dims (in lhs_batch order), then
// lhs free dims, then rhs free dims, each in increasing operand-dim order. Every role slot
// has an index: batch k -> k, lhs free i -> B + i, rhs free j -> B + LF + j (so output dim o
// is slot o), contracting c -> B + LF + RF + c, and the replicated slot is the last one.
struct DotRoles {
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
  std::vector<int64_t> lhs_free, rhs_free;
  std::vector<int64_t> lhs_slot, rhs_slot;  // slot of each operand dim

  int64_t batch_count() const { return static_cast<int64_t>(lhs_batch.size()); }
  int64_t output_rank() const {
    return static_cast<int64_t>(lhs_batch.size() + lhs_free.size() + rhs_free.size());
  }
  int64_t contracting_slot(int64_t c) const { return output_rank() + c; }
  int64_t replicated_slot() const { return output_rank() + static_cast<int64_t>(lhs_contracting.size()); }
  bool IsContractingSlot(int64_t slot) const { return slot >= output_rank() && slot < replicated_slot(); }
  // The operand dim a slot lives on, or -1 (rhs free slots have no lhs dim, and so on).
  int64_t LhsDimOfSlot(int64_t slot) const;
  int64_t RhsDimOfSlot(int64_t slot) const;
};

// Roles of `dims` for operands of the given ranks. UserError when the numbers are invalid
// (out of range, repeated, or batch/contracting lists of different lengths).
DotRoles MakeDotRoles(const DotDimensionNumbers& dims, int64_t lhs_rank, int64_t rhs_rank);

// What the chooser needs: shapes, element sizes, and the three layouts as device axes
// (operands as they are, output as it is wanted).
struct DotProblem {
  DotRoles roles;
  std::vector<int64_t> lhs_dims, rhs_dims, out_dims;
  int64_t lhs_element_bytes = 4, rhs_element_bytes = 4, out_element_bytes = 4;
  AxisSharding lhs, rhs, out;
};

// The chosen local dot: operand layouts, the layout of the local result (partial axes appear
// in it as replicated axes), the partial-sum axes, and the estimate that won.
struct DotPlacement {
  AxisSharding lhs, rhs, out;
  std::vector<DeviceAxis> partial;
  double cost_bytes = 0;
  double local_flops = 0;
  int64_t steps = 0;
};

// The cheapest placement among the candidates built from where the operands and the output
// have their axes; nullopt when the three layouts cannot be written over common axes or
// their manual axes differ.
std::optional<DotPlacement> ChooseDotPlacement(SpmdContext& context, const DotProblem& problem);

// The placement the dot handler chooses for `dot` with operands laid out as `lhs` and `rhs` and
// the result wanted as `out` (which may have unreduced axes): its partial axes are empty when
// it gathers the contracting dims; nullopt when it does not handle the dot.
std::optional<DotPlacement> DotPlacementFor(SpmdContext& context, const Instruction& dot, const Sharding& lhs,
                                            const Sharding& rhs, const Sharding& out);

}  // namespace gspmd
