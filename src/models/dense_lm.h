// The dense decoder-only language model's training step, sharded by one of four recipes on
// an [x, y] mesh (the GSPMD paper's 2-D recipe by default).
#pragma once

#include <memory>

#include "ir/module.h"
#include "models/model_config.h"

namespace gspmd {

// Keys: layers, d_model, heads, head_dim, d_ff, vocab, batch, seq, sharding, task and the
// optimizer keys (optimizer.h). Mesh axes x, y.
ModelConfig DenseLmConfig();

// Token embedding [V, M] plus learned positions [S, M], `layers`
// pre-LayerNorm layers of causal multi-head attention and an MLP, a final LayerNorm,
// vocabulary logits and softmax cross-entropy. sharding=
//   2d        the GSPMD paper's recipe: activations [B,S,M] B on x, M on y; FFN weights [M,H]
//             M on x, H on y; attention weights [M,heads,D] M on x, heads on y; the
//             vocabulary on y for the embedding and the logits;
//   megatron  1-D Megatron: batch on x; heads, FFN hidden and vocabulary on y;
//   data      data parallel: batch over x and y, weights replicated;
//   fsdp      batch over x and y, every weight (and its optimizer state) split over x and y
//             on its largest dim the mesh divides.
// Dims the mesh cannot split evenly are UserErrors naming the key.
std::unique_ptr<Module> BuildDenseLm(const ModelConfig& config);

}  // namespace gspmd
