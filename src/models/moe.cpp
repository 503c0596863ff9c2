// GShard MoE layer program: softmax gates, top-2 one-hot masks, capacity positions by cumsum,
// combine/dispatch tensors, expert FFN and the combine einsum.
#include "models/moe.h"

#include <vector>

#include "builder/mesh_split.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

constexpr int64_t kExpert = 0;  // the mesh's only dim
constexpr int64_t kNone = kReplicated;

class MoeWriter {
 public:
  explicit MoeWriter(const ModelOptions& o) : o_(o), p_("moe_layer"), mesh_(MakeMesh({{"expert", o.expert_parallel}})) {}

  std::unique_ptr<Module> Write() {
    const int64_t g = o_.groups, s = o_.group_size, m = o_.d_model, e = o_.experts, h = o_.expert_hidden;
    Instruction* x = ShardParameter(p_.Parameter(F32({g, s, m}), "x"), mesh_, {kExpert, kNone, kNone});
    Instruction* wg = ShardParameter(p_.Parameter(F32({m, e}), "wg"), mesh_, {kNone, kNone});
    Instruction* wi = ShardParameter(p_.Parameter(F32({e, m, h}), "wi"), mesh_, {kExpert, kNone, kNone});
    Instruction* wo = ShardParameter(p_.Parameter(F32({e, h, m}), "wo"), mesh_, {kExpert, kNone, kNone});

    Instruction* gates = p_.Softmax(p_.Einsum("gsm,me->gse", x, wg), 2);  // [g,s,e]
    Instruction* mask1 = TopOneHot(gates);
    Instruction* gate1 = p_.ReduceSum(p_.Mul(gates, mask1), {2});  // [g,s]
    Instruction* rest = p_.Mul(gates, p_.Sub(p_.FullLike(mask1, 1.0), mask1));
    Instruction* mask2 = TopOneHot(rest);
    Instruction* gate2 = p_.ReduceSum(p_.Mul(gates, mask2), {2});
    Instruction* denom = p_.AddScalar(p_.Add(gate1, gate2), 1e-9);
    gate1 = p_.Div(gate1, denom);
    gate2 = p_.Div(gate2, denom);

    // Positions within each expert's buffer; tokens past the capacity are dropped.
    Instruction* pos1 = p_.AddScalar(CumsumOverTokens(mask1), -1.0);
    mask1 = p_.Mul(mask1, BelowCapacity(pos1));
    Instruction* used = p_.BroadcastAlong(p_.ReduceSum(mask1, {1}), mask1->shape().dims(), {1});  // [g,s,e]
    Instruction* pos2 = p_.Add(p_.AddScalar(CumsumOverTokens(mask2), -1.0), used);
    mask2 = p_.Mul(mask2, BelowCapacity(pos2));

    Instruction* combine = p_.Add(Combine(gate1, mask1, pos1), Combine(gate2, mask2, pos2));  // [g,s,e,c]
    Instruction* zero = p_.FullLike(combine, 0.0);
    Instruction* dispatch = p_.Convert(p_.Compare(combine, zero, ComparisonDirection::kGt), ElementType::kF32);

    Instruction* expert_in = Split(p_.Einsum("gsec,gsm->egcm", dispatch, x), {kExpert, kNone, kNone, kNone});
    Instruction* hidden = p_.Relu(p_.Einsum("egcm,emh->egch", expert_in, wi));
    Instruction* expert_out = Split(p_.Einsum("egch,ehm->egcm", hidden, wo), {kExpert, kNone, kNone, kNone});
    Instruction* y = Split(p_.Einsum("gsec,egcm->gsm", combine, expert_out), {kExpert, kNone, kNone});
    return p_.Build(y, MeshSharding(mesh_, {kExpert, kNone, kNone}, 3));
  }

 private:
  Instruction* Split(Instruction* value, const std::vector<int64_t>& mapping) {
    return mesh_split(p_, value, mesh_, mapping);
  }

  // f32 one-hot [g,s,e] of the largest entry along e (the lowest index on ties).
  Instruction* TopOneHot(Instruction* scores) {
    const std::vector<int64_t>& dims = scores->shape().dims();
    Instruction* best = p_.BroadcastAlong(p_.ReduceMax(scores, {2}), dims, {2});
    Instruction* is_best = p_.Compare(scores, best, ComparisonDirection::kEq);
    Instruction* index = p_.Iota(ElementType::kS32, dims, 2);
    Instruction* none = p_.Full(Shape(ElementType::kS32, dims), static_cast<double>(dims[2]));
    Instruction* first = p_.Reduce(p_.Select(is_best, index, none), {2}, ReduceKind::kMin);  // [g,s]
    Instruction* chosen = p_.Compare(index, p_.BroadcastAlong(first, dims, {2}), ComparisonDirection::kEq);
    return p_.Convert(chosen, ElementType::kF32);
  }

  // Inclusive cumulative sum over the token dim of [g,s,e], as an einsum with a triangle.
  Instruction* CumsumOverTokens(Instruction* mask) {
    const int64_t s = o_.group_size;
    Instruction* row = p_.Iota(ElementType::kS32, {s, s}, 0);
    Instruction* col = p_.Iota(ElementType::kS32, {s, s}, 1);
    Instruction* triangle = p_.Convert(p_.Compare(row, col, ComparisonDirection::kLe), ElementType::kF32);
    return p_.Einsum("gse,st->gte", mask, triangle);
  }

  Instruction* BelowCapacity(Instruction* position) {
    Instruction* limit = p_.FullLike(position, static_cast<double>(o_.capacity));
    return p_.Convert(p_.Compare(position, limit, ComparisonDirection::kLt), ElementType::kF32);
  }

  // gate[g,s] * mask[g,s,e] * one_hot(position[g,s,e], capacity) -> [g,s,e,c].
  Instruction* Combine(Instruction* gate, Instruction* mask, Instruction* position) {
    std::vector<int64_t> dims = mask->shape().dims();
    dims.push_back(o_.capacity);
    Instruction* slot = p_.Iota(ElementType::kF32, dims, 3);
    Instruction* one_hot = p_.Convert(p_.Compare(p_.Broadcast(position, dims, {0, 1, 2}), slot, ComparisonDirection::kEq),
                                      ElementType::kF32);
    Instruction* weight = p_.Mul(p_.Broadcast(gate, dims, {0, 1}), p_.Broadcast(mask, dims, {0, 1, 2}));
    return p_.Mul(weight, one_hot);
  }

  const ModelOptions& o_;
  ProgramBuilder p_;
  Mesh mesh_;
};

}  // namespace

std::unique_ptr<Module> BuildMoe(const ModelOptions& options) {
  if (options.experts < 2) GSPMD_USER_ERROR("moe: top-2 gating needs experts >= 2, got ", options.experts);
  return MoeWriter(options).Write();
}

}  // namespace gspmd
