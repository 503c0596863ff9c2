// api::Model: a model's training step by name or preset, with key settings and a mesh, as
// `gspmd model` writes it and `gspmd.model` returns it.
#include "api/gspmd.h"
#include "builder/remove_annotations.h"
#include "models/model_catalog.h"

namespace gspmd::api {
namespace {

const ModelEntry& EntryFor(const ModelOptions& options) {
  if (!options.preset.empty()) return FindTrainingModel(FindModelPreset(options.preset).model);
  return FindTrainingModel(options.name);
}

}  // namespace

ModelConfig ModelConfigFor(const ModelOptions& options) {
  if (options.name.empty() == options.preset.empty())
    GSPMD_USER_ERROR("gspmd model: error: expected a model NAME or --preset NAME (see gspmd model --list)");
  ModelConfig config =
      options.preset.empty() ? EntryFor(options).config() : PresetConfig(FindModelPreset(options.preset));
  for (const std::string& setting : options.settings) config.SetAssignment(setting);
  if (!options.mesh.empty()) config.SetMesh(options.mesh);
  return config;
}

Program Model(const ModelOptions& options) {
  const ModelConfig config = ModelConfigFor(options);
  const std::string name = options.preset.empty() ? options.name : options.preset;
  std::unique_ptr<Module> module = EntryFor(options).build(config);
  // sharding=none: the step exactly as written, with no sharding anywhere (what autoshard takes).
  if (config.Choice("sharding") == "none") RemoveShardingAnnotations(*module);
  return Program::FromModule(std::move(module), "<model " + name + ">");
}

}  // namespace gspmd::api
