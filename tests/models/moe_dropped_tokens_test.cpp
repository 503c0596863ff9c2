// The GShard MoE model's dropped-token count equals a plain C++ reference: the model's
// forward pass up to its MoE layer's gating, written out with loops, and GShard's routing
// (top-2, random second expert, capacity in token order) counted by hand.
#include <algorithm>
#include <cmath>
#include <map>

#include <gtest/gtest.h>

#include "models/gshard_moe.h"
#include "models/moe_layer.h"
#include "runtime/interp/evaluator.h"
#include "train/step_inputs.h"
#include "train_test_util.h"

namespace gspmd {
namespace {

using Tensor = std::vector<double>;

struct Dims {
  int64_t B, S, M, N, D, H, V, E;
};

class Reference {
 public:
  Reference(const StepSignature& s, const std::vector<Literal>& inputs) {
    for (size_t i = 0; i < s.inputs.size(); ++i) {
      Tensor values(static_cast<size_t>(inputs[i].element_count()));
      for (size_t k = 0; k < values.size(); ++k) values[k] = inputs[i].GetAsDouble(static_cast<int64_t>(k));
      by_name_[s.inputs[i].name] = std::move(values);
    }
  }
  const Tensor& operator[](const std::string& name) const { return by_name_.at(name); }

 private:
  std::map<std::string, Tensor> by_name_;
};

// h[t, :] normalized over M, times scale.
Tensor LayerNorm(const Tensor& h, const Tensor& scale, int64_t tokens, int64_t M) {
  Tensor out(h.size());
  for (int64_t t = 0; t < tokens; ++t) {
    double mean = 0, var = 0;
    for (int64_t m = 0; m < M; ++m) mean += h[t * M + m];
    mean /= static_cast<double>(M);
    for (int64_t m = 0; m < M; ++m) var += (h[t * M + m] - mean) * (h[t * M + m] - mean);
    const double r = 1.0 / std::sqrt(var / static_cast<double>(M) + 1e-5);
    for (int64_t m = 0; m < M; ++m) out[t * M + m] = (h[t * M + m] - mean) * r * scale[m];
  }
  return out;
}

// h += attention(a) with wqkv [3, M, N, D] and wo [N, D, M], causal, per sequence.
void AddAttention(Tensor& h, const Tensor& a, const Tensor& wqkv, const Tensor& wo, const Dims& d) {
  const int64_t ND = d.N * d.D;
  for (int64_t b = 0; b < d.B; ++b) {
    Tensor q(d.S * ND, 0), k(d.S * ND, 0), v(d.S * ND, 0);
    for (int64_t s = 0; s < d.S; ++s)
      for (int64_t m = 0; m < d.M; ++m) {
        const double x = a[(b * d.S + s) * d.M + m];
        for (int64_t j = 0; j < ND; ++j) {
          q[s * ND + j] += x * wqkv[(0 * d.M + m) * ND + j];
          k[s * ND + j] += x * wqkv[(1 * d.M + m) * ND + j];
          v[s * ND + j] += x * wqkv[(2 * d.M + m) * ND + j];
        }
      }
    for (int64_t n = 0; n < d.N; ++n)
      for (int64_t s = 0; s < d.S; ++s) {
        Tensor p(d.S);
        double top = -1e300;
        for (int64_t t = 0; t <= s; ++t) {
          double dot = 0;
          for (int64_t e = 0; e < d.D; ++e) dot += q[s * ND + n * d.D + e] * k[t * ND + n * d.D + e];
          p[t] = dot / std::sqrt(static_cast<double>(d.D));
          top = std::max(top, p[t]);
        }
        double sum = 0;
        for (int64_t t = 0; t <= s; ++t) sum += p[t] = std::exp(p[t] - top);
        for (int64_t e = 0; e < d.D; ++e) {
          double context = 0;
          for (int64_t t = 0; t <= s; ++t) context += p[t] / sum * v[t * ND + n * d.D + e];
          for (int64_t m = 0; m < d.M; ++m) h[(b * d.S + s) * d.M + m] += context * wo[(n * d.D + e) * d.M + m];
        }
      }
  }
}

void AddMlp(Tensor& h, const Tensor& a, const Tensor& w1, const Tensor& w2, const Dims& d) {
  for (int64_t t = 0; t < d.B * d.S; ++t) {
    Tensor hidden(d.H, 0);
    for (int64_t m = 0; m < d.M; ++m)
      for (int64_t j = 0; j < d.H; ++j) hidden[j] += a[t * d.M + m] * w1[m * d.H + j];
    for (int64_t j = 0; j < d.H; ++j)
      for (int64_t m = 0; m < d.M; ++m) h[t * d.M + m] += std::max(hidden[j], 0.0) * w2[j * d.M + m];
  }
}

// GShard's routing of the MoE layer input a, one group per sequence: the assignments
// dropped for capacity.
int64_t DroppedByRouting(const Tensor& a, const Tensor& gate, const Dims& d, int64_t capacity, bool random,
                         uint32_t salt) {
  int64_t dropped = 0;
  for (int64_t g = 0; g < d.B; ++g) {
    std::vector<int64_t> load(d.E, 0);
    std::vector<int64_t> first(d.S), second(d.S, -1);
    for (int64_t s = 0; s < d.S; ++s) {
      Tensor p(d.E, 0);
      for (int64_t m = 0; m < d.M; ++m)
        for (int64_t e = 0; e < d.E; ++e) p[e] += a[(g * d.S + s) * d.M + m] * gate[m * d.E + e];
      const double top = *std::max_element(p.begin(), p.end());
      double sum = 0;
      for (double& x : p) sum += x = std::exp(x - top);
      for (double& x : p) x /= sum;
      first[s] = std::max_element(p.begin(), p.end()) - p.begin();
      Tensor rest = p;
      rest[first[s]] = -1;
      const int64_t e2 = std::max_element(rest.begin(), rest.end()) - rest.begin();
      const double g2 = p[e2] / (p[first[s]] + p[e2] + 1e-9);
      if (!random || RoutingUniform(salt, 0, g, s, d.S) < 2.0 * g2) second[s] = e2;
    }
    // Top-1 choices fill each expert's buffer first, in token order, then the top-2 ones.
    for (int64_t s = 0; s < d.S; ++s)
      if (load[first[s]]++ >= capacity) ++dropped;
    for (int64_t s = 0; s < d.S; ++s)
      if (second[s] >= 0 && load[second[s]]++ >= capacity) ++dropped;
  }
  return dropped;
}

void ExpectDroppedMatchesReference(const std::vector<std::string>& settings) {
  const std::vector<std::string> all = [&] {
    std::vector<std::string> s = {"layers=2", "groups=8"};
    s.insert(s.end(), settings.begin(), settings.end());
    return s;
  }();
  ModelConfig config = train_test::Config("gshard_moe", all);
  std::unique_ptr<Module> module = train_test::Build("gshard_moe", all);
  const StepSignature s = ReadStepSignature(*module, "");
  // The first step's inputs, as `gspmd train` makes them (seed 0).
  std::vector<Literal> inputs;
  const Dims d{config.Int("batch"), config.Int("seq"), config.Int("d_model"), config.Int("heads"),
               config.Int("head_dim"), config.Int("d_ff"), config.Int("vocab"), config.Int("experts")};
  TaskBatch batch = MakeTaskBatch("copy", d.V, d.B, d.S, 0, 0);
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    const StepInput& input = s.inputs[i];
    if (input.init == "task(tokens)") inputs.push_back(batch.tokens);
    else if (input.init == "task(targets)") inputs.push_back(batch.targets);
    else if (input.init == "task(weights)") inputs.push_back(batch.weights);
    else inputs.push_back(InitialValue(input, static_cast<int64_t>(i), 0));
  }
  const std::vector<Literal> out = FlattenTuple(EvaluateModule(*module, inputs));
  const double program_dropped = out[train_test::MetricIndex(*module, "dropped_tokens")].GetAsDouble(0);

  Reference w(s, inputs);
  const int64_t tokens = d.B * d.S;
  Tensor h(tokens * d.M);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t m = 0; m < d.M; ++m)
      h[t * d.M + m] = w["embedding"][batch.tokens.data<int32_t>()[t] * d.M + m] + w["positions"][(t % d.S) * d.M + m];
  AddAttention(h, LayerNorm(h, w["l0.ln1"], tokens, d.M), w["l0.wqkv"], w["l0.wo"], d);
  AddMlp(h, LayerNorm(h, w["l0.ln2"], tokens, d.M), w["l0.w1"], w["l0.w2"], d);
  AddAttention(h, LayerNorm(h, w["l1.ln1"], tokens, d.M), w["l1.wqkv"], w["l1.wo"], d);
  const Tensor a = LayerNorm(h, w["l1.ln2"], tokens, d.M);
  const uint32_t salt = static_cast<uint32_t>(config.Int("seed")) * 0x27D4EB2Fu + 1u;
  const int64_t reference =
      DroppedByRouting(a, w["l1.gate"], d, ExpertCapacity(config), config.Choice("routing") == "random", salt);
  EXPECT_GT(reference, 0) << "the small capacity should drop tokens";
  EXPECT_EQ(program_dropped, static_cast<double>(reference));
}

TEST(MoeDroppedTokensTest, SmallCapacityDropsWhatAPlainReferenceCounts) {
  ExpectDroppedMatchesReference({"capacity_factor=0.5"});
}

TEST(MoeDroppedTokensTest, WithoutRandomRoutingToo) { ExpectDroppedMatchesReference({"capacity_factor=0.5", "routing=top2"}); }

TEST(MoeDroppedTokensTest, AnotherSeedAndCapacity) {
  ExpectDroppedMatchesReference({"capacity_factor=1", "seed=7"});
}

}  // namespace
}  // namespace gspmd
