// Reading and writing NumPy .npy files (format versions 1.0-3.0) as Literals.
#include "io/npy.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

#include "io/box.h"
#include "io/output_files.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

static_assert(std::endian::native == std::endian::little, "npy IO assumes a little-endian host");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// The descr written for bfloat16 (what ml_dtypes names the type); '<V2' is accepted on read.
constexpr std::string_view kBFloat16Descr = "bfloat16";
constexpr std::string_view kSupportedDtypes =
    "one of |b1, |i1, <i2, <i4, <i8, |u1, <u2, <u4, <u8, <f2, <f4, <f8, bfloat16 or <V2";

[[noreturn]] void Fail(const std::string& path, const std::string& message) {
  ThrowUserErrorAt(SourceLocation{FinalPathOf(path), 0, 0}, message);
}

// A value in the header dict: a string, a bool, or a tuple of integers.
struct HeaderValue {
  enum class Kind { kString, kBool, kIntTuple } kind = Kind::kString;
  std::string text;
  bool boolean = false;
  std::vector<int64_t> ints;
};

// Parses the Python dict literal of an .npy header, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  std::map<std::string, HeaderValue> ParseDict() {
    SkipSpace();
    if (!Consume('{')) Fail(path_, "header is not a dict (expected a Python dict literal starting with '{')");
    std::map<std::string, HeaderValue> dict;
    SkipSpace();
    while (!Consume('}')) {
      std::string key = ParseString("a quoted key");
      SkipSpace();
      if (!Consume(':')) Error("expected ':' after key '" + key + "'");
      SkipSpace();
      dict[key] = ParseValue(key);
      SkipSpace();
      if (Consume(',')) {
        SkipSpace();
        continue;
      }
      SkipSpace();
      if (!Consume('}')) Error("expected ',' or '}' after the value of '" + key + "'");
      break;
    }
    SkipSpace();
    if (pos_ != text_.size()) Error("unexpected text after the header dict");
    return dict;
  }

 private:
  [[noreturn]] void Error(const std::string& what) {
    Fail(path_, "malformed header: " + what + " at offset " + std::to_string(pos_) +
                    " (expected a dict like {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)})");
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  void SkipSpace() {
    while (!AtEnd() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Consume(char c) {
    if (AtEnd() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  bool ConsumeWord(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  std::string ParseString(const char* what) {
    if (AtEnd() || (text_[pos_] != '\'' && text_[pos_] != '"')) Error(std::string("expected ") + what);
    char quote = text_[pos_++];
    size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) Error("unterminated string");
    std::string value(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return value;
  }

  int64_t ParseInt() {
    size_t start = pos_;
    while (!AtEnd() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (start == pos_) Error("expected a non-negative integer dimension");
    if (pos_ - start > 18) Error("dimension too large");
    int64_t value = std::stoll(std::string(text_.substr(start, pos_ - start)));
    Consume('L');  // Python 2 long suffix
    return value;
  }

  HeaderValue ParseValue(const std::string& key) {
    HeaderValue value;
    if (AtEnd()) Error("expected a value for '" + key + "'");
    char c = text_[pos_];
    if (c == '\'' || c == '"') {
      value.kind = HeaderValue::Kind::kString;
      value.text = ParseString("a string");
      return value;
    }
    if (ConsumeWord("True")) {
      value.kind = HeaderValue::Kind::kBool;
      value.boolean = true;
      return value;
    }
    if (ConsumeWord("False")) {
      value.kind = HeaderValue::Kind::kBool;
      value.boolean = false;
      return value;
    }
    if (c == '(' || c == '[') {
      char close = c == '(' ? ')' : ']';
      ++pos_;
      value.kind = HeaderValue::Kind::kIntTuple;
      SkipSpace();
      while (!Consume(close)) {
        value.ints.push_back(ParseInt());
        SkipSpace();
        if (Consume(',')) {
          SkipSpace();
          continue;
        }
        if (!Consume(close)) Error(std::string("expected ',' or '") + close + "' in '" + key + "'");
        break;
      }
      return value;
    }
    Error("unsupported value for '" + key + "' (a string, True/False or a tuple of integers)");
  }

  std::string_view text_;
  const std::string& path_;
  size_t pos_ = 0;
};

// The element type and byte order a descr names.
struct DtypeInfo {
  ElementType type = ElementType::kInvalid;
  bool big_endian = false;
};

std::optional<DtypeInfo> ParseDescr(std::string_view descr) {
  if (descr == kBFloat16Descr) return DtypeInfo{ElementType::kBF16, false};
  if (descr.size() < 3) return std::nullopt;
  char order = descr[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') return std::nullopt;
  std::string_view kind_size = descr.substr(1);
  struct Entry {
    std::string_view code;
    ElementType type;
  };
  static constexpr Entry kEntries[] = {
      {"b1", ElementType::kPred}, {"i1", ElementType::kS8},  {"i2", ElementType::kS16},
      {"i4", ElementType::kS32},  {"i8", ElementType::kS64}, {"u1", ElementType::kU8},
      {"u2", ElementType::kU16},  {"u4", ElementType::kU32}, {"u8", ElementType::kU64},
      {"f2", ElementType::kF16},  {"f4", ElementType::kF32}, {"f8", ElementType::kF64},
      {"V2", ElementType::kBF16},
  };
  for (const Entry& entry : kEntries) {
    if (entry.code != kind_size) continue;
    bool one_byte = ElementByteSize(entry.type) == 1;
    if (order == '|' && !one_byte && entry.type != ElementType::kBF16) return std::nullopt;
    // A void type has no byte order of its own; '>V2' would still be ml_dtypes' little-endian bf16
    // only by accident, so it is not accepted.
    if (entry.type == ElementType::kBF16 && order == '>') return std::nullopt;
    return DtypeInfo{entry.type, order == '>' && !one_byte};
  }
  return std::nullopt;
}

std::string DescrFor(ElementType type) {
  switch (type) {
    case ElementType::kPred: return "|b1";
    case ElementType::kS8: return "|i1";
    case ElementType::kS16: return "<i2";
    case ElementType::kS32: return "<i4";
    case ElementType::kS64: return "<i8";
    case ElementType::kU8: return "|u1";
    case ElementType::kU16: return "<u2";
    case ElementType::kU32: return "<u4";
    case ElementType::kU64: return "<u8";
    case ElementType::kF16: return "<f2";
    case ElementType::kBF16: return std::string(kBFloat16Descr);
    case ElementType::kF32: return "<f4";
    case ElementType::kF64: return "<f8";
    default: break;
  }
  GSPMD_CHECK(false, "WriteNpy of non-array element type ", ElementTypeName(type));
  return "";
}

void ByteSwap(uint8_t* data, int64_t count, int64_t element_size) {
  for (int64_t i = 0; i < count; ++i) std::reverse(data + i * element_size, data + (i + 1) * element_size);
}

std::string ShapeText(const std::vector<int64_t>& dims) {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(dims[i]);
  }
  if (dims.size() == 1) out += ",";
  return out + ")";
}

const HeaderValue& RequireKey(const std::map<std::string, HeaderValue>& dict, const std::string& key,
                              HeaderValue::Kind kind, const char* expected, const std::string& path) {
  auto it = dict.find(key);
  if (it == dict.end()) Fail(path, "header has no '" + key + "' key (expected " + expected + ")");
  if (it->second.kind != kind) Fail(path, "header key '" + key + "' has the wrong type (expected " + expected + ")");
  return it->second;
}

// Reads exactly `size` bytes or reports what was being read.
void ReadExactly(std::ifstream& in, void* dst, size_t size, const std::string& path, const std::string& what) {
  in.read(static_cast<char*>(dst), static_cast<std::streamsize>(size));
  if (static_cast<size_t>(in.gcount()) != size)
    Fail(path, "file is truncated in the " + what + " (expected " + std::to_string(size) + " bytes, found " +
                   std::to_string(in.gcount()) + ")");
}

}  // namespace

NpyHeader ReadNpyHeader(const std::string& path) {
  std::error_code not_checked;
  if (std::filesystem::is_directory(path, not_checked)) Fail(path, "is a directory (expected a .npy file)");
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(path, "cannot open file (expected a readable .npy file)");
  in.seekg(0, std::ios::end);
  const int64_t file_size = static_cast<int64_t>(in.tellg());
  in.seekg(0, std::ios::beg);

  uint8_t prefix[8];
  in.read(reinterpret_cast<char*>(prefix), sizeof(prefix));
  const size_t got = static_cast<size_t>(in.gcount());
  if (got < kMagicSize || std::memcmp(prefix, kMagic, kMagicSize) != 0)
    Fail(path, "bad magic (expected a .npy file starting with \\x93NUMPY)");
  if (got < sizeof(prefix)) Fail(path, "file is truncated in the version (expected 2 version bytes after the magic)");
  const int major = prefix[6];
  const int minor = prefix[7];
  if (minor != 0 || major < 1 || major > 3)
    Fail(path, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                   " (expected 1.0, 2.0 or 3.0)");

  size_t header_size = 0;
  if (major == 1) {
    uint8_t len[2];
    ReadExactly(in, len, 2, path, "header length");
    header_size = static_cast<size_t>(len[0]) | (static_cast<size_t>(len[1]) << 8);
  } else {
    uint8_t len[4];
    ReadExactly(in, len, 4, path, "header length");
    header_size = static_cast<size_t>(len[0]) | (static_cast<size_t>(len[1]) << 8) |
                  (static_cast<size_t>(len[2]) << 16) | (static_cast<size_t>(len[3]) << 24);
  }
  const int64_t header_start = static_cast<int64_t>(in.tellg());
  if (static_cast<int64_t>(header_size) > file_size - header_start)
    Fail(path, "file is truncated in the header (expected " + std::to_string(header_size) + " header bytes, found " +
                   std::to_string(file_size - header_start) + ")");
  std::string header(header_size, '\0');
  ReadExactly(in, header.data(), header_size, path, "header");

  std::map<std::string, HeaderValue> dict = HeaderParser(header, path).ParseDict();
  const HeaderValue& descr =
      RequireKey(dict, "descr", HeaderValue::Kind::kString, "a dtype string such as '<f4'", path);
  const HeaderValue& fortran =
      RequireKey(dict, "fortran_order", HeaderValue::Kind::kBool, "True or False", path);
  const HeaderValue& shape_value =
      RequireKey(dict, "shape", HeaderValue::Kind::kIntTuple, "a tuple of dimensions such as (2, 3)", path);

  std::optional<DtypeInfo> dtype = ParseDescr(descr.text);
  if (!dtype) Fail(path, "unsupported dtype '" + descr.text + "' (expected " + std::string(kSupportedDtypes) + ")");
  if (fortran.boolean) Fail(path, "fortran_order is True (expected C-order data, fortran_order False)");

  const int64_t element_size = ElementByteSize(dtype->type);
  int64_t data_size = element_size;
  for (int64_t dim : shape_value.ints) {
    if (__builtin_mul_overflow(data_size, dim, &data_size))
      Fail(path, "shape " + ShapeText(shape_value.ints) + " is too large (expected an array that fits in memory)");
  }
  const int64_t data_offset = static_cast<int64_t>(in.tellg());
  const int64_t available = file_size - data_offset;
  if (available < data_size)
    Fail(path, "data is shorter than the shape needs (expected " + std::to_string(data_size) + " bytes for shape " +
                   ShapeText(shape_value.ints) + " of '" + descr.text + "', found " + std::to_string(available) + ")");
  if (available > data_size)
    Fail(path, "file has " + std::to_string(available - data_size) + " bytes after the data (expected exactly " +
                   std::to_string(data_size) + " bytes for shape " + ShapeText(shape_value.ints) + " of '" +
                   descr.text + "')");
  NpyHeader result;
  result.type = dtype->type;
  result.dims = shape_value.ints;
  result.big_endian = dtype->big_endian;
  result.data_offset = data_offset;
  return result;
}

Literal ReadNpy(const std::string& path) {
  const NpyHeader header = ReadNpyHeader(path);
  Literal literal(Shape(header.type, header.dims));
  ReadNpyBox(path, header, WholeBox(header.dims), literal.raw(), header.dims, std::vector<int64_t>(header.dims.size(), 0));
  return literal;
}

void NormalizeNpyElements(const NpyHeader& header, uint8_t* data, int64_t count) {
  if (header.big_endian) ByteSwap(data, count, ElementByteSize(header.type));
  if (header.type == ElementType::kPred) {
    for (int64_t i = 0; i < count; ++i) data[i] = data[i] != 0;
  }
}

std::string NpyHeaderBytes(ElementType type, const std::vector<int64_t>& dims) {
  std::string header = "{'descr': '" + DescrFor(type) + "', 'fortran_order': False, 'shape': " + ShapeText(dims) + ", }";
  // Pad with spaces and end with '\n' so the data starts at a multiple of 64 bytes.
  constexpr size_t kMaxVersion1Header = 65535;
  const bool needs_version2 = header.size() + 64 > kMaxVersion1Header;
  const int major = needs_version2 ? 2 : 1;
  const size_t prefix_size = kMagicSize + 2 + (needs_version2 ? 4 : 2);
  const size_t total = (prefix_size + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix_size - header.size() - 1, ' ');
  header.push_back('\n');

  std::string prefix(kMagic, kMagicSize);
  prefix.push_back(static_cast<char>(major));
  prefix.push_back(0);
  const size_t length = header.size();
  prefix.push_back(static_cast<char>(length & 0xff));
  prefix.push_back(static_cast<char>((length >> 8) & 0xff));
  if (major == 2) {
    prefix.push_back(static_cast<char>((length >> 16) & 0xff));
    prefix.push_back(static_cast<char>((length >> 24) & 0xff));
  }
  return prefix + header;
}

void WriteNpyInPlace(const std::string& path, const Literal& literal) {
  GSPMD_CHECK(literal.shape().IsArray(), "WriteNpy needs an array literal, got ", literal.shape().ToString());
  const std::string header = NpyHeaderBytes(literal.element_type(), literal.shape().dims());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) Fail(path, "cannot open file for writing (expected a writable path)");
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(literal.raw()), literal.byte_size());
  out.flush();
  if (!out) Fail(path, "writing the file failed (expected enough disk space and a writable path)");
}

void WriteNpyBoxInPlace(const std::string& path, ElementType type, const uint8_t* data,
                        const std::vector<int64_t>& dims, const Box& box) {
  const std::string header = NpyHeaderBytes(type, box.sizes);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) Fail(path, "cannot open file for writing (expected a writable path)");
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  const int64_t element_size = ElementByteSize(type);
  ForEachBoxRun(dims, box.offsets, box.sizes, std::vector<int64_t>(box.sizes.size(), 0), box.sizes,
                [&](int64_t src, int64_t, int64_t run) {
                  out.write(reinterpret_cast<const char*>(data + src * element_size),
                            static_cast<std::streamsize>(run * element_size));
                });
  out.flush();
  if (!out) Fail(path, "writing the file failed (expected enough disk space and a writable path)");
}

void WriteNpy(const std::string& path, const Literal& literal) {
  PendingFiles files;
  WriteNpyInPlace(files.Add(path), literal);
  files.Commit();
}

// Each element type with the names numpy code gives it.
struct DtypeNames {
  ElementType type;
  std::string_view numpy;  // as written in numpy code
  std::string_view dtype;  // as numpy and JAX print it (x.dtype.name)
};
constexpr DtypeNames kDtypeNames[] = {
    {ElementType::kPred, "np.bool_", "bool"},          {ElementType::kS8, "np.int8", "int8"},
    {ElementType::kS16, "np.int16", "int16"},          {ElementType::kS32, "np.int32", "int32"},
    {ElementType::kS64, "np.int64", "int64"},          {ElementType::kU8, "np.uint8", "uint8"},
    {ElementType::kU16, "np.uint16", "uint16"},        {ElementType::kU32, "np.uint32", "uint32"},
    {ElementType::kU64, "np.uint64", "uint64"},        {ElementType::kF16, "np.float16", "float16"},
    {ElementType::kBF16, "ml_dtypes.bfloat16", "bfloat16"}, {ElementType::kF32, "np.float32", "float32"},
    {ElementType::kF64, "np.float64", "float64"},
};

std::string NumpyDtypeName(ElementType type) {
  for (const DtypeNames& names : kDtypeNames)
    if (names.type == type) return std::string(names.numpy);
  return std::string(ElementTypeName(type));
}

std::optional<ElementType> ParseDtypeName(std::string_view name) {
  for (const DtypeNames& names : kDtypeNames)
    if (names.dtype == name) return names.type;
  return ParseElementType(name);
}

}  // namespace gspmd
