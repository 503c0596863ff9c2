// Reshaped broadcasts folded into one broadcast before propagation (reshape_folds.h).
#include "partitioner/reshape_folds.h"

#include <memory>
#include <optional>
#include <vector>

#include "ir/computation.h"
#include "ir/hlo_builder.h"
#include "ir/instruction.h"
#include "partitioner/slice_folds.h"

namespace gspmd {
namespace {

// For a reshape from `from` to `to`: for each dim of `from`, the dim of `to` it is (the same
// size, grouped with no other dim of more than one element on either side), or -1.
std::vector<int64_t> WholeDims(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  std::vector<int64_t> whole(from.size(), -1);
  std::vector<size_t> a, b;  // dims of more than one element
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] > 1) a.push_back(d);
  for (size_t d = 0; d < to.size(); ++d)
    if (to[d] > 1) b.push_back(d);
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const size_t first_i = i, first_j = j;
    int64_t left = from[a[i++]], right = to[b[j++]];
    while (left != right) {
      if (left < right) {
        if (i == a.size()) return whole;
        left *= from[a[i++]];
      } else {
        if (j == b.size()) return whole;
        right *= to[b[j++]];
      }
    }
    if (i - first_i == 1 && j - first_j == 1) whole[a[first_i]] = static_cast<int64_t>(b[first_j]);
  }
  return whole;
}

// For a reshape from `from` to `to` that only merges dims: for each dim of `to`, the dims of
// `from` of more than one element that it merges, in order; nullopt when it splits a dim.
std::optional<std::vector<std::vector<int64_t>>> MergedDims(const std::vector<int64_t>& from,
                                                            const std::vector<int64_t>& to) {
  std::vector<std::vector<int64_t>> merged(to.size());
  size_t i = 0;
  for (size_t d = 0; d < to.size(); ++d) {
    int64_t product = 1;
    while (product < to[d]) {
      while (i < from.size() && from[i] == 1) ++i;
      if (i == from.size()) return std::nullopt;
      product *= from[i];
      merged[d].push_back(static_cast<int64_t>(i++));
    }
    if (product != to[d]) return std::nullopt;
  }
  for (; i < from.size(); ++i)
    if (from[i] != 1) return std::nullopt;
  return merged;
}

// A broadcast of `operand` read in a shape of the same elements in the same order: `shape`,
// where operand dim k is dim at[k] (-1 for dims of one element).
struct BroadcastForm {
  Instruction* operand = nullptr;
  std::vector<int64_t> shape;
  std::vector<int64_t> at;
};

// The broadcast `source` itself, and, where its operand is a reshape (through other reshapes)
// that only merges dims of an earlier value y, the broadcast of y with the merged dims apart.
std::vector<BroadcastForm> FormsOf(const Instruction& source) {
  Instruction* x = source.operand(0);
  std::vector<BroadcastForm> forms;
  if (static_cast<int64_t>(source.dimensions.size()) != x->shape().rank()) return forms;
  forms.push_back({x, source.shape().dims(), source.dimensions});
  Instruction* y = x;
  while (y->opcode() == Opcode::kReshape && FoldableBeforePropagation(*y)) y = y->operand(0);
  if (y == x || !y->shape().IsArray()) return forms;
  std::optional<std::vector<std::vector<int64_t>>> merged = MergedDims(y->shape().dims(), x->shape().dims());
  if (!merged) return forms;
  std::vector<int64_t> x_at(source.shape().rank(), -1);
  for (size_t k = 0; k < source.dimensions.size(); ++k) x_at[static_cast<size_t>(source.dimensions[k])] = static_cast<int64_t>(k);
  BroadcastForm form{y, {}, std::vector<int64_t>(y->shape().rank(), -1)};
  for (int64_t b = 0; b < source.shape().rank(); ++b) {
    if (x_at[b] < 0) {
      form.shape.push_back(source.shape().dim(b));
      continue;
    }
    for (int64_t j : (*merged)[static_cast<size_t>(x_at[b])]) {
      form.at[static_cast<size_t>(j)] = static_cast<int64_t>(form.shape.size());
      form.shape.push_back(y->shape().dim(j));
    }
  }
  forms.push_back(std::move(form));
  return forms;
}

}  // namespace

int64_t FoldReshapedBroadcastsBeforePropagation(Module& module) {
  int64_t folded = 0;
  NameUniquer names;
  names.ReserveAll(module);
  for (const auto& computation : module.computations()) {
    for (Instruction* reshape : computation->MakePostOrder()) {
      if (reshape->opcode() != Opcode::kReshape || !FoldableBeforePropagation(*reshape) ||
          reshape == computation->root())
        continue;
      const Instruction* source = reshape->operand(0);
      while (source->opcode() == Opcode::kReshape && FoldableBeforePropagation(*source)) source = source->operand(0);
      if (source->opcode() != Opcode::kBroadcast || !FoldableBeforePropagation(*source)) continue;
      Instruction* x = nullptr;
      std::vector<int64_t> kept_dims, dimensions;
      for (const BroadcastForm& form : FormsOf(*source)) {
        if (form.operand->shape().element_type() != reshape->shape().element_type()) continue;
        const std::vector<int64_t>& dims = form.operand->shape().dims();
        const std::vector<int64_t> whole = WholeDims(form.shape, reshape->shape().dims());
        kept_dims.clear();
        dimensions.clear();
        bool ok = true;
        for (size_t k = 0; ok && k < dims.size(); ++k) {
          if (dims[k] == 1) continue;
          const int64_t to = form.at[k] < 0 ? -1 : whole[static_cast<size_t>(form.at[k])];
          ok = to >= 0 && (dimensions.empty() || to > dimensions.back());
          kept_dims.push_back(dims[k]);
          dimensions.push_back(to);
        }
        if (ok) {
          x = form.operand;
          break;
        }
      }
      if (x == nullptr) continue;
      const std::vector<int64_t>& x_dims = x->shape().dims();
      Instruction* operand = x;
      Instruction* after = reshape;
      if (kept_dims.size() != x_dims.size()) {
        auto squeezed = std::make_unique<Instruction>(Opcode::kReshape, Shape(x->shape().element_type(), kept_dims),
                                                      names.Unique("reshape"));
        squeezed->AppendOperand(x);
        squeezed->metadata = reshape->metadata;
        squeezed->CopySourceFrom(*reshape);
        operand = after = computation->AddInstructionAfter(std::move(squeezed), reshape);
      }
      auto broadcast = std::make_unique<Instruction>(Opcode::kBroadcast, reshape->shape(), names.Unique("broadcast"));
      broadcast->AppendOperand(operand);
      broadcast->dimensions = dimensions;
      broadcast->metadata = reshape->metadata;
      broadcast->CopySourceFrom(*reshape);
      reshape->ReplaceAllUsesWith(computation->AddInstructionAfter(std::move(broadcast), after));
      ++folded;
    }
  }
  return folded;
}

}  // namespace gspmd
