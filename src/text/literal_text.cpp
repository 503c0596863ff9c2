// Constant literals in HLO text: parsing nested-brace arrays, tuples and scalars, and
// printing them the way XLA does.
#include "text/literal_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "ir/narrow_types.h"
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
  // A NaN payload: nan(0x7f), -nan(0x3f).
  if (text.substr(start, end - start).ends_with("nan") && end < text.size() && text[end] == '(') {
    size_t close = text.find(')', end);
    if (close != std::string_view::npos && close - end < 24) end = close + 1;
  }
  scanner.set_pos(end);
  return text.substr(start, end - start);
}

// The bits of a float type and the width of its mantissa (for NaN payloads).
template <typename F>
struct FloatBits;
template <>
struct FloatBits<Half> {
  using Bits = uint16_t;
  static constexpr int kMantissa = 10;
};
template <>
struct FloatBits<BFloat16> {
  using Bits = uint16_t;
  static constexpr int kMantissa = 7;
};
template <>
struct FloatBits<float> {
  using Bits = uint32_t;
  static constexpr int kMantissa = 23;
};
template <>
struct FloatBits<double> {
  using Bits = uint64_t;
  static constexpr int kMantissa = 52;
};

template <typename F>
typename FloatBits<F>::Bits BitsOf(F value) {
  typename FloatBits<F>::Bits bits;
  if constexpr (std::is_same_v<F, Half> || std::is_same_v<F, BFloat16>)
    bits = value.bits;
  else
    std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

template <typename F>
F FromBits(typename FloatBits<F>::Bits bits) {
  F value;
  if constexpr (std::is_same_v<F, Half> || std::is_same_v<F, BFloat16>)
    value.bits = bits;
  else
    std::memcpy(&value, &bits, sizeof(bits));
  return value;
}

// "nan", "-nan", "nan(0x7f)": a NaN with its sign and payload (the default payload is the
// quiet bit alone). false when the token is no NaN or the payload does not fit.
template <typename F>
bool ParseNan(std::string_view token, F& value) {
  using Bits = typename FloatBits<F>::Bits;
  constexpr int kMantissa = FloatBits<F>::kMantissa;
  bool negative = token.starts_with('-');
  if (negative || token.starts_with('+')) token.remove_prefix(1);
  if (!token.starts_with("nan")) return false;
  token.remove_prefix(3);
  Bits payload = Bits{1} << (kMantissa - 1);
  if (!token.empty()) {
    if (!token.starts_with("(0x") || !token.ends_with(')')) return false;
    std::string_view hex = token.substr(3, token.size() - 4);
    uint64_t parsed = 0;
    auto [ptr, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), parsed, 16);
    if (ec != std::errc() || ptr != hex.data() + hex.size()) return false;
    if (parsed == 0 || parsed >= (uint64_t{1} << kMantissa)) return false;
    payload = static_cast<Bits>(parsed);
  }
  constexpr int kTotal = static_cast<int>(sizeof(Bits)) * 8;
  Bits exponent_all_ones = static_cast<Bits>(((Bits{1} << (kTotal - 1 - kMantissa)) - 1) << kMantissa);
  Bits bits = static_cast<Bits>(exponent_all_ones | payload);
  if (negative) bits = static_cast<Bits>(bits | (Bits{1} << (kTotal - 1)));
  value = FromBits<F>(bits);
  return true;
}

template <typename F>
std::string FormatNan(F value) {
  using Bits = typename FloatBits<F>::Bits;
  constexpr int kMantissa = FloatBits<F>::kMantissa;
  constexpr int kTotal = static_cast<int>(sizeof(Bits)) * 8;
  Bits bits = BitsOf(value);
  bool negative = (bits >> (kTotal - 1)) & 1;
  Bits payload = static_cast<Bits>(bits & ((Bits{1} << kMantissa) - 1));
  std::string out = negative ? "-nan" : "nan";
  if (payload != (Bits{1} << (kMantissa - 1))) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "(0x%llx)", static_cast<unsigned long long>(payload));
    out += buffer;
  }
  return out;
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
  if (ec == std::errc::result_out_of_range) {  // underflow (to zero or a subnormal) is fine; overflow is not
    std::string copy(body);
    double wide = std::strtod(copy.c_str(), nullptr);
    if (std::isinf(wide) || std::fabs(wide) > static_cast<double>(std::numeric_limits<F>::max())) return false;
    value = static_cast<F>(wide);
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
    if (ParseNan(token, value)) return true;
    float f = 0;
    if (!ConvertFloat(token, f)) return false;
    value = T(f);
    // A finite value the 16-bit type cannot hold is out of range (as in XLA), not inf.
    return std::isinf(f) || !std::isinf(static_cast<float>(value));
  } else if constexpr (std::is_floating_point_v<T>) {
    if (ParseNan(token, value)) return true;
    return ConvertFloat(token, value);
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    if (token.starts_with('-')) {  // XLA reads a negative u64 constant modulo 2^64
      int64_t negative = 0;
      auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), negative);
      if (ec != std::errc() || ptr != token.data() + token.size()) return false;
      value = static_cast<uint64_t>(negative);
      return true;
    }
    return ConvertInteger(token, value);
  } else {
    return ConvertInteger(token, value);
  }
}

// s4, f8e4m3fn, ...: integers with a range check, floats that must fit (or be inf/nan).
void ParseNarrowElements(Scanner& scanner, ElementType type, const std::vector<std::string_view>& tokens,
                         Literal& literal, const char* base) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string_view token = tokens[i];
    size_t offset = static_cast<size_t>(token.data() - base);
    auto fail = [&](std::string_view why) {
      scanner.ErrorAt(offset, StrCat("bad constant element '", token, "': ", why));
    };
    if (IsNarrowInteger(type)) {
      int64_t value = 0;
      auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
      if (ec != std::errc() || ptr != token.data() + token.size()) fail(StrCat("expected a ", ElementTypeName(type), " integer"));
      if (value < NarrowIntegerMin(type) || value > NarrowIntegerMax(type))
        fail(StrCat("out of range for ", ElementTypeName(type), " (", NarrowIntegerMin(type), " to ",
                    NarrowIntegerMax(type), ")"));
      literal.SetFromDouble(static_cast<int64_t>(i), static_cast<double>(value));
      continue;
    }
    double value = 0;
    if (token == "nan" || token == "-nan") {
      value = std::numeric_limits<double>::quiet_NaN();
    } else if (!ConvertFloat(token, value)) {
      fail(StrCat("expected a ", ElementTypeName(type), " value"));
    }
    bool in_range = true;
    literal.raw()[i] = EncodeNarrowFloat(type, value, &in_range);
    if (!in_range && !std::isinf(value) && !std::isnan(value))
      fail(StrCat("out of range for ", ElementTypeName(type)));
  }
}

Literal ParseArrayLiteral(Scanner& scanner, const Shape& shape) {
  std::vector<std::string_view> tokens;
  // Each element takes at least two characters of text, which bounds a sane reservation.
  size_t remaining = scanner.text().size() - scanner.pos();
  tokens.reserve(std::min(static_cast<size_t>(std::max<int64_t>(shape.element_count(), 0)), remaining / 2 + 1));
  scanner.SkipSpace();
  if (shape.rank() > 0 && shape.element_count() > 0 && scanner.Peek() != '{' && !IsComplex(shape.element_type())) {
    // f32[5,4] constant(1): XLA's parser takes one bare value for an array (its tests write
    // this) and sets element 0 only; the others stay zero. So do we.
    tokens.push_back(ReadElementToken(scanner));
  } else {
    ReadArrayLevel(scanner, shape, 0, tokens);
  }
  Literal literal(shape);
  const char* base = scanner.text().data();
  if (IsStorageOnly(shape.element_type())) {
    ParseNarrowElements(scanner, shape.element_type(), tokens, literal, base);
    return literal;
  }
  ElementType storage = IsComplex(shape.element_type()) ? ComplexComponentType(shape.element_type())
                                                        : shape.element_type();
  DispatchElementType(storage, [&]<typename T>() {
    T* data = literal.data<T>();
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (ConvertElement(tokens[i], data[i])) continue;
      size_t offset = static_cast<size_t>(tokens[i].data() - base);
      if (tokens[i] == "...")
        scanner.ErrorAt(offset, "constant value elided ('...'): expected the full literal");
      std::string token(tokens[i]);
      char* end = nullptr;
      double number = std::strtod(token.c_str(), &end);
      bool integral_text = token.find_first_of(".eEn") == std::string::npos;  // no fraction, exponent, nan/inf
      bool fits_kind = IsFloatingPoint(shape.element_type()) || IsComplex(shape.element_type()) || integral_text;
      if (end == token.c_str() + token.size() && !token.empty() && fits_kind)
        scanner.ErrorAt(offset, StrCat("bad constant element '", tokens[i], "': ", number,
                                       " is out of range for ", ElementTypeName(shape.element_type())));
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
  if (IsNarrowInteger(literal.element_type()))
    return std::to_string(static_cast<int64_t>(NarrowToDouble(literal.element_type(), literal.raw(), i)));
  if (IsNarrowFloat(literal.element_type())) return FormatNarrowFloat(literal.element_type(), literal.raw()[i]);
  return DispatchElementType(literal.element_type(), [&]<typename T>() -> std::string {
    T value = literal.data<T>()[i];
    if constexpr (!std::is_same_v<T, bool> && !std::is_integral_v<T>) {
      double as_double;
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
        as_double = static_cast<double>(static_cast<float>(value));
      else
        as_double = static_cast<double>(value);
      if (std::isnan(as_double)) return FormatNan(value);
    }
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
