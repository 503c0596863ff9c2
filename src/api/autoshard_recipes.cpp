// StandardRecipes: a model step's hand recipes rebuilt on a searched mesh.
#include "api/autoshard_recipes.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "ir/computation.h"
#include "models/model_catalog.h"
#include "models/step_attributes.h"
#include "runtime/spmd/like_module.h"

namespace gspmd::api::autoshard_internal {
namespace {

std::vector<std::string> RecipeNames(const std::string& model) {
  if (model == "dense_lm") return {"2d", "megatron", "data", "fsdp"};
  if (model == "gshard_moe") return {"expert"};
  if (model == "pipelined_lm") return {"stage"};
  return {};
}

bool SameParameters(const Module& a, const Module& b) {
  const auto& pa = a.entry()->parameters();
  const auto& pb = b.entry()->parameters();
  if (pa.size() != pb.size()) return false;
  for (size_t i = 0; i < pa.size(); ++i)
    if (!(pa[i]->shape() == pb[i]->shape()) || pa[i]->name() != pb[i]->name()) return false;
  return true;
}

// The settings of the step's gspmd.config, without its mesh and those `drop` names.
std::vector<std::string> StepSettings(const std::string& config, const std::vector<std::string>& drop) {
  std::vector<std::string> settings;
  std::istringstream words(config);
  for (std::string word; words >> word;) {
    const std::string key = word.substr(0, word.find('='));
    if (key == "mesh" || std::find(drop.begin(), drop.end(), key) != drop.end()) continue;
    settings.push_back(word);
  }
  return settings;
}

std::string StepMesh(const std::string& config) {
  const size_t at = config.rfind("mesh=");
  return at == std::string::npos ? "" : config.substr(at + 5);
}

}  // namespace

std::optional<Program> ShallowStep(const Module& input, int64_t layers) {
  const std::string model = ModuleFrontendAttribute(input, step_attributes::kModel);
  const std::string config = ModuleFrontendAttribute(input, step_attributes::kConfig);
  if (RecipeNames(model).empty() || config.empty()) return std::nullopt;
  std::vector<std::string> settings = StepSettings(config, {"layers"});
  const size_t at = config.find("layers=");
  if (at == std::string::npos || std::atoll(config.c_str() + at + 7) <= layers) return std::nullopt;
  settings.push_back("layers=" + std::to_string(layers));
  try {
    return Model(ModelOptions{model, "", settings, StepMesh(config)});
  } catch (const UserError&) {
    return std::nullopt;
  }
}

std::vector<RecipeProgram> StandardRecipes(const Module& input, const Mesh& mesh) {
  const std::string model = ModuleFrontendAttribute(input, step_attributes::kModel);
  const std::string config = ModuleFrontendAttribute(input, step_attributes::kConfig);
  const std::vector<std::string> recipes = RecipeNames(model);
  if (recipes.empty() || config.empty()) return {};
  // The model's mesh axes, and the searched mesh's sizes on them.
  const Mesh model_mesh = FindTrainingModel(model).config().mesh();
  if (mesh.axes.size() > model_mesh.axes.size()) return {};
  const size_t pad = model_mesh.axes.size() - mesh.axes.size();
  std::string mesh_text;
  for (size_t a = 0; a < model_mesh.axes.size(); ++a)
    mesh_text += (a > 0 ? "," : "") + model_mesh.axes[a].name + "=" +
                 std::to_string(a < pad ? 1 : mesh.axes[a - pad].size);
  // The input's settings, without its own recipe.
  const std::vector<std::string> settings = StepSettings(config, {"sharding", "opt_state_sharding"});
  std::vector<RecipeProgram> out;
  for (const std::string& recipe : recipes) {
    for (const char* state : {"weight", "data"}) {
      ModelOptions options;
      options.name = model;
      options.settings = settings;
      options.settings.push_back("sharding=" + recipe);
      options.settings.push_back(std::string("opt_state_sharding=") + state);
      options.mesh = mesh_text;
      try {
        Program program = Model(options);
        if (!SameParameters(program.module(), input)) continue;
        out.push_back({"sharding=" + recipe + " opt_state_sharding=" + state, std::move(program)});
      } catch (const UserError&) {
        // The recipe does not divide this mesh's axes: not a recipe here.
      }
    }
  }
  return out;
}

}  // namespace gspmd::api::autoshard_internal
