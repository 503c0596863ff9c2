// Shape inference for indexed access: gather, scatter, dynamic-slice, dynamic-update-slice.
#include "ir/shape_inference_util.h"

namespace gspmd::shape_rules {
namespace {

// Start indices of dynamic-slice / dynamic-update-slice from operand `first` on: one integer
// scalar per dimension of `shape` (or, in the older form, one integer vector).
std::string CheckStartIndices(const Instruction& instruction, int64_t first, const Shape& shape) {
  int64_t count = instruction.operand_count() - first;
  if (count == 1 && shape.rank() > 0 && OperandShape(instruction, first).rank() == 1) {
    const Shape& vector = OperandShape(instruction, first);
    if (!IsInteger(vector.element_type()) || vector.dim(0) != shape.rank())
      return OperandError(instruction, first, StrCat("an integer vector of ", shape.rank(), " start indices"));
    return "";
  }
  if (count != shape.rank())
    return StrCat(Name(instruction), " has ", count, " start indices, expected one per dimension of ", Text(shape),
                  " (", shape.rank(), ")");
  for (int64_t i = first; i < instruction.operand_count(); ++i) {
    const Shape& index = OperandShape(instruction, i);
    if (!IsScalarShape(index) || !IsInteger(index.element_type()))
      return OperandError(instruction, i, "an integer scalar start index");
    if (index.element_type() != OperandShape(instruction, first).element_type())
      return OperandError(instruction, i, "the element type of the other start indices");
  }
  return "";
}

InferredShape InferDynamicSlice(const Instruction& instruction) {
  const Shape& operand = OperandShape(instruction, 0);
  if (!operand.IsArray()) return Fail(OperandError(instruction, 0, "an array"));
  if (std::string error = CheckStartIndices(instruction, 1, operand); !error.empty()) return Fail(error);
  const std::vector<int64_t>& sizes = instruction.dynamic_slice_sizes();
  if (static_cast<int64_t>(sizes.size()) != operand.rank())
    return Fail(StrCat("dynamic_slice_sizes has ", sizes.size(), " entries, expected one per dimension of ",
                       Text(operand)));
  for (int64_t d = 0; d < operand.rank(); ++d)
    if (sizes[static_cast<size_t>(d)] < 0 || sizes[static_cast<size_t>(d)] > operand.dim(d))
      return Fail(StrCat("dynamic_slice_sizes[", d, "]=", sizes[static_cast<size_t>(d)], " does not fit dimension ", d,
                         " of ", Text(operand), ", expected 0 to ", operand.dim(d)));
  return Ok(Shape(operand.element_type(), sizes));
}

InferredShape InferDynamicUpdateSlice(const Instruction& instruction) {
  const Shape& operand = OperandShape(instruction, 0);
  const Shape& update = OperandShape(instruction, 1);
  if (!operand.IsArray()) return Fail(OperandError(instruction, 0, "an array"));
  if (!update.IsArray() || update.rank() != operand.rank() || update.element_type() != operand.element_type())
    return Fail(OperandError(instruction, 1, StrCat("a ", ElementTypeName(operand.element_type()), " array of rank ",
                                                    operand.rank())));
  for (int64_t d = 0; d < operand.rank(); ++d)
    if (update.dim(d) > operand.dim(d))
      return Fail(OperandError(instruction, 1, StrCat("an update no larger than the operand ", Text(operand))));
  if (std::string error = CheckStartIndices(instruction, 2, operand); !error.empty()) return Fail(error);
  return Ok(Shape(operand.element_type(), operand.dims()));
}

// The index dims of start indices: every dim but index_vector_dim (which may be the rank,
// meaning an implicit trailing 1).
std::vector<int64_t> BatchDimsOfIndices(const Shape& indices, int64_t index_vector_dim) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < indices.rank(); ++d)
    if (d != index_vector_dim) dims.push_back(d);
  return dims;
}

std::string CheckIndexVector(const Shape& indices, int64_t index_vector_dim, size_t map_size, std::string_view map_name) {
  if (!indices.IsArray() || !IsInteger(indices.element_type()))
    return StrCat("start indices ", Text(indices), " must be an integer array");
  if (index_vector_dim < 0 || index_vector_dim > indices.rank())
    return StrCat("index_vector_dim=", index_vector_dim, " is out of range for the indices ", Text(indices),
                  ", expected 0 to ", indices.rank());
  int64_t vector_size = index_vector_dim == indices.rank() ? 1 : indices.dim(index_vector_dim);
  if (static_cast<int64_t>(map_size) != vector_size)
    return StrCat(map_name, " has ", map_size, " entries, expected one per index (", vector_size,
                  ", dimension index_vector_dim=", index_vector_dim, " of ", Text(indices), ")");
  return "";
}

// Sorted, unique, in range.
std::string CheckSortedDims(std::string_view what, const std::vector<int64_t>& dims, int64_t rank, const Shape& of) {
  if (std::string error = CheckDimensionList(what, dims, rank, true, of); !error.empty()) return error;
  if (!IsSortedAscending(dims)) return StrCat(what, " must be sorted");
  return "";
}

// Operand batching dims against index batching dims: same count, unique, disjoint from
// `exclusive` (collapsed / inserted dims and the index map), equal sizes.
std::string CheckBatchingDims(const Shape& operand, const std::vector<int64_t>& operand_batching,
                              const Shape& indices, const std::vector<int64_t>& index_batching,
                              int64_t index_vector_dim, const std::vector<int64_t>& exclusive,
                              const std::vector<int64_t>& index_map) {
  if (std::string error = CheckSortedDims("operand batching dims", operand_batching, operand.rank(), operand);
      !error.empty())
    return error;
  if (std::string error = CheckDimensionList("indices batching dims", index_batching, indices.rank(), true, indices);
      !error.empty())
    return error;
  if (operand_batching.size() != index_batching.size())
    return StrCat(operand_batching.size(), " operand batching dims but ", index_batching.size(),
                  " indices batching dims, expected as many");
  for (size_t i = 0; i < operand_batching.size(); ++i) {
    if (Contains(exclusive, operand_batching[i]) || Contains(index_map, operand_batching[i]))
      return StrCat("operand batching dimension ", operand_batching[i], " is also collapsed or indexed");
    if (index_batching[i] == index_vector_dim)
      return StrCat("indices batching dimension ", index_batching[i], " is the index_vector_dim");
    if (operand.dim(operand_batching[i]) != indices.dim(index_batching[i]))
      return StrCat("batching dimensions have sizes ", operand.dim(operand_batching[i]), " (operand) and ",
                    indices.dim(index_batching[i]), " (indices), expected equal sizes");
  }
  return "";
}

InferredShape InferGather(const Instruction& instruction) {
  const Shape& operand = OperandShape(instruction, 0);
  const Shape& indices = OperandShape(instruction, 1);
  if (!operand.IsArray()) return Fail(OperandError(instruction, 0, "an array"));
  const GatherDimensionNumbers& g = instruction.gather_dims();
  const std::vector<int64_t>& slice_sizes = instruction.gather_slice_sizes();
  if (std::string error = CheckIndexVector(indices, g.index_vector_dim, g.start_index_map.size(), "start_index_map");
      !error.empty())
    return Fail(error);
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank())
    return Fail(StrCat("slice_sizes has ", slice_sizes.size(), " entries, expected one per dimension of ",
                       Text(operand)));
  for (int64_t d = 0; d < operand.rank(); ++d)
    if (slice_sizes[static_cast<size_t>(d)] < 0 || slice_sizes[static_cast<size_t>(d)] > operand.dim(d))
      return Fail(StrCat("slice_sizes[", d, "]=", slice_sizes[static_cast<size_t>(d)], " does not fit dimension ", d,
                         " of ", Text(operand), ", expected 0 to ", operand.dim(d)));
  if (std::string error = CheckDimensionList("start_index_map", g.start_index_map, operand.rank(), true, operand);
      !error.empty())
    return Fail(error);
  if (std::string error = CheckSortedDims("collapsed_slice_dims", g.collapsed_slice_dims, operand.rank(), operand);
      !error.empty())
    return Fail(error);
  for (int64_t d : g.collapsed_slice_dims)
    if (slice_sizes[static_cast<size_t>(d)] > 1)
      return Fail(StrCat("collapsed slice dimension ", d, " has slice size ", slice_sizes[static_cast<size_t>(d)],
                         ", expected 0 or 1"));
  if (std::string error = CheckBatchingDims(operand, g.operand_batching_dims, indices, g.start_indices_batching_dims,
                                            g.index_vector_dim, g.collapsed_slice_dims, g.start_index_map);
      !error.empty())
    return Fail(error);
  for (int64_t d : g.operand_batching_dims)
    if (slice_sizes[static_cast<size_t>(d)] > 1)
      return Fail(StrCat("operand batching dimension ", d, " has slice size ", slice_sizes[static_cast<size_t>(d)],
                         ", expected 0 or 1"));
  std::vector<int64_t> batch_dims = BatchDimsOfIndices(indices, g.index_vector_dim);
  int64_t offset_count = operand.rank() - static_cast<int64_t>(g.collapsed_slice_dims.size()) -
                         static_cast<int64_t>(g.operand_batching_dims.size());
  if (static_cast<int64_t>(g.offset_dims.size()) != offset_count)
    return Fail(StrCat("offset_dims has ", g.offset_dims.size(), " entries, expected ", offset_count,
                       " (operand rank minus collapsed and batching dims)"));
  int64_t output_rank = offset_count + static_cast<int64_t>(batch_dims.size());
  Shape output_probe(operand.element_type(), std::vector<int64_t>(static_cast<size_t>(output_rank), 1));
  if (std::string error = CheckSortedDims("offset_dims", g.offset_dims, output_rank, output_probe); !error.empty())
    return Fail(error);
  std::vector<int64_t> window_sizes;
  for (int64_t d = 0; d < operand.rank(); ++d)
    if (!Contains(g.collapsed_slice_dims, d) && !Contains(g.operand_batching_dims, d))
      window_sizes.push_back(slice_sizes[static_cast<size_t>(d)]);
  std::vector<int64_t> dims;
  size_t next_window = 0, next_batch = 0;
  for (int64_t i = 0; i < output_rank; ++i) {
    if (Contains(g.offset_dims, i)) dims.push_back(window_sizes[next_window++]);
    else dims.push_back(indices.dim(batch_dims[next_batch++]));
  }
  return Ok(Shape(operand.element_type(), dims));
}

InferredShape InferScatter(const Instruction& instruction) {
  int64_t n = (instruction.operand_count() - 1) / 2;
  const Shape& operand = OperandShape(instruction, 0);
  const Shape& indices = OperandShape(instruction, n);
  const Shape& updates = OperandShape(instruction, n + 1);
  std::vector<ElementType> operand_types, update_types;
  std::vector<Shape> results;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& input = OperandShape(instruction, i);
    if (!input.IsArray() || input.dims() != operand.dims())
      return Fail(OperandError(instruction, i, StrCat("an array with the dimensions of operand 0, ", Text(operand))));
    const Shape& update = OperandShape(instruction, n + 1 + i);
    if (!update.IsArray() || update.dims() != updates.dims())
      return Fail(OperandError(instruction, n + 1 + i, StrCat("updates with the dimensions of ", Text(updates))));
    operand_types.push_back(input.element_type());
    update_types.push_back(update.element_type());
    results.emplace_back(input.element_type(), input.dims());
  }
  const ScatterDimensionNumbers& s = instruction.scatter_dims();
  if (std::string error = CheckIndexVector(indices, s.index_vector_dim, s.scatter_dims_to_operand_dims.size(),
                                           "scatter_dims_to_operand_dims");
      !error.empty())
    return Fail(error);
  if (std::string error = CheckDimensionList("scatter_dims_to_operand_dims", s.scatter_dims_to_operand_dims,
                                             operand.rank(), true, operand);
      !error.empty())
    return Fail(error);
  if (std::string error = CheckSortedDims("update_window_dims", s.update_window_dims, updates.rank(), updates);
      !error.empty())
    return Fail(error);
  if (std::string error = CheckSortedDims("inserted_window_dims", s.inserted_window_dims, operand.rank(), operand);
      !error.empty())
    return Fail(error);
  if (std::string error = CheckBatchingDims(operand, s.input_batching_dims, indices, s.scatter_indices_batching_dims,
                                            s.index_vector_dim, s.inserted_window_dims, s.scatter_dims_to_operand_dims);
      !error.empty())
    return Fail(error);
  int64_t window_rank = static_cast<int64_t>(s.update_window_dims.size() + s.inserted_window_dims.size() +
                                             s.input_batching_dims.size());
  if (window_rank != operand.rank())
    return Fail(StrCat("update_window_dims, inserted_window_dims and input_batching_dims have ", window_rank,
                       " entries together, expected the operand rank ", operand.rank()));
  std::vector<int64_t> batch_dims = BatchDimsOfIndices(indices, s.index_vector_dim);
  int64_t expected_update_rank = static_cast<int64_t>(s.update_window_dims.size() + batch_dims.size());
  if (updates.rank() != expected_update_rank)
    return Fail(OperandError(instruction, n + 1, StrCat("updates of rank ", expected_update_rank,
                                                        " (window dims plus index batch dims)")));
  std::vector<int64_t> operand_window_dims;
  for (int64_t d = 0; d < operand.rank(); ++d)
    if (!Contains(s.inserted_window_dims, d) && !Contains(s.input_batching_dims, d)) operand_window_dims.push_back(d);
  size_t next_window = 0, next_batch = 0;
  for (int64_t d = 0; d < updates.rank(); ++d) {
    if (Contains(s.update_window_dims, d)) {
      int64_t operand_dim = operand_window_dims[next_window++];
      if (updates.dim(d) > operand.dim(operand_dim))
        return Fail(OperandError(instruction, n + 1, StrCat("update window dimension ", d, " no larger than operand ",
                                                            "dimension ", operand_dim, " (", operand.dim(operand_dim), ")")));
      continue;
    }
    int64_t index_dim = batch_dims[next_batch++];
    if (updates.dim(d) != indices.dim(index_dim))
      return Fail(OperandError(instruction, n + 1, StrCat("update scatter dimension ", d, " of size ",
                                                          indices.dim(index_dim), " like dimension ", index_dim,
                                                          " of the indices ", Text(indices))));
  }
  if (std::string error = CheckScalarReducer(instruction, *instruction.to_apply(), "to_apply", operand_types,
                                             update_types);
      !error.empty())
    return Fail(error);
  if (results.size() == 1) return Ok(std::move(results[0]));
  return Ok(Shape::Tuple(std::move(results)));
}

}  // namespace

InferredShape InferIndexing(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kGather: return InferGather(instruction);
    case Opcode::kScatter: return InferScatter(instruction);
    case Opcode::kDynamicSlice: return InferDynamicSlice(instruction);
    default: return InferDynamicUpdateSlice(instruction);
  }
}

}  // namespace gspmd::shape_rules
