// Activation checkpointing for builder-written training steps: the backward pass recomputes
// each region's (layer's) inner values from the values kept at its boundary instead of keeping
// them alive from the forward pass, as jax.checkpoint does for each layer.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "ir/hlo_builder.h"

namespace gspmd {

struct RematStats {
  int64_t regions = 0;  // regions the backward pass recomputes from
  int64_t cloned = 0;   // forward instructions recomputed (after dead-code removal)
};

// The instructions of `hlo`'s computation before `forward_end` (an index into its instruction
// list) are the forward pass, the rest the backward pass. `region_of` names a forward
// instruction's region ("" for none; parameters never belong to one). A region's value is kept
// when a forward instruction outside the region uses it (the region's output, such as the
// residual stream), when it reads random state, or when it has side effects; its other values
// that the backward pass uses are recomputed. Per region, the values the recomputation reads
// go through one opt-barrier (so that no pass merges the recomputation with the original), and
// the region's needed instructions are cloned after it with op_name "remat(OP_NAME)"
// (`gspmd simulate` counts them as recomputation). Each clone is placed just before its first
// user, so a layer's activations live only while its own gradient is computed. The results
// are unchanged: the clones compute exactly what the originals did.
RematStats RematerializeRegions(HloBuilder& hlo, size_t forward_end,
                                const std::function<std::string(const Instruction&)>& region_of);

// The region of a builder-written model's instruction: the first component of its op_name
// when that reads "layer_N" ("layer_3/mlp" -> "layer_3"), else "".
std::string LayerRegionOf(const Instruction& instruction);

}  // namespace gspmd
