// Reading shapes (array, tuple, token; layouts and bounded dynamic dims) from HLO text.
#include "text/shape_text.h"

#include <algorithm>

namespace gspmd::hlo_text {
namespace {

constexpr std::string_view kKnownTypes =
    "pred, s4, s8, s16, s32, s64, u4, u8, u16, u32, u64, f16, bf16, f32, f64, c64, c128, f8e4m3fn, f8e5m2, token";

bool IsPermutation(const std::vector<int64_t>& values, int64_t n) {
  if (static_cast<int64_t>(values.size()) != n) return false;
  std::vector<bool> seen(n, false);
  for (int64_t v : values) {
    if (v < 0 || v >= n || seen[v]) return false;
    seen[v] = true;
  }
  return true;
}

Layout ParseLayout(Scanner& scanner, int64_t rank) {
  size_t start = scanner.pos();
  scanner.Expect('{', "'{' to start a layout");
  Layout layout;
  if (scanner.Peek() != '}' && scanner.Peek() != ':') {
    do {
      layout.minor_to_major.push_back(scanner.ReadInt("a dimension number in the layout"));
    } while (scanner.TryConsume(','));
  }
  if (scanner.TryConsume(':')) {
    // Tiling, memory space and friends: kept verbatim up to the closing brace.
    size_t extra_start = scanner.pos();
    std::string_view text = scanner.text();
    size_t p = extra_start;
    int depth = 0;
    while (p < text.size() && !(depth == 0 && text[p] == '}')) {
      if (text[p] == '(' || text[p] == '{' || text[p] == '[') ++depth;
      if (text[p] == ')' || text[p] == '}' || text[p] == ']') --depth;
      ++p;
    }
    layout.extra = std::string(text.substr(extra_start, p - extra_start));
    scanner.set_pos(p);
  }
  scanner.Expect('}', "'}' to close the layout");
  bool no_dims_written = layout.minor_to_major.empty() && !layout.extra.empty();
  if (!no_dims_written && !IsPermutation(layout.minor_to_major, rank))
    scanner.ErrorAt(start, StrCat("bad layout: expected a permutation of the ", rank,
                                  " dimension numbers of the shape"));
  return layout;
}

Shape ParseArrayShape(Scanner& scanner) {
  scanner.SkipSpace();
  size_t start = scanner.pos();
  std::string_view name = scanner.ReadWord();
  if (name.empty()) scanner.ErrorExpected("a shape");
  if (name == "token") {
    size_t after = scanner.pos();
    if (!scanner.TryConsume("[]")) scanner.set_pos(after);
    return Shape::Token();
  }
  std::optional<ElementType> type = ParseElementType(name);
  if (!type) {
    scanner.ErrorAt(start, StrCat("unknown element type '", name, "': expected one of ", kKnownTypes));
  }
  std::string_view text = scanner.text();
  if (scanner.pos() >= text.size() || text[scanner.pos()] != '[')
    scanner.ErrorExpected(StrCat("'[' with the dimensions of the ", name, " shape"));
  scanner.set_pos(scanner.pos() + 1);
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  if (!scanner.TryConsume(']')) {
    do {
      bool is_dynamic = scanner.TryConsume("<=");
      scanner.SkipSpace();
      size_t dim_pos = scanner.pos();
      if (scanner.Peek() == '?') scanner.ErrorAt(dim_pos, "unbounded dynamic dimension '?': expected a size");
      int64_t size = scanner.ReadInt("a dimension size");
      if (size < 0) scanner.ErrorAt(dim_pos, "negative dimension size: expected a size >= 0");
      dims.push_back(size);
      dynamic.push_back(is_dynamic);
      constexpr size_t kMaxRank = 256;
      if (dims.size() > kMaxRank) scanner.ErrorAt(dim_pos, StrCat("shape has too many dimensions: expected at most ", kMaxRank));
    } while (scanner.TryConsume(','));
    scanner.Expect(']', "',' or ']' in the dimensions of the shape");
  }
  Shape shape(*type, std::move(dims));
  for (size_t i = 0; i < dynamic.size(); ++i)
    if (dynamic[i]) shape.set_dynamic_dim(static_cast<int64_t>(i), true);
  if (scanner.pos() < text.size() && text[scanner.pos()] == '{')
    shape.set_layout(ParseLayout(scanner, shape.rank()));
  return shape;
}

Shape ParseShapeAtDepth(Scanner& scanner, int depth) {
  if (!scanner.TryConsume('(')) return ParseArrayShape(scanner);
  constexpr int kMaxTupleNesting = 256;
  if (depth >= kMaxTupleNesting)
    scanner.ErrorAt(scanner.pos() - 1, StrCat("tuple shapes nested too deeply: expected at most ", kMaxTupleNesting, " levels"));
  std::vector<Shape> elements;
  if (!scanner.TryConsume(')')) {
    do {
      elements.push_back(ParseShapeAtDepth(scanner, depth + 1));
    } while (scanner.TryConsume(','));
    scanner.Expect(')', "',' or ')' in the tuple shape");
  }
  return Shape::Tuple(std::move(elements));
}

}  // namespace

Shape ParseShape(Scanner& scanner) { return ParseShapeAtDepth(scanner, 0); }

bool AtShape(Scanner& scanner) {
  char c = scanner.Peek();
  if (c == '(') return true;
  if (!IsNameStart(c)) return false;
  size_t start = scanner.pos();
  std::string_view word = scanner.ReadWord();
  std::string_view text = scanner.text();
  bool bracket = scanner.pos() < text.size() && text[scanner.pos()] == '[';
  scanner.set_pos(start);
  return bracket && (word == "token" || ParseElementType(word).has_value());
}

bool AtShapeSyntax(Scanner& scanner) {
  char c = scanner.Peek();
  if (c == '(') return true;
  if (!IsNameStart(c)) return false;
  size_t start = scanner.pos();
  scanner.ReadWord();
  std::string_view text = scanner.text();
  bool bracket = scanner.pos() < text.size() && text[scanner.pos()] == '[';
  scanner.set_pos(start);
  return bracket;
}

}  // namespace gspmd::hlo_text
