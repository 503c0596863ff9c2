// A GShard mixture-of-experts layer written with the builder: top-2 gating, einsum
// dispatch/combine with expert capacity, experts split over the mesh (the all-to-all pattern).
#pragma once

#include <memory>

#include "ir/module.h"
#include "models/model_options.h"

namespace gspmd {

// Entry parameters: x [groups, group_size, d_model] (groups over 'expert'), wg [d_model, experts]
// (replicated), wi [experts, d_model, expert_hidden], wo [experts, expert_hidden, d_model]
// (experts over 'expert'). Top-2 gating per token with capacity `capacity` per expert and group
// (tokens past it are dropped); expert inputs [experts, groups, capacity, d_model] are split
// over 'expert' by experts, so dispatch and combine move tokens between the group split and the
// expert split. Result y [groups, group_size, d_model], groups over 'expert'.
// Mesh: expert_parallel devices, one axis 'expert'.
std::unique_ptr<Module> BuildMoe(const ModelOptions& options);

}  // namespace gspmd
