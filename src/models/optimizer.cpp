// SGD and Adam updates, their keys and the sharding of their state.
#include "models/optimizer.h"

#include <algorithm>
#include <cmath>

namespace gspmd {

std::vector<ModelKey> OptimizerKeys(double default_learning_rate) {
  return {
      ChoiceKey("optimizer", {"adam", "sgd"}, "the update rule"),
      NumberKey("learning_rate", default_learning_rate, "step size"),
      NumberKey("beta1", 0.9, "Adam: decay of the first moment"),
      NumberKey("beta2", 0.98, "Adam: decay of the second moment"),
      NumberKey("epsilon", 1e-9, "Adam: added to the root of the second moment"),
      ChoiceKey("opt_state_sharding", {"weight", "data"},
                "Adam state sharded like its weight, or also over the data axes (weight-update sharding)"),
  };
}

OptimizerSettings OptimizerFromConfig(const ModelConfig& config) {
  OptimizerSettings settings;
  settings.kind = config.Choice("optimizer") == "sgd" ? OptimizerSettings::Kind::kSgd : OptimizerSettings::Kind::kAdam;
  settings.learning_rate = config.Number("learning_rate");
  settings.beta1 = config.Number("beta1");
  settings.beta2 = config.Number("beta2");
  settings.epsilon = config.Number("epsilon");
  settings.shard_state_over_data = config.Choice("opt_state_sharding") == "data";
  return settings;
}

std::vector<std::string> StateSlots(const OptimizerSettings& settings) {
  if (settings.kind == OptimizerSettings::Kind::kSgd) return {};
  return {"adam_m", "adam_v"};
}

PartitionSpec StateSpec(const OptimizerSettings& settings, const PartitionSpec& weight_spec,
                        const std::vector<int64_t>& dims, const Mesh& mesh, const std::vector<std::string>& data_axes) {
  if (!settings.shard_state_over_data) return weight_spec;
  std::vector<std::string> extra;
  int64_t extra_size = 1;
  for (const std::string& axis : data_axes) {
    const bool used = std::any_of(weight_spec.begin(), weight_spec.end(), [&](const std::vector<std::string>& names) {
      return std::find(names.begin(), names.end(), axis) != names.end();
    });
    if (used) continue;
    extra.push_back(axis);
    extra_size *= mesh.axes[mesh.AxisIndex(axis)].size;
  }
  if (extra.empty() || extra_size == 1) return weight_spec;
  // The largest dim that still divides evenly once the extra axes split it too.
  int64_t best = -1;
  for (size_t d = 0; d < dims.size(); ++d) {
    int64_t split = 1;
    for (const std::string& axis : weight_spec[d]) split *= mesh.axes[mesh.AxisIndex(axis)].size;
    if (dims[d] % (split * extra_size) != 0) continue;
    if (best < 0 || dims[d] > dims[best]) best = static_cast<int64_t>(d);
  }
  if (best < 0) return weight_spec;
  PartitionSpec spec = weight_spec;
  for (const std::string& axis : extra) spec[best].push_back(axis);
  return spec;
}

WeightUpdate ApplyOptimizer(ComputationBuilder& b, const OptimizerSettings& s, Instruction* weight,
                            Instruction* gradient, const std::vector<Instruction*>& state, Instruction* t) {
  const std::vector<int64_t>& dims = weight->shape().dims();
  if (s.kind == OptimizerSettings::Kind::kSgd)
    return {b.Sub(weight, b.Scale(gradient, s.learning_rate)), {}};
  // Adam with bias correction folded into the step size:
  //   m' = b1 m + (1 - b1) g,  v' = b2 v + (1 - b2) g^2,
  //   w' = w - lr sqrt(1 - b2^t) / (1 - b1^t) * m' / (sqrt(v') + eps).
  Instruction* m = b.Add(b.Scale(state[0], s.beta1), b.Scale(gradient, 1.0 - s.beta1));
  Instruction* v = b.Add(b.Scale(state[1], s.beta2), b.Scale(b.Mul(gradient, gradient), 1.0 - s.beta2));
  auto one_minus_power = [&](double beta) {  // 1 - beta^t, as f32[]
    Instruction* power = b.Exp(b.Scale(t, std::log(beta)));
    return b.Sub(b.Scalar(1.0), power);
  };
  Instruction* step_size = b.Scale(b.Div(b.Sqrt(one_minus_power(s.beta2)), one_minus_power(s.beta1)), s.learning_rate);
  Instruction* denom = b.AddScalar(b.Sqrt(v), s.epsilon);
  Instruction* direction = b.Div(m, denom);
  Instruction* update = b.Mul(direction, b.Broadcast(step_size, dims, {}));
  return {b.Sub(weight, update), {m, v}};
}

}  // namespace gspmd
