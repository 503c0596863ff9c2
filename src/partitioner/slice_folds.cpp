// Slices written the long way, folded into slices before sharding propagation, as XLA's simplifier folds them.
#include "partitioner/slice_folds.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "ir/computation.h"
#include "ir/element_type.h"
#include "ir/hlo_builder.h"

namespace gspmd {
namespace {

// Whether `value` fits elements of `type` (integers of up to 64 bits, or pred).
bool Fits(int64_t value, ElementType type) {
  if (type == ElementType::kPred) return value == 0 || value == 1;
  const int64_t bits = ElementByteSize(type) * 8;
  if (bits >= 64) return !IsUnsignedInteger(type) || value >= 0;
  if (IsUnsignedInteger(type)) return value >= 0 && value < (int64_t{1} << bits);
  return value >= -(int64_t{1} << (bits - 1)) && value < (int64_t{1} << (bits - 1));
}

bool ScalarOfExactType(const Instruction& value) {
  const Shape& shape = value.shape();
  return shape.IsArray() && shape.rank() == 0 &&
         (shape.element_type() == ElementType::kPred || IsInteger(shape.element_type()));
}

std::optional<int64_t> Evaluate(const Instruction& value, int depth) {
  if (depth > 32 || !ScalarOfExactType(value)) return std::nullopt;
  const Opcode opcode = value.opcode();
  if (opcode == Opcode::kConstant) {
    if (!value.literal().has_value()) return std::nullopt;
    const int64_t v = value.literal()->GetAsInt64(0);
    return Fits(v, value.shape().element_type()) ? std::optional<int64_t>(v) : std::nullopt;
  }
  std::vector<int64_t> in;
  for (const Instruction* operand : value.operands()) {
    std::optional<int64_t> v = Evaluate(*operand, depth + 1);
    if (!v) return std::nullopt;
    in.push_back(*v);
  }
  // Operands are 32-bit or narrower in practice; the arithmetic below is checked against the
  // result type, and 64-bit products that could overflow are refused.
  constexpr int64_t kSmall = int64_t{1} << 31;
  auto small = [&] { return std::all_of(in.begin(), in.end(), [&](int64_t v) { return v > -kSmall && v < kSmall; }); };
  std::optional<int64_t> out;
  switch (opcode) {
    case Opcode::kCopy:
    case Opcode::kConvert:
      if (in.size() == 1) out = value.shape().element_type() == ElementType::kPred ? int64_t{in[0] != 0} : in[0];
      break;
    case Opcode::kNegate: if (in.size() == 1 && small()) out = -in[0]; break;
    case Opcode::kAdd: if (in.size() == 2 && small()) out = in[0] + in[1]; break;
    case Opcode::kSubtract: if (in.size() == 2 && small()) out = in[0] - in[1]; break;
    case Opcode::kMultiply: if (in.size() == 2 && small()) out = in[0] * in[1]; break;
    case Opcode::kDivide:
      if (in.size() == 2 && in[1] != 0 && small()) out = in[0] / in[1];  // truncates, as HLO's
      break;
    case Opcode::kRemainder:
      if (in.size() == 2 && in[1] != 0 && small()) out = in[0] % in[1];
      break;
    case Opcode::kMaximum: if (in.size() == 2) out = std::max(in[0], in[1]); break;
    case Opcode::kMinimum: if (in.size() == 2) out = std::min(in[0], in[1]); break;
    case Opcode::kClamp: if (in.size() == 3) out = std::min(std::max(in[1], in[0]), in[2]); break;
    case Opcode::kSelect: if (in.size() == 3) out = in[0] != 0 ? in[1] : in[2]; break;
    case Opcode::kAnd: if (in.size() == 2) out = in[0] & in[1]; break;
    case Opcode::kOr: if (in.size() == 2) out = in[0] | in[1]; break;
    case Opcode::kNot:
      if (in.size() == 1 && value.shape().element_type() == ElementType::kPred) out = int64_t{in[0] == 0};
      break;
    case Opcode::kCompare: {
      if (in.size() != 2) break;
      if (value.comparison_type == ComparisonType::kUnsigned && (in[0] < 0 || in[1] < 0)) break;
      const int64_t a = in[0], b = in[1];
      switch (value.comparison_direction) {
        case ComparisonDirection::kEq: out = a == b; break;
        case ComparisonDirection::kNe: out = a != b; break;
        case ComparisonDirection::kLt: out = a < b; break;
        case ComparisonDirection::kLe: out = a <= b; break;
        case ComparisonDirection::kGt: out = a > b; break;
        case ComparisonDirection::kGe: out = a >= b; break;
      }
      break;
    }
    default: break;
  }
  if (!out || !Fits(*out, value.shape().element_type())) return std::nullopt;
  return out;
}


// What the rows [first, last) of `x` (along dim 0) are: the operand of a concatenate along dim
// 0 that spans exactly them, or nullptr.
Instruction* ConcatenatedOperand(const Instruction& x, int64_t first, int64_t last) {
  if (x.opcode() != Opcode::kConcatenate || x.dimensions.size() != 1 || x.dimensions[0] != 0) return nullptr;
  int64_t at = 0;
  for (Instruction* operand : x.operands()) {
    const int64_t rows = operand->shape().dims()[0];
    if (at == first && at + rows == last) return operand;
    at += rows;
  }
  return nullptr;
}

}  // namespace

int64_t FoldFlatSlicesBeforePropagation(Module& module) {
  int64_t folded = 0;
  for (const auto& computation : module.computations()) {
    for (Instruction* reshape : computation->MakePostOrder()) {
      if (reshape->opcode() != Opcode::kReshape || !FoldableBeforePropagation(*reshape) ||
          reshape == computation->root())
        continue;
      const Instruction* slice = reshape->operand(0);
      if (slice->opcode() != Opcode::kSlice || !FoldableBeforePropagation(*slice) || slice->shape().rank() != 1 ||
          slice->slice().size() != 1 || slice->slice()[0].stride != 1)
        continue;
      const Instruction* flat = slice->operand(0);
      if (flat->opcode() != Opcode::kReshape || !FoldableBeforePropagation(*flat) || flat->shape().rank() != 1)
        continue;
      Instruction* x = flat->operand(0);
      const Shape& whole = x->shape();
      if (!whole.IsArray() || whole.rank() < 1 || whole.element_type() != reshape->shape().element_type()) continue;
      int64_t row = 1;
      for (int64_t d = 1; d < whole.rank(); ++d) row *= whole.dims()[d];
      const int64_t start = slice->slice()[0].start, limit = slice->slice()[0].limit;
      if (row <= 0 || start % row != 0 || limit % row != 0 || limit <= start) continue;
      std::vector<int64_t> rows = whole.dims();
      rows[0] = (limit - start) / row;
      if (reshape->shape().dims() != rows) continue;
      // Only rows that are an operand of a concatenate: other row ranges, folded into slices,
      // steered propagation into splits that moved more (oracle seeds 114255: 92 B -> 210 B,
      // 114569, 115313), where through the flat shape the values stayed whole.
      Instruction* replacement = ConcatenatedOperand(*x, start / row, limit / row);
      if (replacement == nullptr) continue;
      reshape->ReplaceAllUsesWith(replacement);
      ++folded;
    }
  }
  return folded;
}

int64_t FoldPlainSlicesBeforePropagation(Module& module) {
  int64_t folded = 0;
  NameUniquer names;
  names.ReserveAll(module);
  for (const auto& computation : module.computations()) {
    for (Instruction* slice : computation->MakePostOrder()) {
      if (slice->opcode() != Opcode::kSlice || !FoldableBeforePropagation(*slice) || slice == computation->root())
        continue;
      Instruction* operand = slice->operand(0);
      const bool all = std::all_of(slice->slice().begin(), slice->slice().end(),
                                   [](const SliceDim& d) { return d.start == 0 && d.stride == 1; });
      if (all && operand->shape() == slice->shape()) {
        slice->ReplaceAllUsesWith(operand);  // all of it
        ++folded;
        continue;
      }
      const Instruction* concatenate = operand;
      if (concatenate->opcode() != Opcode::kConcatenate || concatenate->dimensions.size() != 1 ||
          !concatenate->shape().IsArray())
        continue;
      const int64_t dim = concatenate->dimensions[0];
      if (dim < 0 || dim >= static_cast<int64_t>(slice->slice().size())) continue;
      const SliceDim along = slice->slice()[dim];
      if (along.stride < 1 || along.limit <= along.start) continue;
      const int64_t last = along.start + (along.limit - 1 - along.start) / along.stride * along.stride;
      int64_t at = 0;
      for (Instruction* part : concatenate->operands()) {
        const int64_t size = part->shape().dims()[dim];
        if (along.start >= at && last < at + size) {
          std::vector<SliceDim> window = slice->slice();
          window[dim] = {along.start - at, last - at + 1, along.stride};
          bool whole = true;
          for (size_t d = 0; d < window.size(); ++d)
            whole = whole && window[d].start == 0 && window[d].stride == 1 &&
                    window[d].limit == part->shape().dims()[d];
          Instruction* replacement = part;
          if (!whole) {
            auto made = std::make_unique<Instruction>(Opcode::kSlice, slice->shape(), names.Unique("slice"));
            made->AppendOperand(part);
            made->mutable_slice() = std::move(window);
            made->metadata = slice->metadata;
            made->CopySourceFrom(*slice);
            replacement = computation->AddInstructionAfter(std::move(made), slice);
          }
          slice->ReplaceAllUsesWith(replacement);
          ++folded;
          break;
        }
        at += size;
      }
    }
  }
  return folded;
}

bool FoldableBeforePropagation(const Instruction& instruction) {
  return !instruction.sharding().has_value() && instruction.frontend_attributes.empty() &&
         instruction.shape().IsArray();
}

std::optional<int64_t> ConstantScalarValue(const Instruction& value) { return Evaluate(value, 0); }

int64_t FoldConstantDynamicSlicesBeforePropagation(Module& module) {
  int64_t folded = 0;
  NameUniquer names;
  names.ReserveAll(module);
  for (const auto& computation : module.computations()) {
    for (Instruction* slice : computation->MakePostOrder()) {
      if (slice->opcode() != Opcode::kDynamicSlice || slice->sharding().has_value() ||
          !slice->frontend_attributes.empty() || slice == computation->root() || !slice->shape().IsArray())
        continue;
      const Shape& operand = slice->operand(0)->shape();
      const std::vector<int64_t>& sizes = slice->dynamic_slice_sizes();
      const int64_t rank = operand.IsArray() ? operand.rank() : -1;
      if (rank < 0 || slice->operand_count() != rank + 1 || static_cast<int64_t>(sizes.size()) != rank) continue;
      std::vector<SliceDim> window;
      for (int64_t d = 0; d < rank; ++d) {
        // A dim the window covers whole starts at 0 whatever its index (the start is clamped).
        std::optional<int64_t> start =
            sizes[d] == operand.dims()[d] ? std::optional<int64_t>(0) : ConstantScalarValue(*slice->operand(d + 1));
        if (!start || sizes[d] > operand.dims()[d]) break;
        const int64_t clamped = std::clamp<int64_t>(*start, 0, operand.dims()[d] - sizes[d]);
        window.push_back({clamped, clamped + sizes[d], 1});
      }
      if (static_cast<int64_t>(window.size()) != rank) continue;
      auto replacement = std::make_unique<Instruction>(Opcode::kSlice, slice->shape(), names.Unique("slice"));
      replacement->AppendOperand(slice->operand(0));
      replacement->mutable_slice() = std::move(window);
      replacement->metadata = slice->metadata;
      replacement->CopySourceFrom(*slice);
      slice->ReplaceAllUsesWith(computation->AddInstructionAfter(std::move(replacement), slice));
      ++folded;
    }
  }
  return folded;
}

int64_t ZeroWholeDimUpdateStartsBeforePropagation(Module& module) {
  int64_t zeroed = 0;
  NameUniquer names;
  names.ReserveAll(module);
  for (const auto& computation : module.computations()) {
    for (Instruction* update : computation->MakePostOrder()) {
      if (update->opcode() != Opcode::kDynamicUpdateSlice || !update->shape().IsArray()) continue;
      const Shape& operand = update->operand(0)->shape();
      const Shape& piece = update->operand(1)->shape();
      if (!operand.IsArray() || !piece.IsArray() || piece.rank() != operand.rank() ||
          update->operand_count() != operand.rank() + 2)
        continue;
      for (int64_t d = 0; d < operand.rank(); ++d) {
        Instruction* start = update->operand(d + 2);
        if (piece.dim(d) != operand.dim(d) || ConstantScalarValue(*start) == std::optional<int64_t>(0) ||
            !start->shape().IsArray() || start->shape().rank() != 0)
          continue;
        auto zero = std::make_unique<Instruction>(Opcode::kConstant, start->shape(), names.Unique("constant"));
        zero->mutable_literal() = Literal(start->shape());
        zero->CopySourceFrom(*update);
        update->ReplaceOperand(d + 2, computation->AddInstructionAfter(std::move(zero), start));
        ++zeroed;
      }
    }
  }
  return zeroed;
}

}  // namespace gspmd
