// Ops of constants folded before propagation, and the expressions the partitioner computes again whole (constant_folds.h).
#include "partitioner/constant_folds.h"

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "ir/computation.h"
#include "ir/element_type.h"
#include "ir/hlo_builder.h"
#include "ir/instruction.h"
#include "partitioner/simplify.h"
#include "partitioner/slice_folds.h"
#include "runtime/interp/kernels.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

constexpr int64_t kMaxFoldedElements = 1 << 16;

bool IsScalarConstant(const Instruction& value) {
  return value.opcode() == Opcode::kConstant && value.literal().has_value() && value.shape().IsArray() &&
         value.shape().rank() == 0;
}

// A constant, or a scalar constant broadcast (a splat): what a folded op reads.
const Literal* ConstantLiteral(const Instruction& value) {
  if (value.opcode() == Opcode::kConstant && value.literal().has_value() && value.shape().IsArray())
    return &*value.literal();
  return nullptr;
}

bool IsSplat(const Instruction& value) {
  return value.opcode() == Opcode::kBroadcast && value.operand_count() == 1 && IsScalarConstant(*value.operand(0));
}

enum class Kernel { kNone, kElementwise, kShape };

Kernel KernelOf(const Instruction& instruction) {
  const Opcode opcode = instruction.opcode();
  if (IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode)) return Kernel::kElementwise;
  switch (opcode) {
    case Opcode::kCompare: case Opcode::kSelect: case Opcode::kClamp: case Opcode::kConvert:
      return Kernel::kElementwise;
    case Opcode::kReshape: case Opcode::kTranspose: case Opcode::kSlice: case Opcode::kConcatenate:
    case Opcode::kPad: case Opcode::kReverse:
      return Kernel::kShape;
    case Opcode::kBroadcast:  // a splat stays one; a broadcast of a non-scalar constant folds
      return instruction.operand_count() == 1 && !IsScalarConstant(*instruction.operand(0)) ? Kernel::kShape
                                                                                           : Kernel::kNone;
    default:
      return Kernel::kNone;
  }
}

class ConstantFolder {
 public:
  explicit ConstantFolder(Module& module) { names_.ReserveAll(module); }

  // A pad whose result keeps no element of its operand (a dim cropped to nothing but
  // padding) is its pad value everywhere: a broadcast of it (oracle seed 121471: a dot's
  // result padded to [21,2] with low -1 on its one column; XLA's simplifier folds it, and the
  // dot and the pad's halo exchange go, 16 B; XLA none).
  bool FoldPadOfNothing(Computation& computation, Instruction* pad) {
    if (pad->opcode() != Opcode::kPad || pad->operand_count() != 2 || !FoldableBeforePropagation(*pad) ||
        pad == computation.root() || pad->operand(1)->shape().rank() != 0)
      return false;
    const Shape& operand = pad->operand(0)->shape();
    if (static_cast<int64_t>(pad->padding().size()) != operand.rank()) return false;
    bool none = false;
    for (int64_t d = 0; d < operand.rank() && !none; ++d) {
      const PaddingDim& p = pad->padding()[d];
      const int64_t step = p.interior + 1;
      int64_t kept = 0;  // operand elements i at low + i * step inside [0, result size)
      for (int64_t i = 0; i < operand.dim(d) && kept == 0; ++i) {
        const int64_t at = p.low + i * step;
        kept += at >= 0 && at < pad->shape().dim(d);
      }
      none = kept == 0 && pad->shape().dim(d) > 0;
    }
    if (!none) return false;
    auto broadcast = std::make_unique<Instruction>(Opcode::kBroadcast, pad->shape(), names_.Unique("broadcast"));
    broadcast->AppendOperand(pad->operand(1));
    broadcast->CopySourceFrom(*pad);
    pad->ReplaceAllUsesWith(computation.AddInstructionAfter(std::move(broadcast), pad));
    return true;
  }

  // max(x, x), min(x, x), x & x and x | x are x, bit for bit: their users read x (XLA's
  // simplifier drops them too, after its partitioner; oracle seed 141461: the maximum of a
  // value with itself, returned whole beside the value, was laid out on its own and gathered
  // again, 96 B more than XLA). Not select(p, x, x): its predicate's layout, which XLA's
  // propagation sees, steered seed 143307 to less (the simplifier drops it after partitioning).
  static bool FoldIdentity(Computation& computation, Instruction* instruction) {
    Instruction* x = IdempotentOperand(*instruction);
    if (x == nullptr || !FoldableBeforePropagation(*instruction) || instruction == computation.root()) return false;
    instruction->ReplaceAllUsesWith(x);
    return true;
  }

  bool Fold(Computation& computation, Instruction* instruction) {
    if (FoldIdentity(computation, instruction)) return true;
    if (FoldPadOfNothing(computation, instruction)) return true;
    const Kernel kernel = KernelOf(*instruction);
    if (kernel == Kernel::kNone || !FoldableBeforePropagation(*instruction) || instruction == computation.root() ||
        instruction->shape().element_count() > kMaxFoldedElements || instruction->operand_count() == 0)
      return false;
    std::vector<Literal> splats;  // the splat operands' values, expanded
    std::vector<const Literal*> operands;
    splats.reserve(instruction->operand_count());
    for (const Instruction* operand : instruction->operands()) {
      if (const Literal* literal = ConstantLiteral(*operand)) {
        operands.push_back(literal);
        continue;
      }
      if (!IsSplat(*operand) || operand->shape().element_count() > kMaxFoldedElements) return false;
      const Literal* scalar = &*operand->operand(0)->literal();
      splats.push_back(EvaluateShapeOp(*operand, std::span<const Literal* const>(&scalar, 1)));
      operands.push_back(&splats.back());
    }
    std::optional<Literal> value;
    try {
      value = kernel == Kernel::kElementwise ? EvaluateElementwise(*instruction, operands)
                                             : EvaluateShapeOp(*instruction, operands);
    } catch (const UserError&) {
      return false;  // left for the run to report where it happens, if it is ever run
    }
    instruction->ReplaceAllUsesWith(MakeConstant(computation, *instruction, std::move(*value)));
    return true;
  }

 private:
  // The constant `value` placed right after `like`, or a broadcast of its one element.
  Instruction* MakeConstant(Computation& computation, const Instruction& like, Literal value) {
    if (like.shape().rank() > 0)
      if (std::optional<Literal> one = SplatOf(value)) return AddSplatAfter(computation, like, std::move(*one), names_);
    auto constant = std::make_unique<Instruction>(Opcode::kConstant, like.shape(), names_.Unique("constant"));
    constant->mutable_literal() = std::move(value);
    constant->CopySourceFrom(like);
    return computation.AddInstructionAfter(std::move(constant), &like);
  }

  NameUniquer names_;
};

bool ComputedFromItsOperands(const Instruction& instruction) {
  const Opcode opcode = instruction.opcode();
  if (IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode)) return true;
  switch (opcode) {
    case Opcode::kConstant: case Opcode::kIota: case Opcode::kCompare: case Opcode::kSelect: case Opcode::kClamp:
    case Opcode::kConvert: case Opcode::kCopy: case Opcode::kBroadcast: case Opcode::kReshape:
    case Opcode::kTranspose: case Opcode::kSlice: case Opcode::kConcatenate: case Opcode::kPad:
    case Opcode::kReverse: case Opcode::kGather: case Opcode::kScatter: case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice: case Opcode::kReduce:
      return true;
    default:
      return false;
  }
}

bool CollectExpression(const Instruction& value, const std::function<bool(const Instruction&)>& leaf,
                       std::set<const Instruction*>& seen, std::vector<const Instruction*>& order) {
  if (seen.count(&value) != 0) return true;
  if (!ComputedFromItsOperands(value) || !value.shape().IsArray() ||
      value.shape().element_count() > kMaxFoldedElements || seen.size() >= 64)
    return false;
  if (value.opcode() == Opcode::kConstant && !value.literal().has_value()) return false;
  seen.insert(&value);
  for (const Instruction* operand : value.operands())
    if (!leaf(*operand) && !CollectExpression(*operand, leaf, seen, order)) return false;
  order.push_back(&value);
  return true;
}

}  // namespace

std::vector<const Instruction*> ExpressionOf(const Instruction& value,
                                             const std::function<bool(const Instruction&)>& leaf) {
  std::set<const Instruction*> seen;
  std::vector<const Instruction*> order;
  if (!CollectExpression(value, leaf, seen, order)) order.clear();
  return order;
}

int64_t FoldConstantExpressionsBeforePropagation(Module& module) {
  ConstantFolder folder(module);
  int64_t folded = 0;
  for (const auto& computation : module.computations())
    for (Instruction* instruction : computation->MakePostOrder())
      folded += folder.Fold(*computation, instruction) ? 1 : 0;
  return folded;
}

}  // namespace gspmd
