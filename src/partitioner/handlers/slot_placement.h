// Chooses where the device axes go on an op whose dims fall into "slots" (dims of different
// arrays that must be split alike, e.g. a convolution's batch dim on the input and the
// result), by the estimated bytes of the operand reshards, extra communication (halos) and
// the result reshard including partial sums. Used by the convolution, gather and scatter
// handlers.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "partitioner/device_axes.h"
#include "partitioner/spmd_context.h"

namespace gspmd {

// One array of the op. slot_of_dim[d] is the slot of dim d, or -1 for a dim that must stay
// whole on every device. `layout` is how an input is laid out now, or how the result is wanted.
struct SlotTensor {
  std::vector<int64_t> dims;
  int64_t element_bytes = 4;
  AxisSharding layout;
  std::vector<int64_t> slot_of_dim;
};

// Slots that the result has no dim for are partial slots: axes placed there leave partial
// results, reduced over those axes after the local op.
//   extra_cost(slot_axes): the bytes of op-specific communication for a candidate (halo
//   exchanges), or nullopt to reject it (e.g. a group count not divisible by the tiles).
struct SlotProblem {
  int64_t slot_count = 0;
  std::vector<int64_t> slot_extent;  // the size of each slot's dims (local-work tie-break)
  std::vector<SlotTensor> inputs;
  SlotTensor result;
  std::function<std::optional<double>(const std::vector<std::vector<DeviceAxis>>&)> extra_cost;
};

// The chosen layouts: inputs[i] for input i, the local result (partial axes in it appear as
// replicated axes), the partial axes, and the axes on every slot (major first).
struct SlotPlacement {
  std::vector<AxisSharding> inputs;
  AxisSharding result;
  std::vector<DeviceAxis> partial;
  std::vector<std::vector<DeviceAxis>> slot_axes;
  double cost_bytes = 0;
};

// The cheapest placement among candidates built from the slots every axis has in the inputs
// and the result (or replicated); nullopt when the layouts cannot be written over common axes,
// their manual axes differ, or every candidate is rejected.
std::optional<SlotPlacement> ChooseSlotPlacement(SpmdContext& context, const SlotProblem& problem);

// The number of tiles `axes` make.
int64_t TileCountOf(const std::vector<DeviceAxis>& axes);

}  // namespace gspmd
