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
      Instruction* x = source->operand(0);
      if (!x->shape().IsArray() || x->shape().element_type() != reshape->shape().element_type()) continue;
      const std::vector<int64_t>& x_dims = x->shape().dims();
      const std::vector<int64_t> whole = WholeDims(source->shape().dims(), reshape->shape().dims());
      std::vector<int64_t> kept_dims, dimensions;
      bool ok = static_cast<int64_t>(source->dimensions.size()) == x->shape().rank();
      for (size_t k = 0; ok && k < x_dims.size(); ++k) {
        if (x_dims[k] == 1) continue;
        const int64_t to = whole[static_cast<size_t>(source->dimensions[k])];
        ok = to >= 0 && (dimensions.empty() || to > dimensions.back());
        kept_dims.push_back(x_dims[k]);
        dimensions.push_back(to);
      }
      if (!ok) continue;
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
