// Communication of each training-step model, per device and step, is at most the analytic
// figure of its sharding recipe, computed here from the dims on the ring model of
// analysis/comm_report.h (all-reduce 2(n-1)/n B, all-gather and all-to-all (n-1)/n B of the
// result, reduce-scatter (n-1)/n B of the operand, collective-permute B). None of these
// models has an XLA counterpart in the corpus; the corpus transformer step is compared with
// XLA's in the partitioner and CLI tests.
#include <iostream>

#include <gtest/gtest.h>

#include "models/gshard_moe.h"
#include "train_test_util.h"

namespace gspmd {
namespace {

constexpr double kF32 = 4;

double AllReduce(int64_t n, double bytes) { return n <= 1 ? 0 : 2.0 * static_cast<double>(n - 1) / n * bytes; }
double Gather(int64_t n, double bytes) { return n <= 1 ? 0 : static_cast<double>(n - 1) / n * bytes; }
// The loss and metric sums: a few scalar all-reduces over every device.
double Scalars(int64_t devices) { return 8 * AllReduce(devices, kF32); }

double Measured(const Module& global) {
  train_test::CompiledStep step = train_test::Compile(global);
  return AnalyzeCommunication(*step.per_device).comm_bytes_per_device;
}

struct LmDims {
  double L, M, N, D, H, V, B, S;
  explicit LmDims(const ModelConfig& c)
      : L(c.Int("layers")), M(c.Int("d_model")), N(c.Int("heads")), D(c.Int("head_dim")), H(c.Int("d_ff")),
        V(c.Int("vocab")), B(c.Int("batch")), S(c.Int("seq")) {}
  double LayerMatrices() const { return (4 * M * N * D + 2 * M * H) * kF32; }  // wqkv, wo, w1, w2
  double Weights() const { return (L * (LayerMatrices() / kF32 + 2 * M) + 2 * V * M + S * M + M) * kF32; }
};

// The dense LM's textbook figure per recipe.
double DenseAnalytic(const ModelConfig& c) {
  const LmDims d(c);
  const int64_t x = c.AxisSize("x"), y = c.AxisSize("y"), n = x * y;
  const std::string recipe = c.Choice("sharding");
  if (recipe == "data") return AllReduce(n, d.Weights()) + Scalars(n);
  // Fully sharded: gather every weight for the forward and again for the backward, and
  // reduce-scatter its gradient.
  if (recipe == "fsdp") return 3 * Gather(n, d.Weights()) + Scalars(n);
  const double act = d.B / x * d.S * d.M * kF32;   // [B/x, S, M] on one device
  const double rows = d.B / x * d.S * kF32;        // [B/x, S]: one value per token
  if (recipe == "megatron") {
    // Per layer: the attention and MLP outputs are summed over y forward, their inputs'
    // gradients backward; the embedding's output and the logits' input gradient too; the
    // head's max, sum and target reductions over the vocabulary (forward and backward);
    // every gradient summed over x.
    const double sharded = d.L * (d.LayerMatrices() / y + 2 * d.M * kF32) + (2 * d.V / y * d.M + d.S * d.M + d.M) * kF32;
    return (4 * d.L + 2) * AllReduce(y, act) + 8 * AllReduce(y, rows) + AllReduce(x, sharded) + Scalars(n);
  }
  // 2d, per layer: each of the four einsums gathers its activation over y or reduce-scatters
  // its result over y, forward and backward (4 + 4); each weight is gathered over x forward
  // and backward and its gradient reduce-scattered over x; the two LayerNorms reduce over y
  // (mean and variance, forward and backward). The embedding and the logits gather or
  // reduce-scatter the activation over y, both ways, and their weights over x; the head's
  // reductions over the vocabulary; the final LayerNorm; positions and scales summed over x.
  const double per_layer = 4 * Gather(y, act) + 4 * Gather(y, act) + 3 * Gather(x, d.LayerMatrices() / y) +
                           8 * AllReduce(y, rows) + 2 * AllReduce(x, d.M / y * kF32);
  const double vocab_weight = d.V / y * d.M * kF32;
  const double ends = 4 * Gather(y, act) + 2 * 3 * Gather(x, vocab_weight) + 8 * AllReduce(y, rows) +
                      4 * AllReduce(y, rows) + AllReduce(x, d.M / y * kF32) + AllReduce(x, d.S * d.M / y * kF32);
  return d.L * per_layer + ends + Scalars(n);
}

// GShard: data parallel everywhere but the experts; each MoE layer moves its dispatched
// [E/e, G/d, C, M] block by all-to-all for dispatch and combine, forward and backward.
double MoeAnalytic(const ModelConfig& c) {
  const LmDims d(c);
  const int64_t data = c.AxisSize("data"), e = c.AxisSize("expert"), n = data * e;
  const double E = c.Int("experts"), EH = c.Int("expert_hidden"), G = c.Int("groups");
  const double moe_layers = static_cast<double>(c.Int("layers") / 2);
  const double dense_layers = d.L - moe_layers;
  const double attention = (4 * d.M * d.N * d.D + 2 * d.M) * kF32;
  const double replicated = d.L * attention + dense_layers * 2 * d.M * d.H * kF32 + moe_layers * d.M * E * kF32 +
                            (2 * d.V * d.M + d.S * d.M + d.M) * kF32;
  const double experts = moe_layers * 2 * E * d.M * EH * kF32 / e;
  const double block = E / e * G / data * static_cast<double>(ExpertCapacity(c)) * d.M * kF32;
  return AllReduce(n, replicated) + AllReduce(data, experts) + moe_layers * 4 * Gather(e, block) + Scalars(n);
}

// The pipeline, per iteration of each loop: the state shifts one stage (a permute) and the
// last stage's (first stage's) microbatch joins the stage-replicated outputs (input
// gradients), summed over the stages; the stages' weight gradients are summed over data
// once, the replicated ones too; Megatron sums over model inside the stages: per layer two
// all-reduces forward, two in the backward loop's recomputation and two backward.
double PipelineAnalytic(const ModelConfig& c) {
  const LmDims d(c);
  const int64_t P = c.AxisSize("stage"), data = c.AxisSize("data"), model = c.AxisSize("model");
  const double T = static_cast<double>(c.Int("microbatches") + P - 1);
  const double mb = d.B / c.Int("microbatches");
  const double block = mb / data * d.S * d.M * kF32;  // one stage's microbatch on one device
  const double per_iteration = (P > 1 ? block : 0) + AllReduce(P, block);
  const double stages = d.L * (d.LayerMatrices() / model + 2 * d.M * kF32) / P;
  const double replicated = (2 * d.V * d.M + d.S * d.M + d.M) * kF32;
  const double megatron = T * (d.L / P) * 6 * AllReduce(model, block);
  return 2 * T * per_iteration + AllReduce(data, stages) + AllReduce(data, replicated) + megatron +
         Scalars(P * data * model);
}

struct CommCase {
  std::string model;
  std::vector<std::string> settings;
  std::string mesh;
};

class ModelCommTest : public ::testing::TestWithParam<CommCase> {};

TEST_P(ModelCommTest, AtMostTheRecipesAnalyticFigure) {
  const CommCase& c = GetParam();
  const ModelConfig config = train_test::Config(c.model, c.settings, c.mesh);
  std::unique_ptr<Module> global = train_test::Build(c.model, c.settings, c.mesh);
  const double ours = Measured(*global);
  const double analytic = c.model == "dense_lm" ? DenseAnalytic(config)
                          : c.model == "gshard_moe" ? MoeAnalytic(config)
                                                    : PipelineAnalytic(config);
  std::cout << "[ comm     ] " << c.model << " " << config.ToString() << ": " << ours << " bytes/device, analytic "
            << analytic << " (ratio " << ours / analytic << ")\n";
  EXPECT_GT(ours, 0);
  EXPECT_LE(ours, analytic);
}

std::vector<CommCase> CommCases() {
  std::vector<CommCase> cases;
  const std::vector<std::string> bigger = {"layers=3", "d_model=64", "d_ff=256", "batch=16", "seq=32", "vocab=64"};
  for (const char* recipe : {"2d", "megatron", "data", "fsdp"}) {
    const std::string sharding = std::string("sharding=") + recipe;
    cases.push_back({"dense_lm", {sharding}, "x=2,y=4"});
    cases.push_back({"dense_lm", {sharding}, "x=4,y=2"});
    std::vector<std::string> big = bigger;
    big.push_back(sharding);
    cases.push_back({"dense_lm", big, "x=2,y=4"});
  }
  cases.push_back({"gshard_moe", {}, "data=2,expert=4"});
  cases.push_back({"gshard_moe", {}, "data=1,expert=8"});
  cases.push_back({"gshard_moe", {"layers=4", "experts=16", "capacity_factor=1", "batch=16", "groups=16"},
                   "data=4,expert=2"});
  cases.push_back({"pipelined_lm", {}, "stage=4,data=2"});
  cases.push_back({"pipelined_lm", {"microbatches=4", "batch=32"}, "stage=2,data=4"});
  cases.push_back({"pipelined_lm", {}, "stage=2,data=2,model=2"});
  return cases;
}

std::string CommCaseName(const ::testing::TestParamInfo<CommCase>& info) {
  std::string name = info.param.model + "_" + info.param.mesh + "_" + std::to_string(info.index);
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Models, ModelCommTest, ::testing::ValuesIn(CommCases()), CommCaseName);

}  // namespace
}  // namespace gspmd
