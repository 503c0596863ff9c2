// GShard MoE transformer training step: weights, alternating dense / MoE layers, the loss.
#include "models/gshard_moe.h"

#include <cmath>
#include <string>
#include <vector>

#include "models/lm_layers.h"
#include "models/moe_layer.h"
#include "models/optimizer.h"
#include "models/train_step_builder.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

bool IsMoeLayer(int64_t layer) { return layer % 2 == 1; }

class GShardMoeWriter {
 public:
  explicit GShardMoeWriter(const ModelConfig& c) : c_(c), t_("gshard_moe", c) { t_.set_remat_layers(c.Choice("remat") == "layer"); }

  std::unique_ptr<Module> Write() {
    CheckDims();
    const int64_t L = c_.Int("layers"), M = c_.Int("d_model"), N = c_.Int("heads"), D = c_.Int("head_dim");
    const int64_t H = c_.Int("d_ff"), V = c_.Int("vocab"), S = c_.Int("seq"), B = c_.Int("batch");
    const int64_t E = c_.Int("experts"), EH = c_.Int("expert_hidden"), G = c_.Int("groups");
    const PartitionSpec none2 = {{}, {}}, none3 = {{}, {}, {}}, experts = {{"expert"}, {}, {}};
    const std::string width = NormalInit(1.0 / std::sqrt(static_cast<double>(M)));
    Instruction* emb = t_.Weight("embedding", {V, M}, none2, NormalInit(0.02));
    Instruction* pos = t_.Weight("positions", {S, M}, none2, NormalInit(0.02));
    struct Layer {
      Instruction* ln1;
      AttentionWeights attention;
      Instruction* ln2;
      Instruction* w1 = nullptr;  // dense layers
      Instruction* w2 = nullptr;
      MoeWeights moe{};           // MoE layers
    };
    std::vector<Layer> layers;
    for (int64_t l = 0; l < L; ++l) {
      const std::string p = "l" + std::to_string(l) + ".";
      Layer layer;
      layer.ln1 = t_.Weight(p + "ln1", {M}, {{}}, "ones");
      layer.attention.wqkv = t_.Weight(p + "wqkv", {3, M, N, D}, {{}, {}, {}, {}}, width);
      layer.attention.wo = t_.Weight(p + "wo", {N, D, M}, none3, NormalInit(1.0 / std::sqrt(static_cast<double>(N * D))));
      layer.ln2 = t_.Weight(p + "ln2", {M}, {{}}, "ones");
      if (IsMoeLayer(l)) {
        layer.moe.gate = t_.Weight(p + "gate", {M, E}, none2, width);
        layer.moe.wi = t_.Weight(p + "wi", {E, M, EH}, experts, width);
        layer.moe.wo = t_.Weight(p + "wo_expert", {E, EH, M}, experts, NormalInit(1.0 / std::sqrt(static_cast<double>(EH))));
      } else {
        layer.w1 = t_.Weight(p + "w1", {M, H}, none2, width);
        layer.w2 = t_.Weight(p + "w2", {H, M}, none2, NormalInit(1.0 / std::sqrt(static_cast<double>(H))));
      }
      layers.push_back(layer);
    }
    Instruction* final_scale = t_.Weight("final_ln", {M}, {{}}, "ones");
    Instruction* softmax = t_.Weight("softmax", {V, M}, none2, width);
    const std::vector<std::string> all = {"data", "expert"};
    LmBatch batch = DeclareLmBatch(t_, all);

    ProgramBuilder& b = t_.b();
    LmLayers lm(b, "", &t_);
    const PartitionSpec act = {all, {}, {}};
    MoeSettings moe;
    moe.capacity = ExpertCapacity(c_);
    moe.random_routing = c_.Choice("routing") == "random";
    moe.tokens = {all, {}, {}};
    moe.dispatched = {{"expert"}, {"data"}, {}, {}};
    Instruction* aux_total = b.Scalar(0.0);
    Instruction* routed_total = b.Scalar(0.0);
    Instruction* dropped_total = b.Scalar(0.0);
    // op_name metadata says where each instruction comes from (gspmd simulate's breakdown).
    auto scope = [&](const std::string& name) { b.hlo().set_op_name(name); };
    scope("embed");
    Instruction* h = t_.Split(lm.Embed(batch.tokens, emb, pos), act);
    for (int64_t l = 0; l < L; ++l) {
      const Layer& layer = layers[l];
      const std::string name = "layer_" + std::to_string(l);
      scope(name + "/attention");
      h = t_.Split(b.Add(h, lm.Attention(lm.LayerNorm(h, layer.ln1), layer.attention)), act);
      scope(name + (IsMoeLayer(l) ? "/moe" : "/mlp"));
      Instruction* a = lm.LayerNorm(h, layer.ln2);
      if (!IsMoeLayer(l)) {
        h = t_.Split(b.Add(h, lm.Mlp(a, layer.w1, layer.w2)), act);
        continue;
      }
      moe.salt = static_cast<uint32_t>(c_.Int("seed")) * 0x27D4EB2Fu + static_cast<uint32_t>(l);
      Instruction* grouped = t_.Split(b.Reshape(a, {G, B * S / G, M}), moe.tokens);
      MoeResult r = MoeLayer(b, t_, grouped, layer.moe, t_.step(), moe);
      h = t_.Split(b.Add(h, b.Reshape(r.y, {B, S, M})), act);
      aux_total = b.Add(aux_total, r.aux_loss);
      routed_total = b.Add(routed_total, r.routed);
      dropped_total = b.Add(dropped_total, r.dropped);
    }
    scope("head");
    h = lm.LayerNorm(h, final_scale);
    LossAndAccuracy head = lm.Head(h, softmax, batch.targets, batch.weights, act);
    Instruction* loss = b.Add(head.loss, b.Scale(aux_total, c_.Number("aux_loss_weight")));
    Instruction* fraction = b.Div(dropped_total, b.Max(routed_total, b.Scalar(1.0)));
    scope("");
    std::unique_ptr<Module> module = t_.Finish(loss, {{"accuracy", head.accuracy},
                                                      {"aux_loss", aux_total},
                                                      {"dropped_tokens", dropped_total},
                                                      {"dropped_fraction", fraction}});
    RecordTask(*module, c_);
    return module;
  }

 private:
  void CheckDims() const {
    const int64_t data = c_.AxisSize("data"), expert = c_.AxisSize("expert"), devices = data * expert;
    const std::string mesh = c_.MeshText();
    auto need = [&](const std::string& what, int64_t value, int64_t ways, const std::string& axes) {
      if (value % ways == 0) return;
      GSPMD_USER_ERROR("model gshard_moe: ", what, "=", value, " cannot be split ", ways, " ways over mesh axes ",
                       axes, " (--mesh ", mesh, "); choose a multiple of ", ways);
    };
    if (c_.Int("experts") < 2) GSPMD_USER_ERROR("model gshard_moe: top-2 gating needs experts >= 2, got ", c_.Int("experts"));
    need("batch", c_.Int("batch"), devices, "data*expert");
    need("groups", c_.Int("groups"), devices, "data*expert");
    need("experts", c_.Int("experts"), expert, "expert");
    const int64_t tokens = c_.Int("batch") * c_.Int("seq");
    if (tokens % c_.Int("groups") != 0)
      GSPMD_USER_ERROR("model gshard_moe: groups=", c_.Int("groups"), " does not divide the batch*seq=", tokens,
                       " tokens evenly");
  }

  const ModelConfig& c_;
  TrainStepBuilder t_;
};

}  // namespace

int64_t ExpertCapacity(const ModelConfig& c) {
  const double tokens = static_cast<double>(c.Int("batch") * c.Int("seq"));
  const double per_group = c.Number("capacity_factor") * 2.0 * tokens /
                           static_cast<double>(c.Int("groups") * c.Int("experts"));
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(per_group - 1e-9)));
}

ModelConfig GShardMoeConfig() {
  std::vector<ModelKey> keys = LanguageModelKeys(2);
  keys.push_back(IntKey("experts", 8, "experts E per MoE layer"));
  keys.push_back(IntKey("expert_hidden", 64, "hidden width of each expert"));
  keys.push_back(NumberKey("capacity_factor", 2.0, "expert capacity = capacity_factor * 2N / (G * E)"));
  keys.push_back(IntKey("groups", 8, "groups G the tokens are dispatched in"));
  keys.push_back(NumberKey("aux_loss_weight", 0.01, "weight of the load-balancing loss"));
  keys.push_back(ChoiceKey("routing", {"random", "top2"},
                           "random: keep the second expert with probability 2 * its gate (GShard); top2: always"));
  keys.push_back(IntKey("seed", 1, "seed of the random routing", 0));
  keys.push_back(ChoiceKey("sharding", {"expert", "none"},
                           "expert: GShard's recipe (experts over the expert axis); none: no annotations (the "
                           "input of gspmd autoshard)"));
  for (ModelKey& key : OptimizerKeys(0.01)) keys.push_back(std::move(key));
  keys.push_back(RematKey());
  return ModelConfig("gshard_moe", std::move(keys), {{"data", 2}, {"expert", 4}});
}

std::unique_ptr<Module> BuildGShardMoe(const ModelConfig& config) { return GShardMoeWriter(config).Write(); }

}  // namespace gspmd
