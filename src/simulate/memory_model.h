// Peak memory of one device, split into parameters, optimizer state, batch inputs and
// activations, and whether it fits the chip.
//
// The peak is `gspmd report`'s live-range peak (entry parameters live throughout, values from
// definition to last use, called computations add their own peak), except that an output
// which aliases an input is written into that input's buffer and takes no bytes of its own.
// Aliases come from the module's gspmd.carry attribute ("OUT:IN,..." : root tuple element
// OUT becomes parameter IN on the next step, as `gspmd model` writes) or its
// input_output_alias attribute. Roles come from each entry parameter's gspmd.role frontend
// attribute ("param", "opt_state", "batch"); without one a parameter that an output aliases
// counts as a parameter (weights and state the step updates) and any other as a batch input.
// Activations are everything else live at the peak.
#pragma once

#include <cstdint>
#include <string>

#include "ir/module.h"

namespace gspmd::simulate {

struct MemoryEstimate {
  int64_t peak_bytes = 0;              // with aliased outputs in their inputs' buffers
  int64_t live_range_peak_bytes = 0;   // without: equal to `gspmd report`'s peak_bytes_per_device
  int64_t parameter_bytes = 0;         // at the peak
  int64_t optimizer_state_bytes = 0;
  int64_t batch_bytes = 0;
  int64_t activation_bytes = 0;
  int64_t aliased_outputs = 0;
  std::string roles_from;              // "gspmd.role", "aliases", "none"
  int64_t capacity_bytes = 0;
  bool fits = true;
};

MemoryEstimate EstimateMemory(const Module& per_device, int64_t capacity_bytes);

}  // namespace gspmd::simulate
