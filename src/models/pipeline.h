// A GSPMD-paper pipeline written with the builder: per-stage weights stacked on a stage dim
// split over the mesh, a while loop over microbatches that shifts activations one stage per
// iteration (a shift along the sharded dim: the partitioner's collective-permute).
#pragma once

#include <memory>

#include "ir/module.h"
#include "models/model_options.h"

namespace gspmd {

// Entry parameters: inputs [microbatches, microbatch_size, d_model] (replicated) and
// w [stages, d_model, d_model] (stages over 'stage'). Each stage computes relu(x w[stage]).
// Loop i = 0 .. microbatches + stages - 2 over a state [stages, microbatch_size, d_model]
// split over 'stage': state = stage_fn(concat(inputs[i], state[:-1])); the last stage's result
// is written to outputs[i - stages + 1]. Result: outputs [microbatches, microbatch_size,
// d_model]. Mesh: `stages` devices, one axis 'stage'. stages must be >= 2.
std::unique_ptr<Module> BuildPipeline(const ModelOptions& options);

// The same function without pipelining (each microbatch through every stage in turn), with the
// same parameters and result, unannotated: the reference a pipeline run must equal.
std::unique_ptr<Module> BuildSequentialStages(const ModelOptions& options);

}  // namespace gspmd
