// Pipelined LM training step: stage-stacked weights, the forward and backward microbatch
// loops (or the sequential reference), embedding and loss around them.
#include "models/pipelined_lm.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "builder/autodiff.h"
#include "models/lm_layers.h"
#include "models/optimizer.h"
#include "models/train_step_builder.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// The stacked weights of one stage-layer, in this order, each [P, K, ...].
enum StackedWeight { kLn1, kWqkv, kWo, kLn2, kW1, kW2, kStackedCount };

using LoopBody = std::function<std::vector<Instruction*>(ComputationBuilder& c, Instruction* i,
                                                         const std::vector<Instruction*>& values)>;

// for i in [0, trips): values = body(i, values). Returns the final values.
std::vector<Instruction*> CountedLoop(ProgramBuilder& b, const std::string& name, int64_t trips,
                                      const std::vector<Instruction*>& init, const LoopBody& body) {
  std::vector<Shape> shapes = {S32({})};
  for (Instruction* value : init) shapes.push_back(value->shape());
  const Shape tuple = Shape::Tuple(shapes);
  auto cond = b.NewComputation(name + "_cond");
  {
    Instruction* t = cond->Parameter(tuple, "loop");
    Instruction* i = cond->GetTupleElement(t, 0);
    cond->SetRoot(cond->Compare(i, cond->Scalar(static_cast<double>(trips), ElementType::kS32), ComparisonDirection::kLt));
  }
  auto loop = b.NewComputation(name + "_body");
  {
    ComputationBuilder& c = *loop;
    Instruction* t = c.Parameter(tuple, "loop");
    Instruction* i = c.GetTupleElement(t, 0);
    std::vector<Instruction*> values;
    for (size_t k = 0; k < init.size(); ++k) values.push_back(c.GetTupleElement(t, static_cast<int64_t>(k + 1)));
    std::vector<Instruction*> next = body(c, i, values);
    GSPMD_CHECK(next.size() == init.size(), "loop body returned ", next.size(), " values for ", init.size());
    next.insert(next.begin(), c.Add(i, c.Scalar(1, ElementType::kS32)));
    c.SetRoot(c.Tuple(next));
  }
  std::vector<Instruction*> start = {b.Scalar(0, ElementType::kS32)};
  start.insert(start.end(), init.begin(), init.end());
  Instruction* result = b.While(cond->computation(), loop->computation(), b.Tuple(start));
  std::vector<Instruction*> out;
  for (size_t k = 0; k < init.size(); ++k) out.push_back(b.GetTupleElement(result, static_cast<int64_t>(k + 1)));
  return out;
}

class PipelinedLmWriter {
 public:
  explicit PipelinedLmWriter(const ModelConfig& c)
      : c_(c), t_("pipelined_lm", c), P_(c.AxisSize("stage")), K_(c.Int("layers") / P_), NM_(c.Int("microbatches")),
        MB_(c.Int("batch") / NM_), S_(c.Int("seq")), M_(c.Int("d_model")) {}

  std::unique_ptr<Module> Write() {
    CheckDims();
    const int64_t N = c_.Int("heads"), D = c_.Int("head_dim"), H = c_.Int("d_ff"), V = c_.Int("vocab");
    const int64_t P = P_, K = K_, M = M_;
    const std::vector<std::string> st = {"stage"}, md = {"model"}, none = {};
    const std::string width = NormalInit(1.0 / std::sqrt(static_cast<double>(M)));
    emb_ = t_.Weight("embedding", {V, M}, {none, none}, NormalInit(0.02));
    pos_ = t_.Weight("positions", {S_, M}, {none, none}, NormalInit(0.02));
    stacked_.resize(kStackedCount);
    stacked_[kLn1] = t_.Weight("stages.ln1", {P, K, M}, {st, none, none}, "ones");
    stacked_[kWqkv] = t_.Weight("stages.wqkv", {P, K, 3, M, N, D}, {st, none, none, none, md, none}, width);
    stacked_[kWo] = t_.Weight("stages.wo", {P, K, N, D, M}, {st, none, md, none, none},
                              NormalInit(1.0 / std::sqrt(static_cast<double>(N * D))));
    stacked_[kLn2] = t_.Weight("stages.ln2", {P, K, M}, {st, none, none}, "ones");
    stacked_[kW1] = t_.Weight("stages.w1", {P, K, M, H}, {st, none, none, md}, width);
    stacked_[kW2] = t_.Weight("stages.w2", {P, K, H, M}, {st, none, md, none},
                              NormalInit(1.0 / std::sqrt(static_cast<double>(H))));
    final_ln_ = t_.Weight("final_ln", {M}, {none}, "ones");
    softmax_ = t_.Weight("softmax", {V, M}, {none, none}, width);
    LmBatch batch = DeclareLmBatch(t_, {"data"});
    targets_ = batch.targets;
    weights_in_ = batch.weights;

    ProgramBuilder& b = t_.b();
    LmLayers lm(b, "", &t_);
    Instruction* embedded = t_.Split(lm.Embed(batch.tokens, emb_, pos_), {{"data"}, {}, {}});
    if (c_.Choice("schedule") == "sequential") return Finish(Head(Sequential(embedded)), {});
    return Pipelined(embedded);
  }

 private:
  PartitionSpec StageAct() const { return {{"stage"}, {"data"}, {}, {}}; }

  // The final LayerNorm, logits and loss of the layers' output h [B, S, M].
  LossAndAccuracy Head(Instruction* h) {
    LmLayers lm(t_.b(), "", &t_);
    h = lm.LayerNorm(t_.Split(h, {{"data"}, {}, {}}), final_ln_);
    return lm.Head(h, softmax_, targets_, weights_in_, {{"data"}, {}, {}});
  }

  std::unique_ptr<Module> Finish(const LossAndAccuracy& head, std::vector<Instruction*> gradients) {
    std::unique_ptr<Module> module = t_.Finish(head.loss, {{"accuracy", head.accuracy}}, std::move(gradients));
    RecordTask(*module, c_);
    return module;
  }

  // Pipelined: the forward loop, the loss, the backward loop, the embedding's gradient.
  std::unique_ptr<Module> Pipelined(Instruction* embedded) {
    ProgramBuilder& b = t_.b();
    const int64_t P = P_, T = NM_ + P_ - 1;
    const std::vector<int64_t> state_dims = {P, MB_, S_, M_};
    const std::vector<int64_t> io_dims = {NM_, MB_, S_, M_};
    const std::vector<int64_t> saved_dims = {T, P, MB_, S_, M_};
    // Microbatch n holds the sequences b with b mod NM == n: [B] -> [MB, NM] -> [NM, MB].
    Instruction* inputs =
        t_.Split(b.Transpose(b.Reshape(embedded, {MB_, NM_, S_, M_}), {1, 0, 2, 3}), {{}, {"data"}, {}, {}});
    Instruction* state0 = t_.Split(b.Full(F32(state_dims), 0.0), StageAct());
    Instruction* saved0 = t_.Split(b.Full(F32(saved_dims), 0.0), {{}, {"stage"}, {"data"}, {}, {}});
    std::vector<Instruction*> init = {state0, inputs, b.Full(F32(io_dims), 0.0), saved0};
    init.insert(init.end(), stacked_.begin(), stacked_.end());
    std::vector<Instruction*> forward = CountedLoop(b, "pipeline_forward", T, init,
        [&](ComputationBuilder& c, Instruction* i, const std::vector<Instruction*>& v) {
          return ForwardIteration(c, i, v);
        });
    Instruction* outputs = forward[2];
    Instruction* h = b.Reshape(b.Transpose(outputs, {1, 0, 2, 3}), {c_.Int("batch"), S_, M_});
    LossAndAccuracy head = Head(h);

    // d loss / d (outputs, softmax, final_ln) from the head; then the backward loop for the
    // stages; then the embedding's vector-Jacobian product with d inputs.
    std::vector<Instruction*> d_head = Gradients(b, head.loss, {outputs, softmax_, final_ln_});
    std::vector<Instruction*> back = {t_.Split(b.Full(F32(state_dims), 0.0), StageAct()), d_head[0],
                                      b.Full(F32(io_dims), 0.0), forward[3]};
    back.insert(back.end(), stacked_.begin(), stacked_.end());
    for (Instruction* w : stacked_) back.push_back(b.FullLike(w, 0.0));
    std::vector<Instruction*> backward = CountedLoop(b, "pipeline_backward", T, back,
        [&](ComputationBuilder& c, Instruction* k, const std::vector<Instruction*>& v) {
          return BackwardIteration(c, k, v);
        });
    Instruction* d_embedded = b.Reshape(b.Transpose(backward[2], {1, 0, 2, 3}), {c_.Int("batch"), S_, M_});
    Instruction* surrogate = b.ReduceSum(b.Mul(embedded, d_embedded), {0, 1, 2});
    std::vector<Instruction*> d_embed = Gradients(b, surrogate, {emb_, pos_});
    std::vector<Instruction*> grads = {d_embed[0], d_embed[1]};
    for (int w = 0; w < kStackedCount; ++w) grads.push_back(backward[4 + kStackedCount + w]);
    grads.push_back(d_head[2]);
    grads.push_back(d_head[1]);
    return Finish(head, grads);
  }

  // v: state, inputs, outputs, saved, stacked weights.
  std::vector<Instruction*> ForwardIteration(ComputationBuilder& c, Instruction* i, const std::vector<Instruction*>& v) {
    const int64_t P = P_;
    const std::vector<int64_t> dims = {P, MB_, S_, M_};
    Instruction* zero = c.Scalar(0, ElementType::kS32);
    Instruction* fresh = c.Reshape(c.DynamicSlice(v[1], {i, zero, zero, zero}, {1, MB_, S_, M_}), {MB_, S_, M_});
    Instruction* moved = c.Pad(v[0], c.Scalar(0.0), {{1, -1, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}});
    Instruction* first = StageIs(c, 0);
    Instruction* shifted = t_.Split(c, c.Select(first, c.Broadcast(fresh, dims, {1, 2, 3}), moved), StageAct());
    Instruction* saved =
        c.DynamicUpdateSlice(v[3], c.Reshape(shifted, {1, P, MB_, S_, M_}), {i, zero, zero, zero, zero});
    std::vector<Instruction*> w(v.begin() + 4, v.end());
    Instruction* out = t_.Split(c, StageFunction(c, shifted, w), StageAct());
    Instruction* finished = c.Reshape(OneStage(c, out, P - 1), {1, MB_, S_, M_});
    Instruction* slot = c.Sub(i, c.Scalar(static_cast<double>(P - 1), ElementType::kS32));  // clamped below 0
    Instruction* outputs = c.DynamicUpdateSlice(v[2], finished, {slot, zero, zero, zero});
    std::vector<Instruction*> next = {out, v[1], outputs, saved};
    next.insert(next.end(), w.begin(), w.end());
    return next;
  }

  // v: g_next (d of the next iteration's stage inputs), d_outputs, d_inputs, saved, stacked
  // weights, their gradient sums. Runs forward iteration i = T - 1 - k in reverse.
  std::vector<Instruction*> BackwardIteration(ComputationBuilder& c, Instruction* k, const std::vector<Instruction*>& v) {
    const int64_t P = P_, T = NM_ + P_ - 1;
    const std::vector<int64_t> dims = {P, MB_, S_, M_};
    Instruction* zero = c.Scalar(0, ElementType::kS32);
    Instruction* i = c.Sub(c.Scalar(static_cast<double>(T - 1), ElementType::kS32), k);
    Instruction* shifted =
        t_.Split(c, c.Reshape(c.DynamicSlice(v[3], {i, zero, zero, zero, zero}, {1, P, MB_, S_, M_}), dims), StageAct());
    // Stage p's output fed stage p + 1 in the next iteration; the last stage's went to the
    // outputs (when iteration i finished a real microbatch).
    Instruction* from_next = c.Pad(v[0], c.Scalar(0.0), {{-1, 1, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}});
    Instruction* slot = c.Sub(i, c.Scalar(static_cast<double>(P - 1), ElementType::kS32));
    Instruction* finished_real = c.Compare(slot, zero, ComparisonDirection::kGe);
    Instruction* d_finished = c.Reshape(c.DynamicSlice(v[1], {slot, zero, zero, zero}, {1, MB_, S_, M_}), {MB_, S_, M_});
    d_finished = c.Select(c.Broadcast(finished_real, {MB_, S_, M_}, {}), d_finished, c.FullLike(d_finished, 0.0));
    Instruction* g_out = t_.Split(c, c.Select(StageIs(c, P - 1), c.Broadcast(d_finished, dims, {1, 2, 3}), from_next),
                                  StageAct());
    std::vector<Instruction*> w(v.begin() + 4, v.begin() + 4 + kStackedCount);
    Instruction* out = StageFunction(c, shifted, w);  // recomputed (rematerialized)
    Instruction* surrogate = c.ReduceSum(c.Mul(out, g_out), {0, 1, 2, 3});
    std::vector<Instruction*> wrt = {shifted};
    wrt.insert(wrt.end(), w.begin(), w.end());
    std::vector<Instruction*> grads = Gradients(c, surrogate, wrt);
    Instruction* d_shifted = t_.Split(c, grads[0], StageAct());
    // Stage 0's input was microbatch i (clamped past the end: those iterations are bubbles
    // whose cotangent is zero, and the real microbatch's write comes later in this loop).
    Instruction* d_fresh = c.Reshape(OneStage(c, d_shifted, 0), {1, MB_, S_, M_});
    Instruction* d_inputs = c.DynamicUpdateSlice(v[2], d_fresh, {i, zero, zero, zero});
    std::vector<Instruction*> next = {d_shifted, v[1], d_inputs, v[3]};
    next.insert(next.end(), w.begin(), w.end());
    for (int n = 0; n < kStackedCount; ++n) next.push_back(c.Add(v[4 + kStackedCount + n], grads[1 + n]));
    return next;
  }

  Instruction* StageIs(ComputationBuilder& c, int64_t stage) {
    const std::vector<int64_t> dims = {P_, MB_, S_, M_};
    Instruction* index = c.Iota(ElementType::kS32, dims, 0);
    return c.Compare(index, c.Full(S32(dims), static_cast<double>(stage)), ComparisonDirection::kEq);
  }

  // x[stage] of x [P, mb, S, M], as a masked sum over the stage dim: one reduction over the
  // stage axis, where slicing the stage-split dim would first move the block to stage 0.
  Instruction* OneStage(ComputationBuilder& c, Instruction* x, int64_t stage) {
    return c.ReduceSum(c.Select(StageIs(c, stage), x, c.FullLike(x, 0.0)), {0});
  }

  // Weight n of layer k of every stage: [P, ...] from the stacked [P, K, ...].
  Instruction* LayerSlice(ComputationBuilder& c, Instruction* stacked, int64_t k) {
    std::vector<int64_t> starts(stacked->shape().rank(), 0), limits = stacked->shape().dims();
    starts[1] = k;
    limits[1] = k + 1;
    std::vector<int64_t> dims = stacked->shape().dims();
    dims.erase(dims.begin() + 1);
    return c.Reshape(c.Slice(stacked, starts, limits), dims);
  }

  // Every stage's K layers at once on x [P, mb, S, M] (the stage dim is a batch dim, "z").
  Instruction* StageFunction(ComputationBuilder& c, Instruction* x, const std::vector<Instruction*>& w) {
    LmLayers lm(c, "z", &t_);
    const PartitionSpec hidden = {{"stage"}, {"data"}, {}, {"model"}};
    Instruction* h = x;
    for (int64_t k = 0; k < K_; ++k) {
      AttentionWeights attention{LayerSlice(c, w[kWqkv], k), LayerSlice(c, w[kWo], k)};
      h = t_.Split(c, c.Add(h, lm.Attention(lm.LayerNorm(h, LayerSlice(c, w[kLn1], k)), attention)), StageAct());
      h = c.Add(h, lm.Mlp(lm.LayerNorm(h, LayerSlice(c, w[kLn2], k)), LayerSlice(c, w[kW1], k),
                          LayerSlice(c, w[kW2], k), hidden));
      h = t_.Split(c, h, StageAct());
    }
    return h;
  }

  // The same layers one after another on the whole batch (no loop): the reference.
  Instruction* Sequential(Instruction* h) {
    ProgramBuilder& b = t_.b();
    LmLayers lm(b, "", &t_);
    auto at = [&](int n, int64_t p, int64_t k) {
      Instruction* w = stacked_[n];
      std::vector<int64_t> starts(w->shape().rank(), 0), limits = w->shape().dims();
      starts[0] = p;
      limits[0] = p + 1;
      starts[1] = k;
      limits[1] = k + 1;
      std::vector<int64_t> dims(w->shape().dims().begin() + 2, w->shape().dims().end());
      return b.Reshape(b.Slice(w, starts, limits), dims);
    };
    const PartitionSpec act = {{"data"}, {}, {}};
    for (int64_t p = 0; p < P_; ++p) {
      for (int64_t k = 0; k < K_; ++k) {
        AttentionWeights attention{at(kWqkv, p, k), at(kWo, p, k)};
        h = t_.Split(b.Add(h, lm.Attention(lm.LayerNorm(h, at(kLn1, p, k)), attention)), act);
        h = t_.Split(b.Add(h, lm.Mlp(lm.LayerNorm(h, at(kLn2, p, k)), at(kW1, p, k), at(kW2, p, k))), act);
      }
    }
    return h;
  }

  void CheckDims() const {
    const int64_t stages = c_.AxisSize("stage"), data = c_.AxisSize("data"), model = c_.AxisSize("model");
    const std::string mesh = c_.MeshText();
    auto need = [&](const std::string& what, int64_t value, int64_t ways, const std::string& why) {
      if (value % ways == 0) return;
      GSPMD_USER_ERROR("model pipelined_lm: ", what, "=", value, " cannot be split ", ways, " ways (", why,
                       ", --mesh ", mesh, "); choose a multiple of ", ways);
    };
    need("layers", c_.Int("layers"), stages, "one slice of layers per stage");
    need("batch", c_.Int("batch"), c_.Int("microbatches"), "into microbatches");
    need("batch / microbatches", c_.Int("batch") / c_.Int("microbatches"), data, "the data axis splits microbatches");
    need("heads", c_.Int("heads"), model, "the model axis splits heads");
    need("d_ff", c_.Int("d_ff"), model, "the model axis splits the MLP");
  }

  const ModelConfig& c_;
  TrainStepBuilder t_;
  const int64_t P_, K_, NM_, MB_, S_, M_;
  Instruction* emb_ = nullptr;
  Instruction* pos_ = nullptr;
  Instruction* final_ln_ = nullptr;
  Instruction* softmax_ = nullptr;
  std::vector<Instruction*> stacked_;
  Instruction* targets_ = nullptr;
  Instruction* weights_in_ = nullptr;
};

}  // namespace

ModelConfig PipelinedLmConfig() {
  std::vector<ModelKey> keys = LanguageModelKeys(8);
  for (ModelKey& key : keys)
    if (key.name == "batch") key.default_value = "16";
  keys.push_back(IntKey("microbatches", 2, "microbatches per step, pipelined through the stages"));
  keys.push_back(ChoiceKey("schedule", {"pipelined", "sequential"},
                           "pipelined: GSPMD's loop over microbatches; sequential: the same step without it"));
  keys.push_back(ChoiceKey("sharding", {"stage", "none"},
                           "stage: layers split over the stage axis (GSPMD's pipelining); none: no annotations (the "
                           "input of gspmd autoshard)"));
  for (ModelKey& key : OptimizerKeys(0.01)) keys.push_back(std::move(key));
  return ModelConfig("pipelined_lm", std::move(keys), {{"stage", 4}, {"data", 2}, {"model", 1}});
}

std::unique_ptr<Module> BuildPipelinedLm(const ModelConfig& config) {
  if (config.AxisSize("stage") > config.Int("layers"))
    GSPMD_USER_ERROR("model pipelined_lm: ", config.AxisSize("stage"), " stages need at least as many layers (layers=",
                     config.Int("layers"), ")");
  return PipelinedLmWriter(config).Write();
}

}  // namespace gspmd
