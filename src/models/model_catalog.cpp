// The model catalog: training-step models by name, and presets at the papers' sizes.
#include "models/model_catalog.h"

#include "models/dense_lm.h"
#include "models/gshard_moe.h"
#include "models/pipelined_lm.h"
#include "support/diagnostic.h"

namespace gspmd {

const std::vector<ModelEntry>& TrainingModels() {
  static const std::vector<ModelEntry> models = {
      {"dense_lm", "dense decoder LM (GSPMD 2-D recipe; megatron, data, fsdp)", &DenseLmConfig, &BuildDenseLm},
      {"gshard_moe", "GShard MoE transformer (top-2 experts on every other layer)", &GShardMoeConfig, &BuildGShardMoe},
      {"pipelined_lm", "pipelined transformer (GSPMD's stage-sharded layers and microbatch loop)", &PipelinedLmConfig,
       &BuildPipelinedLm},
  };
  return models;
}

const ModelEntry& FindTrainingModel(const std::string& name) {
  std::string known;
  for (const ModelEntry& model : TrainingModels()) {
    if (model.name == name) return model;
    known += (known.empty() ? "" : ", ") + model.name;
  }
  GSPMD_USER_ERROR("unknown model '", name, "' (known: ", known, "; presets: gspmd model --list)");
}

namespace {

// GShard Table 3: d_model 1024, expert hidden 8192, 16 heads of 128, MoE on every other
// layer, top-2, as many experts as cores, f32, Adafactor (GShard appendix A.2); 1M tokens per
// batch (4M with 2048 experts). GShard's model is an encoder-decoder whose batch counts source
// and target tokens, each passing through half of the layers (6 of 12: encoder or decoder);
// this decoder-only stand-in does the same work per step by running every layer on half of the
// batch's tokens (0.5M; 2M), in sequences of 256 (M4's sentence pairs are short) and groups of
// 1024 tokens (capacity 2N/(G E): 16, 4 and 1 slots). docs/simulate.md has the derivation.
ModelPreset GShardRow(int64_t experts, int64_t layers) {
  const int64_t batch_tokens = experts == 2048 ? (int64_t{4} << 20) : (int64_t{1} << 20);
  const int64_t tokens = batch_tokens / 2;  // through each layer
  const int64_t seq = 256, group = 1024;
  ModelPreset preset;
  preset.name = "gshard-" + std::to_string(experts) + "e-" + std::to_string(layers) + "l";
  preset.model = "gshard_moe";
  preset.summary = "GShard Table 3: MoE(" + std::to_string(experts) + "E, " + std::to_string(layers) + "L) on " +
                   std::to_string(experts) + " cores, " + (experts == 2048 ? "4M" : "1M") +
                   " tokens per batch (source + target: half of them through each layer)";
  preset.settings = {"layers=" + std::to_string(layers), "d_model=1024", "heads=16", "head_dim=128", "d_ff=8192",
                     "expert_hidden=8192", "experts=" + std::to_string(experts), "vocab=32000",
                     "batch=" + std::to_string(tokens / seq), "seq=" + std::to_string(seq),
                     "groups=" + std::to_string(tokens / group), "capacity_factor=1", "optimizer=adafactor",
                     "learning_rate=1"};
  preset.mesh = "data=1,expert=" + std::to_string(experts);
  return preset;
}

}  // namespace

const std::vector<ModelPreset>& ModelPresets() {
  static const std::vector<ModelPreset> presets = [] {
    std::vector<ModelPreset> list;
    for (int64_t experts : {128, 512, 2048})
      for (int64_t layers : {12, 36}) list.push_back(GShardRow(experts, layers));
    list.push_back({"dense-1t", "dense_lm",
                    "GSPMD 1T dense LM (1.1e12 parameters), 2-D sharded on 2048 cores",
                    {"layers=128", "d_model=16384", "d_ff=131072", "heads=256", "head_dim=256", "vocab=32768",
                     "batch=256", "seq=1024", "sharding=2d"},
                    "x=32,y=64"});
    return list;
  }();
  return presets;
}

const ModelPreset& FindModelPreset(const std::string& name) {
  std::string known;
  for (const ModelPreset& preset : ModelPresets()) {
    if (preset.name == name) return preset;
    known += (known.empty() ? "" : ", ") + preset.name;
  }
  GSPMD_USER_ERROR("unknown preset '", name, "' (known: ", known, ")");
}

ModelConfig PresetConfig(const ModelPreset& preset) {
  ModelConfig config = FindTrainingModel(preset.model).config();
  for (const std::string& setting : preset.settings) config.SetAssignment(setting);
  config.SetMesh(preset.mesh);
  return config;
}

}  // namespace gspmd
