// Transformer model program: layer norm, causal multi-head attention, MLP, loss and SGD step.
#include "models/transformer.h"

#include <cmath>
#include <string>
#include <vector>

#include "builder/autodiff.h"
#include "builder/mesh_split.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

constexpr int64_t kData = 0;   // mesh dims
constexpr int64_t kModel = 1;
constexpr int64_t kNone = kReplicated;

struct Weight {
  Instruction* value;
  Sharding sharding;
};

struct LayerWeights {
  Instruction* ln1;
  Instruction* wq;
  Instruction* wk;
  Instruction* wv;
  Instruction* wo;
  Instruction* ln2;
  Instruction* w1;
  Instruction* w2;
};

class TransformerWriter {
 public:
  TransformerWriter(const ModelOptions& o)
      : o_(o), p_(o.train ? "transformer_train" : "transformer"),
        mesh_(MakeMesh({{"data", o.data_parallel}, {"model", o.model_parallel}})) {}

  std::unique_ptr<Module> Write() {
    const std::vector<int64_t> act = {o_.batch, o_.seq, o_.d_model};
    Instruction* x = Param(F32(act), "x", {kData, kNone, kNone});
    Instruction* y = Param(F32(act), "y", {kData, kNone, kNone});
    std::vector<LayerWeights> layers;
    for (int64_t l = 0; l < o_.layers; ++l) layers.push_back(LayerParams(l));
    Instruction* mask = CausalMask();
    Instruction* h = x;
    for (const LayerWeights& w : layers) h = Layer(h, w, mask);
    if (!o_.train) return p_.Build(h, MeshSharding(mesh_, {kData, kNone, kNone}, 3));

    Instruction* diff = p_.Sub(h, y);
    Instruction* loss = p_.Name(p_.Mean(p_.Mul(diff, diff), {0, 1, 2}), "loss");
    std::vector<Instruction*> values;
    for (const Weight& w : weights_) values.push_back(w.value);
    std::vector<Instruction*> grads = Gradients(p_, loss, values);
    std::vector<Instruction*> results = {loss};
    std::vector<std::optional<Sharding>> shardings = {Sharding::Replicated()};
    for (size_t i = 0; i < weights_.size(); ++i) {
      Instruction* step = p_.Scale(grads[i], o_.learning_rate);
      results.push_back(p_.Name(p_.Sub(weights_[i].value, step), weights_[i].value->name() + "_new"));
      shardings.push_back(weights_[i].sharding);
    }
    return p_.Build(results, shardings);
  }

 private:
  Instruction* Param(Shape shape, const std::string& name, const std::vector<int64_t>& mapping) {
    return ShardParameter(p_.Parameter(std::move(shape), name), mesh_, mapping);
  }

  Instruction* WeightParam(Shape shape, const std::string& name, const std::vector<int64_t>& mapping) {
    Instruction* w = Param(std::move(shape), name, mapping);
    weights_.push_back({w, *w->sharding()});
    return w;
  }

  LayerWeights LayerParams(int64_t l) {
    const std::string prefix = "l" + std::to_string(l) + "_";
    const int64_t d = o_.d_model, n = o_.heads, hd = o_.head_dim, f = o_.d_ff;
    LayerWeights w;
    w.ln1 = WeightParam(F32({d}), prefix + "ln1", {kNone});
    w.wq = WeightParam(F32({d, n, hd}), prefix + "wq", {kNone, kModel, kNone});
    w.wk = WeightParam(F32({d, n, hd}), prefix + "wk", {kNone, kModel, kNone});
    w.wv = WeightParam(F32({d, n, hd}), prefix + "wv", {kNone, kModel, kNone});
    w.wo = WeightParam(F32({n, hd, d}), prefix + "wo", {kModel, kNone, kNone});
    w.ln2 = WeightParam(F32({d}), prefix + "ln2", {kNone});
    w.w1 = WeightParam(F32({d, f}), prefix + "w1", {kNone, kModel});
    w.w2 = WeightParam(F32({f, d}), prefix + "w2", {kModel, kNone});
    return w;
  }

  // pred[seq, seq]: query position s may attend to key position t when s >= t.
  Instruction* CausalMask() {
    Instruction* s = p_.Iota(ElementType::kS32, {o_.seq, o_.seq}, 0);
    Instruction* t = p_.Iota(ElementType::kS32, {o_.seq, o_.seq}, 1);
    return p_.Compare(s, t, ComparisonDirection::kGe);
  }

  Instruction* LayerNorm(Instruction* h, Instruction* scale) {
    const std::vector<int64_t>& dims = h->shape().dims();
    Instruction* mean = p_.BroadcastAlong(p_.Mean(h, {2}), dims, {2});
    Instruction* centered = p_.Sub(h, mean);
    Instruction* var = p_.AddScalar(p_.Mean(p_.Mul(centered, centered), {2}), 1e-5);
    Instruction* normed = p_.Mul(centered, p_.BroadcastAlong(p_.Rsqrt(var), dims, {2}));
    return p_.Mul(normed, p_.Broadcast(scale, dims, {2}));
  }

  Instruction* Attention(Instruction* a, const LayerWeights& w, Instruction* mask) {
    Instruction* q = p_.Einsum("bsd,dnh->bsnh", a, w.wq);
    Instruction* k = p_.Einsum("bsd,dnh->bsnh", a, w.wk);
    Instruction* v = p_.Einsum("bsd,dnh->bsnh", a, w.wv);
    Instruction* scores = p_.Scale(p_.Einsum("bsnh,btnh->bnst", q, k), 1.0 / std::sqrt(static_cast<double>(o_.head_dim)));
    Instruction* allowed = p_.Broadcast(mask, scores->shape().dims(), {2, 3});
    scores = p_.Select(allowed, scores, p_.FullLike(scores, -1e9));
    Instruction* probs = p_.Softmax(scores, 3);
    Instruction* context = p_.Einsum("bnst,btnh->bsnh", probs, v);
    return p_.Einsum("bsnh,nhd->bsd", context, w.wo);
  }

  Instruction* Mlp(Instruction* a, const LayerWeights& w) {
    Instruction* hidden = p_.Relu(p_.Einsum("bsd,df->bsf", a, w.w1));
    return p_.Einsum("bsf,fd->bsd", hidden, w.w2);
  }

  Instruction* Layer(Instruction* h, const LayerWeights& w, Instruction* mask) {
    h = mesh_split(p_, h, mesh_, std::vector<int64_t>{kData, kNone, kNone});
    h = p_.Add(h, Attention(LayerNorm(h, w.ln1), w, mask));
    return p_.Add(h, Mlp(LayerNorm(h, w.ln2), w));
  }

  const ModelOptions& o_;
  ProgramBuilder p_;
  Mesh mesh_;
  std::vector<Weight> weights_;
};

}  // namespace

std::unique_ptr<Module> BuildTransformer(const ModelOptions& options) {
  if (options.layers < 1) GSPMD_USER_ERROR("transformer: layers must be >= 1, got ", options.layers);
  return TransformerWriter(options).Write();
}

}  // namespace gspmd
