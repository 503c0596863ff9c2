// MLIR types of StableHLO programs as our Shapes: tensor<16x32xf32> -> f32[16,32],
// tensor<i1> -> pred[], tuple<tensor<f32>, tensor<2xi32>> -> (f32[], s32[2]),
// !stablehlo.token -> token[]. Dynamic and unranked tensors, and element types we do not
// model (complex, f8, i4, index, quantized), are errors that name the type.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/stablehlo/cursor.h"
#include "ir/shape.h"

namespace gspmd::stablehlo {

// `!name = type` definitions at the top of a file: name -> offset of the type text.
using TypeAliases = std::map<std::string, size_t, std::less<>>;

// Whether a type starts at the cursor: tensor<, tuple<, !, or a builtin scalar type name.
bool AtType(Cursor& cursor);
// An array shape with XLA's default (major-to-minor) layout; scalars have none ("f32[]").
Shape ArrayShape(ElementType type, std::vector<int64_t> dims);
// One type. Array shapes get the default (major-to-minor) layout, as XLA's converter gives.
Shape ParseType(Cursor& cursor, const TypeAliases& aliases);
// An element type name (f32, bf16, i1, si8, ui32, ...); nullopt for anything else.
std::optional<ElementType> ElementTypeFromName(std::string_view name);
// The MLIR spelling of a shape, for messages: "tensor<16x32xf32>", "tuple<tensor<f32>>".
std::string MlirTypeName(const Shape& shape);

// Whether the type at the cursor is `expected` (layouts aside); when it is, the cursor moves
// past it. Tensor types are compared as they are read, without building a Shape; anything
// else is parsed. On false the cursor has not moved.
bool MatchType(Cursor& cursor, const Shape& expected, const TypeAliases& aliases);

// A list of types "T1, T2" or "(T1, T2)" (parenthesized when `parenthesized`).
std::vector<Shape> ParseTypeList(Cursor& cursor, const TypeAliases& aliases);

// "(T1, T2) -> T3" or "(T1) -> (T2, T3)" (the '(' of the inputs is required).
struct FunctionType {
  std::vector<Shape> inputs;
  std::vector<Shape> results;
};
FunctionType ParseFunctionType(Cursor& cursor, const TypeAliases& aliases);
// After "->": one type, or "(T, ...)" ("()" for none).
std::vector<Shape> ParseResultTypes(Cursor& cursor, const TypeAliases& aliases);

}  // namespace gspmd::stablehlo
