// SGD, Adam and Adafactor updates, their keys and the sharding of their state.
#include "models/optimizer.h"

#include <algorithm>
#include <cmath>

namespace gspmd {

std::vector<ModelKey> OptimizerKeys(double default_learning_rate) {
  return {
      ChoiceKey("optimizer", {"adam", "sgd", "adafactor"}, "the update rule"),
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
  const std::string& kind = config.Choice("optimizer");
  settings.kind = kind == "sgd"         ? OptimizerSettings::Kind::kSgd
                  : kind == "adafactor" ? OptimizerSettings::Kind::kAdafactor
                                        : OptimizerSettings::Kind::kAdam;
  settings.learning_rate = config.Number("learning_rate");
  settings.beta1 = config.Number("beta1");
  settings.beta2 = config.Number("beta2");
  settings.epsilon = config.Number("epsilon");
  settings.shard_state_over_data = config.Choice("opt_state_sharding") == "data";
  return settings;
}

std::vector<std::string> StateSlots(const OptimizerSettings& settings) {
  if (settings.kind == OptimizerSettings::Kind::kSgd) return {};
  if (settings.kind == OptimizerSettings::Kind::kAdafactor) return {"adafactor_row", "adafactor_col"};
  return {"adam_m", "adam_v"};
}

namespace {

// Adafactor factors the second moment over the last two dims: the row slot drops the last
// dim, the column slot the second last (for rank 1: all dims reduced, and none).
int64_t FactoredDim(size_t slot, size_t rank) {
  if (slot == 0) return static_cast<int64_t>(rank) - 1;
  return rank >= 2 ? static_cast<int64_t>(rank) - 2 : -1;
}

template <typename T>
std::vector<T> WithoutDim(std::vector<T> values, int64_t dim) {
  if (dim >= 0) values.erase(values.begin() + dim);
  return values;
}

}  // namespace

std::vector<int64_t> StateDims(const OptimizerSettings& settings, size_t slot, const std::vector<int64_t>& weight_dims) {
  if (settings.kind != OptimizerSettings::Kind::kAdafactor) return weight_dims;
  return WithoutDim(weight_dims, FactoredDim(slot, weight_dims.size()));
}

PartitionSpec SlotSpec(const OptimizerSettings& settings, size_t slot, const PartitionSpec& state_spec) {
  if (settings.kind != OptimizerSettings::Kind::kAdafactor) return state_spec;
  return WithoutDim(state_spec, FactoredDim(slot, state_spec.size()));
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

namespace {

// Adafactor as GShard trained with it (Shazeer & Stern 2018; GShard appendix A.2): no first
// moment, the second moment factored into row and column means that decay by
// rho = 1 - t^-0.8, updates clipped to RMS 1 and scaled by the weight's RMS (at least 1e-3):
//   g2 = g^2 + 1e-30;  row' = rho row + (1 - rho) mean_last(g2);  col' likewise over the dim
//   before; v = row' col' / mean(row');  u = g / sqrt(v) / max(1, rms(u));
//   w' = w - lr max(1e-3, rms(w)) u.
WeightUpdate Adafactor(ComputationBuilder& b, const OptimizerSettings& s, Instruction* weight, Instruction* gradient,
                       const std::vector<Instruction*>& state, Instruction* t) {
  const std::vector<int64_t>& dims = weight->shape().dims();
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> all(dims.size());
  for (int64_t d = 0; d < rank; ++d) all[d] = d;
  Instruction* rho = b.Sub(b.Scalar(1.0), b.Exp(b.Scale(b.Log(t), -0.8)));
  Instruction* keep = b.Sub(b.Scalar(1.0), rho);
  auto decay = [&](Instruction* old, Instruction* fresh) {
    const std::vector<int64_t>& d = old->shape().dims();
    return b.Add(b.Mul(old, b.Broadcast(rho, d, {})), b.Mul(fresh, b.Broadcast(keep, d, {})));
  };
  Instruction* g2 = b.AddScalar(b.Mul(gradient, gradient), 1e-30);
  Instruction* row = decay(state[0], b.Mean(g2, {rank - 1}));
  Instruction* col = decay(state[1], rank >= 2 ? b.Mean(g2, {rank - 2}) : g2);
  Instruction* v = col;
  if (rank >= 2) {
    Instruction* row_mean = b.BroadcastAlong(b.Mean(row, {rank - 2}), row->shape().dims(), {rank - 2});
    v = b.Mul(b.BroadcastAlong(b.Div(row, row_mean), dims, {rank - 1}), b.BroadcastAlong(col, dims, {rank - 2}));
  }
  Instruction* u = b.Mul(gradient, b.Rsqrt(v));
  Instruction* rms_u = b.Sqrt(b.Mean(b.Mul(u, u), all));
  u = b.Div(u, b.Broadcast(b.Max(rms_u, b.Scalar(1.0)), dims, {}));
  Instruction* scale = b.Scale(b.Max(b.Sqrt(b.Mean(b.Mul(weight, weight), all)), b.Scalar(1e-3)), s.learning_rate);
  return {b.Sub(weight, b.Mul(u, b.Broadcast(scale, dims, {}))), {row, col}};
}

}  // namespace

WeightUpdate ApplyOptimizer(ComputationBuilder& b, const OptimizerSettings& s, Instruction* weight,
                            Instruction* gradient, const std::vector<Instruction*>& state, Instruction* t) {
  const std::vector<int64_t>& dims = weight->shape().dims();
  if (s.kind == OptimizerSettings::Kind::kSgd)
    return {b.Sub(weight, b.Scale(gradient, s.learning_rate)), {}};
  if (s.kind == OptimizerSettings::Kind::kAdafactor) return Adafactor(b, s, weight, gradient, state, t);
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
