// Tests of the training-step models' parts that gspmd simulate relies on: the Adafactor
// optimizer (factored second moment, GShard's settings) against a plain reference and its
// factored state, the op_name scopes the model builders put on their instructions, and the
// MoE step moving the dispatched tokens (not the [G,S,E,C] masks) between devices.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "builder/program_builder.h"
#include "models/gshard_moe.h"
#include "models/model_catalog.h"
#include "models/optimizer.h"
#include "partitioner/partitioner.h"
#include "propagation/propagation.h"
#include "runtime/interp/evaluator.h"

namespace gspmd {
namespace {

// One Adafactor step of a [2, 3] weight, written with the builder and run by the interpreter,
// against the formula computed here.
TEST(AdafactorTest, UpdateMatchesTheFactoredFormula) {
  const std::vector<double> w = {0.5, -1.0, 2.0, 0.25, 1.5, -0.75};
  const std::vector<double> g = {0.1, -0.2, 0.3, 0.05, -0.4, 0.2};
  const std::vector<double> row = {0.01, 0.02}, col = {0.03, 0.01, 0.02};
  const double t = 3, lr = 0.5;

  ProgramBuilder b("adafactor_step");
  Instruction* weight = b.Parameter(Shape(ElementType::kF32, {2, 3}), "w");
  Instruction* gradient = b.Parameter(Shape(ElementType::kF32, {2, 3}), "g");
  Instruction* row_state = b.Parameter(Shape(ElementType::kF32, {2}), "row");
  Instruction* col_state = b.Parameter(Shape(ElementType::kF32, {3}), "col");
  Instruction* step = b.Parameter(Shape(ElementType::kF32, {}), "t");
  OptimizerSettings settings;
  settings.kind = OptimizerSettings::Kind::kAdafactor;
  settings.learning_rate = lr;
  EXPECT_EQ(StateSlots(settings), (std::vector<std::string>{"adafactor_row", "adafactor_col"}));
  EXPECT_EQ(StateDims(settings, 0, {2, 3}), (std::vector<int64_t>{2}));
  EXPECT_EQ(StateDims(settings, 1, {2, 3}), (std::vector<int64_t>{3}));
  EXPECT_EQ(StateDims(settings, 0, {5}), (std::vector<int64_t>{}));
  EXPECT_EQ(StateDims(settings, 1, {5}), (std::vector<int64_t>{5}));
  EXPECT_EQ(SlotSpec(settings, 1, {{"x"}, {"y"}}), (PartitionSpec{{"y"}}));
  WeightUpdate update = ApplyOptimizer(b, settings, weight, gradient, {row_state, col_state}, step);
  std::unique_ptr<Module> module = b.Build({update.weight, update.state[0], update.state[1]},
                                           {std::nullopt, std::nullopt, std::nullopt});
  std::vector<Literal> inputs = {Literal::FromDoubles(Shape(ElementType::kF32, {2, 3}), w),
                                 Literal::FromDoubles(Shape(ElementType::kF32, {2, 3}), g),
                                 Literal::FromDoubles(Shape(ElementType::kF32, {2}), row),
                                 Literal::FromDoubles(Shape(ElementType::kF32, {3}), col),
                                 Literal::Scalar(ElementType::kF32, t)};
  std::vector<Literal> out = FlattenTuple(EvaluateModule(*module, inputs));

  const double rho = 1 - std::pow(t, -0.8);
  double new_row[2], new_col[3], v[6], u[6], sum_u2 = 0, sum_w2 = 0;
  for (int i = 0; i < 2; ++i) {
    double mean = 0;
    for (int j = 0; j < 3; ++j) mean += (g[i * 3 + j] * g[i * 3 + j] + 1e-30) / 3;
    new_row[i] = rho * row[i] + (1 - rho) * mean;
  }
  for (int j = 0; j < 3; ++j) {
    double mean = 0;
    for (int i = 0; i < 2; ++i) mean += (g[i * 3 + j] * g[i * 3 + j] + 1e-30) / 2;
    new_col[j] = rho * col[j] + (1 - rho) * mean;
  }
  const double row_mean = (new_row[0] + new_row[1]) / 2;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      v[i * 3 + j] = new_row[i] / row_mean * new_col[j];
      u[i * 3 + j] = g[i * 3 + j] / std::sqrt(v[i * 3 + j]);
      sum_u2 += u[i * 3 + j] * u[i * 3 + j];
      sum_w2 += w[i * 3 + j] * w[i * 3 + j];
    }
  const double clip = std::max(1.0, std::sqrt(sum_u2 / 6));
  const double scale = lr * std::max(1e-3, std::sqrt(sum_w2 / 6));
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(out[0].GetAsDouble(k), w[k] - scale * u[k] / clip, 1e-5) << k;
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(out[1].GetAsDouble(i), new_row[i], 1e-7);
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(out[2].GetAsDouble(j), new_col[j], 1e-7);
}

// The state parameters of a model trained with Adafactor are the factored row and column
// vectors, not copies of the weights.
TEST(AdafactorTest, ModelStateIsFactored) {
  const ModelEntry& entry = FindTrainingModel("dense_lm");
  ModelConfig config = entry.config();
  config.Set("optimizer", "adafactor");
  std::unique_ptr<Module> module = entry.build(config);
  const Instruction* w1 = nullptr;
  const Instruction* row = nullptr;
  const Instruction* col = nullptr;
  for (const Instruction* parameter : module->entry()->parameters()) {
    if (parameter->name() == "l0.w1") w1 = parameter;
    if (parameter->name() == "adafactor_row.l0.w1") row = parameter;
    if (parameter->name() == "adafactor_col.l0.w1") col = parameter;
  }
  ASSERT_TRUE(w1 && row && col);
  EXPECT_EQ(row->shape().dims(), (std::vector<int64_t>{w1->shape().dim(0)}));
  EXPECT_EQ(col->shape().dims(), (std::vector<int64_t>{w1->shape().dim(1)}));
  EXPECT_EQ(row->FrontendAttribute("gspmd.role"), "opt_state");
}

// Every instruction of the training step says where it comes from: embed, layer_N/...,
// their backward as transpose(...), head, optimizer.
TEST(ModelOpNameTest, TrainingStepsCarryLayerScopes) {
  for (const char* name : {"dense_lm", "gshard_moe"}) {
    const ModelEntry& entry = FindTrainingModel(name);
    std::unique_ptr<Module> module = entry.build(entry.config());
    std::set<std::string> scopes;
    for (const auto& instruction : module->entry()->instructions()) {
      const std::string& metadata = instruction->metadata;
      const size_t start = metadata.find("op_name=\"");
      if (start == std::string::npos) continue;
      scopes.insert(metadata.substr(start + 9, metadata.find('"', start + 9) - start - 9));
    }
    EXPECT_TRUE(scopes.count("embed")) << name;
    EXPECT_TRUE(scopes.count("layer_0/attention")) << name;
    EXPECT_TRUE(scopes.count("transpose(layer_0/attention)")) << name;
    EXPECT_TRUE(scopes.count("head")) << name;
    EXPECT_TRUE(scopes.count("optimizer")) << name;
    EXPECT_TRUE(scopes.count(std::string(name) == "gshard_moe" ? "layer_1/moe" : "layer_1/mlp")) << name;
  }
}

// GShard's Algorithm 2 keeps dispatch and combine split by group: the partitioned step has
// four all-to-alls per MoE layer (dispatch and combine, forward and backward), each of the
// per-device slice of the dispatched tokens [E, G, C, M].
TEST(GShardMoeTest, AllToAllsMoveTheDispatchedTokens) {
  const ModelEntry& entry = FindTrainingModel("gshard_moe");
  const ModelConfig config = entry.config();
  std::unique_ptr<Module> module = entry.build(config);
  PropagateShardings(*module);
  PartitionOptions options;
  options.num_partitions = module->num_partitions();
  std::unique_ptr<Module> per_device = PartitionModule(*module, options).module;
  const int64_t experts = config.Int("experts") / config.AxisSize("expert");
  const int64_t groups = config.Int("groups") / config.AxisSize("data");
  const int64_t dispatched = experts * groups * ExpertCapacity(config) * config.Int("d_model");
  int64_t all_to_alls = 0;
  for (const auto& instruction : per_device->entry()->instructions()) {
    if (instruction->opcode() != Opcode::kAllToAll) continue;
    ++all_to_alls;
    EXPECT_EQ(instruction->shape().element_count(), dispatched) << instruction->name();
  }
  EXPECT_EQ(all_to_alls, 4 * (config.Int("layers") / 2));
}

}  // namespace
}  // namespace gspmd
