// The training-step models `gspmd model` writes, by name, and the paper-sized presets.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/module.h"
#include "models/model_config.h"

namespace gspmd {

struct ModelEntry {
  std::string name;
  std::string summary;
  ModelConfig (*config)();
  std::unique_ptr<Module> (*build)(const ModelConfig&);
};

// dense_lm, gshard_moe, pipelined_lm, in that order.
const std::vector<ModelEntry>& TrainingModels();
// The model named `name`; an unknown name is a UserError listing the known ones.
const ModelEntry& FindTrainingModel(const std::string& name);

// A named full-size configuration: a model plus --set values and a mesh.
struct ModelPreset {
  std::string name;
  std::string model;
  std::string summary;
  std::vector<std::string> settings;  // "KEY=VALUE"
  std::string mesh;                   // "AXIS=N,..."
};
const std::vector<ModelPreset>& ModelPresets();
const ModelPreset& FindModelPreset(const std::string& name);

// The model's default config with a preset's settings and mesh applied.
ModelConfig PresetConfig(const ModelPreset& preset);

}  // namespace gspmd
