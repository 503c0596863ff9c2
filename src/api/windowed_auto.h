// `--windowed-einsum auto` with a chip's model: which windowed-einsum loops a simulated step keeps.
//
// Each dot's candidate loop is first priced on its own against the collective and the dot it
// would replace (simulate::ChipWindowedCostCheck). That price cannot see what else the native
// collective would have overlapped, whether another dot keeps the gather anyway, or the memory,
// so the step is then simulated as a whole: without loops, with the loops the price keeps,
// and (searching) with each kind of loop (one dot shape, one collective) added or dropped in
// turn, largest first, keeping a change when the step gets faster and its peak memory still
// fits (when it did without loops) within 5% of the peak without loops. Last, kinds whose dots
// read one gathered operand (a layer's activation, gathered for its dot and for its weight
// gradient) are added together: alone each keeps the gather for the other and cannot pay,
// together they leave nothing to gather, and they are priced so. The result is never slower
// than `off`, and says what it tried.
#pragma once

#include <functional>
#include <optional>

#include "api/gspmd.h"
#include "ir/element_type.h"
#include "simulate/chip_spec.h"
#include "simulate/simulator.h"

namespace gspmd::api {

struct WindowedAutoChoice {
  simulate::SimulationReport report;  // the chosen step, its windowed_einsum saying what was tried
  // Partitioning with this as the cost check (mode auto) gives the chosen program again.
  WindowedEinsumCostCheck check;
};

// `run` re-types (--compute-type, --mixed-precision) and simulates one per-device program;
// `float_type` is that re-typing, for the prices.
WindowedAutoChoice ChooseWindowedLoops(Program program, const SimulateOptions& options, const BoundaryOptions& boundary,
                                       const simulate::ChipSpec& chip, std::optional<ElementType> float_type,
                                       const std::function<simulate::SimulationReport(Module&)>& run);

}  // namespace gspmd::api
