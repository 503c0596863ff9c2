// TrainStepBuilder: weights, optimizer state and batch inputs in order, the gradient and
// optimizer update, and the attributes that describe the step to `gspmd train`.
#include "models/train_step_builder.h"

#include <cstdio>

#include "builder/autodiff.h"
#include "builder/remat.h"
#include "models/step_attributes.h"
#include "runtime/spmd/like_module.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i > 0 ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

std::string AxesText(const std::vector<std::string>& axes) {
  std::string text;
  for (const std::string& axis : axes) text += (text.empty() ? "" : "*") + axis;
  return text;
}

}  // namespace

std::string NormalInit(double stddev) {
  char text[48];
  std::snprintf(text, sizeof(text), "normal(%.6g)", stddev);
  return text;
}

ModelKey RematKey() {
  return ChoiceKey("remat", {"none", "layer"},
                   "none: the backward pass reads the forward pass's activations (gspmd simulate still "
                   "estimates XLA's rematerialization when they do not fit); layer: it recomputes each layer's "
                   "inner activations from the layer's input, as jax.checkpoint on every layer");
}

TrainStepBuilder::TrainStepBuilder(const std::string& module_name, const ModelConfig& config)
    : config_(config), optimizer_(OptimizerFromConfig(config)), b_(module_name) {}

void TrainStepBuilder::CheckEvenSplits(const std::string& what, const std::vector<int64_t>& dims,
                                       const PartitionSpec& spec) const {
  if (spec.size() != dims.size())
    GSPMD_USER_ERROR("model ", config_.model(), ": ", what, " ", DimsText(dims), " has ", spec.size(),
                     " sharding entries (internal model error)");
  for (size_t d = 0; d < dims.size(); ++d) {
    int64_t ways = 1;
    for (const std::string& axis : spec[d]) {
      if (axis == "?") continue;
      const int64_t index = mesh().AxisIndex(axis);
      GSPMD_CHECK(index >= 0, "model ", config_.model(), " uses mesh axis ", axis, " it does not have");
      ways *= mesh().axes[index].size;
    }
    if (dims[d] % ways == 0) continue;
    GSPMD_USER_ERROR("model ", config_.model(), ": dim ", d, " of ", what, " ", DimsText(dims), " has size ", dims[d],
                     ", which the mesh axes ", AxesText(spec[d]), " (", ways, " devices, --mesh ", config_.MeshText(),
                     ") cannot split evenly; choose sizes the mesh divides");
  }
}

void TrainStepBuilder::SetInputAttributes(Instruction* parameter, const char* role, const std::string& init) {
  parameter->frontend_attributes =
      StrCat(step_attributes::kRole, "=\"", role, "\",", step_attributes::kInit, "=\"", init, "\"");
}

Sharding TrainStepBuilder::SpecSharding(const PartitionSpec& spec, int64_t rank, const std::string& what) const {
  return MeshShardingOverAxes(mesh(), DimAxesFromSpec(mesh(), spec), rank, what);
}

Instruction* TrainStepBuilder::Weight(const std::string& name, const std::vector<int64_t>& dims,
                                      const PartitionSpec& spec, const std::string& init) {
  GSPMD_CHECK(!state_declared_, "model weight ", name, " declared after the batch inputs");
  CheckEvenSplits("weight " + name, dims, spec);
  Instruction* parameter = ShardParameter(b_.Parameter(F32(dims), name), mesh(), spec);
  SetInputAttributes(parameter, step_attributes::kRoleParam, init);
  weights_.push_back(parameter);
  weight_specs_.push_back(spec);
  return parameter;
}

void TrainStepBuilder::DeclareOptimizerState() {
  state_declared_ = true;
  Instruction* step = b_.Parameter(S32({}), "step");
  step->set_sharding(Sharding::Replicated());
  SetInputAttributes(step, step_attributes::kRoleOptState, "zeros");
  state_.push_back({step, {}});
  const std::vector<std::string> slots = StateSlots(optimizer_);
  for (size_t k = 0; k < slots.size(); ++k) {
    for (size_t i = 0; i < weights_.size(); ++i) {
      const std::vector<int64_t>& dims = weights_[i]->shape().dims();
      PartitionSpec spec = SlotSpec(optimizer_, k, StateSpec(optimizer_, weight_specs_[i], dims, mesh(), data_axes_));
      Instruction* parameter =
          ShardParameter(b_.Parameter(F32(StateDims(optimizer_, k, dims)), slots[k] + "." + weights_[i]->name()), mesh(), spec);
      SetInputAttributes(parameter, step_attributes::kRoleOptState, "zeros");
      state_.push_back({parameter, spec});
    }
  }
}

Instruction* TrainStepBuilder::Batch(const std::string& name, Shape shape, const PartitionSpec& spec,
                                     const std::string& field) {
  if (!state_declared_) {
    if (!spec.empty()) data_axes_ = spec[0];
    DeclareOptimizerState();
  }
  CheckEvenSplits("batch input " + name, shape.dims(), spec);
  Instruction* parameter = ShardParameter(b_.Parameter(std::move(shape), name), mesh(), spec);
  SetInputAttributes(parameter, step_attributes::kRoleBatch, "task(" + field + ")");
  return parameter;
}

Instruction* TrainStepBuilder::step() const {
  GSPMD_CHECK(state_declared_, "the step counter exists once the first batch input is declared");
  return state_[0].parameter;
}

Instruction* TrainStepBuilder::Split(ComputationBuilder& b, Instruction* value, const PartitionSpec& spec) {
  CheckEvenSplits("%" + value->name(), value->shape().dims(), spec);
  return mesh_split(b, value, mesh(), spec);
}

std::unique_ptr<Module> TrainStepBuilder::Finish(Instruction* loss,
                                                 const std::vector<std::pair<std::string, Instruction*>>& metrics,
                                                 std::vector<Instruction*> gradients) {
  GSPMD_CHECK(state_declared_, "a training step needs at least one batch input");
  if (gradients.empty()) {
    const size_t forward_end = b_.computation()->instructions().size();
    gradients = Gradients(b_, loss, weights_);
    if (remat_layers_) RematerializeRegions(b_.hlo(), forward_end, LayerRegionOf);
  }
  GSPMD_CHECK(gradients.size() == weights_.size(), gradients.size(), " gradients for ", weights_.size(), " weights");

  std::vector<Instruction*> results = {loss};
  std::vector<std::optional<Sharding>> shardings = {Sharding::Replicated()};
  std::string metric_names = "loss";
  for (const auto& [name, value] : metrics) {
    results.push_back(b_.Name(value, name));
    shardings.push_back(Sharding::Replicated());
    metric_names += "," + name;
  }
  const int64_t first_weight_output = static_cast<int64_t>(results.size());

  Instruction* step = state_[0].parameter;
  Instruction* next_step = b_.Add(step, b_.Scalar(1, ElementType::kS32));
  Instruction* t = b_.Convert(next_step, ElementType::kF32);
  const size_t slots = StateSlots(optimizer_).size();
  const std::string scope = b_.hlo().op_name();
  b_.hlo().set_op_name("optimizer");
  std::vector<Instruction*> new_weights;
  std::vector<std::vector<Instruction*>> new_state(slots);
  for (size_t i = 0; i < weights_.size(); ++i) {
    std::vector<Instruction*> old_state;
    for (size_t k = 0; k < slots; ++k) old_state.push_back(state_[1 + k * weights_.size() + i].parameter);
    Instruction* gradient = gradients[i];
    // Under weight-update sharding the gradient is wanted sharded like the state: its
    // data-parallel sum becomes a reduce-scatter instead of an all-reduce.
    const bool weight_shaped = slots > 0 && StateDims(optimizer_, 0, weights_[i]->shape().dims()) == weights_[i]->shape().dims();
    if (weight_shaped && state_[1 + i].spec != weight_specs_[i]) gradient = Split(gradient, state_[1 + i].spec);
    WeightUpdate update = ApplyOptimizer(b_, optimizer_, weights_[i], gradient, old_state, t);
    new_weights.push_back(b_.Name(update.weight, weights_[i]->name() + "_new"));
    for (size_t k = 0; k < slots; ++k) new_state[k].push_back(update.state[k]);
  }
  b_.hlo().set_op_name(scope);
  for (size_t i = 0; i < weights_.size(); ++i) {
    results.push_back(new_weights[i]);
    shardings.push_back(*weights_[i]->sharding());
  }
  results.push_back(b_.Name(next_step, "step_new"));
  shardings.push_back(Sharding::Replicated());
  for (size_t k = 0; k < slots; ++k) {
    for (size_t i = 0; i < weights_.size(); ++i) {
      const StateInput& input = state_[1 + k * weights_.size() + i];
      results.push_back(b_.Name(new_state[k][i], input.parameter->name() + "_new"));
      shardings.push_back(*input.parameter->sharding());
    }
  }

  // Output first_weight_output + i feeds parameter i: the weights, then the state, in order.
  std::string carry;
  const int64_t carried = static_cast<int64_t>(weights_.size() + state_.size());
  for (int64_t i = 0; i < carried; ++i) carry += StrCat(i > 0 ? "," : "", first_weight_output + i, ":", i);

  std::unique_ptr<Module> module = b_.Build(results, shardings);
  SetModuleFrontendAttribute(*module, step_attributes::kModel, config_.model());
  SetModuleFrontendAttribute(*module, step_attributes::kConfig, config_.ToString());
  SetModuleFrontendAttribute(*module, step_attributes::kCarry, carry);
  SetModuleFrontendAttribute(*module, step_attributes::kMetrics, metric_names);
  return module;
}

}  // namespace gspmd
