// TrainStepBuilder: writes one training step (params, optimizer state, batch) -> (loss,
// metrics, params', state') with the builder, annotating only what a user would (parameter
// and result shardings, a few mesh_splits) and recording the step's roles as attributes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "builder/mesh_split.h"
#include "builder/program_builder.h"
#include "models/model_config.h"
#include "models/optimizer.h"

namespace gspmd {

// The init text for normal(0, stddev) ("normal(0.176777)").
std::string NormalInit(double stddev);

// The `remat` key of models whose layers the backward pass can recompute (RematFromConfig).
ModelKey RematKey();

// Use in three phases, in order:
//   1. Weight(...) for every parameter (entry parameters 0..P-1);
//   2. Batch(...) for every batch input: the first call declares the optimizer state
//      (entry parameters P..P+S-1: the step counter, then e.g. Adam's m and v per weight);
//   3. compute the loss with b(), Split() and the values returned, then Finish().
//
//   TrainStepBuilder t("dense_lm", config);
//   Instruction* w = t.Weight("w", {16, 32}, {{"x"}, {"y"}}, "normal(0.25)");
//   Instruction* tokens = t.Batch("tokens", S32({8, 16}), {{"x"}, {}}, "tokens");
//   Instruction* loss = ...;
//   std::unique_ptr<Module> step = t.Finish(loss, {{"accuracy", accuracy}});
class TrainStepBuilder {
 public:
  TrainStepBuilder(const std::string& module_name, const ModelConfig& config);

  ProgramBuilder& b() { return b_; }
  const Mesh& mesh() const { return config_.mesh(); }
  const ModelConfig& config() const { return config_; }

  // A parameter of the model, sharded by `spec` (every split dim must divide evenly).
  Instruction* Weight(const std::string& name, const std::vector<int64_t>& dims, const PartitionSpec& spec,
                      const std::string& init);
  // A batch input, drawn every step from the task's `field`.
  Instruction* Batch(const std::string& name, Shape shape, const PartitionSpec& spec, const std::string& field);
  // The optimizer's step counter (s32[], 0 on the first step); available after the first Batch.
  Instruction* step() const;

  // mesh_split of `value` by `spec`, checking that every split dim divides evenly.
  Instruction* Split(Instruction* value, const PartitionSpec& spec) { return Split(b_, value, spec); }
  // The same inside another computation of the program (a loop body).
  Instruction* Split(ComputationBuilder& b, Instruction* value, const PartitionSpec& spec);
  // The sharding `spec` gives a value of rank `rank`.
  Sharding SpecSharding(const PartitionSpec& spec, int64_t rank, const std::string& what) const;

  // Outputs: loss, each metric, each weight's new value, the new optimizer state. `gradients`
  // (one per weight, in Weight order) are computed from the loss when empty. Records the carry
  // mapping and the metric names.
  std::unique_ptr<Module> Finish(Instruction* loss, const std::vector<std::pair<std::string, Instruction*>>& metrics,
                                 std::vector<Instruction*> gradients = {});

  const std::vector<Instruction*>& weights() const { return weights_; }

  // remat=layer: the backward pass recomputes each layer's inner activations from its input
  // (builder/remat.h; op_names "layer_N/..." name the layers). Only for gradients Finish
  // computes itself.
  void set_remat_layers(bool remat_layers) { remat_layers_ = remat_layers; }

 private:
  struct StateInput {
    Instruction* parameter;
    PartitionSpec spec;
  };
  void CheckEvenSplits(const std::string& what, const std::vector<int64_t>& dims, const PartitionSpec& spec) const;
  void SetInputAttributes(Instruction* parameter, const char* role, const std::string& init);
  void DeclareOptimizerState();

  const ModelConfig& config_;
  OptimizerSettings optimizer_;
  ProgramBuilder b_;
  std::vector<Instruction*> weights_;
  std::vector<PartitionSpec> weight_specs_;
  std::vector<StateInput> state_;  // the step counter first, then per weight (see optimizer.h)
  std::vector<std::string> data_axes_;  // the mesh axes splitting the first batch input's dim 0
  bool state_declared_ = false;
  bool remat_layers_ = false;
};

}  // namespace gspmd
