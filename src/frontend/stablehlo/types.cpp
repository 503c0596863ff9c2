// MLIR type parsing into Shapes.
#include "frontend/stablehlo/types.h"

namespace gspmd::stablehlo {
namespace {

constexpr std::string_view kSupportedElementTypes = "i1, i8..i64, si8..si64, ui8..ui64, f16, bf16, f32 or f64";

bool StartsTypeKeyword(Cursor& cursor, std::string_view word) {
  std::string_view text = cursor.text();
  size_t pos = cursor.pos();
  return text.compare(pos, word.size(), word) == 0 && pos + word.size() < text.size() &&
         text[pos + word.size()] == '<';
}

// The element type at the cursor (after the dims of a tensor type).
ElementType ParseElementType(Cursor& cursor, size_t type_start) {
  cursor.SkipSpace();
  size_t start = cursor.pos();
  if (cursor.PeekRaw() == '!') {
    cursor.set_pos(start + 1);
    std::string_view name = cursor.ReadBareId("a dialect type name after '!'");
    cursor.ErrorAt(start, StrCat("element type !", name, " is not supported (expected ", kSupportedElementTypes, ")"));
  }
  std::string_view name = cursor.ReadBareId(Expected("an element type (", kSupportedElementTypes, ")"));
  std::optional<ElementType> type = ElementTypeFromName(name);
  if (type) return *type;
  // MLIR's machine-word integer: only in attributes (a custom call's operand_layouts =
  // [dense<> : tensor<0xindex>]), read as 64-bit.
  if (name == "index") return ElementType::kS64;
  if (name == "complex") cursor.ErrorAt(start, "complex element types are not supported (expected real types)");
  cursor.ErrorAt(start, StrCat("element type ", name, " in ", cursor.text().substr(type_start, cursor.pos() - type_start),
                               "... is not supported (expected ", kSupportedElementTypes, ")"));
}

// tensor<...> after the "tensor" keyword.
Shape ParseTensorType(Cursor& cursor, size_t start) {
  cursor.Expect('<', "'<' after tensor");
  std::vector<int64_t> dims;
  std::string_view text = cursor.text();
  while (true) {
    cursor.SkipSpace();
    size_t pos = cursor.pos();
    char c = cursor.PeekRaw();
    if (c == '?' || c == '*') {
      size_t end = text.find('>', pos);
      std::string_view type = text.substr(start, end == std::string_view::npos ? pos - start + 1 : end - start + 1);
      cursor.ErrorAt(pos, StrCat(c == '?' ? "dynamic dimension '?' in " : "unranked tensor ", type,
                                 ": dynamic shapes are not supported (expected static sizes)"));
    }
    if (!IsDigitChar(c)) break;
    int64_t size = 0;
    while (pos < text.size() && IsDigitChar(text[pos])) {
      size = size * 10 + (text[pos] - '0');
      if (size > (int64_t{1} << 40)) cursor.ErrorAt(cursor.pos(), "dimension size too large");
      ++pos;
    }
    if (pos >= text.size() || text[pos] != 'x') {
      cursor.set_pos(pos);
      cursor.ErrorExpected("'x' after a dimension size");
    }
    dims.push_back(size);
    cursor.set_pos(pos + 1);
  }
  ElementType element = ParseElementType(cursor, start);
  if (cursor.TryConsume(',')) {
    // An encoding. #stablehlo.bounds<...> only bounds dynamic dims, and every dim here is
    // static, so it says nothing; other encodings (sparse layouts) change the meaning.
    cursor.SkipSpace();
    size_t encoding_pos = cursor.pos();
    if (!cursor.TryConsume("#stablehlo.bounds") && !cursor.TryConsume("#stablehlo.type_extensions"))
      cursor.ErrorAt(encoding_pos, "tensor encodings other than #stablehlo.bounds are not supported");
    cursor.ReadBalanced("'<' after the bounds attribute");
  }
  cursor.Expect('>', "'>' to close the tensor type");
  return ArrayShape(element, std::move(dims));
}

}  // namespace

Shape ArrayShape(ElementType type, std::vector<int64_t> dims) {
  Shape shape(type, std::move(dims));
  if (shape.rank() == 0) return shape;
  Layout layout;  // major to minor, built in one allocation
  layout.minor_to_major.resize(static_cast<size_t>(shape.rank()));
  for (int64_t i = 0; i < shape.rank(); ++i) layout.minor_to_major[i] = shape.rank() - 1 - i;
  shape.set_layout(std::move(layout));
  return shape;
}

std::optional<ElementType> ElementTypeFromName(std::string_view name) {
  if (name.size() < 2 || name.size() > 4) return std::nullopt;
  if (name == "f32") return ElementType::kF32;
  if (name == "i1") return ElementType::kPred;
  if (name == "i32" || name == "si32") return ElementType::kS32;
  if (name == "bf16") return ElementType::kBF16;
  if (name == "f16") return ElementType::kF16;
  if (name == "f64") return ElementType::kF64;
  if (name == "i64" || name == "si64") return ElementType::kS64;
  if (name == "i8" || name == "si8") return ElementType::kS8;
  if (name == "i16" || name == "si16") return ElementType::kS16;
  if (name == "ui8") return ElementType::kU8;
  if (name == "ui16") return ElementType::kU16;
  if (name == "ui32") return ElementType::kU32;
  if (name == "ui64") return ElementType::kU64;
  return std::nullopt;
}

bool AtType(Cursor& cursor) {
  char c = cursor.Peek();
  if (c == '!') return true;
  if (!IsIdStart(c)) return false;
  if (StartsTypeKeyword(cursor, "tensor") || StartsTypeKeyword(cursor, "tuple")) return true;
  size_t start = cursor.pos();
  std::string_view word = cursor.ReadBareId("a type");
  cursor.set_pos(start);
  return ElementTypeFromName(word).has_value();
}

Shape ParseType(Cursor& cursor, const TypeAliases& aliases) {
  cursor.SkipSpace();
  size_t start = cursor.pos();
  if (cursor.TryConsume('!')) {
    size_t name_pos = cursor.pos();
    std::string_view name = cursor.ReadBareId("a type name after '!'");
    if (name == "stablehlo.token") return Shape::Token();
    auto alias = aliases.find(name);
    if (alias != aliases.end()) {
      Cursor aliased(cursor.text(), cursor.filename());
      aliased.set_pos(alias->second);
      return ParseType(aliased, aliases);
    }
    cursor.ErrorAt(name_pos, StrCat("type !", name, " is not supported (expected a tensor, tuple or !stablehlo.token)"));
  }
  if (cursor.TryKeyword("tensor")) return ParseTensorType(cursor, start);
  if (cursor.TryKeyword("tuple")) {
    cursor.Expect('<', "'<' after tuple");
    std::vector<Shape> elements;
    if (!cursor.TryConsume('>')) {
      do elements.push_back(ParseType(cursor, aliases));
      while (cursor.TryConsume(','));
      cursor.Expect('>', "',' or '>' in a tuple type");
    }
    return Shape::Tuple(std::move(elements));
  }
  if (cursor.AtBareId()) {
    std::string_view name = cursor.ReadBareId("a type");
    if (std::optional<ElementType> element = ElementTypeFromName(name)) return ArrayShape(*element, {});
    cursor.ErrorAt(start, StrCat("type ", name, " is not supported (expected a tensor type such as tensor<4xf32>)"));
  }
  cursor.ErrorExpected("a type such as tensor<4x8xf32>");
}

bool MatchType(Cursor& cursor, const Shape& expected, const TypeAliases& aliases) {
  cursor.SkipSpace();
  const size_t start = cursor.pos();
  std::string_view text = cursor.text();
  auto full = [&] {
    Shape parsed = ParseType(cursor, aliases);
    if (parsed.Compatible(expected)) return true;
    cursor.set_pos(start);
    return false;
  };
  if (!expected.IsArray() || text.compare(start, 7, "tensor<") != 0) return full();
  size_t pos = start + 7;
  int64_t rank = 0;
  while (pos < text.size() && IsDigitChar(text[pos])) {
    int64_t size = 0;
    while (pos < text.size() && IsDigitChar(text[pos]) && size < (int64_t{1} << 40)) size = size * 10 + (text[pos++] - '0');
    if (pos >= text.size() || text[pos] != 'x') return full();
    if (rank >= expected.rank() || expected.dim(rank) != size) return full();
    ++rank;
    ++pos;
  }
  size_t name_end = pos;
  while (name_end < text.size() && IsIdChar(text[name_end])) ++name_end;
  if (name_end >= text.size() || text[name_end] != '>' || rank != expected.rank()) return full();
  std::optional<ElementType> element = ElementTypeFromName(text.substr(pos, name_end - pos));
  if (!element || *element != expected.element_type()) return full();
  cursor.set_pos(name_end + 1);
  return true;
}

std::string MlirTypeName(const Shape& shape) {
  if (shape.IsToken()) return "!stablehlo.token";
  if (shape.IsTuple()) {
    std::string text = "tuple<";
    for (int64_t i = 0; i < shape.tuple_size(); ++i) text += (i ? ", " : "") + MlirTypeName(shape.tuple_shape(i));
    return text + ">";
  }
  std::string text = "tensor<";
  for (int64_t d : shape.dims()) text += std::to_string(d) + "x";
  switch (shape.element_type()) {
    case ElementType::kPred: text += "i1"; break;
    case ElementType::kS8: text += "i8"; break;
    case ElementType::kS16: text += "i16"; break;
    case ElementType::kS32: text += "i32"; break;
    case ElementType::kS64: text += "i64"; break;
    case ElementType::kU8: text += "ui8"; break;
    case ElementType::kU16: text += "ui16"; break;
    case ElementType::kU32: text += "ui32"; break;
    case ElementType::kU64: text += "ui64"; break;
    default: text += ElementTypeName(shape.element_type()); break;
  }
  return text + ">";
}

std::vector<Shape> ParseTypeList(Cursor& cursor, const TypeAliases& aliases) {
  std::vector<Shape> types;
  bool parenthesized = cursor.TryConsume('(');
  if (parenthesized && cursor.TryConsume(')')) return types;
  do types.push_back(ParseType(cursor, aliases));
  while (cursor.TryConsume(','));
  if (parenthesized) cursor.Expect(')', "',' or ')' in a type list");
  return types;
}

std::vector<Shape> ParseResultTypes(Cursor& cursor, const TypeAliases& aliases) {
  if (cursor.Peek() != '(') return {ParseType(cursor, aliases)};
  cursor.Expect('(', "'('");
  std::vector<Shape> types;
  if (cursor.TryConsume(')')) return types;
  do types.push_back(ParseType(cursor, aliases));
  while (cursor.TryConsume(','));
  cursor.Expect(')', "',' or ')' after the result types");
  return types;
}

FunctionType ParseFunctionType(Cursor& cursor, const TypeAliases& aliases) {
  FunctionType type;
  cursor.Expect('(', "'(' to start a function type such as (tensor<f32>) -> tensor<f32>");
  if (!cursor.TryConsume(')')) {
    do type.inputs.push_back(ParseType(cursor, aliases));
    while (cursor.TryConsume(','));
    cursor.Expect(')', "',' or ')' in the operand types");
  }
  cursor.Expect("->", "'->' and the result types");
  type.results = ParseResultTypes(cursor, aliases);
  return type;
}

}  // namespace gspmd::stablehlo
