// Language-model layers: embedding, LayerNorm, causal attention, MLP, logits and loss.
#include "models/lm_layers.h"

#include <cmath>
#include <vector>

#include "models/step_attributes.h"
#include "models/train_step_builder.h"
#include "runtime/spmd/like_module.h"
#include "support/diagnostic.h"

namespace gspmd {

std::vector<ModelKey> LanguageModelKeys(int64_t layers) {
  return {
      IntKey("layers", layers, "decoder layers"),
      IntKey("d_model", 32, "model (embedding) width M"),
      IntKey("heads", 8, "attention heads"),
      IntKey("head_dim", 4, "width of each head"),
      IntKey("d_ff", 64, "hidden width H of the MLP"),
      IntKey("vocab", 16, "vocabulary size V"),
      IntKey("batch", 8, "sequences per step B"),
      IntKey("seq", 16, "tokens per sequence S"),
      ChoiceKey("task", {"copy", "reverse"},
                "synthetic task: the second half of each sequence repeats (or reverses) the first"),
  };
}

void RecordTask(Module& module, const ModelConfig& config) {
  SetModuleFrontendAttribute(module, step_attributes::kTask, config.Choice("task"));
  SetModuleFrontendAttribute(module, step_attributes::kVocab, config.Value("vocab"));
}

LmBatch DeclareLmBatch(TrainStepBuilder& t, const std::vector<std::string>& batch_axes) {
  const int64_t b = t.config().Int("batch"), s = t.config().Int("seq");
  const PartitionSpec spec = {batch_axes, {}};
  LmBatch batch;
  batch.tokens = t.Batch("tokens", S32({b, s}), spec, "tokens");
  batch.targets = t.Batch("targets", S32({b, s}), spec, "targets");
  batch.weights = t.Batch("weights", F32({b, s}), spec, "weights");
  return batch;
}

LmLayers::LmLayers(ComputationBuilder& b, std::string lead, TrainStepBuilder* split)
    : b_(b), lead_(std::move(lead)), split_(split) {}

Instruction* LmLayers::Split(Instruction* value, const PartitionSpec& spec) {
  if (split_ == nullptr || spec.empty()) return value;
  return split_->Split(b_, value, spec);
}

std::string LmLayers::E(const std::string& spec) const {
  const size_t comma = spec.find(',');
  const size_t arrow = spec.find("->");
  GSPMD_CHECK(comma != std::string::npos && arrow != std::string::npos, "einsum spec ", spec);
  return lead_ + spec.substr(0, comma + 1) + lead_ + spec.substr(comma + 1, arrow + 2 - comma - 1) + lead_ +
         spec.substr(arrow + 2);
}

Instruction* LmLayers::LayerNorm(Instruction* h, Instruction* scale) {
  const std::vector<int64_t>& dims = h->shape().dims();
  const int64_t last = h->shape().rank() - 1;
  Instruction* mean = b_.BroadcastAlong(b_.Mean(h, {last}), dims, {last});
  Instruction* centered = b_.Sub(h, mean);
  Instruction* var = b_.AddScalar(b_.Mean(b_.Mul(centered, centered), {last}), 1e-5);
  Instruction* normed = b_.Mul(centered, b_.BroadcastAlong(b_.Rsqrt(var), dims, {last}));
  std::vector<int64_t> scale_dims;
  for (int64_t d = 0; d < lead_rank(); ++d) scale_dims.push_back(d);
  scale_dims.push_back(last);
  return b_.Mul(normed, b_.Broadcast(scale, dims, scale_dims));
}

Instruction* LmLayers::Attention(Instruction* a, const AttentionWeights& w, const PartitionSpec& scores_spec) {
  const int64_t head_dim = w.wqkv->shape().dims().back();
  const int64_t seq = a->shape().dim(lead_rank() + 1);
  Instruction* qkv = b_.Einsum(E("bsm,cmnd->cbsnd"), a, w.wqkv);  // [lead..., 3, B, S, N, D]
  auto part = [&](int64_t index) {
    std::vector<int64_t> starts(qkv->shape().rank(), 0), limits = qkv->shape().dims();
    starts[lead_rank()] = index;
    limits[lead_rank()] = index + 1;
    std::vector<int64_t> dims = qkv->shape().dims();
    dims.erase(dims.begin() + lead_rank());
    return b_.Reshape(b_.Slice(qkv, starts, limits), dims);
  };
  Instruction* q = part(0);
  Instruction* k = part(1);
  Instruction* v = part(2);
  Instruction* scores = b_.Scale(b_.Einsum(E("bsnd,btnd->bnst"), q, k), 1.0 / std::sqrt(static_cast<double>(head_dim)));
  scores = Split(scores, scores_spec);
  // Query position s sees key positions t <= s.
  Instruction* s = b_.Iota(ElementType::kS32, {seq, seq}, 0);
  Instruction* t = b_.Iota(ElementType::kS32, {seq, seq}, 1);
  Instruction* causal = b_.Compare(s, t, ComparisonDirection::kGe);
  const int64_t rank = scores->shape().rank();
  Instruction* allowed = b_.Broadcast(causal, scores->shape().dims(), {rank - 2, rank - 1});
  scores = b_.Select(allowed, scores, b_.FullLike(scores, -1e9));
  Instruction* probs = b_.Softmax(scores, rank - 1);
  Instruction* context = b_.Einsum(E("bnst,btnd->bsnd"), probs, v);
  return b_.Einsum(E("bsnd,ndm->bsm"), context, w.wo);
}

Instruction* LmLayers::Mlp(Instruction* a, Instruction* w1, Instruction* w2, const PartitionSpec& hidden_spec) {
  Instruction* hidden = Split(b_.Relu(b_.Einsum(E("bsm,mh->bsh"), a, w1)), hidden_spec);
  return b_.Einsum(E("bsh,hm->bsm"), hidden, w2);
}

Instruction* LmLayers::OneHot(Instruction* tokens, int64_t vocab) {
  std::vector<int64_t> dims = tokens->shape().dims();
  dims.push_back(vocab);
  Instruction* ids = b_.Broadcast(tokens, dims, {0, 1});
  Instruction* index = b_.Iota(ElementType::kS32, dims, 2);
  return b_.Convert(b_.Compare(ids, index, ComparisonDirection::kEq), ElementType::kF32);
}

Instruction* LmLayers::Embed(Instruction* tokens, Instruction* emb, Instruction* pos) {
  Instruction* onehot = OneHot(tokens, emb->shape().dim(0));
  Instruction* h = b_.Einsum("bsv,vm->bsm", onehot, emb);
  return b_.Add(h, b_.Broadcast(pos, h->shape().dims(), {1, 2}));
}

LossAndAccuracy LmLayers::Head(Instruction* h, Instruction* softmax, Instruction* targets, Instruction* weights,
                               const PartitionSpec& logits_spec) {
  const int64_t vocab = softmax->shape().dim(0);
  Instruction* logits = Split(b_.Einsum("bsm,vm->bsv", h, softmax), logits_spec);
  const std::vector<int64_t>& dims = logits->shape().dims();
  Instruction* max = b_.ReduceMax(logits, {2});
  Instruction* shifted = b_.Sub(logits, b_.BroadcastAlong(max, dims, {2}));
  Instruction* log_z = b_.Add(max, b_.Log(b_.ReduceSum(b_.Exp(shifted), {2})));
  Instruction* target_logit = b_.ReduceSum(b_.Mul(OneHot(targets, vocab), logits), {2});
  Instruction* cross_entropy = b_.Sub(log_z, target_logit);  // [B, S]
  Instruction* total_weight = b_.Max(b_.ReduceSum(weights, {0, 1}), b_.Scalar(1.0));
  Instruction* loss = b_.Div(b_.ReduceSum(b_.Mul(cross_entropy, weights), {0, 1}), total_weight);

  // The predicted token: the first index holding the maximum logit.
  Instruction* is_max = b_.Compare(logits, b_.BroadcastAlong(max, dims, {2}), ComparisonDirection::kEq);
  Instruction* index = b_.Iota(ElementType::kS32, dims, 2);
  Instruction* none = b_.Full(S32(dims), static_cast<double>(vocab));
  Instruction* predicted = b_.Reduce(b_.Select(is_max, index, none), {2}, ReduceKind::kMin);
  Instruction* correct = b_.Convert(b_.Compare(predicted, targets, ComparisonDirection::kEq), ElementType::kF32);
  Instruction* accuracy = b_.Div(b_.ReduceSum(b_.Mul(correct, weights), {0, 1}), total_weight);
  return {loss, accuracy};
}

}  // namespace gspmd
