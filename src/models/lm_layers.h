// The pieces of a decoder-only language model, written with the builder and shared by the
// dense, MoE and pipelined models: token embedding, pre-LayerNorm, causal multi-head
// attention, the MLP, and the vocabulary logits with softmax cross-entropy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "builder/mesh_split.h"
#include "builder/program_builder.h"
#include "models/model_config.h"

namespace gspmd {

class TrainStepBuilder;

// Keys every language model takes: layers, d_model, heads, head_dim, d_ff, vocab, batch, seq
// and task (the synthetic task its batches come from: copy or reverse).
std::vector<ModelKey> LanguageModelKeys(int64_t layers);
// Records the task and vocabulary as module attributes (step_attributes.h).
void RecordTask(Module& module, const ModelConfig& config);
// The LM's batch inputs: tokens and targets s32[batch, seq], weights f32[batch, seq], split
// over `batch_axes` on the batch dim.
struct LmBatch {
  Instruction* tokens;
  Instruction* targets;
  Instruction* weights;
};
LmBatch DeclareLmBatch(TrainStepBuilder& t, const std::vector<std::string>& batch_axes);

struct AttentionWeights {
  // Query, key and value projections in one weight [lead..., 3, M, heads, head_dim]: one
  // einsum, whose backward sums the three input gradients before any reduction.
  Instruction* wqkv;
  Instruction* wo;  // [lead..., heads, head_dim, M]
};

struct LossAndAccuracy {
  Instruction* loss;      // f32[]: sum(weights * cross-entropy) / sum(weights)
  Instruction* accuracy;  // f32[]: weighted fraction of targets that are the argmax
};

// Writes into `b` (the entry or a loop body). Every activation and weight may carry leading
// dims shared by all of them, labelled `lead` in einsums (e.g. "z" for a stage dim): an
// activation is [lead..., B, S, M]. Annotations go through `split` (null: none).
class LmLayers {
 public:
  LmLayers(ComputationBuilder& b, std::string lead = "", TrainStepBuilder* split = nullptr);

  // scale [lead..., M] times the normalized last dim of h.
  Instruction* LayerNorm(Instruction* h, Instruction* scale);
  // Causal self-attention of a [lead..., B, S, M]; `scores_spec` annotates the [lead..., B,
  // heads, S, S] scores when non-empty.
  Instruction* Attention(Instruction* a, const AttentionWeights& w, const PartitionSpec& scores_spec = {});
  // w2 relu(w1 a), w1 [lead..., M, H], w2 [lead..., H, M]; the hidden [lead..., B, S, H] is
  // annotated with `hidden_spec` when non-empty.
  Instruction* Mlp(Instruction* a, Instruction* w1, Instruction* w2, const PartitionSpec& hidden_spec = {});

  // Entry only (no lead dims). f32 one-hot [B, S, V] of s32 tokens [B, S].
  Instruction* OneHot(Instruction* tokens, int64_t vocab);
  // onehot(tokens) emb + pos: [B, S, M] from emb [V, M] and pos [S, M].
  Instruction* Embed(Instruction* tokens, Instruction* emb, Instruction* pos);
  // Logits h softmax^T [B, S, V] from the softmax weights [V, M] (a weight of their own, not
  // the embedding's: a tied weight's two gradients would each be summed over the batch),
  // annotated with logits_spec, then the weighted softmax cross-entropy against s32 targets
  // [B, S] with f32 weights [B, S].
  LossAndAccuracy Head(Instruction* h, Instruction* softmax, Instruction* targets, Instruction* weights,
                       const PartitionSpec& logits_spec);

 private:
  Instruction* Split(Instruction* value, const PartitionSpec& spec);
  std::string E(const std::string& spec) const;  // prefixes every operand and the output with lead
  int64_t lead_rank() const { return static_cast<int64_t>(lead_.size()); }

  ComputationBuilder& b_;
  std::string lead_;
  TrainStepBuilder* split_;
};

}  // namespace gspmd
