// Recognizing sort comparators that compare one key derived from each side (sort_keys.h).
#include "runtime/interp/sort_keys.h"

#include <set>
#include <unordered_map>
#include <utility>

#include "ir/narrow_types.h"
#include "runtime/interp/kernel_comparator.h"

namespace gspmd::kernel {
namespace {

// Ops a key function may use: scalar arithmetic, compare, select, conversions, constants.
bool IsKeyOp(const Instruction& instruction) {
  Opcode opcode = instruction.opcode();
  if (IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode)) return true;
  switch (opcode) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kCopy: case Opcode::kCompare:
    case Opcode::kSelect: case Opcode::kConvert: case Opcode::kBitcastConvert:
      return true;
    default:
      return false;
  }
}

// The single parameter `root` depends on (nullopt when none or several), checking that
// every instruction on the way is a key op.
std::optional<int64_t> OnlyParameter(const Instruction* root) {
  std::optional<int64_t> found;
  std::vector<const Instruction*> stack = {root};
  std::set<const Instruction*> seen;
  while (!stack.empty()) {
    const Instruction* instruction = stack.back();
    stack.pop_back();
    if (!seen.insert(instruction).second) continue;
    if (!IsKeyOp(*instruction) || !instruction->shape().IsArray() || instruction->shape().rank() != 0) return std::nullopt;
    if (instruction->opcode() == Opcode::kParameter) {
      if (found && *found != instruction->parameter_number) return std::nullopt;
      found = instruction->parameter_number;
    }
    for (const Instruction* operand : instruction->operands()) stack.push_back(operand);
  }
  return found;
}

// Whether `a` and `b` compute the same function, a of parameter pa and b of parameter pb.
bool SameFunction(const Instruction* a, const Instruction* b, int64_t pa, int64_t pb) {
  std::vector<std::pair<const Instruction*, const Instruction*>> stack = {{a, b}};
  std::set<std::pair<const Instruction*, const Instruction*>> seen;
  while (!stack.empty()) {
    auto [x, y] = stack.back();
    stack.pop_back();
    if (!seen.insert({x, y}).second) continue;
    if (x->opcode() != y->opcode() || !(x->shape().Compatible(y->shape())) || x->operand_count() != y->operand_count())
      return false;
    switch (x->opcode()) {
      case Opcode::kParameter:
        if (x->parameter_number != pa || y->parameter_number != pb) return false;
        break;
      case Opcode::kConstant:
        if (x == y) break;
        if (!x->literal() || !y->literal() || !x->literal()->BitwiseEquals(*y->literal())) return false;
        break;
      case Opcode::kCompare:
        if (x->comparison_direction != y->comparison_direction || x->comparison_type != y->comparison_type) return false;
        break;
      default:
        break;
    }
    if (x == y && x->opcode() == Opcode::kConstant) continue;
    for (int64_t i = 0; i < x->operand_count(); ++i) stack.emplace_back(x->operand(i), y->operand(i));
  }
  return true;
}

// The key function as a computation of one parameter: the instructions `root` depends on.
std::unique_ptr<Computation> ExtractKeyFunction(const Instruction* root) {
  auto computation = std::make_unique<Computation>("sort_key");
  std::vector<const Instruction*> order;
  std::vector<std::pair<const Instruction*, size_t>> stack = {{root, 0}};
  std::set<const Instruction*> visited = {root};
  while (!stack.empty()) {  // post order, iteratively
    auto& [instruction, next] = stack.back();
    if (next < instruction->operands().size()) {
      const Instruction* operand = instruction->operands()[next++];
      if (visited.insert(operand).second) stack.emplace_back(operand, 0);
      continue;
    }
    order.push_back(instruction);
    stack.pop_back();
  }
  std::unordered_map<const Instruction*, Instruction*> mapping;
  for (const Instruction* instruction : order) {
    std::unique_ptr<Instruction> copy;
    if (instruction->opcode() == Opcode::kParameter) {
      copy = std::make_unique<Instruction>(Opcode::kParameter, instruction->shape(), "key_parameter");
      copy->parameter_number = 0;
    } else {
      std::vector<Instruction*> operands;
      for (const Instruction* operand : instruction->operands()) operands.push_back(mapping.at(operand));
      copy = instruction->CloneWithNewOperands(instruction->shape(), operands);
    }
    mapping[instruction] = computation->AddInstruction(std::move(copy));
  }
  computation->set_root(mapping.at(root));
  return computation;
}

}  // namespace

std::optional<KeyedOrder> RecognizeKeyedOrder(const Computation& comparator, Operands operands) {
  const Instruction* root = comparator.root();
  if (root == nullptr || root->opcode() != Opcode::kCompare || root->operand_count() != 2) return std::nullopt;
  ComparisonDirection direction = root->comparison_direction;
  if (direction != ComparisonDirection::kLt && direction != ComparisonDirection::kGt) return std::nullopt;
  const Instruction* lhs = root->operand(0);
  const Instruction* rhs = root->operand(1);
  std::optional<int64_t> pa = OnlyParameter(lhs), pb = OnlyParameter(rhs);
  if (!pa || !pb || *pa / 2 != *pb / 2 || *pa == *pb) return std::nullopt;
  int64_t key = *pa / 2;
  if (key >= static_cast<int64_t>(operands.size())) return std::nullopt;
  if (!SameFunction(lhs, rhs, *pa, *pb)) return std::nullopt;
  if (comparator.parameter(*pa)->shape().element_type() != operands[key]->element_type()) return std::nullopt;
  ElementType key_type = lhs->shape().element_type();
  if (!IsNaturalComparisonType(root->comparison_type, key_type) || IsComplex(key_type) || IsStorageOnly(key_type))
    return std::nullopt;
  KeyedOrder order;
  order.key_operand = key;
  bool forward = *pa == 2 * key;
  order.descending = (direction == ComparisonDirection::kGt) == forward;
  order.total_order = root->comparison_type == ComparisonType::kTotalOrder;
  order.key_type = key_type;
  if (lhs->opcode() != Opcode::kParameter) {
    std::unique_ptr<Computation> function = ExtractKeyFunction(lhs);
    order.key = ScalarProgram::Compile(*function);
    if (!order.key) return std::nullopt;
  }
  return order;
}

}  // namespace gspmd::kernel
