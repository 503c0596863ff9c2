// MLIR attribute parsing and the typed accessors of the op converters.
#include "frontend/stablehlo/attributes.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "ir/element_type_dispatch.h"

namespace gspmd::stablehlo {
namespace {

// `word` then `next` at the cursor, spaces allowed between them ("dense <[1, 2]>" is MLIR too).
bool StartsWord(Cursor& cursor, std::string_view word, char next) {
  std::string_view text = cursor.text();
  size_t pos = cursor.pos();
  if (text.compare(pos, word.size(), word) != 0) return false;
  size_t after = pos + word.size();
  while (after < text.size() && (text[after] == ' ' || text[after] == '\t')) ++after;
  return after < text.size() && text[after] == next;
}

bool IsFloatText(std::string_view number) {
  if (number.find("0x") != std::string_view::npos) return false;
  return number.find_first_of(".eE") != std::string_view::npos;
}

double ParseDouble(Cursor& cursor, std::string_view text, size_t pos) {
  double value = 0;
  const char* begin = text.data();
  if (!text.empty() && text[0] == '+') ++begin;
  auto [ptr, error] = std::from_chars(begin, text.data() + text.size(), value);
  if (error == std::errc::result_out_of_range) return text[0] == '-' ? -HUGE_VAL : HUGE_VAL;
  if (error != std::errc() || ptr != text.data() + text.size())
    cursor.ErrorAt(pos, StrCat("bad number '", text, "': expected a decimal or 0x-hex number"));
  return value;
}

// The type after ':' of a number attribute ("3 : i64"), when written.
void ParseOptionalNumberType(Cursor& cursor, const ParseEnv& env, Attr& attr) {
  size_t save = cursor.pos();
  if (!cursor.TryConsume(':')) return;
  // "dict = {a = 1 : i64}" vs. the ':' of an op's type signature: only a type may follow here.
  if (!AtType(cursor)) {
    cursor.set_pos(save);
    return;
  }
  attr.type = ParseType(cursor, *env.type_aliases);
}

Attr ParseNumber(Cursor& cursor, const ParseEnv& env) {
  Attr attr;
  attr.pos = cursor.pos();
  std::string_view text = cursor.ReadNumberText("a number");
  if (IsFloatText(text)) {
    attr.kind = Attr::Kind::kFloat;
    attr.number = ParseDouble(cursor, text, attr.pos);
  } else {
    Cursor number(cursor.text().substr(0, attr.pos + text.size()), cursor.filename());
    number.set_pos(attr.pos);
    attr.kind = Attr::Kind::kInt;
    attr.integer = number.ReadInt("an integer");
  }
  ParseOptionalNumberType(cursor, env, attr);
  return attr;
}

// "array<i64: 1, 2>" after the keyword.
Attr ParseDenseArray(Cursor& cursor, size_t start) {
  Attr attr;
  attr.kind = Attr::Kind::kIntList;
  attr.pos = start;
  cursor.Expect('<', "'<' after array");
  std::string_view element = cursor.ReadBareId("the element type of array<...>");
  bool is_bool = element == "i1";
  std::optional<ElementType> type = ElementTypeFromName(element);
  if (!type || !(IsInteger(*type) || is_bool))
    cursor.ErrorAt(start, StrCat("array<", element, ": ...> is not supported (expected an integer or i1 array)"));
  if (cursor.TryConsume(':')) {
    do {
      if (is_bool) {
        if (cursor.TryKeyword("true")) {
          attr.ints.push_back(1);
        } else {
          cursor.ExpectKeyword("false", "true or false in array<i1: ...>");
          attr.ints.push_back(0);
        }
      } else {
        attr.ints.push_back(cursor.ReadInt("an integer in array<...>"));
      }
    } while (cursor.TryConsume(','));
  }
  cursor.Expect('>', "',' or '>' to close array<...>");
  return attr;
}

// The text between the brackets of a balanced group.
void SetBody(Attr& attr, std::string_view group, size_t group_pos) {
  attr.body = group.substr(1, group.size() - 2);
  attr.body_pos = group_pos + 1;
}

Attr ParseHashAttr(Cursor& cursor, const ParseEnv& env) {
  Attr attr;
  attr.pos = cursor.pos();
  cursor.Expect('#', "'#'");
  std::string_view text = cursor.text();
  size_t start = cursor.pos();
  size_t end = start;
  while (end < text.size() && IsIdChar(text[end])) ++end;
  if (end == start) cursor.ErrorExpected("a dialect attribute or alias name after '#'");
  std::string_view name = text.substr(start, end - start);
  cursor.set_pos(end);
  if (cursor.PeekRaw() == '<') {
    attr.kind = Attr::Kind::kDialect;
    attr.str = std::string(name);
    size_t group_pos = cursor.pos();
    SetBody(attr, cursor.ReadBalanced("'<'"), group_pos);
    return attr;
  }
  auto alias = env.attr_aliases->find(name);
  if (alias == env.attr_aliases->end())
    cursor.ErrorAt(attr.pos, StrCat("unknown attribute alias #", name, ": expected it defined at the top of the file"));
  Cursor aliased(text, cursor.filename());
  aliased.set_pos(alias->second);
  return ParseAttr(aliased, env);
}

// ---- dense<...> decoding ----

// Writes elements of one array type into a literal's bytes.
class ElementWriter {
 public:
  ElementWriter(Cursor& cursor, Literal& literal) : cursor_(cursor), literal_(literal), type_(literal.element_type()) {}

  int64_t count() const { return literal_.element_count(); }

  // One element written as text at the cursor: true/false, an integer, a float, or 0x bits.
  void ReadInto(int64_t index) {
    cursor_.SkipSpace();
    size_t pos = cursor_.pos();
    if (cursor_.TryKeyword("true") || cursor_.TryKeyword("false")) {
      bool value = cursor_.text()[pos] == 't';
      if (type_ != ElementType::kPred) cursor_.ErrorAt(pos, StrCat("boolean in a constant of ", ElementTypeName(type_)));
      literal_.data<bool>()[index] = value;
      return;
    }
    if (cursor_.Peek() == '(') cursor_.ErrorAt(pos, "complex constants are not supported");
    std::string_view text = cursor_.ReadNumberText("a constant element");
    bool hex = text.find("0x") != std::string_view::npos;
    if (IsFloatingPoint(type_)) {
      if (hex) return WriteBits(index, ParseBits(text, pos));
      return WriteFloat(index, ParseDouble(cursor_, text, pos));
    }
    if (IsFloatText(text)) cursor_.ErrorAt(pos, StrCat("'", text, "' in a constant of ", ElementTypeName(type_), ": expected an integer"));
    WriteInteger(index, text, pos);
  }

  void CopyRaw(const std::string& bytes, bool splat) {
    const int64_t size = ElementByteSize(type_);
    uint8_t* out = literal_.raw();
    if (splat) {
      for (int64_t i = 0; i < count(); ++i) std::memcpy(out + i * size, bytes.data(), static_cast<size_t>(size));
    } else {
      std::memcpy(out, bytes.data(), bytes.size());
    }
    if (type_ == ElementType::kPred)
      for (int64_t i = 0; i < count(); ++i) out[i] = out[i] != 0;
  }

  void CopyPackedBits(const std::string& bytes) {
    for (int64_t i = 0; i < count(); ++i)
      literal_.raw()[i] = (static_cast<uint8_t>(bytes[static_cast<size_t>(i / 8)]) >> (i % 8)) & 1;
  }

  void Splat() {
    const int64_t size = ElementByteSize(type_);
    uint8_t* out = literal_.raw();
    for (int64_t i = 1; i < count(); ++i) std::memcpy(out + i * size, out, static_cast<size_t>(size));
  }

 private:
  uint64_t ParseBits(std::string_view text, size_t pos) {
    if (text[0] == '-') cursor_.ErrorAt(pos, "a hex float bit pattern cannot be negative");
    uint64_t bits = 0;
    auto [ptr, error] = std::from_chars(text.data() + 2, text.data() + text.size(), bits, 16);
    if (error != std::errc() || ptr != text.data() + text.size())
      cursor_.ErrorAt(pos, StrCat("bad hex constant '", text, "'"));
    int64_t width = ElementByteSize(type_) * 8;
    if (width < 64 && (bits >> width) != 0)
      cursor_.ErrorAt(pos, StrCat("hex constant '", text, "' has more than ", width, " bits for ", ElementTypeName(type_)));
    return bits;
  }

  void WriteBits(int64_t index, uint64_t bits) {
    const int64_t size = ElementByteSize(type_);
    std::memcpy(literal_.raw() + index * size, &bits, static_cast<size_t>(size));
  }

  void WriteFloat(int64_t index, double value) {
    switch (type_) {
      case ElementType::kF32: literal_.data<float>()[index] = static_cast<float>(value); return;
      case ElementType::kF64: literal_.data<double>()[index] = value; return;
      case ElementType::kF16: literal_.data<Half>()[index] = Half(static_cast<float>(value)); return;
      case ElementType::kBF16: literal_.data<BFloat16>()[index] = BFloat16(static_cast<float>(value)); return;
      default: GSPMD_CHECK(false, "WriteFloat on ", ElementTypeName(type_));
    }
  }

  void WriteInteger(int64_t index, std::string_view text, size_t pos) {
    bool negative = text[0] == '-';
    std::string_view digits = text.substr(negative ? 1 : 0);
    int base = 10;
    if (digits.substr(0, 2) == "0x") {
      digits.remove_prefix(2);
      base = 16;
    }
    uint64_t magnitude = 0;
    auto [ptr, error] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
    if (error != std::errc() || ptr != digits.data() + digits.size())
      cursor_.ErrorAt(pos, StrCat("integer constant '", text, "' does not fit in 64 bits"));
    const int64_t bits = ElementByteSize(type_) * 8;
    bool fits = true;
    if (type_ == ElementType::kPred) {
      fits = !negative && magnitude <= 1;
    } else if (IsUnsignedInteger(type_)) {
      fits = !negative && (bits == 64 || magnitude < (uint64_t{1} << bits));
    } else {
      uint64_t limit = uint64_t{1} << (bits - 1);
      fits = negative ? magnitude <= limit : magnitude < limit;
    }
    if (!fits) cursor_.ErrorAt(pos, StrCat("integer constant ", text, " does not fit in ", ElementTypeName(type_)));
    uint64_t value = negative ? ~magnitude + 1 : magnitude;
    if (type_ == ElementType::kPred) {
      literal_.data<bool>()[index] = value != 0;
      return;
    }
    WriteBits(index, value);  // two's complement, truncated to the element size (little endian)
  }

  Cursor& cursor_;
  Literal& literal_;
  ElementType type_;
};

// A nested list "[[1, 2], [3, 4]]" for dims[level...], elements written from *next on.
void ReadNestedList(Cursor& cursor, ElementWriter& writer, const std::vector<int64_t>& dims, size_t level,
                    int64_t* next, const std::string& type_name) {
  size_t start = cursor.pos();
  cursor.Expect('[', "'[' to start a list of constant elements");
  const int64_t expected = dims[level];
  int64_t count = 0;
  if (!cursor.TryConsume(']')) {
    do {
      if (count >= expected)
        cursor.ErrorAt(start, StrCat("constant list has more than ", expected, " elements in dimension ", level, " of ", type_name));
      if (level + 1 < dims.size()) {
        ReadNestedList(cursor, writer, dims, level + 1, next, type_name);
      } else {
        writer.ReadInto((*next)++);
      }
      ++count;
    } while (cursor.TryConsume(','));
    cursor.Expect(']', "',' or ']' in a list of constant elements");
  }
  if (count != expected)
    cursor.ErrorAt(start, StrCat("constant list has ", count, " elements in dimension ", level, " of ", type_name,
                                 ", expected ", expected));
}

std::string HexBytes(Cursor& cursor, const std::string& text, size_t pos) {
  if (text.size() < 2 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X'))
    cursor.ErrorAt(pos, "a dense string must be hex data \"0x...\"");
  if (text.size() % 2 != 0) cursor.ErrorAt(pos, "hex data has an odd number of digits");
  std::string bytes;
  bytes.resize((text.size() - 2) / 2);
  for (size_t i = 0; i < bytes.size(); ++i) {
    unsigned value = 0;
    auto [ptr, error] = std::from_chars(text.data() + 2 + 2 * i, text.data() + 4 + 2 * i, value, 16);
    if (error != std::errc() || ptr != text.data() + 4 + 2 * i) cursor.ErrorAt(pos, "bad hex digit in dense hex data");
    bytes[i] = static_cast<char>(value);
  }
  return bytes;
}

}  // namespace

const Attr* Attr::Field(std::string_view name) const {
  for (const NamedAttr& field : fields)
    if (field.name == name) return &field.value;
  return nullptr;
}

std::vector<int64_t> ParseIntList(Cursor& cursor, std::string_view what) {
  std::vector<int64_t> values;
  cursor.Expect('[', Expected("'[' to start ", what));
  if (cursor.TryConsume(']')) return values;
  do values.push_back(cursor.ReadInt(Expected("an integer in ", what)));
  while (cursor.TryConsume(','));
  cursor.Expect(']', Expected("',' or ']' in ", what));
  return values;
}

void ParseAttrDict(Cursor& cursor, const ParseEnv& env, std::vector<NamedAttr>& out) {
  cursor.Expect('{', "'{' to start an attribute dictionary");
  if (cursor.TryConsume('}')) return;
  do {
    cursor.SkipSpace();
    NamedAttr entry;
    entry.pos = cursor.pos();
    if (cursor.PeekRaw() == '"') {
      // Quoted keys keep their text in the file (no escapes in practice).
      size_t start = cursor.pos();
      cursor.ReadString("an attribute name");
      entry.name = cursor.text().substr(start + 1, cursor.pos() - start - 2);
    } else {
      entry.name = cursor.ReadBareId("an attribute name");
    }
    if (cursor.TryConsume('=')) {
      entry.value = ParseAttr(cursor, env);
    } else {
      entry.value.kind = Attr::Kind::kUnit;
      entry.value.pos = entry.pos;
    }
    out.push_back(std::move(entry));
  } while (cursor.TryConsume(','));
  cursor.Expect('}', "',' or '}' in an attribute dictionary");
}

Attr ParseAttr(Cursor& cursor, const ParseEnv& env) {
  char c = cursor.Peek();
  Attr attr;
  attr.pos = cursor.pos();
  if (c == '"') {
    attr.kind = Attr::Kind::kString;
    attr.str = cursor.ReadString("a string");
    return attr;
  }
  if (c == '[') {
    attr.kind = Attr::Kind::kArray;
    cursor.Expect('[', "'['");
    if (cursor.TryConsume(']')) return attr;
    do attr.elements.push_back(ParseAttr(cursor, env));
    while (cursor.TryConsume(','));
    cursor.Expect(']', "',' or ']' in an array attribute");
    return attr;
  }
  if (c == '{') {
    attr.kind = Attr::Kind::kDict;
    ParseAttrDict(cursor, env, attr.fields);
    return attr;
  }
  if (c == '@') {
    attr.kind = Attr::Kind::kSymbol;
    attr.str = cursor.ReadSymbol("a symbol name");
    while (cursor.TryConsume("::")) attr.str += "::" + cursor.ReadSymbol("a nested symbol name");
    return attr;
  }
  if (c == '#') return ParseHashAttr(cursor, env);
  if (IsDigitChar(c) || c == '-' || c == '+') return ParseNumber(cursor, env);
  if (StartsWord(cursor, "dense", '<')) {
    cursor.ExpectKeyword("dense", "dense");
    attr.kind = Attr::Kind::kDense;
    cursor.SkipSpace();
    size_t group_pos = cursor.pos();
    SetBody(attr, cursor.ReadBalanced("'<' after dense"), group_pos);
    cursor.Expect(':', "':' and the type of the dense attribute");
    cursor.SkipSpace();
    size_t type_pos = cursor.pos();
    attr.type = ParseType(cursor, *env.type_aliases);
    if (!attr.type.IsArray()) cursor.ErrorAt(type_pos, "a dense attribute needs a tensor type");
    return attr;
  }
  if (StartsWord(cursor, "dense_resource", '<'))
    cursor.ErrorAt(attr.pos, "dense_resource constants are not supported (expected dense<...>; print the module "
                             "without elided or external resources)");
  if (StartsWord(cursor, "array", '<')) {
    cursor.ExpectKeyword("array", "array");
    return ParseDenseArray(cursor, attr.pos);
  }
  if (cursor.TryKeyword("true") || cursor.TryKeyword("false")) {
    attr.kind = Attr::Kind::kBool;
    attr.boolean = cursor.text()[attr.pos] == 't';
    return attr;
  }
  if (cursor.TryKeyword("unit")) return attr;
  if (AtType(cursor)) {
    attr.kind = Attr::Kind::kType;
    attr.type = ParseType(cursor, *env.type_aliases);
    return attr;
  }
  if (cursor.AtBareId()) {
    // Bare enum words and other dialect shorthand; kept as text.
    attr.kind = Attr::Kind::kEnum;
    attr.str = std::string(cursor.ReadBareId("an attribute value"));
    if (cursor.PeekRaw() == '<') cursor.ReadBalanced("'<'");
    return attr;
  }
  cursor.ErrorExpected("an attribute value");
}

// ---- accessors ----

std::vector<int64_t> AttrInts(Cursor& cursor, const Attr& attr, std::string_view what) {
  switch (attr.kind) {
    case Attr::Kind::kIntList: return attr.ints;
    case Attr::Kind::kArray: {
      std::vector<int64_t> values;
      values.reserve(attr.elements.size());
      for (const Attr& element : attr.elements) values.push_back(AttrInt(cursor, element, what));
      return values;
    }
    case Attr::Kind::kDense: {
      if (!IsInteger(attr.type.element_type()) || attr.type.rank() > 1)
        cursor.ErrorAt(attr.pos, StrCat(what, ": expected a 1-D integer list"));
      Literal literal = DenseLiteral(cursor, attr);
      std::vector<int64_t> values(static_cast<size_t>(literal.element_count()));
      for (int64_t i = 0; i < literal.element_count(); ++i) values[i] = literal.GetAsInt64(i);
      return values;
    }
    default: cursor.ErrorAt(attr.pos, StrCat(what, ": expected a list of integers such as [0, 1]"));
  }
}

std::vector<std::vector<int64_t>> AttrIntRows(Cursor& cursor, const Attr& attr, std::string_view what) {
  std::vector<std::vector<int64_t>> rows;
  if (attr.kind == Attr::Kind::kArray) {
    for (const Attr& element : attr.elements) rows.push_back(AttrInts(cursor, element, what));
    return rows;
  }
  if (attr.kind != Attr::Kind::kDense || !IsInteger(attr.type.element_type()) || attr.type.rank() > 2)
    cursor.ErrorAt(attr.pos, StrCat(what, ": expected a 2-D integer dense attribute such as dense<[[0, 1]]> : tensor<1x2xi64>"));
  Literal literal = DenseLiteral(cursor, attr);
  if (attr.type.rank() < 2) {
    if (literal.element_count() != 0) cursor.ErrorAt(attr.pos, StrCat(what, ": expected a 2-D integer list"));
    return rows;
  }
  const int64_t cols = attr.type.dim(1);
  for (int64_t r = 0; r < attr.type.dim(0); ++r) {
    std::vector<int64_t>& row = rows.emplace_back();
    for (int64_t k = 0; k < cols; ++k) row.push_back(literal.GetAsInt64(r * cols + k));
  }
  return rows;
}

int64_t AttrInt(Cursor& cursor, const Attr& attr, std::string_view what) {
  if (attr.kind == Attr::Kind::kInt) return attr.integer;
  if (attr.kind == Attr::Kind::kDense && IsInteger(attr.type.element_type()) && attr.type.element_count() == 1)
    return DenseLiteral(cursor, attr).GetAsInt64(0);
  cursor.ErrorAt(attr.pos, StrCat(what, ": expected an integer"));
}

bool AttrBool(Cursor& cursor, const Attr& attr, std::string_view what) {
  if (attr.kind == Attr::Kind::kBool) return attr.boolean;
  if (attr.kind == Attr::Kind::kUnit) return true;
  cursor.ErrorAt(attr.pos, StrCat(what, ": expected true or false"));
}

std::vector<bool> AttrBools(Cursor& cursor, const Attr& attr, std::string_view what) {
  std::vector<bool> values;
  if (attr.kind == Attr::Kind::kIntList) {
    for (int64_t v : attr.ints) values.push_back(v != 0);
    return values;
  }
  if (attr.kind == Attr::Kind::kArray) {
    for (const Attr& element : attr.elements)
      values.push_back(element.kind == Attr::Kind::kInt ? element.integer != 0 : AttrBool(cursor, element, what));
    return values;
  }
  if (attr.kind == Attr::Kind::kDense) {
    Literal literal = DenseLiteral(cursor, attr);
    for (int64_t i = 0; i < literal.element_count(); ++i) values.push_back(literal.GetAsInt64(i) != 0);
    return values;
  }
  cursor.ErrorAt(attr.pos, StrCat(what, ": expected a list of booleans such as [false, true]"));
}

const std::string& AttrString(Cursor& cursor, const Attr& attr, std::string_view what) {
  if (attr.kind != Attr::Kind::kString) cursor.ErrorAt(attr.pos, StrCat(what, ": expected a string"));
  return attr.str;
}

std::string_view AttrEnum(Cursor& cursor, const Attr& attr, std::string_view what) {
  if (attr.kind == Attr::Kind::kEnum) return attr.str;
  if (attr.kind == Attr::Kind::kDialect) {
    // #stablehlo<precision DEFAULT> or #stablehlo.precision<DEFAULT>: the last word.
    std::string_view body = attr.body;
    size_t end = body.find_last_not_of(" \t\n");
    if (end != std::string_view::npos) {
      size_t start = end;
      while (start > 0 && IsIdChar(body[start - 1])) --start;
      if (IsIdChar(body[end])) return body.substr(start, end - start + 1);
    }
  }
  cursor.ErrorAt(attr.pos, StrCat(what, ": expected an enum value such as #stablehlo<", what, " ...>"));
}

Literal DenseLiteral(Cursor& outer, const Attr& attr) {
  GSPMD_CHECK(attr.kind == Attr::Kind::kDense, "DenseLiteral on a non-dense attribute");
  Shape shape = attr.type;
  Literal literal(shape);
  Cursor cursor(outer.text().substr(0, attr.body_pos + attr.body.size()), outer.filename());
  cursor.set_pos(attr.body_pos);
  ElementWriter writer(cursor, literal);
  const std::string type_name = MlirTypeName(shape);
  if (cursor.AtEnd()) {
    if (literal.element_count() != 0)
      cursor.ErrorAt(attr.pos, StrCat("empty dense<> for ", type_name, ": expected ", literal.element_count(), " elements"));
    return literal;
  }
  char c = cursor.Peek();
  if (c == '"') {
    size_t pos = cursor.pos();
    std::string bytes = HexBytes(cursor, cursor.ReadString("hex data"), pos);
    const int64_t element_size = ElementByteSize(shape.element_type());
    const int64_t count = literal.element_count();
    if (static_cast<int64_t>(bytes.size()) == count * element_size) {
      writer.CopyRaw(bytes, /*splat=*/false);
    } else if (static_cast<int64_t>(bytes.size()) == element_size && count > 0) {
      writer.CopyRaw(bytes, /*splat=*/true);
    } else if (shape.element_type() == ElementType::kPred && static_cast<int64_t>(bytes.size()) == (count + 7) / 8) {
      writer.CopyPackedBits(bytes);
    } else {
      cursor.ErrorAt(pos, StrCat("hex data of ", bytes.size(), " bytes for ", type_name, ": expected ", count * element_size,
                                 " bytes (or one element's ", element_size, " for a splat)"));
    }
  } else if (c == '[' && shape.rank() > 0) {
    int64_t next = 0;
    ReadNestedList(cursor, writer, shape.dims(), 0, &next, type_name);
  } else {
    if (literal.element_count() == 0) cursor.ErrorAt(attr.pos, StrCat("a splat value for the empty ", type_name));
    if (c == '[') {
      // A rank-0 value written as a one-element list.
      cursor.Expect('[', "'['");
      writer.ReadInto(0);
      cursor.Expect(']', "']'");
    } else {
      writer.ReadInto(0);
    }
    writer.Splat();
  }
  if (!cursor.AtEnd()) cursor.ErrorExpected("the end of the dense attribute");
  return literal;
}

}  // namespace gspmd::stablehlo
