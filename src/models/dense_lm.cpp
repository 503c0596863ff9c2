// Dense decoder LM training step: weights per sharding recipe, the forward pass, the loss.
#include "models/dense_lm.h"

#include <cmath>
#include <string>
#include <vector>

#include "models/lm_layers.h"
#include "models/optimizer.h"
#include "models/train_step_builder.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

using Axes = std::vector<std::string>;

// Where each kind of tensor is split, per recipe. Weights of the fsdp recipe are placed per
// weight (FullySharded) instead.
struct Recipe {
  Axes batch;                                    // B of tokens and activations
  PartitionSpec act, hidden, logits;             // [B,S,M], [B,S,H], [B,S,V]
  PartitionSpec emb, pos, scale, wqkv, wo, w1, w2;
  bool fully_sharded = false;
};

Recipe ChooseRecipe(const std::string& name) {
  const Axes x = {"x"}, y = {"y"}, xy = {"x", "y"}, none = {};
  if (name == "none")  // nothing split (api::Model then removes the annotations altogether)
    return {none, {none, none, none}, {none, none, none}, {none, none, none}, {none, none}, {none, none}, {none},
            {none, none, none, none}, {none, none, none}, {none, none}, {none, none}};
  if (name == "2d")
    return {x, {x, none, y}, {x, none, y}, {x, none, y}, {y, x}, {none, y}, {y}, {none, x, y, none}, {y, none, x}, {x, y},
            {y, x}};
  if (name == "megatron")
    return {x, {x, none, none}, {x, none, y}, {x, none, y}, {y, none}, {none, none}, {none}, {none, none, y, none},
            {y, none, none}, {none, y}, {y, none}};
  Recipe data = {xy, {xy, none, none}, {xy, none, none}, {xy, none, none}, {none, none}, {none, none}, {none},
                 {none, none, none, none}, {none, none, none}, {none, none}, {none, none}};
  data.fully_sharded = name == "fsdp";
  return data;
}

class DenseLmWriter {
 public:
  explicit DenseLmWriter(const ModelConfig& c) : c_(c), t_("dense_lm", c), recipe_(ChooseRecipe(c.Choice("sharding"))) {
    t_.set_remat_layers(c.Choice("remat") == "layer");
  }

  std::unique_ptr<Module> Write() {
    CheckDims();
    const int64_t L = c_.Int("layers"), M = c_.Int("d_model"), N = c_.Int("heads"), D = c_.Int("head_dim");
    const int64_t H = c_.Int("d_ff"), V = c_.Int("vocab"), S = c_.Int("seq");
    const std::string width = NormalInit(1.0 / std::sqrt(static_cast<double>(M)));
    Instruction* emb = W("embedding", {V, M}, recipe_.emb, NormalInit(0.02));
    Instruction* pos = W("positions", {S, M}, recipe_.pos, NormalInit(0.02));
    struct Layer {
      Instruction* ln1;
      AttentionWeights attention;
      Instruction* ln2;
      Instruction* w1;
      Instruction* w2;
    };
    std::vector<Layer> layers;
    for (int64_t l = 0; l < L; ++l) {
      const std::string p = "l" + std::to_string(l) + ".";
      Layer layer;
      layer.ln1 = W(p + "ln1", {M}, recipe_.scale, "ones");
      layer.attention.wqkv = W(p + "wqkv", {3, M, N, D}, recipe_.wqkv, width);
      layer.attention.wo = W(p + "wo", {N, D, M}, recipe_.wo, NormalInit(1.0 / std::sqrt(static_cast<double>(N * D))));
      layer.ln2 = W(p + "ln2", {M}, recipe_.scale, "ones");
      layer.w1 = W(p + "w1", {M, H}, recipe_.w1, width);
      layer.w2 = W(p + "w2", {H, M}, recipe_.w2, NormalInit(1.0 / std::sqrt(static_cast<double>(H))));
      layers.push_back(layer);
    }
    Instruction* final_scale = W("final_ln", {M}, recipe_.scale, "ones");
    Instruction* softmax = W("softmax", {V, M}, recipe_.emb, width);
    LmBatch batch = DeclareLmBatch(t_, recipe_.batch);

    LmLayers lm(t_.b(), "", &t_);
    // op_name metadata says where each instruction comes from (gspmd simulate's breakdown).
    auto scope = [&](const std::string& name) { t_.b().hlo().set_op_name(name); };
    scope("embed");
    Instruction* h = t_.Split(lm.Embed(batch.tokens, emb, pos), recipe_.act);
    for (size_t l = 0; l < layers.size(); ++l) {
      const Layer& layer = layers[l];
      scope("layer_" + std::to_string(l) + "/attention");
      h = t_.Split(t_.b().Add(h, lm.Attention(lm.LayerNorm(h, layer.ln1), layer.attention)), recipe_.act);
      scope("layer_" + std::to_string(l) + "/mlp");
      h = t_.Split(t_.b().Add(h, lm.Mlp(lm.LayerNorm(h, layer.ln2), layer.w1, layer.w2, recipe_.hidden)), recipe_.act);
    }
    scope("head");
    h = lm.LayerNorm(h, final_scale);
    LossAndAccuracy head = lm.Head(h, softmax, batch.targets, batch.weights, recipe_.logits);
    scope("");
    std::unique_ptr<Module> module = t_.Finish(head.loss, {{"accuracy", head.accuracy}});
    RecordTask(*module, c_);
    return module;
  }

 private:
  Instruction* W(const std::string& name, const std::vector<int64_t>& dims, const PartitionSpec& spec,
                 const std::string& init) {
    return t_.Weight(name, dims, recipe_.fully_sharded ? FullySharded(dims) : spec, init);
  }

  // Every device holds a slice of the weight: x and y split its largest dim they divide
  // (dim 0 when none does, which CheckEvenSplits reports).
  PartitionSpec FullySharded(const std::vector<int64_t>& dims) const {
    const int64_t devices = c_.mesh().num_devices();
    size_t best = 0;
    bool found = false;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] % devices != 0 || (found && dims[d] <= dims[best])) continue;
      best = d;
      found = true;
    }
    PartitionSpec spec(dims.size());
    spec[best] = {"x", "y"};
    return spec;
  }

  // The key-level view of the divisibility the recipe needs (clearer than a tensor's dim).
  void CheckDims() const {
    const std::string& recipe = c_.Choice("sharding");
    const int64_t x = c_.AxisSize("x"), y = c_.AxisSize("y");
    auto need = [&](const char* key, int64_t ways, const char* axes) {
      if (c_.Int(key) % ways == 0) return;
      GSPMD_USER_ERROR("model dense_lm: ", key, "=", c_.Int(key), " cannot be split ", ways, " ways over mesh axes ",
                       axes, " (sharding=", recipe, ", --mesh ", c_.MeshText(), "); choose a multiple of ", ways);
    };
    if (recipe == "2d") {
      need("batch", x, "x");
      need("d_model", x, "x");
      need("d_model", y, "y");
      need("heads", y, "y");
      need("d_ff", y, "y");
      need("vocab", y, "y");
    } else if (recipe == "megatron") {
      need("batch", x, "x");
      need("heads", y, "y");
      need("d_ff", y, "y");
      need("vocab", y, "y");
    } else if (recipe != "none") {
      need("batch", x * y, "x*y");
    }
  }

  const ModelConfig& c_;
  TrainStepBuilder t_;
  Recipe recipe_;
};

}  // namespace

ModelConfig DenseLmConfig() {
  std::vector<ModelKey> keys = LanguageModelKeys(2);
  keys.push_back(ChoiceKey("sharding", {"2d", "megatron", "data", "fsdp", "none"},
                           "2d: GSPMD's 2-D recipe; megatron: 1-D; data: data parallel; fsdp: weights and "
                           "optimizer state fully sharded; none: no annotations (the input of gspmd autoshard)"));
  for (ModelKey& key : OptimizerKeys(0.01)) keys.push_back(std::move(key));
  keys.push_back(RematKey());
  return ModelConfig("dense_lm", std::move(keys), {{"x", 2}, {"y", 4}});
}

std::unique_ptr<Module> BuildDenseLm(const ModelConfig& config) { return DenseLmWriter(config).Write(); }

}  // namespace gspmd
