// Helpers shared by the shape-inference rules (internal to src/ir/shape_inference*.cpp).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "ir/computation.h"
#include "ir/shape_inference.h"
#include "support/allocation.h"
#include "support/diagnostic.h"

namespace gspmd::shape_rules {

inline std::string Text(const Shape& shape) { return shape.ToString(false); }
inline std::string_view Name(const Instruction& instruction) { return OpcodeName(instruction.opcode()); }

inline InferredShape Fail(std::string message) { return InferredShape{std::nullopt, std::move(message)}; }
inline InferredShape Ok(Shape shape) { return InferredShape{std::move(shape), ""}; }
inline InferredShape MustBeWritten() { return InferredShape{}; }

inline const Shape& OperandShape(const Instruction& instruction, int64_t i) { return instruction.operand(i)->shape(); }

// "operand 1 (%w) of dot is f32[4,8], expected ..."
inline std::string OperandError(const Instruction& instruction, int64_t i, std::string_view expected) {
  return StrCat("operand ", i, " (%", instruction.operand(i)->name(), ") of ", Name(instruction), " is ",
                Text(OperandShape(instruction, i)), ", expected ", expected);
}

// "dimensions={0,5} of reduce: 5 is out of range for the 2 dimensions of f32[4,8]" and friends:
// each entry in [0, rank) and (when unique) no entry twice. "" when fine.
inline std::string CheckDimensionList(std::string_view what, const std::vector<int64_t>& dims, int64_t rank,
                                      bool unique, const Shape& of) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return StrCat(what, ": ", d, " is out of range for the ", rank, " dimensions of ", Text(of),
                    " (expected 0 to ", rank - 1, ")");
    if (unique && seen[static_cast<size_t>(d)]) return StrCat(what, ": dimension ", d, " is listed twice");
    seen[static_cast<size_t>(d)] = true;
  }
  return "";
}

inline bool IsSortedAscending(const std::vector<int64_t>& values) {
  return std::is_sorted(values.begin(), values.end());
}

inline bool Contains(const std::vector<int64_t>& values, int64_t v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

inline bool IsScalarShape(const Shape& shape) { return shape.IsArray() && shape.rank() == 0; }

// Element types equal, or both floating point (XLA lets reducers and updates accumulate in
// another float precision).
inline bool SameTypeIgnoringFpPrecision(ElementType a, ElementType b) {
  return a == b || (IsFloatingPoint(a) && IsFloatingPoint(b));
}

// A computation's parameter shapes and root shape, checked against what the caller passes
// and expects. Returns "" or e.g. "to_apply %add takes 3 parameters, expected 2".
std::string CheckScalarReducer(const Instruction& instruction, const Computation& reducer, std::string_view role,
                               const std::vector<ElementType>& accumulator_types,
                               const std::vector<ElementType>& input_types);
// A computation taking `n` scalar parameters of the given types and returning pred[].
std::string CheckScalarPredicate(const Instruction& instruction, const Computation& computation,
                                 std::string_view role, const std::vector<ElementType>& parameter_types);
// A computation whose parameters are exactly `operands` (compatible shapes) for call-like ops.
std::string CheckParametersMatch(const Instruction& instruction, const Computation& computation,
                                 std::string_view role, const std::vector<const Shape*>& operands);

// Output size of one windowed dimension (reduce-window, convolution, select-and-scatter):
// base-dilated and padded input, dilated window, strided. nullopt with `error` set when the
// window's numbers are out of range.
std::optional<int64_t> WindowedSize(int64_t input, const WindowDim& window, std::string& error);

// Rules by family (shape_inference*.cpp).
InferredShape InferElementwise(const Instruction& instruction);
InferredShape InferShapeOp(const Instruction& instruction);
InferredShape InferDot(const Instruction& instruction);
InferredShape InferConvolution(const Instruction& instruction);
InferredShape InferReduceFamily(const Instruction& instruction);
InferredShape InferIndexing(const Instruction& instruction);
InferredShape InferCollective(const Instruction& instruction, const DeviceCounts& devices);
InferredShape InferControlFlow(const Instruction& instruction);
InferredShape InferOther(const Instruction& instruction, const DeviceCounts& devices);

}  // namespace gspmd::shape_rules
