// gather and scatter with their dimension numbers:
//   %0 = "stablehlo.gather"(%table, %ids) <{dimension_numbers = #stablehlo.gather<offset_dims = [2],
//          collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>,
//          indices_are_sorted = false, slice_sizes = array<i64: 1, 32>}> : (...) -> tensor<8x16x32xf32>
//   %1 = "stablehlo.scatter"(%in, %idx, %upd) <{scatter_dimension_numbers = #stablehlo.scatter<...>}>
//          ({ ^bb0(%a: tensor<f32>, %b: tensor<f32>): ... }) : (...) -> ...
#include <algorithm>

#include "frontend/stablehlo/op_helpers.h"
#include "frontend/stablehlo/op_table.h"
#include "frontend/stablehlo/regions.h"
#include "frontend/stablehlo/types.h"

namespace gspmd::stablehlo {
namespace {

const Attr& DialectAttr(ModuleReader& reader, const OpSyntax& op, std::string_view name, std::string_view dialect) {
  const Attr& attr = RequiredAttr(reader, op, name);
  if (attr.kind != Attr::Kind::kDialect || attr.str != dialect)
    reader.Error(attr.pos, StrCat(name, ": expected #", dialect, "<...>"));
  return attr;
}

void CheckDims(ModuleReader& reader, const OpSyntax& op, const std::vector<int64_t>& dims, int64_t rank, std::string_view what) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d]) reader.Error(op.pos, StrCat(op.name, ": ", what, " has dimension ", d, ", out of range or repeated"));
    seen[d] = true;
  }
}

Converted ConvertGather(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 2);
  CheckOperandTypes(reader, op);
  const Attr& attr = DialectAttr(reader, op, "dimension_numbers", "stablehlo.gather");
  GatherDimensionNumbers dims;
  ForEachBodyField(reader.cursor(), attr, [&](std::string_view name, size_t pos, Cursor& cursor) {
    if (name == "index_vector_dim") {
      dims.index_vector_dim = cursor.ReadInt(name);
      return;
    }
    std::vector<int64_t> values = ParseIntList(cursor, name);
    if (name == "offset_dims") dims.offset_dims = values;
    else if (name == "collapsed_slice_dims") dims.collapsed_slice_dims = values;
    else if (name == "operand_batching_dims") dims.operand_batching_dims = values;
    else if (name == "start_indices_batching_dims") dims.start_indices_batching_dims = values;
    else if (name == "start_index_map") dims.start_index_map = values;
    else cursor.ErrorAt(pos, StrCat("unknown field ", name, " of #stablehlo.gather"));
  });
  const Shape& operand = op.operands[0]->shape();
  const Shape& indices = op.operands[1]->shape();
  const Shape& result = SingleResultType(reader, op);
  std::vector<int64_t> slice_sizes = IntsAttr(reader, op, "slice_sizes");
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank())
    reader.Error(op.pos, StrCat("slice_sizes needs one size per operand dimension (", operand.rank(), ")"));
  for (int64_t d = 0; d < operand.rank(); ++d)
    if (slice_sizes[d] < 0 || slice_sizes[d] > operand.dim(d)) reader.Error(op.pos, StrCat("slice size ", slice_sizes[d], " does not fit operand dimension ", d));
  CheckDims(reader, op, dims.offset_dims, result.rank(), "offset_dims");
  CheckDims(reader, op, dims.collapsed_slice_dims, operand.rank(), "collapsed_slice_dims");
  CheckDims(reader, op, dims.operand_batching_dims, operand.rank(), "operand_batching_dims");
  CheckDims(reader, op, dims.start_index_map, operand.rank(), "start_index_map");
  CheckDims(reader, op, dims.start_indices_batching_dims, indices.rank(), "start_indices_batching_dims");
  if (dims.index_vector_dim < 0 || dims.index_vector_dim > indices.rank())
    reader.Error(op.pos, StrCat("index_vector_dim ", dims.index_vector_dim, " is out of range for indices of rank ", indices.rank()));
  if (!IsInteger(indices.element_type())) reader.Error(op.operand_pos[1], "gather indices must be integers");
  int64_t batch_rank = indices.rank() - (dims.index_vector_dim < indices.rank() ? 1 : 0);
  if (result.rank() != batch_rank + static_cast<int64_t>(dims.offset_dims.size()))
    reader.Error(op.pos, StrCat("gather result ", MlirTypeName(result), " has the wrong rank: expected ",
                                batch_rank + static_cast<int64_t>(dims.offset_dims.size())));
  auto gather = MakeInstruction(Opcode::kGather, result, op.operands);
  gather->mutable_gather_dims() = std::move(dims);
  gather->mutable_gather_slice_sizes() = std::move(slice_sizes);
  gather->indices_are_sorted = BoolAttrOr(reader, op, "indices_are_sorted", false);
  return Single(AddChecked(reader, op, std::move(gather)));
}

Converted ConvertScatter(ModuleReader& reader, OpSyntax& op) {
  if (op.operands.size() < 3 || op.operands.size() % 2 != 1)
    reader.Error(op.pos, "stablehlo.scatter takes inputs, the indices and as many updates as inputs");
  CheckOperandTypes(reader, op);
  ExpectRegionCount(reader, op, 1);
  const size_t n = (op.operands.size() - 1) / 2;
  const Attr& attr = DialectAttr(reader, op, "scatter_dimension_numbers", "stablehlo.scatter");
  ScatterDimensionNumbers dims;
  ForEachBodyField(reader.cursor(), attr, [&](std::string_view name, size_t pos, Cursor& cursor) {
    if (name == "index_vector_dim") {
      dims.index_vector_dim = cursor.ReadInt(name);
      return;
    }
    std::vector<int64_t> values = ParseIntList(cursor, name);
    if (name == "update_window_dims") dims.update_window_dims = values;
    else if (name == "inserted_window_dims") dims.inserted_window_dims = values;
    else if (name == "input_batching_dims") dims.input_batching_dims = values;
    else if (name == "scatter_indices_batching_dims") dims.scatter_indices_batching_dims = values;
    else if (name == "scatter_dims_to_operand_dims") dims.scatter_dims_to_operand_dims = values;
    else cursor.ErrorAt(pos, StrCat("unknown field ", name, " of #stablehlo.scatter"));
  });
  const Shape& input = op.operands[0]->shape();
  const Shape& indices = op.operands[n]->shape();
  const Shape& updates = op.operands[n + 1]->shape();
  CheckDims(reader, op, dims.update_window_dims, updates.rank(), "update_window_dims");
  CheckDims(reader, op, dims.inserted_window_dims, input.rank(), "inserted_window_dims");
  CheckDims(reader, op, dims.input_batching_dims, input.rank(), "input_batching_dims");
  CheckDims(reader, op, dims.scatter_dims_to_operand_dims, input.rank(), "scatter_dims_to_operand_dims");
  CheckDims(reader, op, dims.scatter_indices_batching_dims, indices.rank(), "scatter_indices_batching_dims");
  if (dims.index_vector_dim < 0 || dims.index_vector_dim > indices.rank())
    reader.Error(op.pos, StrCat("index_vector_dim ", dims.index_vector_dim, " is out of range for indices of rank ", indices.rank()));
  if (!IsInteger(indices.element_type())) reader.Error(op.operand_pos[n], "scatter indices must be integers");
  if (op.result_types.size() != n) reader.Error(op.pos, StrCat("stablehlo.scatter has one result per input (", n, ")"));
  std::vector<Shape> args;
  for (size_t pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < n; ++i) {
      if (!op.result_types[i].Compatible(op.operands[i]->shape())) reader.Error(op.pos, StrCat("result ", i, " of scatter must have its input's type"));
      Shape scalar = ArrayShape(op.operands[i]->shape().element_type(), {});
      args.push_back(scalar);
    }
  }
  std::vector<Shape> results(args.begin(), args.begin() + static_cast<long>(n));
  CheckRegionArgs(reader, op, *op.regions[0], args, "update");
  CheckRegionResults(reader, op, *op.regions[0], results, "update");
  Computation* update = FlatComputation(reader, *op.regions[0], op, "region");
  Shape result = n == 1 ? op.result_types[0] : Shape::Tuple(op.result_types);
  auto scatter = MakeInstruction(Opcode::kScatter, result, op.operands);
  scatter->mutable_scatter_dims() = std::move(dims);
  scatter->indices_are_sorted = BoolAttrOr(reader, op, "indices_are_sorted", false);
  scatter->unique_indices = BoolAttrOr(reader, op, "unique_indices", false);
  scatter->set_called_computations({update});
  return reader.Results(op, AddChecked(reader, op, std::move(scatter)));
}

}  // namespace

void RegisterGatherScatterOps(OpTable& table) {
  table.Add("stablehlo.gather", nullptr, ConvertGather);
  table.Add("stablehlo.scatter", nullptr, ConvertScatter);
}

}  // namespace gspmd::stablehlo
