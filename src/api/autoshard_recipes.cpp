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

// A key's choices in the model's configuration (none when the model or the key is unknown).
std::vector<std::string> KeyChoices(const std::string& model, const std::string& key) {
  for (const ModelEntry& entry : TrainingModels()) {
    if (entry.name != model) continue;
    const ModelConfig config = entry.config();  // made on each call: keep it while reading its keys
    for (const ModelKey& k : config.keys())
      if (k.name == key) return k.choices;
  }
  return {};
}

// The model's recipes: its `sharding` choices but "none".
std::vector<std::string> RecipeNames(const std::string& model) {
  std::vector<std::string> names = KeyChoices(model, "sharding");
  names.erase(std::remove(names.begin(), names.end(), "none"), names.end());
  return names;
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
  // Axes named as the model's keep their names (the others are 1); else in order, the
  // missing leading ones 1.
  bool by_name = true;
  for (const Mesh::Axis& axis : mesh.axes) by_name = by_name && model_mesh.AxisIndex(axis.name) >= 0;
  const size_t pad = model_mesh.axes.size() - mesh.axes.size();
  std::string mesh_text;
  for (size_t a = 0; a < model_mesh.axes.size(); ++a) {
    const std::string& name = model_mesh.axes[a].name;
    const int64_t named = mesh.AxisIndex(name);
    const int64_t size = by_name ? (named >= 0 ? mesh.axes[named].size : 1) : (a < pad ? 1 : mesh.axes[a - pad].size);
    mesh_text += (a > 0 ? "," : "") + name + "=" + std::to_string(size);
  }
  // The input's settings, without its own recipe.
  const std::vector<std::string> settings = StepSettings(config, {"sharding", "opt_state_sharding"});
  std::vector<RecipeProgram> out;
  for (const std::string& recipe : recipes) {
    for (const std::string& state : KeyChoices(model, "opt_state_sharding")) {
      ModelOptions options;
      options.name = model;
      options.settings = settings;
      options.settings.push_back("sharding=" + recipe);
      options.settings.push_back("opt_state_sharding=" + state);
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

bool CanRematLayers(const Module& step) {
  const std::string model = ModuleFrontendAttribute(step, step_attributes::kModel);
  const std::string config = ModuleFrontendAttribute(step, step_attributes::kConfig);
  const std::vector<std::string> choices = KeyChoices(model, "remat");
  if (config.empty() || std::find(choices.begin(), choices.end(), "layer") == choices.end()) return false;
  const std::vector<std::string> settings = StepSettings(config, {});
  return std::find(settings.begin(), settings.end(), "remat=layer") == settings.end();
}

bool RecomputesLayers(const Module& step) {
  const std::vector<std::string> settings = StepSettings(ModuleFrontendAttribute(step, step_attributes::kConfig), {});
  return std::find(settings.begin(), settings.end(), "remat=layer") != settings.end();
}

std::optional<Program> WithLayerRemat(const Module& step) {
  if (!CanRematLayers(step)) return std::nullopt;
  const std::string config = ModuleFrontendAttribute(step, step_attributes::kConfig);
  std::vector<std::string> settings = StepSettings(config, {"remat"});
  settings.push_back("remat=layer");
  try {
    Program program = Model(ModelOptions{ModuleFrontendAttribute(step, step_attributes::kModel), "", settings, StepMesh(config)});
    if (!SameParameters(program.module(), step)) return std::nullopt;
    return program;
  } catch (const UserError&) {
    return std::nullopt;
  }
}

}  // namespace gspmd::api::autoshard_internal
