// Peak memory of one device, split into parameters, optimizer state, batch inputs and
// activations, and whether it fits the chip.
//
// The peak is `gspmd report`'s live-range peak (entry parameters live throughout, values from
// definition to last use, called computations add their own peak), except that an output
// which aliases an input is written into that input's buffer and takes no bytes of its own,
// and that loops and updates run in place as in XLA: a while loop's state takes no new buffer
// for the elements its body passes through unchanged, a dynamic-update-slice whose buffer
// dies there writes into it, and a dot written only into such a slice takes no buffer.
// Aliases come from the module's gspmd.carry attribute ("OUT:IN,..." : root tuple element
// OUT becomes parameter IN on the next step, as `gspmd model` writes) or its
// input_output_alias attribute. Roles come from each entry parameter's gspmd.role frontend
// attribute ("param", "opt_state", "batch"); without one a parameter that an output aliases
// counts as a parameter (weights and state the step updates) and any other as a batch input.
// Activations are everything else live at the peak.
//
// When the peak exceeds the chip's memory, XLA rematerializes; so does the estimate
// (remat_model.h), unless told not to: the peak is then the one after rematerialization and
// the recomputation's FLOPs and time are reported.
#pragma once

#include <cstdint>
#include <string>

#include "ir/module.h"
#include "simulate/remat_model.h"

namespace gspmd::simulate {

struct MemoryEstimate {
  int64_t peak_bytes = 0;              // with aliased outputs in their inputs' buffers, after rematerialization
  int64_t peak_without_remat_bytes = 0;
  int64_t live_range_peak_bytes = 0;   // without either: equal to `gspmd report`'s peak_bytes_per_device
  int64_t parameter_bytes = 0;         // at the peak
  int64_t optimizer_state_bytes = 0;
  int64_t batch_bytes = 0;
  int64_t activation_bytes = 0;
  int64_t aliased_outputs = 0;
  std::string roles_from;              // "gspmd.role", "aliases", "none"
  int64_t capacity_bytes = 0;
  bool fits = true;

  bool rematerialized = false;  // the estimate dropped and recomputed values to fit
  int64_t recomputations = 0;
  double remat_flops = 0;
  double remat_matrix_flops = 0;
  double remat_seconds = 0;
};

struct MemoryOptions {
  bool rematerialize = true;
  RecomputeSeconds recompute_seconds;  // required when rematerialize
  RecomputeCounts recompute_counts;    // optional: lets whole loops be recomputed (remat_model.h)
};

MemoryEstimate EstimateMemory(const Module& per_device, int64_t capacity_bytes, const MemoryOptions& options = {false, {}});

}  // namespace gspmd::simulate
