// Splitting constants between a manual region and the code around it before propagation.
#pragma once

#include <cstdint>

#include "ir/module.h"

namespace gspmd::propagation {

// A constant expression (a constant or iota, or broadcasts, reshapes, transposes, converts and
// copies of them, with no sharding written) used both inside a manual region (after an
// SPMDFullToShardShape, or next to a value annotated manual) and outside one gets a copy of
// its own for the manual uses, as XLA's constant splitter does; each copy then takes its own
// users' sharding, so no replicated user gets a manual operand. The copies are named
// "<name>.manual" and placed after the originals. Returns the number of copies made.
int64_t SplitConstantsAtManualBoundaries(Module& module);

}  // namespace gspmd::propagation
