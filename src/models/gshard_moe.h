// The GShard MoE transformer's training step: a decoder LM whose feed-forward layer is a
// mixture of experts on every other layer, on a [data, expert] mesh.
#pragma once

#include <memory>

#include "ir/module.h"
#include "models/model_config.h"

namespace gspmd {

// Keys: the language-model keys, experts, expert_hidden, capacity_factor, groups,
// aux_loss_weight, routing, seed and the optimizer keys. Mesh axes data, expert.
ModelConfig GShardMoeConfig();

// Layers 1, 3, 5, ... have an MoE feed-forward layer (moe_layer.h), the others a dense MLP.
// The B*S tokens are cut into `groups` groups of B*S/groups tokens; each expert takes
// capacity = ceil(capacity_factor * 2 * B*S / (groups * experts)) tokens per group. The loss
// is the cross-entropy plus aux_loss_weight times the sum of the layers' auxiliary losses.
// Metrics: accuracy, aux_loss, dropped_tokens (assignments past capacity, all MoE layers) and
// dropped_fraction (of the assignments routed).
// Annotations: tokens and activations split over data and expert (every device holds its own
// groups); expert weights and the dispatched [E, G, C, M] tokens split E over expert and G over
// data, so dispatch and combine are all-to-alls within each expert row; the other weights are
// replicated (data parallel).
std::unique_ptr<Module> BuildGShardMoe(const ModelConfig& config);

// The expert capacity the model uses for `config`.
int64_t ExpertCapacity(const ModelConfig& config);

}  // namespace gspmd
