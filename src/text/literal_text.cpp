// Constant literals in HLO text: parsing nested-brace arrays, tuples and scalars, and
// printing them the way XLA does.
#include "text/literal_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <type_traits>
#include <vector>

#include "text/printer.h"

namespace gspmd::hlo_text {
namespace {

bool IsElementChar(char c) {
  return IsNameChar(c) || c == '+';
}

std::string_view ReadElementToken(Scanner& scanner) {
  scanner.SkipSpace();
  std::string_view text = scanner.text();
  size_t start = scanner.pos();
  size_t end = start;
  while (end < text.size() && IsElementChar(text[end])) ++end;
  if (end == start) scanner.ErrorExpected("a constant element value");
  scanner.set_pos(end);
  return text.substr(start, end - start);
}

// Reads the nested braces for dims[dim..] and appends element tokens in row-major order.
// Complex elements are "(re, im)" (or a lone real number) and give two tokens each.
void ReadArrayLevel(Scanner& scanner, const Shape& shape, int64_t dim, std::vector<std::string_view>& out) {
  if (dim == shape.rank()) {
    if (!IsComplex(shape.element_type())) {
      out.push_back(ReadElementToken(scanner));
      return;
    }
    if (!scanner.TryConsume('(')) {
      out.push_back(ReadElementToken(scanner));
      out.push_back("0");
      return;
    }
    out.push_back(ReadElementToken(scanner));
    scanner.Expect(',', "',' between the real and imaginary parts of a complex constant");
    out.push_back(ReadElementToken(scanner));
    scanner.Expect(')', "')' after the imaginary part of a complex constant");
    return;
  }
  scanner.SkipSpace();
  size_t start = scanner.pos();
  scanner.Expect('{', "'{' to start the next dimension of the constant");
  int64_t count = 0;
  if (!scanner.TryConsume('}')) {
    do {
      ReadArrayLevel(scanner, shape, dim + 1, out);
      ++count;
    } while (scanner.TryConsume(','));
    scanner.Expect('}', "',' or '}' between the entries of a constant dimension");
  }
  if (count != shape.dim(dim))
    scanner.ErrorAt(start, StrCat("constant has ", count, " entries in dimension ", dim, ", expected ",
                                  shape.dim(dim), " for shape ", shape.ToString(false)));
}

template <typename T>
bool ConvertInteger(std::string_view token, T& value) {
  if constexpr (std::is_signed_v<T>) {
    int64_t wide = 0;
    auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), wide);
    if (ec != std::errc() || ptr != token.data() + token.size()) return false;
    if (wide < std::numeric_limits<T>::min() || wide > std::numeric_limits<T>::max()) return false;
    value = static_cast<T>(wide);
    return true;
  } else {
    uint64_t wide = 0;
    auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), wide);
    if (ec != std::errc() || ptr != token.data() + token.size()) return false;
    if (wide > std::numeric_limits<T>::max()) return false;
    value = static_cast<T>(wide);
    return true;
  }
}

template <typename F>
bool ConvertFloat(std::string_view token, F& value) {
  std::string_view body = token;
  if (!body.empty() && body[0] == '+') body.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
  if (ptr != body.data() + body.size()) return false;
  if (ec == std::errc::result_out_of_range) {  // underflow/overflow: go through double
    std::string copy(body);
    value = static_cast<F>(std::strtod(copy.c_str(), nullptr));
    return true;
  }
  return ec == std::errc();
}

template <typename T>
bool ConvertElement(std::string_view token, T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    if (token == "true" || token == "1") return value = true, true;
    if (token == "false" || token == "0") return value = false, true;
    return false;
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    float f = 0;
    if (!ConvertFloat(token, f)) return false;
    value = T(f);
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    return ConvertFloat(token, value);
  } else {
    return ConvertInteger(token, value);
  }
}

Literal ParseArrayLiteral(Scanner& scanner, const Shape& shape) {
  std::vector<std::string_view> tokens;
  // Each element takes at least two characters of text, which bounds a sane reservation.
  size_t remaining = scanner.text().size() - scanner.pos();
  tokens.reserve(std::min(static_cast<size_t>(std::max<int64_t>(shape.element_count(), 0)), remaining / 2 + 1));
  ReadArrayLevel(scanner, shape, 0, tokens);
  Literal literal(shape);
  const char* base = scanner.text().data();
  ElementType storage = IsComplex(shape.element_type()) ? ComplexComponentType(shape.element_type())
                                                        : shape.element_type();
  DispatchElementType(storage, [&]<typename T>() {
    T* data = literal.data<T>();
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (ConvertElement(tokens[i], data[i])) continue;
      size_t offset = static_cast<size_t>(tokens[i].data() - base);
      if (tokens[i] == "...")
        scanner.ErrorAt(offset, "constant value elided ('...'): expected the full literal");
      scanner.ErrorAt(offset, StrCat("bad constant element '", tokens[i], "': expected a ",
                                     ElementTypeName(shape.element_type()), " value"));
    }
  });
  return literal;
}

template <typename F>
bool ReadsBack(const char* text, F expected) {
  if constexpr (std::is_same_v<F, double>) {
    return std::strtod(text, nullptr) == expected;
  } else if constexpr (std::is_same_v<F, float>) {
    return std::strtof(text, nullptr) == expected;
  } else {
    return F(std::strtof(text, nullptr)).bits == expected.bits;
  }
}

// Shortest of two precisions that reads back to the same value, as XLA prints floats.
template <typename F>
std::string FormatFloat(F value, int short_digits, int long_digits) {
  double d;
  if constexpr (std::is_same_v<F, Half> || std::is_same_v<F, BFloat16>)
    d = static_cast<double>(static_cast<float>(value));
  else
    d = static_cast<double>(value);
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*g", short_digits, d);
  if (ReadsBack(buffer, value)) return buffer;
  std::snprintf(buffer, sizeof(buffer), "%.*g", long_digits, d);
  return buffer;
}

void AppendArray(const Literal& literal, int64_t dim, int64_t& index, std::string& out) {
  const Shape& shape = literal.shape();
  if (dim == shape.rank()) {
    out += FormatElement(literal, index++);
    return;
  }
  bool innermost = dim == shape.rank() - 1;
  int64_t n = shape.dim(dim);
  if (n == 0) {
    out += "{}";
    return;
  }
  out += innermost ? "{" : "{ ";
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out += ", ";
    AppendArray(literal, dim + 1, index, out);
  }
  out += innermost ? "}" : " }";
}

}  // namespace

Literal ParseLiteral(Scanner& scanner, const Shape& shape) {
  if (shape.IsTuple()) {
    scanner.Expect('(', "'(' to start a tuple constant");
    std::vector<Literal> elements;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      if (i > 0) scanner.Expect(',', "',' between tuple constant elements");
      elements.push_back(ParseLiteral(scanner, shape.tuple_shape(i)));
    }
    scanner.Expect(')', "')' after the elements of the tuple constant");
    return Literal::Tuple(std::move(elements));
  }
  if (!shape.IsArray()) {
    scanner.ErrorExpected(StrCat("no constant value for a ", shape.ToString(false), " shape"));
  }
  return ParseArrayLiteral(scanner, shape);
}

std::string FormatElement(const Literal& literal, int64_t i) {
  if (literal.element_type() == ElementType::kC64 || literal.element_type() == ElementType::kC128) {
    auto part = [&](int64_t k) -> std::string {
      if (literal.element_type() == ElementType::kC64)
        return FormatFloat(literal.data<float>()[k], std::numeric_limits<float>::digits10,
                           std::numeric_limits<float>::max_digits10);
      return FormatFloat(literal.data<double>()[k], std::numeric_limits<double>::digits10,
                         std::numeric_limits<double>::max_digits10);
    };
    return "(" + part(2 * i) + ", " + part(2 * i + 1) + ")";
  }
  return DispatchElementType(literal.element_type(), [&]<typename T>() -> std::string {
    T value = literal.data<T>()[i];
    if constexpr (std::is_same_v<T, bool>) {
      return value ? "true" : "false";
    } else if constexpr (std::is_same_v<T, Half>) {
      return FormatFloat(value, 3, 5);
    } else if constexpr (std::is_same_v<T, BFloat16>) {
      return FormatFloat(value, 2, 4);
    } else if constexpr (std::is_same_v<T, float>) {
      return FormatFloat(value, std::numeric_limits<float>::digits10, std::numeric_limits<float>::max_digits10);
    } else if constexpr (std::is_same_v<T, double>) {
      return FormatFloat(value, std::numeric_limits<double>::digits10, std::numeric_limits<double>::max_digits10);
    } else {
      return std::to_string(value);
    }
  });
}

}  // namespace gspmd::hlo_text

namespace gspmd {

std::string PrintLiteral(const Literal& literal) {
  if (literal.shape().IsTuple()) {
    std::string out = "(";
    const auto& elements = literal.tuple_elements();
    for (size_t i = 0; i < elements.size(); ++i) {
      if (i > 0) out += ", ";
      out += PrintLiteral(elements[i]);
    }
    return out + ")";
  }
  if (!literal.shape().IsArray()) return "";
  std::string out;
  int64_t index = 0;
  hlo_text::AppendArray(literal, 0, index, out);
  return out;
}

}  // namespace gspmd
