// Ops with a reducer or comparator region: reduce (region form and the compact
// `applies stablehlo.add` form), reduce_window, select_and_scatter, sort and map.
//   %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1]
//          : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
//   %1:2 = stablehlo.reduce(%v init: %c0), (%i init: %c1) across dimensions = [1] : (...) -> (...)
//     reducer(%a: tensor<f32>, %b: tensor<f32>) (%c: tensor<i32>, %d: tensor<i32>) { ... }
#include <algorithm>

#include "frontend/stablehlo/op_helpers.h"
#include "frontend/stablehlo/op_table.h"
#include "frontend/stablehlo/regions.h"
#include "frontend/stablehlo/types.h"

namespace gspmd::stablehlo {
namespace {

// Inputs then init values; the scalar type of each init value, twice (the reducer's arguments).
std::vector<Shape> ReducerArgTypes(ModuleReader& reader, const OpSyntax& op, size_t n) {
  std::vector<Shape> types;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < n; ++i) {
      const Shape& init = op.operands[n + i]->shape();
      if (!init.IsArray() || init.rank() != 0)
        reader.Error(op.operand_pos[n + i], StrCat("init value ", i, " of ", op.name, " must be a scalar tensor, not ", MlirTypeName(init)));
      types.push_back(init);
    }
  }
  return types;
}

// The reducer computation: the op's region, or for the compact form one binary op per input.
Computation* Reducer(ModuleReader& reader, OpSyntax& op, size_t n) {
  std::vector<Shape> arg_types = ReducerArgTypes(reader, op, n);
  std::vector<Shape> result_types(arg_types.begin(), arg_types.begin() + static_cast<long>(n));
  if (op.regions.empty()) {
    const NamedAttr* applies = op.Find("applies");
    if (applies == nullptr) reader.Error(op.pos, StrCat(op.name, " needs a reducer region"));
    std::optional<Opcode> opcode = BinaryOpcodeFor(applies->value.str);
    if (!opcode) reader.Error(applies->pos, StrCat("'applies ", applies->value.str, "': expected a binary elementwise op such as stablehlo.add"));
    std::string key(OpcodeName(*opcode));
    for (size_t i = 0; i < n; ++i) key.append(" ").append(arg_types[i].ToString());
    Computation*& cached = reader.compact_reducers()[key];
    if (cached != nullptr) return cached;
    Computation* computation = reader.NewComputation("region");
    cached = computation;
    std::vector<std::unique_ptr<Instruction>> instructions;
    std::vector<Instruction*> params;
    for (size_t i = 0; i < 2 * n; ++i) {
      auto param = std::make_unique<Instruction>(Opcode::kParameter, arg_types[i], reader.names().ForParameter(static_cast<int64_t>(i)));
      param->parameter_number = static_cast<int64_t>(i);
      params.push_back(param.get());
      instructions.push_back(std::move(param));
    }
    std::vector<Instruction*> results;
    for (size_t i = 0; i < n; ++i) {
      auto binary = MakeInstruction(*opcode, arg_types[i], {params[i], params[n + i]});
      binary->set_name(reader.names().ForOpcode(*opcode));
      if (*opcode == Opcode::kAnd || *opcode == Opcode::kOr || *opcode == Opcode::kXor) {
        if (!IsInteger(arg_types[i].element_type()) && arg_types[i].element_type() != ElementType::kPred)
          reader.Error(applies->pos, StrCat("'applies ", applies->value.str, "' needs integer or boolean values"));
      }
      results.push_back(binary.get());
      instructions.push_back(std::move(binary));
    }
    Instruction* root = results[0];
    if (n > 1) {
      std::vector<Shape> shapes(result_types);
      auto tuple = MakeInstruction(Opcode::kTuple, Shape::Tuple(std::move(shapes)), results);
      tuple->set_name(reader.names().ForOpcode(Opcode::kTuple));
      root = tuple.get();
      instructions.push_back(std::move(tuple));
    }
    reader.DefineComputation(computation, std::move(instructions), root);
    return computation;
  }
  ExpectRegionCount(reader, op, 1);
  Region& region = *op.regions[0];
  CheckRegionArgs(reader, op, region, arg_types, "reducer");
  CheckRegionResults(reader, op, region, result_types, "reducer");
  return FlatComputation(reader, region, op, "region");
}

void CheckResults(ModuleReader& reader, const OpSyntax& op, size_t n, const std::vector<std::vector<int64_t>>& dims) {
  if (op.result_types.size() != n) reader.Error(op.pos, StrCat(op.name, " has ", op.result_types.size(), " results, expected ", n));
  for (size_t i = 0; i < n; ++i) {
    const Shape& result = op.result_types[i];
    const Shape& init = op.operands[n + i]->shape();
    if (result.IsArray() && result.dims() == dims[i] && result.element_type() == init.element_type()) continue;
    Shape expected(init.element_type(), dims[i]);
    reader.Error(op.pos, StrCat("result ", i, " of ", op.name, " should be ", MlirTypeName(expected), ", not ", MlirTypeName(result)));
  }
}

// ---- reduce ----

// (%x init: %c)[, (%y init: %d)] [applies OP] across dimensions = [..] [attr-dict] : sig [reducer(...) (...) {...}]
void ParseReduce(ModuleReader& reader, OpSyntax& op) {
  Cursor& cursor = reader.cursor();
  OpSyntax inits;
  do {
    cursor.Expect('(', "'(' and an input of stablehlo.reduce");
    reader.ReadOperand(op);
    cursor.ExpectKeyword("init", "'init:' after the input");
    cursor.Expect(':', "':' after init");
    reader.ReadOperand(inits);
    cursor.Expect(')', "')' after the init value");
  } while (cursor.TryConsume(','));
  op.operands.insert(op.operands.end(), inits.operands.begin(), inits.operands.end());
  op.operand_pos.insert(op.operand_pos.end(), inits.operand_pos.begin(), inits.operand_pos.end());
  cursor.SkipSpace();
  size_t applies_pos = cursor.pos();
  if (cursor.TryKeyword("applies")) {
    Attr& applies = op.Add("applies", applies_pos);
    applies.kind = Attr::Kind::kEnum;
    applies.str = std::string(cursor.ReadBareId("an op name after applies"));
  }
  cursor.ExpectKeyword("across", "'across dimensions = [...]'");
  ReadKeywordInts(reader, op, "dimensions", "dimensions");
  reader.ReadOptionalAttrDict(op);
  ReadFunctionSignature(reader, op);
  if (op.Find("applies") != nullptr) return;
  cursor.ExpectKeyword("reducer", "'reducer' and the reducer's arguments");
  const size_t n = inits.operands.size();
  std::vector<RegionArg> lhs, rhs;
  while (cursor.Peek() == '(') {
    std::vector<RegionArg> pair = reader.ReadRegionArgs();
    if (pair.size() != 2) reader.Error(cursor.pos(), "each reducer argument group must have two arguments (accumulator, element)");
    lhs.push_back(pair[0]);
    rhs.push_back(pair[1]);
  }
  if (lhs.size() != n) reader.Error(cursor.pos(), StrCat("the reducer has ", lhs.size(), " argument pairs, expected ", n));
  lhs.insert(lhs.end(), rhs.begin(), rhs.end());
  op.regions.push_back(reader.ReadRegion(std::move(lhs)));
}

Converted ConvertReduce(ModuleReader& reader, OpSyntax& op) {
  if (op.operands.empty() || op.operands.size() % 2 != 0)
    reader.Error(op.pos, StrCat(op.name, " needs inputs and as many init values"));
  CheckOperandTypes(reader, op);
  const size_t n = op.operands.size() / 2;
  std::vector<int64_t> dimensions = IntsAttr(reader, op, "dimensions");
  const Shape& input = op.operands[0]->shape();
  std::vector<bool> reduced(static_cast<size_t>(input.rank()), false);
  for (int64_t d : dimensions) {
    if (d < 0 || d >= input.rank() || reduced[d]) reader.Error(op.pos, StrCat("reduce dimension ", d, " is out of range or repeated"));
    reduced[d] = true;
  }
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < input.rank(); ++d)
    if (!reduced[d]) kept.push_back(input.dim(d));
  for (size_t i = 1; i < n; ++i)
    if (op.operands[i]->shape().dims() != input.dims()) reader.Error(op.operand_pos[i], "the inputs of a reduce must have the same dims");
  CheckResults(reader, op, n, std::vector<std::vector<int64_t>>(n, kept));
  Computation* reducer = Reducer(reader, op, n);
  auto reduce = MakeInstruction(Opcode::kReduce, ResultShapeOf(op.result_types), op.operands);
  reduce->dimensions = std::move(dimensions);
  reduce->set_called_computations({reducer});
  return reader.Results(op, AddChecked(reader, op, std::move(reduce)));
}

// ---- reduce_window, select_and_scatter ----

// The window of reduce_window / select_and_scatter from its attributes; `out_dims` gets the
// result dims for an input of `input` dims.
Window ReadWindowAttrs(ModuleReader& reader, const OpSyntax& op, const Shape& input, bool dilations,
                       std::vector<int64_t>* out_dims) {
  const size_t rank = static_cast<size_t>(input.rank());
  std::vector<int64_t> sizes = IntsAttr(reader, op, "window_dimensions");
  auto list = [&](std::string_view name, int64_t fallback) {
    std::vector<int64_t> values = IntsAttrOr(reader, op, name, std::vector<int64_t>(rank, fallback));
    if (values.size() != rank) reader.Error(op.pos, StrCat(name, " needs ", rank, " entries"));
    return values;
  };
  if (sizes.size() != rank) reader.Error(op.pos, StrCat("window_dimensions needs ", rank, " entries"));
  std::vector<int64_t> strides = list("window_strides", 1);
  std::vector<int64_t> base = dilations ? list("base_dilations", 1) : std::vector<int64_t>(rank, 1);
  std::vector<int64_t> window_dilation = dilations ? list("window_dilations", 1) : std::vector<int64_t>(rank, 1);
  std::vector<std::vector<int64_t>> padding(rank, {0, 0});
  if (const Attr* attr = OptionalAttr(op, "padding")) padding = AttrIntRows(reader.cursor(), *attr, "padding");
  if (padding.size() != rank) reader.Error(op.pos, StrCat("padding needs ", rank, " [low, high] pairs"));
  Window window;
  for (size_t d = 0; d < rank; ++d) {
    if (padding[d].size() != 2) reader.Error(op.pos, "padding needs [low, high] pairs");
    WindowDim dim{sizes[d], strides[d], padding[d][0], padding[d][1], window_dilation[d], base[d], false};
    if (dim.size < 1 || dim.stride < 1 || dim.base_dilation < 1 || dim.window_dilation < 1)
      reader.Error(op.pos, "window sizes, strides and dilations must be positive");
    window.push_back(dim);
    int64_t in = input.dim(static_cast<int64_t>(d));
    int64_t padded = (in == 0 ? 0 : (in - 1) * dim.base_dilation + 1) + dim.padding_low + dim.padding_high;
    int64_t span = (dim.size - 1) * dim.window_dilation + 1;
    out_dims->push_back(padded < span ? 0 : (padded - span) / dim.stride + 1);
  }
  return window;
}

Converted ConvertReduceWindow(ModuleReader& reader, OpSyntax& op) {
  if (op.operands.empty() || op.operands.size() % 2 != 0)
    reader.Error(op.pos, StrCat(op.name, " needs inputs and as many init values"));
  CheckOperandTypes(reader, op);
  const size_t n = op.operands.size() / 2;
  std::vector<int64_t> dims;
  Window window = ReadWindowAttrs(reader, op, op.operands[0]->shape(), /*dilations=*/true, &dims);
  CheckResults(reader, op, n, std::vector<std::vector<int64_t>>(n, dims));
  Computation* reducer = Reducer(reader, op, n);
  auto reduce_window = MakeInstruction(Opcode::kReduceWindow, ResultShapeOf(op.result_types), op.operands);
  reduce_window->mutable_window() = std::move(window);
  reduce_window->set_called_computations({reducer});
  return reader.Results(op, AddChecked(reader, op, std::move(reduce_window)));
}

Converted ConvertSelectAndScatter(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 3);
  CheckOperandTypes(reader, op);
  ExpectRegionCount(reader, op, 2);
  const Shape& operand = op.operands[0]->shape();
  const Shape& source = op.operands[1]->shape();
  const Shape& init = op.operands[2]->shape();
  std::vector<int64_t> dims;
  Window window = ReadWindowAttrs(reader, op, operand, /*dilations=*/false, &dims);
  if (source.dims() != dims)
    reader.Error(op.operand_pos[1], StrCat("the source of select_and_scatter is ", MlirTypeName(source),
                                           " but the window gives ", dims.size(), "-d results of another size"));
  const Shape& result = SingleResultType(reader, op);
  if (!result.Compatible(operand)) reader.Error(op.pos, "select_and_scatter's result must have the operand's type");
  Shape element = ArrayShape(operand.element_type(), {});
  Shape pred = ArrayShape(ElementType::kPred, {});
  CheckRegionArgs(reader, op, *op.regions[0], {element, element}, "select");
  CheckRegionResults(reader, op, *op.regions[0], {pred}, "select");
  CheckRegionArgs(reader, op, *op.regions[1], {init, init}, "scatter");
  CheckRegionResults(reader, op, *op.regions[1], {init}, "scatter");
  Computation* select = FlatComputation(reader, *op.regions[0], op, "region");
  Computation* scatter = FlatComputation(reader, *op.regions[1], op, "region");
  auto instruction = MakeInstruction(Opcode::kSelectAndScatter, result, op.operands);
  instruction->mutable_window() = std::move(window);
  instruction->set_called_computations({select, scatter});
  return Single(AddChecked(reader, op, std::move(instruction)));
}

// ---- sort, map ----

Converted ConvertSort(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1, /*at_least=*/true);
  CheckOperandTypes(reader, op);
  ExpectRegionCount(reader, op, 1);
  const Shape& first = op.operands[0]->shape();
  int64_t dimension = IntAttrOr(reader, op, "dimension", -1);
  if (dimension < 0) dimension += first.rank();
  if (dimension < 0 || dimension >= std::max<int64_t>(first.rank(), 1))
    reader.Error(op.pos, StrCat("sort dimension is out of range for ", MlirTypeName(first)));
  std::vector<Shape> args;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const Shape& shape = op.operands[i]->shape();
    if (shape.dims() != first.dims()) reader.Error(op.operand_pos[i], "the inputs of a sort must have the same dims");
    args.push_back(ArrayShape(shape.element_type(), {}));
    args.push_back(ArrayShape(shape.element_type(), {}));
  }
  if (op.result_types.size() != op.operands.size()) reader.Error(op.pos, "sort has one result per input");
  for (size_t i = 0; i < op.operands.size(); ++i)
    if (!op.result_types[i].Compatible(op.operands[i]->shape())) reader.Error(op.pos, StrCat("result ", i, " of sort must have its input's type"));
  CheckRegionArgs(reader, op, *op.regions[0], args, "comparator");
  CheckRegionResults(reader, op, *op.regions[0], {ArrayShape(ElementType::kPred, {})}, "comparator");
  Computation* comparator = FlatComputation(reader, *op.regions[0], op, "region");
  auto sort = MakeInstruction(Opcode::kSort, ResultShapeOf(op.result_types), op.operands);
  sort->dimensions = {dimension};
  sort->is_stable = BoolAttrOr(reader, op, "is_stable", false);
  sort->set_called_computations({comparator});
  return reader.Results(op, AddChecked(reader, op, std::move(sort)));
}

Converted ConvertMap(ModuleReader& reader, OpSyntax& op) {
  ExpectOperandCount(reader, op, 1, /*at_least=*/true);
  CheckOperandTypes(reader, op);
  ExpectRegionCount(reader, op, 1);
  const Shape& result = SingleResultType(reader, op);
  std::vector<Shape> args;
  for (Instruction* operand : op.operands) args.push_back(ArrayShape(operand->shape().element_type(), {}));
  CheckRegionArgs(reader, op, *op.regions[0], args, "computation");
  CheckRegionResults(reader, op, *op.regions[0], {ArrayShape(result.element_type(), {})}, "computation");
  Computation* computation = FlatComputation(reader, *op.regions[0], op, "region");
  auto map = MakeInstruction(Opcode::kMap, result, op.operands);
  map->dimensions = IntsAttrOr(reader, op, "dimensions", {});
  map->set_called_computations({computation});
  return Single(AddChecked(reader, op, std::move(map)));
}

}  // namespace

void RegisterReduceOps(OpTable& table) {
  table.Add("stablehlo.reduce", ParseReduce, ConvertReduce);
  table.Add("stablehlo.reduce_window", nullptr, ConvertReduceWindow);
  table.Add("stablehlo.select_and_scatter", nullptr, ConvertSelectAndScatter);
  table.Add("stablehlo.sort", nullptr, ConvertSort);
  table.Add("stablehlo.map", nullptr, ConvertMap);
}

}  // namespace gspmd::stablehlo
