// Reads the trip count of a while loop from its backend config or its induction variable.
#include "analysis/trip_count.h"

#include <regex>
#include <string>

#include "ir/computation.h"

namespace gspmd {
namespace {

std::optional<int64_t> ScalarConstant(const Instruction* instruction) {
  while (instruction->opcode() == Opcode::kCopy || instruction->opcode() == Opcode::kReshape ||
         instruction->opcode() == Opcode::kConvert)
    instruction = instruction->operand(0);
  if (instruction->opcode() != Opcode::kConstant || !instruction->literal()) return std::nullopt;
  const Literal& literal = *instruction->literal();
  if (!literal.shape().IsArray() || literal.element_count() != 1 ||
      !IsInteger(literal.element_type()))
    return std::nullopt;
  return literal.GetAsInt64(0);
}

// The tuple index when `instruction` is get-tuple-element(parameter 0, index).
std::optional<int64_t> ParameterElementIndex(const Instruction* instruction) {
  if (instruction->opcode() != Opcode::kGetTupleElement) return std::nullopt;
  if (instruction->operand(0)->opcode() != Opcode::kParameter) return std::nullopt;
  return instruction->tuple_index;
}

std::optional<int64_t> TripCountFromBackendConfig(const Instruction& loop) {
  if (!loop.backend_config) return std::nullopt;
  static const std::regex kPattern(R"re("known_trip_count"\s*:\s*\{\s*"n"\s*:\s*"?(\d+))re");
  std::smatch match;
  if (!std::regex_search(*loop.backend_config, match, kPattern)) return std::nullopt;
  return std::stoll(match[1].str());
}

// Iterations of `for (v = init; v <op> limit; v += step)`.
std::optional<int64_t> CountIterations(int64_t init, int64_t limit, int64_t step,
                                       ComparisonDirection direction, bool induction_on_left) {
  if (!induction_on_left) {  // limit <op> v  ==  v <swapped op> limit
    switch (direction) {
      case ComparisonDirection::kLt: direction = ComparisonDirection::kGt; break;
      case ComparisonDirection::kLe: direction = ComparisonDirection::kGe; break;
      case ComparisonDirection::kGt: direction = ComparisonDirection::kLt; break;
      case ComparisonDirection::kGe: direction = ComparisonDirection::kLe; break;
      default: break;
    }
  }
  if (step == 0) return std::nullopt;
  auto ceil_div = [](int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; };
  switch (direction) {
    case ComparisonDirection::kLt: return step > 0 ? std::optional(ceil_div(limit - init, step)) : std::nullopt;
    case ComparisonDirection::kLe: return step > 0 ? std::optional(ceil_div(limit - init + 1, step)) : std::nullopt;
    case ComparisonDirection::kGt: return step < 0 ? std::optional(ceil_div(init - limit, -step)) : std::nullopt;
    case ComparisonDirection::kGe: return step < 0 ? std::optional(ceil_div(init - limit + 1, -step)) : std::nullopt;
    case ComparisonDirection::kNe:
      if ((limit - init) % step != 0 || (limit - init) / step < 0) return std::nullopt;
      return (limit - init) / step;
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<int64_t> WhileTripCount(const Instruction& loop) {
  if (auto known = TripCountFromBackendConfig(loop)) return known;
  const Instruction* condition_root = loop.while_condition()->root();
  if (condition_root->opcode() != Opcode::kCompare) return std::nullopt;
  const Instruction* lhs = condition_root->operand(0);
  const Instruction* rhs = condition_root->operand(1);
  std::optional<int64_t> index = ParameterElementIndex(lhs);
  std::optional<int64_t> limit = ScalarConstant(rhs);
  bool induction_on_left = true;
  if (!index || !limit) {
    index = ParameterElementIndex(rhs);
    limit = ScalarConstant(lhs);
    induction_on_left = false;
  }
  if (!index || !limit) return std::nullopt;

  const Instruction* body_root = loop.while_body()->root();
  if (body_root->opcode() != Opcode::kTuple || *index >= body_root->operand_count())
    return std::nullopt;
  const Instruction* update = body_root->operand(*index);
  if (update->opcode() != Opcode::kAdd && update->opcode() != Opcode::kSubtract) return std::nullopt;
  std::optional<int64_t> step;
  if (ParameterElementIndex(update->operand(0)) == index) step = ScalarConstant(update->operand(1));
  if (!step && update->opcode() == Opcode::kAdd && ParameterElementIndex(update->operand(1)) == index)
    step = ScalarConstant(update->operand(0));
  if (!step) return std::nullopt;
  if (update->opcode() == Opcode::kSubtract) step = -*step;

  const Instruction* init_tuple = loop.operand(0);
  if (init_tuple->opcode() != Opcode::kTuple || *index >= init_tuple->operand_count())
    return std::nullopt;
  std::optional<int64_t> init = ScalarConstant(init_tuple->operand(*index));
  if (!init) return std::nullopt;
  return CountIterations(*init, *limit, *step, condition_root->comparison_direction,
                         induction_on_left);
}

}  // namespace gspmd
