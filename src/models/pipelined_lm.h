// The pipelined transformer's training step (the GSPMD paper's pipelining wrapper): layers
// stacked into stage-sharded weights and a loop that shifts microbatches one stage per
// iteration, on a [stage, data, model] mesh.
#pragma once

#include <memory>

#include "ir/module.h"
#include "models/model_config.h"

namespace gspmd {

// Keys: the language-model keys, microbatches, schedule and the optimizer keys. Mesh axes
// stage, data, model (model defaults to 1).
ModelConfig PipelinedLmConfig();

// The decoder LM of dense_lm whose P * K layers (P = the stage axis size, K = layers / P)
// have weights stacked [P, K, ...], P split over 'stage' (heads and the MLP hidden over
// 'model', Megatron-style). The batch is cut into `microbatches` microbatches (microbatch n
// holds the sequences b with b mod microbatches == n; the data axis splits each).
// schedule=pipelined: a forward while loop of microbatches + P - 1 iterations; in iteration
// i stage p runs microbatch i - p on the [P, mb, S, M] state, which then shifts one stage
// (a collective-permute); stage 0 takes microbatch i. Each iteration's stage inputs are
// saved; a backward loop walks the iterations in reverse, recomputing each stage and taking
// its vector-Jacobian product, shifting cotangents the other way. schedule=sequential: the
// same layers one after another with the same weights and batch: the same loss and
// gradients, for reference.
std::unique_ptr<Module> BuildPipelinedLm(const ModelConfig& config);

}  // namespace gspmd
