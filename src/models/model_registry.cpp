// Model registry: name -> builder-made program; random inputs for running them.
#include "models/model_registry.h"

#include "models/moe.h"
#include "models/pipeline.h"
#include "models/transformer.h"
#include "support/diagnostic.h"

namespace gspmd {

std::vector<std::string> ModelNames() {
  return {"transformer", "transformer_train", "transformer_forward", "moe", "pipeline", "pipeline_reference"};
}

std::unique_ptr<Module> BuildModel(const std::string& name, const ModelOptions& options) {
  if (name == "transformer") return BuildTransformer(options);
  if (name == "transformer_train" || name == "transformer_forward") {
    ModelOptions adjusted = options;
    adjusted.train = name == "transformer_train";
    return BuildTransformer(adjusted);
  }
  if (name == "moe") return BuildMoe(options);
  if (name == "pipeline") return BuildPipeline(options);
  if (name == "pipeline_reference") return BuildSequentialStages(options);
  std::string known;
  for (const std::string& model : ModelNames()) known += (known.empty() ? "" : ", ") + model;
  GSPMD_USER_ERROR("unknown model '", name, "' (known: ", known, ")");
}

std::vector<Literal> RandomInputs(const Module& module, uint64_t seed) {
  std::vector<Literal> inputs;
  uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E8B5ULL;
  for (const Instruction* parameter : module.entry()->parameters()) {
    Literal literal(parameter->shape());
    if (IsFloatingPoint(parameter->shape().element_type())) {
      for (int64_t i = 0; i < literal.element_count(); ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        literal.SetFromDouble(i, static_cast<double>(state >> 40) / static_cast<double>(1ULL << 23) - 1.0);
      }
    }
    inputs.push_back(std::move(literal));
  }
  return inputs;
}

}  // namespace gspmd
