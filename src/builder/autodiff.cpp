// Reverse-mode differentiation: per-opcode cotangent rules over one computation.
#include "builder/autodiff.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

bool Contains(const std::vector<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d)
    if (!Contains(batch, d) && !Contains(contracting, d)) free.push_back(d);
  return free;
}

// Position of `value` in the ascending order of `list`.
int64_t RankIn(const std::vector<int64_t>& list, int64_t value) {
  return std::count_if(list.begin(), list.end(), [&](int64_t v) { return v < value; });
}

// The op_name of verbatim metadata text ("" when none).
std::string OpNameIn(const std::string& metadata) {
  const size_t start = metadata.find("op_name=\"");
  if (start == std::string::npos) return "";
  const size_t end = metadata.find('"', start + 9);
  return end == std::string::npos ? "" : metadata.substr(start + 9, end - start - 9);
}

bool IsFloatArray(const Instruction* x) { return x->shape().IsArray() && IsFloatingPoint(x->shape().element_type()); }

class Differentiator {
 public:
  Differentiator(ComputationBuilder& b) : b_(b) {}

  std::vector<Instruction*> Run(Instruction* loss, const std::vector<Instruction*>& wrt) {
    Computation* computation = b_.computation();
    if (loss->parent() != computation) GSPMD_USER_ERROR("Gradients: the loss %", loss->name(), " is not in ", computation->name());
    if (!loss->shape().IsArray() || loss->shape().rank() != 0 || !IsFloatingPoint(loss->shape().element_type()))
      GSPMD_USER_ERROR("Gradients: the loss %", loss->name(), " must be a floating-point scalar, got ",
                       loss->shape().ToString(false));
    std::vector<Instruction*> order;
    for (const auto& instruction : computation->instructions()) order.push_back(instruction.get());
    for (Instruction* x : wrt) {
      if (x->parent() != computation) GSPMD_USER_ERROR("Gradients: %", x->name(), " is not in ", computation->name());
      depends_.insert(x);
    }
    // Only floating-point values carry a gradient: a comparison or an integer index of a
    // dependent value (a top-k choice, a capacity mask) is a constant to differentiation, so
    // nothing downstream of it alone is differentiated.
    for (Instruction* instruction : order) {
      if (!IsFloatArray(instruction)) continue;
      for (Instruction* operand : instruction->operands())
        if (depends_.count(operand)) depends_.insert(instruction);
    }
    if (depends_.count(loss)) adjoint_[loss] = b_.FullLike(loss, 1.0);
    // The backward ops of an instruction are named after it: op_name "transpose(NAME)".
    const std::string scope = b_.hlo().op_name();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Instruction* x = *it;
      auto found = adjoint_.find(x);
      if (found == adjoint_.end() || x->operand_count() == 0) continue;
      const std::string forward = OpNameIn(x->metadata);
      b_.hlo().set_op_name(forward.empty() ? scope : "transpose(" + forward + ")");
      Backprop(x, found->second);
    }
    b_.hlo().set_op_name(scope);
    std::vector<Instruction*> grads;
    for (Instruction* x : wrt) {
      auto found = adjoint_.find(x);
      grads.push_back(found != adjoint_.end() ? found->second : b_.FullLike(x, 0.0));
    }
    return grads;
  }

 private:
  bool Wants(Instruction* operand) const {
    return depends_.count(operand) && operand->shape().IsArray() && IsFloatingPoint(operand->shape().element_type());
  }

  void Accumulate(Instruction* operand, Instruction* contribution) {
    if (!Wants(operand)) return;
    auto [it, inserted] = adjoint_.emplace(operand, contribution);
    if (!inserted) it->second = b_.Add(it->second, contribution);
  }

  Instruction* Zeros(Instruction* like) { return b_.FullLike(like, 0.0); }

  void Backprop(Instruction* x, Instruction* g) {
    Instruction* a = x->operand(0);
    Instruction* c = x->operand_count() > 1 ? x->operand(1) : nullptr;
    switch (x->opcode()) {
      case Opcode::kAdd:
        Accumulate(a, g);
        Accumulate(c, g);
        return;
      case Opcode::kSubtract:
        Accumulate(a, g);
        if (Wants(c)) Accumulate(c, b_.Neg(g));
        return;
      case Opcode::kMultiply:
        if (Wants(a)) Accumulate(a, b_.Mul(g, c));
        if (Wants(c)) Accumulate(c, b_.Mul(g, a));
        return;
      case Opcode::kDivide:
        if (Wants(a)) Accumulate(a, b_.Div(g, c));
        if (Wants(c)) Accumulate(c, b_.Neg(b_.Div(b_.Mul(g, x), c)));
        return;
      case Opcode::kNegate: Accumulate(a, b_.Neg(g)); return;
      case Opcode::kExp: Accumulate(a, b_.Mul(g, x)); return;
      case Opcode::kLog: Accumulate(a, b_.Div(g, a)); return;
      case Opcode::kTanh: Accumulate(a, b_.Mul(g, b_.Sub(b_.FullLike(x, 1.0), b_.Mul(x, x)))); return;
      case Opcode::kSqrt: Accumulate(a, b_.Div(b_.Scale(g, 0.5), x)); return;
      case Opcode::kRsqrt: Accumulate(a, b_.Mul(g, b_.Scale(b_.Mul(x, b_.Mul(x, x)), -0.5))); return;
      case Opcode::kCopy: Accumulate(a, g); return;
      case Opcode::kMaximum:
      case Opcode::kMinimum: {
        auto direction = x->opcode() == Opcode::kMaximum ? ComparisonDirection::kGe : ComparisonDirection::kLe;
        Instruction* first = b_.Compare(a, c, direction);
        if (Wants(a)) Accumulate(a, b_.Select(first, g, Zeros(g)));
        if (Wants(c)) Accumulate(c, b_.Select(first, Zeros(g), g));
        return;
      }
      case Opcode::kSelect: {
        Instruction* t = x->operand(1);
        Instruction* f = x->operand(2);
        if (Wants(t)) Accumulate(t, b_.Select(a, g, Zeros(g)));
        if (Wants(f)) Accumulate(f, b_.Select(a, Zeros(g), g));
        return;
      }
      case Opcode::kConvert:
        if (Wants(a)) Accumulate(a, b_.Convert(g, a->shape().element_type()));
        return;
      case Opcode::kCustomCall: return Custom(x, g);
      case Opcode::kBroadcast: return BroadcastRule(x, g);
      case Opcode::kReshape: Accumulate(a, b_.Reshape(g, a->shape().dims())); return;
      case Opcode::kTranspose: {
        std::vector<int64_t> inverse(x->dimensions.size());
        for (size_t i = 0; i < inverse.size(); ++i) inverse[x->dimensions[i]] = static_cast<int64_t>(i);
        Accumulate(a, b_.Transpose(g, inverse));
        return;
      }
      case Opcode::kReduce: return ReduceRule(x, g);
      case Opcode::kDot: return DotRule(x, g);
      case Opcode::kSlice: return SliceRule(x, g);
      case Opcode::kPad: return PadRule(x, g);
      case Opcode::kConcatenate: return ConcatRule(x, g);
      case Opcode::kDynamicSlice: {
        std::vector<Instruction*> starts(x->operands().begin() + 1, x->operands().end());
        if (Wants(a)) Accumulate(a, b_.DynamicUpdateSlice(Zeros(a), g, starts));
        return;
      }
      case Opcode::kDynamicUpdateSlice: {
        std::vector<Instruction*> starts(x->operands().begin() + 2, x->operands().end());
        if (Wants(a)) Accumulate(a, b_.DynamicUpdateSlice(g, Zeros(c), starts));
        if (Wants(c)) Accumulate(c, b_.DynamicSlice(g, starts, c->shape().dims()));
        return;
      }
      case Opcode::kCompare:
      case Opcode::kIota:
      case Opcode::kConstant:
        return;
      // An element of a tuple (a loop's result, a loop body's parameter) is a leaf: tuples
      // carry no gradient, so a caller differentiates loops itself.
      case Opcode::kGetTupleElement:
        return;
      default:
        GSPMD_USER_ERROR("Gradients: cannot differentiate %", x->name(), " (", OpcodeName(x->opcode()), ")");
    }
  }

  void Custom(Instruction* x, Instruction* g) {
    if (x->custom_call_target != "Sharding" || x->operand_count() != 1)
      GSPMD_USER_ERROR("Gradients: cannot differentiate custom-call %", x->name(), " (", x->custom_call_target, ")");
    Instruction* annotated = b_.ShardingConstraint(g, *x->sharding());
    annotated->backend_config = x->backend_config;
    Accumulate(x->operand(0), annotated);
  }

  void BroadcastRule(Instruction* x, Instruction* g) {
    Instruction* a = x->operand(0);
    if (!Wants(a)) return;
    std::vector<int64_t> summed;
    for (int64_t d = 0; d < x->shape().rank(); ++d)
      if (!Contains(x->dimensions, d)) summed.push_back(d);
    Instruction* reduced = b_.ReduceSum(g, summed);
    std::vector<int64_t> perm;
    for (int64_t d : x->dimensions) perm.push_back(RankIn(x->dimensions, d));
    Accumulate(a, b_.Transpose(reduced, perm));
  }

  void ReduceRule(Instruction* x, Instruction* g) {
    Instruction* a = x->operand(0);
    if (!Wants(a)) return;
    if (x->operand_count() != 2) GSPMD_USER_ERROR("Gradients: cannot differentiate variadic reduce %", x->name());
    const Opcode op = x->to_apply()->root()->opcode();
    const std::vector<int64_t>& dims = a->shape().dims();
    Instruction* spread = b_.BroadcastAlong(g, dims, x->dimensions);
    if (op == Opcode::kAdd) return Accumulate(a, spread);
    if (op != Opcode::kMaximum && op != Opcode::kMinimum)
      GSPMD_USER_ERROR("Gradients: cannot differentiate reduce %", x->name(), " with ", OpcodeName(op));
    // The chosen elements share the cotangent equally.
    Instruction* chosen = b_.Compare(a, b_.BroadcastAlong(x, dims, x->dimensions), ComparisonDirection::kEq);
    Instruction* indicator = b_.Convert(chosen, a->shape().element_type());
    Instruction* count = b_.BroadcastAlong(b_.ReduceSum(indicator, x->dimensions), dims, x->dimensions);
    Accumulate(a, b_.Div(b_.Mul(spread, indicator), count));
  }

  // d lhs = dot(g, rhs) over g's rhs-free dims, transposed back to lhs's dim order; the rhs
  // side is symmetric.
  void DotRule(Instruction* x, Instruction* g) {
    const DotDimensionNumbers& dn = x->dot_dims();
    Instruction* lhs = x->operand(0);
    Instruction* rhs = x->operand(1);
    const int64_t nb = static_cast<int64_t>(dn.lhs_batch_dims.size());
    std::vector<int64_t> lf = FreeDims(lhs->shape().rank(), dn.lhs_batch_dims, dn.lhs_contracting_dims);
    std::vector<int64_t> rf = FreeDims(rhs->shape().rank(), dn.rhs_batch_dims, dn.rhs_contracting_dims);
    std::vector<int64_t> g_batch(nb);
    std::iota(g_batch.begin(), g_batch.end(), 0);
    std::vector<int64_t> g_lf(lf.size()), g_rf(rf.size());
    std::iota(g_lf.begin(), g_lf.end(), nb);
    std::iota(g_rf.begin(), g_rf.end(), nb + static_cast<int64_t>(lf.size()));
    if (Wants(lhs)) {
      DotDimensionNumbers d{g_batch, dn.rhs_batch_dims, g_rf, rf};
      Instruction* raw = b_.Dot(g, rhs, d);  // [batch, lf..., rhs contracting (ascending)]
      std::vector<int64_t> perm(lhs->shape().rank());
      for (int64_t i = 0; i < nb; ++i) perm[dn.lhs_batch_dims[i]] = i;
      for (size_t j = 0; j < lf.size(); ++j) perm[lf[j]] = nb + static_cast<int64_t>(j);
      for (size_t k = 0; k < dn.lhs_contracting_dims.size(); ++k)
        perm[dn.lhs_contracting_dims[k]] =
            nb + static_cast<int64_t>(lf.size()) + RankIn(dn.rhs_contracting_dims, dn.rhs_contracting_dims[k]);
      Accumulate(lhs, b_.Transpose(raw, perm));
    }
    if (Wants(rhs)) {
      DotDimensionNumbers d{g_batch, dn.lhs_batch_dims, g_lf, lf};
      Instruction* raw = b_.Dot(g, lhs, d);  // [batch, rf..., lhs contracting (ascending)]
      std::vector<int64_t> perm(rhs->shape().rank());
      for (int64_t i = 0; i < nb; ++i) perm[dn.rhs_batch_dims[i]] = i;
      for (size_t j = 0; j < rf.size(); ++j) perm[rf[j]] = nb + static_cast<int64_t>(j);
      for (size_t k = 0; k < dn.rhs_contracting_dims.size(); ++k)
        perm[dn.rhs_contracting_dims[k]] =
            nb + static_cast<int64_t>(rf.size()) + RankIn(dn.lhs_contracting_dims, dn.lhs_contracting_dims[k]);
      Accumulate(rhs, b_.Transpose(raw, perm));
    }
  }

  void SliceRule(Instruction* x, Instruction* g) {
    Instruction* a = x->operand(0);
    if (!Wants(a)) return;
    PaddingConfig padding;
    for (int64_t d = 0; d < a->shape().rank(); ++d) {
      const SliceDim& s = x->slice()[d];
      const int64_t n = x->shape().dim(d);
      const int64_t last = n == 0 ? s.start : s.start + (n - 1) * s.stride + 1;
      padding.push_back({s.start, a->shape().dim(d) - last, n > 0 ? s.stride - 1 : 0});
    }
    Accumulate(a, b_.Pad(g, b_.Scalar(0.0, g->shape().element_type()), std::move(padding)));
  }

  void PadRule(Instruction* x, Instruction* g) {
    Instruction* a = x->operand(0);
    if (!Wants(a)) return;
    std::vector<SliceDim> slice;
    for (int64_t d = 0; d < a->shape().rank(); ++d) {
      const PaddingDim& p = x->padding()[d];
      if (p.low < 0 || p.high < 0) GSPMD_USER_ERROR("Gradients: cannot differentiate negative padding of %", x->name());
      const int64_t n = a->shape().dim(d);
      slice.push_back({p.low, p.low + (n == 0 ? 0 : (n - 1) * (p.interior + 1) + 1), p.interior + 1});
    }
    Accumulate(a, b_.hlo().Slice(g, std::move(slice)));
  }

  void ConcatRule(Instruction* x, Instruction* g) {
    const int64_t dim = x->dimensions.at(0);
    int64_t offset = 0;
    for (Instruction* part : x->operands()) {
      std::vector<int64_t> starts(g->shape().rank(), 0), limits = g->shape().dims();
      starts[dim] = offset;
      limits[dim] = offset + part->shape().dim(dim);
      offset = limits[dim];
      if (Wants(part)) Accumulate(part, b_.Slice(g, starts, limits));
    }
  }

  ComputationBuilder& b_;
  std::unordered_set<const Instruction*> depends_;
  std::unordered_map<const Instruction*, Instruction*> adjoint_;
};

}  // namespace

std::vector<Instruction*> Gradients(ComputationBuilder& builder, Instruction* loss, const std::vector<Instruction*>& wrt) {
  return Differentiator(builder).Run(loss, wrt);
}

}  // namespace gspmd
