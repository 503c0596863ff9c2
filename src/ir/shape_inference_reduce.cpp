// Shape inference for ops with scalar computations: reduce, reduce-window,
// select-and-scatter, map, sort and topk (and their computations' signatures).
#include "ir/shape_inference_util.h"

namespace gspmd::shape_rules {
namespace {

Shape TupleOrSingle(std::vector<Shape> shapes) {
  if (shapes.size() == 1) return std::move(shapes[0]);
  return Shape::Tuple(std::move(shapes));
}

// The N inputs and N init values of reduce / reduce-window: inputs arrays of equal dims,
// inits scalars. Fills the element types.
std::string CheckInputsAndInits(const Instruction& instruction, std::vector<ElementType>& input_types,
                                std::vector<ElementType>& init_types) {
  int64_t n = instruction.operand_count() / 2;
  const Shape& first = OperandShape(instruction, 0);
  for (int64_t i = 0; i < n; ++i) {
    const Shape& input = OperandShape(instruction, i);
    if (!input.IsArray() || input.dims() != first.dims())
      return OperandError(instruction, i, StrCat("an array with the dimensions of operand 0, ", Text(first)));
    const Shape& init = OperandShape(instruction, n + i);
    if (!IsScalarShape(init))
      return OperandError(instruction, n + i, StrCat("a scalar init value for input ", i));
    input_types.push_back(input.element_type());
    init_types.push_back(init.element_type());
  }
  return "";
}

InferredShape InferReduce(const Instruction& instruction) {
  std::vector<ElementType> input_types, init_types;
  if (std::string error = CheckInputsAndInits(instruction, input_types, init_types); !error.empty()) return Fail(error);
  const Shape& input = OperandShape(instruction, 0);
  if (std::string error = CheckDimensionList("reduce dimensions", instruction.dimensions, input.rank(), true, input);
      !error.empty())
    return Fail(error);
  if (std::string error = CheckScalarReducer(instruction, *instruction.to_apply(), "to_apply", init_types, input_types);
      !error.empty())
    return Fail(error);
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < input.rank(); ++d)
    if (!Contains(instruction.dimensions, d)) dims.push_back(input.dim(d));
  std::vector<Shape> results;
  for (ElementType type : init_types) results.emplace_back(type, dims);
  return Ok(TupleOrSingle(std::move(results)));
}

// Output dims of a window over `input`.
std::optional<std::vector<int64_t>> WindowOutput(const Shape& input, const Window& window, std::string_view op,
                                                 std::string& error) {
  if (static_cast<int64_t>(window.size()) != input.rank()) {
    error = StrCat(op, " window has ", window.size(), " dimensions, expected one per dimension of ", Text(input), " (",
                   input.rank(), ")");
    return std::nullopt;
  }
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < input.rank(); ++d) {
    std::string why;
    std::optional<int64_t> size = WindowedSize(input.dim(d), window[static_cast<size_t>(d)], why);
    if (!size) {
      error = StrCat(op, " window dimension ", d, ": ", why);
      return std::nullopt;
    }
    dims.push_back(*size);
  }
  return dims;
}

InferredShape InferReduceWindow(const Instruction& instruction) {
  std::vector<ElementType> input_types, init_types;
  if (std::string error = CheckInputsAndInits(instruction, input_types, init_types); !error.empty()) return Fail(error);
  std::string error;
  std::optional<std::vector<int64_t>> dims = WindowOutput(OperandShape(instruction, 0), instruction.window(),
                                                          "reduce-window", error);
  if (!dims) return Fail(error);
  if (std::string why = CheckScalarReducer(instruction, *instruction.to_apply(), "to_apply", init_types, input_types);
      !why.empty())
    return Fail(why);
  std::vector<Shape> results;
  for (ElementType type : init_types) results.emplace_back(type, *dims);
  return Ok(TupleOrSingle(std::move(results)));
}

InferredShape InferSelectAndScatter(const Instruction& instruction) {
  const Shape& operand = OperandShape(instruction, 0);
  const Shape& source = OperandShape(instruction, 1);
  const Shape& init = OperandShape(instruction, 2);
  if (!operand.IsArray()) return Fail(OperandError(instruction, 0, "an array"));
  std::string error;
  std::optional<std::vector<int64_t>> windows = WindowOutput(operand, instruction.window(), "select-and-scatter", error);
  if (!windows) return Fail(error);
  if (!source.IsArray() || source.dims() != *windows || !SameTypeIgnoringFpPrecision(source.element_type(), operand.element_type()))
    return Fail(OperandError(instruction, 1, StrCat("one value per window, ",
                                                    Text(Shape(operand.element_type(), *windows)))));
  if (!IsScalarShape(init) || init.element_type() != operand.element_type())
    return Fail(OperandError(instruction, 2, StrCat("a ", ElementTypeName(operand.element_type()), " scalar")));
  const Computation* select = instruction.called_computations().at(0);
  const Computation* scatter = instruction.called_computations().at(1);
  ElementType type = operand.element_type();
  if (std::string why = CheckScalarPredicate(instruction, *select, "select", {type, type}); !why.empty()) return Fail(why);
  if (std::string why = CheckScalarReducer(instruction, *scatter, "scatter", {type}, {source.element_type()}); !why.empty())
    return Fail(why);
  return Ok(Shape(operand.element_type(), operand.dims()));
}

InferredShape InferMap(const Instruction& instruction) {
  const Shape& first = OperandShape(instruction, 0);
  std::vector<ElementType> types;
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    const Shape& operand = OperandShape(instruction, i);
    if (!operand.IsArray() || operand.dims() != first.dims())
      return Fail(OperandError(instruction, i, StrCat("an array with the dimensions of operand 0, ", Text(first))));
    types.push_back(operand.element_type());
  }
  if (std::string error = CheckDimensionList("map dimensions", instruction.dimensions, first.rank(), true, first);
      !error.empty())
    return Fail(error);
  const Computation& function = *instruction.to_apply();
  std::string prefix = StrCat("to_apply %", function.name(), " of map");
  if (function.num_parameters() != instruction.operand_count())
    return Fail(StrCat(prefix, " takes ", function.num_parameters(), " parameters, expected ",
                       instruction.operand_count(), " (one scalar per operand)"));
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    const Shape& parameter = function.parameter(i)->shape();
    if (!IsScalarShape(parameter) || parameter.element_type() != types[static_cast<size_t>(i)])
      return Fail(StrCat(prefix, ": parameter ", i, " is ", Text(parameter), ", expected a ",
                         ElementTypeName(types[static_cast<size_t>(i)]), " scalar"));
  }
  const Shape& root = function.root()->shape();
  if (!IsScalarShape(root)) return Fail(StrCat(prefix, " returns ", Text(root), ", expected a scalar"));
  return Ok(Shape(root.element_type(), first.dims()));
}

InferredShape InferSort(const Instruction& instruction) {
  const Shape& first = OperandShape(instruction, 0);
  std::vector<ElementType> parameter_types;
  std::vector<Shape> results;
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    const Shape& operand = OperandShape(instruction, i);
    if (!operand.IsArray() || operand.dims() != first.dims())
      return Fail(OperandError(instruction, i, StrCat("an array with the dimensions of operand 0, ", Text(first))));
    parameter_types.push_back(operand.element_type());
    parameter_types.push_back(operand.element_type());
    results.emplace_back(operand.element_type(), operand.dims());
  }
  if (instruction.dimensions.size() != 1)
    return Fail(StrCat("sort dimensions has ", instruction.dimensions.size(), " entries, expected one"));
  if (std::string error = CheckDimensionList("sort dimensions", instruction.dimensions, first.rank(), true, first);
      !error.empty())
    return Fail(error);
  if (std::string error = CheckScalarPredicate(instruction, *instruction.to_apply(), "comparator", parameter_types);
      !error.empty())
    return Fail(error);
  if (results.size() == 1) return Ok(std::move(results[0]));
  return Ok(Shape::Tuple(std::move(results)));
}

InferredShape InferTopK(const Instruction& instruction) {
  const Shape& operand = OperandShape(instruction, 0);
  if (!operand.IsArray() || operand.rank() == 0) return Fail(OperandError(instruction, 0, "an array of rank 1 or more"));
  int64_t last = operand.dim(operand.rank() - 1);
  if (instruction.k < 0 || instruction.k > last)
    return Fail(StrCat("topk k=", instruction.k, " does not fit the last dimension of ", Text(operand),
                       ", expected 0 <= k <= ", last));
  std::vector<int64_t> dims = operand.dims();
  dims.back() = instruction.k;
  return Ok(Shape::Tuple({Shape(operand.element_type(), dims), Shape(ElementType::kS32, dims)}));
}

}  // namespace

InferredShape InferReduceFamily(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kReduce: return InferReduce(instruction);
    case Opcode::kReduceWindow: return InferReduceWindow(instruction);
    case Opcode::kSelectAndScatter: return InferSelectAndScatter(instruction);
    case Opcode::kMap: return InferMap(instruction);
    case Opcode::kSort: return InferSort(instruction);
    default: return InferTopK(instruction);
  }
}

}  // namespace gspmd::shape_rules
