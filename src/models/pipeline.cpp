// Pipeline model program: the microbatch loop (condition + body) over stage-sharded state.
#include "models/pipeline.h"

#include <vector>

#include "builder/mesh_split.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

constexpr int64_t kStage = 0;  // the mesh's only dim
constexpr int64_t kNone = kReplicated;

void CheckOptions(const ModelOptions& o) {
  if (o.stages < 2) GSPMD_USER_ERROR("pipeline: stages must be >= 2, got ", o.stages);
}

}  // namespace

std::unique_ptr<Module> BuildPipeline(const ModelOptions& o) {
  CheckOptions(o);
  const int64_t l = o.stages, n = o.microbatches, b = o.microbatch_size, d = o.d_model;
  const std::vector<int64_t> stage_split = {kStage, kNone, kNone};
  Mesh mesh = MakeMesh({{"stage", l}});
  ProgramBuilder p("pipeline");
  const Shape state_shape = F32({l, b, d});
  const Shape io_shape = F32({n, b, d});
  const Shape w_shape = F32({l, d, d});
  const Shape loop_shape = Shape::Tuple({S32({}), state_shape, io_shape, io_shape, w_shape});

  auto cond = p.NewComputation("pipeline_cond");
  {
    Instruction* t = cond->Parameter(loop_shape, "loop");
    Instruction* i = cond->GetTupleElement(t, 0);
    cond->SetRoot(cond->Compare(i, cond->Scalar(static_cast<double>(n + l - 1), ElementType::kS32),
                                ComparisonDirection::kLt));
  }
  auto body = p.NewComputation("pipeline_body");
  {
    ComputationBuilder& c = *body;
    Instruction* t = c.Parameter(loop_shape, "loop");
    Instruction* i = c.GetTupleElement(t, 0);
    Instruction* state = c.GetTupleElement(t, 1);
    Instruction* inputs = c.GetTupleElement(t, 2);
    Instruction* outputs = c.GetTupleElement(t, 3);
    Instruction* w = c.GetTupleElement(t, 4);
    Instruction* zero = c.Scalar(0, ElementType::kS32);
    // Stage 0 takes microbatch i (clamped past the end: those never reach the output);
    // stage k takes stage k-1's previous result.
    // The shift by one stage is a pad (low 1, high -1) along the sharded stage dim: one
    // collective-permute;
    // the fresh microbatch is broadcast to every stage and selected on stage 0, so that it
    // needs no communication.
    Instruction* fresh = c.Reshape(c.DynamicSlice(inputs, {i, zero, zero}, {1, b, d}), {b, d});
    Instruction* moved = c.Pad(state, c.Scalar(0.0), {{1, -1, 0}, {0, 0, 0}, {0, 0, 0}});
    Instruction* stage = c.Iota(ElementType::kS32, {l, b, d}, 0);
    Instruction* first = c.Compare(stage, c.Full(S32({l, b, d}), 0.0), ComparisonDirection::kEq);
    Instruction* shifted =
        mesh_split(c, c.Select(first, c.Broadcast(fresh, {l, b, d}, {1, 2}), moved), mesh, stage_split);
    Instruction* computed = c.Relu(c.Einsum("lbd,lde->lbe", shifted, w));
    Instruction* next_state = mesh_split(c, computed, mesh, stage_split);
    // The last stage finishes microbatch i - (l - 1); earlier writes land (clamped) on slot 0
    // and are overwritten by its real value.
    Instruction* finished = c.Slice(next_state, {l - 1, 0, 0}, {l, b, d});
    Instruction* slot = c.Sub(i, c.Scalar(static_cast<double>(l - 1), ElementType::kS32));
    Instruction* next_outputs = c.DynamicUpdateSlice(outputs, finished, {slot, zero, zero});
    Instruction* next_i = c.Add(i, c.Scalar(1, ElementType::kS32));
    c.SetRoot(c.Tuple({next_i, next_state, inputs, next_outputs, w}));
  }

  Instruction* inputs = ShardParameter(p.Parameter(io_shape, "inputs"), mesh, {kNone, kNone, kNone});
  Instruction* w = ShardParameter(p.Parameter(w_shape, "w"), mesh, stage_split);
  Instruction* state = mesh_split(p, p.Full(state_shape, 0.0), mesh, stage_split);
  Instruction* init = p.Tuple({p.Scalar(0, ElementType::kS32), state, inputs, p.Full(io_shape, 0.0), w});
  Instruction* loop = p.While(cond->computation(), body->computation(), init);
  Instruction* result = p.GetTupleElement(loop, 3);
  return p.Build(result, MeshSharding(mesh, {kNone, kNone, kNone}, 3));
}

std::unique_ptr<Module> BuildSequentialStages(const ModelOptions& o) {
  CheckOptions(o);
  const int64_t l = o.stages, n = o.microbatches, b = o.microbatch_size, d = o.d_model;
  ProgramBuilder p("sequential_stages");
  Instruction* x = p.Parameter(F32({n, b, d}), "inputs");
  Instruction* w = p.Parameter(F32({l, d, d}), "w");
  for (int64_t k = 0; k < l; ++k) {
    Instruction* wk = p.Reshape(p.Slice(w, {k, 0, 0}, {k + 1, d, d}), {d, d});
    x = p.Relu(p.Einsum("nbd,de->nbe", x, wk));
  }
  return p.Build(x);
}

}  // namespace gspmd
