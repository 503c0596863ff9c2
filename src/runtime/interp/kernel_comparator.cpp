// RecognizeComparison: spots comparators that are one compare of two scalar parameters.
#include "runtime/interp/kernel_comparator.h"

namespace gspmd::kernel {
namespace {

bool IsScalar(const Shape& shape, ElementType type) {
  return shape.IsArray() && shape.rank() == 0 && shape.element_type() == type;
}

}  // namespace

bool IsNaturalComparisonType(ComparisonType comparison, ElementType type) {
  switch (comparison) {
    case ComparisonType::kDefault: return true;
    case ComparisonType::kTotalOrder: return true;
    case ComparisonType::kFloat: return IsFloatingPoint(type);
    case ComparisonType::kSigned: return IsSignedInteger(type);
    case ComparisonType::kUnsigned: return IsUnsignedInteger(type) || type == ElementType::kPred;
  }
  return false;
}

SimpleComparison RecognizeComparison(const Computation& computation, ElementType type) {
  SimpleComparison result;
  const Instruction* root = computation.root();
  if (root == nullptr || root->opcode() != Opcode::kCompare || root->operand_count() != 2) return result;
  if (!IsScalar(root->shape(), ElementType::kPred)) return result;
  const Instruction* lhs = root->operand(0);
  const Instruction* rhs = root->operand(1);
  if (lhs->opcode() != Opcode::kParameter || rhs->opcode() != Opcode::kParameter) return result;
  if (!IsScalar(lhs->shape(), type) || !IsScalar(rhs->shape(), type)) return result;
  if (!IsNaturalComparisonType(root->comparison_type, type)) return result;
  result.recognized = true;
  result.direction = root->comparison_direction;
  result.total_order = root->comparison_type == ComparisonType::kTotalOrder && IsFloatingPoint(type);
  result.lhs_parameter = lhs->parameter_number;
  result.rhs_parameter = rhs->parameter_number;
  return result;
}

}  // namespace gspmd::kernel
