// Optimizers for the model programs: SGD, Adam and Adafactor, their model keys, the state each
// keeps per weight and how that state is sharded, and the update written with the builder.
#pragma once

#include <string>
#include <vector>

#include "builder/mesh_split.h"
#include "builder/program_builder.h"
#include "models/model_config.h"

namespace gspmd {

struct OptimizerSettings {
  enum class Kind { kSgd, kAdam, kAdafactor };
  Kind kind = Kind::kAdam;
  double learning_rate = 0.01;
  double beta1 = 0.9;
  double beta2 = 0.98;
  double epsilon = 1e-9;
  // Adam state sharded like its weight, or also over the data axes (weight-update sharding).
  bool shard_state_over_data = false;
};

// The keys every model takes: optimizer=adam|sgd|adafactor, learning_rate, beta1, beta2,
// epsilon, opt_state_sharding=weight|data.
std::vector<ModelKey> OptimizerKeys(double default_learning_rate);
OptimizerSettings OptimizerFromConfig(const ModelConfig& config);

// Names of the per-weight state slots ("adam_m", "adam_v"; Adafactor's factored second
// moment "adafactor_row", "adafactor_col"; none for SGD).
std::vector<std::string> StateSlots(const OptimizerSettings& settings);

// The dims of state slot `slot` for a weight of `weight_dims`, and its sharding from the
// weight-shaped `state_spec`: the weight's for Adam; Adafactor's row slot drops the last dim
// and its column slot the one before (a rank-1 weight keeps a scalar row and a full column).
std::vector<int64_t> StateDims(const OptimizerSettings& settings, size_t slot, const std::vector<int64_t>& weight_dims);
PartitionSpec SlotSpec(const OptimizerSettings& settings, size_t slot, const PartitionSpec& state_spec);

// The state's sharding for a weight sharded by `weight_spec`: the same, or with the data
// axes the weight does not use added to its largest dim they divide (the weight's own when
// none does). `data_axes` are the mesh axes the batch is split over.
PartitionSpec StateSpec(const OptimizerSettings& settings, const PartitionSpec& weight_spec,
                        const std::vector<int64_t>& dims, const Mesh& mesh, const std::vector<std::string>& data_axes);

// One weight's update: new weight and new state slots (in StateSlots order), from the
// gradient, the old state and t = step + 1 as f32[].
struct WeightUpdate {
  Instruction* weight;
  std::vector<Instruction*> state;
};
WeightUpdate ApplyOptimizer(ComputationBuilder& b, const OptimizerSettings& settings, Instruction* weight,
                            Instruction* gradient, const std::vector<Instruction*>& state, Instruction* t);

}  // namespace gspmd
