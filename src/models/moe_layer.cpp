// GShard MoE layer: gating, random routing, capacity, dispatch / expert FFN / combine.
#include "models/moe_layer.h"

#include <vector>

#include "models/train_step_builder.h"

namespace gspmd {
namespace {

constexpr uint32_t kIndexMultiplier = 0x9E3779B1u;
constexpr uint32_t kStepMultiplier = 0x85EBCA77u;
constexpr uint32_t kMix1 = 0x7FEB352Du;
constexpr uint32_t kMix2 = 0x846CA68Bu;

class MoeWriter {
 public:
  MoeWriter(ComputationBuilder& b, TrainStepBuilder& t, const MoeSettings& s) : b_(b), t_(t), s_(s) {}

  MoeResult Write(Instruction* x, const MoeWeights& w, Instruction* step) {
    const std::vector<int64_t>& xd = x->shape().dims();
    const int64_t G = xd[0], S = xd[1], E = w.gate->shape().dim(1);
    Instruction* gates = b_.Softmax(b_.Einsum("gsm,me->gse", x, w.gate), 2);  // [G,S,E]
    Instruction* mask1 = TopOneHot(gates);
    Instruction* mask2 = TopOneHot(b_.Mul(gates, b_.Sub(b_.FullLike(mask1, 1.0), mask1)));
    Instruction* g1 = b_.ReduceSum(b_.Mul(gates, mask1), {2});  // [G,S]
    Instruction* g2 = b_.ReduceSum(b_.Mul(gates, mask2), {2});

    // Load balancing: mean over groups and experts of (fraction of tokens whose first choice
    // is e) * (mean gate of e), times E^2 (1 when balanced).
    Instruction* density = b_.Mean(mask1, {1});  // [G,E]
    Instruction* proxy = b_.Mean(gates, {1});
    Instruction* aux = b_.Scale(b_.Mean(b_.Mul(density, proxy), {0, 1}), static_cast<double>(E * E));

    Instruction* denom = b_.AddScalar(b_.Add(g1, g2), 1e-9);
    g1 = b_.Div(g1, denom);
    g2 = b_.Div(g2, denom);
    if (s_.random_routing) {
      Instruction* keep = b_.Compare(Uniform(G, S, step), b_.Scale(g2, 2.0), ComparisonDirection::kLt);
      mask2 = b_.Mul(mask2, b_.BroadcastAlong(b_.Convert(keep, ElementType::kF32), mask2->shape().dims(), {2}));
    }
    Instruction* routed = b_.Add(b_.ReduceSum(mask1, {0, 1, 2}), b_.ReduceSum(mask2, {0, 1, 2}));

    // Positions in each expert's buffer, in token order; the top-1 choices fill it first.
    Instruction* pos1 = b_.AddScalar(CumsumOverTokens(mask1), -1.0);
    mask1 = b_.Mul(mask1, BelowCapacity(pos1));
    Instruction* used = b_.BroadcastAlong(b_.ReduceSum(mask1, {1}), mask1->shape().dims(), {1});  // [G,S,E]
    Instruction* pos2 = b_.Add(b_.AddScalar(CumsumOverTokens(mask2), -1.0), used);
    mask2 = b_.Mul(mask2, BelowCapacity(pos2));
    Instruction* kept = b_.Add(b_.ReduceSum(mask1, {0, 1, 2}), b_.ReduceSum(mask2, {0, 1, 2}));

    Instruction* slots1 = Slots(mask1, pos1);  // [G,S,E,C]
    Instruction* slots2 = Slots(mask2, pos2);
    const std::vector<int64_t>& sd = slots1->shape().dims();
    // The dispatch and combine tensors stay split by group like the tokens (GShard annotates
    // them so), so the einsums with the expert-split side are all-to-alls.
    const PartitionSpec by_group = {s_.tokens[0], {}, {}, {}};
    Instruction* dispatch = t_.Split(b_, b_.Add(slots1, slots2), by_group);
    Instruction* combine = t_.Split(
        b_, b_.Add(b_.Mul(b_.Broadcast(g1, sd, {0, 1}), slots1), b_.Mul(b_.Broadcast(g2, sd, {0, 1}), slots2)), by_group);

    Instruction* expert_in = t_.Split(b_, b_.Einsum("gsec,gsm->egcm", dispatch, x), s_.dispatched);
    Instruction* hidden = b_.Relu(b_.Einsum("egcm,emh->egch", expert_in, w.wi));
    Instruction* expert_out = t_.Split(b_, b_.Einsum("egch,ehm->egcm", hidden, w.wo), s_.dispatched);
    Instruction* y = t_.Split(b_, b_.Einsum("gsec,egcm->gsm", combine, expert_out), s_.tokens);
    return {y, aux, routed, b_.Sub(routed, kept)};
  }

 private:
  Instruction* U32(double value) { return b_.Scalar(value, ElementType::kU32); }
  Instruction* Op(Opcode opcode, Instruction* a, Instruction* c) { return b_.Elementwise(opcode, a, c); }
  Instruction* Fill(Instruction* like, uint32_t value) { return b_.Full(like->shape(), static_cast<double>(value)); }
  Instruction* XorShift(Instruction* x, uint32_t bits) {
    return Op(Opcode::kXor, x, Op(Opcode::kShiftRightLogical, x, Fill(x, bits)));
  }

  // uniform[g, s] in [0, 1): the lowbias32 hash of (group * S + token) * k1 ^ salt ^ step * k2.
  Instruction* Uniform(int64_t G, int64_t S, Instruction* step) {
    const std::vector<int64_t> dims = {G, S};
    Instruction* g = b_.Iota(ElementType::kU32, dims, 0);
    Instruction* s = b_.Iota(ElementType::kU32, dims, 1);
    Instruction* index = b_.Add(b_.Mul(g, Fill(g, static_cast<uint32_t>(S))), s);
    Instruction* step_u = b_.Mul(b_.Convert(step, ElementType::kU32), U32(kStepMultiplier));
    Instruction* x = Op(Opcode::kMultiply, index, Fill(index, kIndexMultiplier));
    x = Op(Opcode::kXor, x, Fill(x, s_.salt));
    x = Op(Opcode::kXor, x, b_.Broadcast(step_u, dims, {}));
    x = XorShift(x, 16);
    x = b_.Mul(x, Fill(x, kMix1));
    x = XorShift(x, 15);
    x = b_.Mul(x, Fill(x, kMix2));
    x = XorShift(x, 16);
    Instruction* top24 = Op(Opcode::kShiftRightLogical, x, Fill(x, 8));
    return b_.Scale(b_.Convert(top24, ElementType::kF32), 1.0 / 16777216.0);
  }

  // f32 one-hot [G,S,E] of the largest entry along E (the lowest index on ties).
  Instruction* TopOneHot(Instruction* scores) {
    const std::vector<int64_t>& dims = scores->shape().dims();
    Instruction* best = b_.BroadcastAlong(b_.ReduceMax(scores, {2}), dims, {2});
    Instruction* is_best = b_.Compare(scores, best, ComparisonDirection::kEq);
    Instruction* index = b_.Iota(ElementType::kS32, dims, 2);
    Instruction* none = b_.Full(Shape(ElementType::kS32, dims), static_cast<double>(dims[2]));
    Instruction* first = b_.Reduce(b_.Select(is_best, index, none), {2}, ReduceKind::kMin);  // [G,S]
    Instruction* chosen = b_.Compare(index, b_.BroadcastAlong(first, dims, {2}), ComparisonDirection::kEq);
    return b_.Convert(chosen, ElementType::kF32);
  }

  // Inclusive cumulative sum over the token dim of [G,S,E], as an einsum with a triangle.
  Instruction* CumsumOverTokens(Instruction* mask) {
    const int64_t S = mask->shape().dim(1);
    Instruction* row = b_.Iota(ElementType::kS32, {S, S}, 0);
    Instruction* col = b_.Iota(ElementType::kS32, {S, S}, 1);
    Instruction* triangle = b_.Convert(b_.Compare(row, col, ComparisonDirection::kLe), ElementType::kF32);
    return b_.Einsum("gse,st->gte", mask, triangle);
  }

  Instruction* BelowCapacity(Instruction* position) {
    Instruction* limit = b_.FullLike(position, static_cast<double>(s_.capacity));
    return b_.Convert(b_.Compare(position, limit, ComparisonDirection::kLt), ElementType::kF32);
  }

  // mask[g,s,e] * (position[g,s,e] == c) -> [G,S,E,C].
  Instruction* Slots(Instruction* mask, Instruction* position) {
    std::vector<int64_t> dims = mask->shape().dims();
    dims.push_back(s_.capacity);
    Instruction* slot = b_.Iota(ElementType::kF32, dims, 3);
    Instruction* at = b_.Compare(b_.Broadcast(position, dims, {0, 1, 2}), slot, ComparisonDirection::kEq);
    return b_.Mul(b_.Broadcast(mask, dims, {0, 1, 2}), b_.Convert(at, ElementType::kF32));
  }

  ComputationBuilder& b_;
  TrainStepBuilder& t_;
  const MoeSettings& s_;
};

uint32_t XorShiftHost(uint32_t x, int bits) { return x ^ (x >> bits); }

}  // namespace

MoeResult MoeLayer(ComputationBuilder& b, TrainStepBuilder& t, Instruction* x, const MoeWeights& w,
                   Instruction* step, const MoeSettings& settings) {
  return MoeWriter(b, t, settings).Write(x, w, step);
}

float RoutingUniform(uint32_t salt, int32_t step, int64_t group, int64_t token, int64_t group_size) {
  const uint32_t index = static_cast<uint32_t>(group) * static_cast<uint32_t>(group_size) + static_cast<uint32_t>(token);
  uint32_t x = index * kIndexMultiplier;
  x ^= salt;
  x ^= static_cast<uint32_t>(step) * kStepMultiplier;
  x = XorShiftHost(x, 16);
  x *= kMix1;
  x = XorShiftHost(x, 15);
  x *= kMix2;
  x = XorShiftHost(x, 16);
  return static_cast<float>(x >> 8) * (1.0f / 16777216.0f);
}

}  // namespace gspmd
