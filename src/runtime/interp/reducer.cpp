// RecognizeReducer: spots reducer computations that are one binary op of their parameters.
#include "ir/computation.h"
#include "runtime/interp/kernels.h"

namespace gspmd {
namespace {

BinaryReducer ReducerForOpcode(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd: return BinaryReducer::kAdd;
    case Opcode::kMultiply: return BinaryReducer::kMultiply;
    case Opcode::kMaximum: return BinaryReducer::kMaximum;
    case Opcode::kMinimum: return BinaryReducer::kMinimum;
    case Opcode::kAnd: return BinaryReducer::kAnd;
    case Opcode::kOr: return BinaryReducer::kOr;
    case Opcode::kXor: return BinaryReducer::kXor;
    default: return BinaryReducer::kUnknown;
  }
}

bool IsScalarOf(const Shape& shape, ElementType type) {
  return shape.IsArray() && shape.rank() == 0 && shape.element_type() == type;
}

}  // namespace

BinaryReducer RecognizeReducer(const Computation& computation) {
  const Instruction* root = computation.root();
  if (root == nullptr || computation.num_parameters() != 2 || root->operand_count() != 2)
    return BinaryReducer::kUnknown;
  const Instruction* p0 = computation.parameter(0);
  const Instruction* p1 = computation.parameter(1);
  if (p0 == nullptr || p1 == nullptr) return BinaryReducer::kUnknown;
  ElementType type = root->shape().element_type();
  bool scalars = IsScalarOf(root->shape(), type) && IsScalarOf(p0->shape(), type) &&
                 IsScalarOf(p1->shape(), type);
  if (!scalars) return BinaryReducer::kUnknown;
  const Instruction* a = root->operand(0);
  const Instruction* b = root->operand(1);
  bool uses_both_parameters = (a == p0 && b == p1) || (a == p1 && b == p0);
  if (!uses_both_parameters) return BinaryReducer::kUnknown;
  return ReducerForOpcode(root->opcode());
}

}  // namespace gspmd
