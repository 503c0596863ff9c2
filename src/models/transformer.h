// A decoder-only transformer (attention + MLP per layer) written with the builder, annotated
// Megatron-style with mesh_split over a (data, model) mesh; optionally a whole training step.
#pragma once

#include <memory>

#include "ir/module.h"
#include "models/model_options.h"

namespace gspmd {

// Entry parameters: x, y [batch, seq, d_model] (split over 'data'), then per layer
//   ln1 [d_model], wq wk wv [d_model, heads, head_dim] (heads over 'model'),
//   wo [heads, head_dim, d_model] (heads over 'model'), ln2 [d_model],
//   w1 [d_model, d_ff] (d_ff over 'model'), w2 [d_ff, d_model] (d_ff over 'model').
// Each layer: h += attention(layer_norm(h)) (causal softmax), h += w2 relu(w1 layer_norm(h)),
// with the layer input annotated as split over 'data'.
// options.train: the result is (loss = mean((h - y)^2), every weight - learning_rate * grad),
// with the weights' shardings as result shardings (like the corpus transformer_train case);
// otherwise the result is h, split over 'data'.
// Mesh: data_parallel x model_parallel devices, iota order.
std::unique_ptr<Module> BuildTransformer(const ModelOptions& options);

}  // namespace gspmd
