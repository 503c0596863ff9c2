// The builder-made GShard MoE layer: matches a direct top-2 computation when no token is
// dropped, and propagate + partition + SPMD run equal to the interpreter.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "model_test_util.h"
#include "models/model_registry.h"
#include "models/moe.h"

namespace gspmd {
namespace {

ModelOptions Small() {
  ModelOptions o;
  o.experts = 4;
  o.groups = 4;
  o.group_size = 8;
  o.capacity = 4;
  o.d_model = 8;
  o.expert_hidden = 16;
  o.expert_parallel = 4;
  return o;
}

// y[g,s] = sum over the two best experts k of gate_k * wo_k relu(wi_k x[g,s]), gates
// renormalized over the two.
std::vector<float> DirectTop2(const ModelOptions& o, const std::vector<Literal>& in) {
  const int64_t G = o.groups, S = o.group_size, M = o.d_model, E = o.experts, H = o.expert_hidden;
  const float* x = in[0].data<float>();
  const float* wg = in[1].data<float>();
  const float* wi = in[2].data<float>();
  const float* wo = in[3].data<float>();
  std::vector<float> y(G * S * M, 0.0f);
  for (int64_t t = 0; t < G * S; ++t) {
    std::vector<double> logits(E, 0.0);
    for (int64_t e = 0; e < E; ++e)
      for (int64_t m = 0; m < M; ++m) logits[e] += x[t * M + m] * wg[m * E + e];
    const double top = *std::max_element(logits.begin(), logits.end());
    std::vector<double> p(E);
    double sum = 0;
    for (int64_t e = 0; e < E; ++e) sum += p[e] = std::exp(logits[e] - top);
    for (double& v : p) v /= sum;
    const int64_t k1 = std::max_element(p.begin(), p.end()) - p.begin();
    std::vector<double> rest = p;
    rest[k1] = -1;
    const int64_t k2 = std::max_element(rest.begin(), rest.end()) - rest.begin();
    const double norm = p[k1] + p[k2] + 1e-9;
    for (auto [k, gate] : {std::pair{k1, p[k1] / norm}, std::pair{k2, p[k2] / norm}}) {
      std::vector<double> hidden(H, 0.0);
      for (int64_t h = 0; h < H; ++h) {
        for (int64_t m = 0; m < M; ++m) hidden[h] += x[t * M + m] * wi[(k * M + m) * H + h];
        hidden[h] = std::max(hidden[h], 0.0);
      }
      for (int64_t m = 0; m < M; ++m) {
        double out = 0;
        for (int64_t h = 0; h < H; ++h) out += hidden[h] * wo[(k * H + h) * M + m];
        y[t * M + m] += static_cast<float>(gate * out);
      }
    }
  }
  return y;
}

TEST(MoeModelTest, MatchesDirectTop2WhenNothingIsDropped) {
  ModelOptions o = Small();
  o.capacity = o.group_size;  // every token fits
  std::unique_ptr<Module> module = BuildMoe(o);
  VerifyModule(*module);
  EXPECT_EQ(module->num_partitions(), 4);
  EXPECT_EQ(model_test::CountCustomCalls(*module, "Sharding"), 3);
  model_test::RoundTrip(*module);
  std::vector<Literal> inputs = RandomInputs(*module, 2);
  std::vector<Literal> out = model_test::Interpret(*module, inputs);
  std::vector<float> expected = DirectTop2(o, inputs);
  ASSERT_EQ(out[0].element_count(), static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(out[0].data<float>()[i], expected[i], 1e-4) << i;
}

TEST(MoeModelTest, CapacityDropsTokens) {
  ModelOptions o = Small();
  o.capacity = 1;
  std::unique_ptr<Module> module = BuildMoe(o);
  std::vector<Literal> inputs = RandomInputs(*module, 2);
  std::vector<Literal> out = model_test::Interpret(*module, inputs);
  std::vector<float> full = DirectTop2(o, inputs);
  int64_t differing = 0;
  for (size_t i = 0; i < full.size(); ++i) differing += std::abs(out[0].data<float>()[i] - full[i]) > 1e-4;
  EXPECT_GT(differing, 0) << "with one slot per expert some tokens must be dropped";
}

TEST(MoeModelTest, SpmdMatchesInterpreter) {
  std::unique_ptr<Module> module = BuildMoe(Small());
  std::vector<Literal> inputs = RandomInputs(*module, 9);
  model_test::ExpectSpmdMatches(*module, inputs, model_test::Interpret(*module, inputs));
}

}  // namespace
}  // namespace gspmd
