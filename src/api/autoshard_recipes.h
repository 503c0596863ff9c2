// The standard hand recipes of a training step that `gspmd model` wrote (its gspmd.model and
// gspmd.config attributes say which model): what autoshard compares its plan with and refines.
// Internal to src/api/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/gspmd.h"

namespace gspmd::api::autoshard_internal {

struct RecipeProgram {
  std::string name;  // "sharding=2d opt_state_sharding=weight"
  Program program;   // the same step as the input, with the recipe's annotations
};

// Every recipe of the input's model on `mesh` that can be built there and has the input's
// parameters; none when the input is not a model's step. Axes named as the model's are taken
// by name (its other axes of size 1); otherwise they are renamed to the model's in order, a
// mesh with fewer axes getting leading axes of size 1.
std::vector<RecipeProgram> StandardRecipes(const Module& input, const Mesh& mesh);

// The input's model step rebuilt with `layers` layers and otherwise the same settings, mesh and
// annotations: a program whose costs rank meshes in a fraction of the time (identical layers
// cost alike). nullopt when the input is not a model step or has at most `layers` layers.
std::optional<Program> ShallowStep(const Module& input, int64_t layers);

// Recomputation as a plan decision: the same step rebuilt with remat=layer (the backward pass
// recomputes each layer's inner activations; every other setting, the mesh and the recorded
// annotations as before). nullopt when the step is not a model's, its model cannot recompute
// layers, or the step does already.
std::optional<Program> WithLayerRemat(const Module& step);
bool CanRematLayers(const Module& step);
// The step was written with remat=layer.
bool RecomputesLayers(const Module& step);

}  // namespace gspmd::api::autoshard_internal
