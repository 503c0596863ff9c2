// Cursor: a position in MLIR text with the token readers the StableHLO reader needs
// (identifiers, %values, @symbols, numbers, strings, balanced groups), skipping whitespace and
// // comments, and reporting errors as FILE:LINE:COL with what was expected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <string>
#include <string_view>

#include "support/diagnostic.h"

namespace gspmd::stablehlo {

// What was expected at a position, kept as up to three pieces and joined only when an error
// is reported (readers pass one on every call: building a string each time would cost more
// than the reading): Expected("'=' after ", keyword).
struct Expected {
  Expected(const char* a) : parts{a} {}
  Expected(std::string_view a) : parts{a} {}
  Expected(const std::string& a) : parts{a} {}
  template <typename... More>
  Expected(std::string_view a, std::string_view b, More&&... more) : parts{a, b, std::string_view(more)...} {
    static_assert(sizeof...(More) <= 6, "at most eight pieces");
  }
  std::string str() const {
    std::string text;
    for (std::string_view part : parts) text.append(part);
    return text;
  }
  std::string_view parts[8];
};

// Offsets are byte offsets into the whole file, so a sub-range (an attribute alias, a dialect
// attribute body) can be re-read later with positions that still point into the file.
// Line and column are computed only when an error is reported.
class Cursor {
 public:
  Cursor(std::string_view text, std::string filename) : text_(text), filename_(std::move(filename)) {}

  std::string_view text() const { return text_; }
  const std::string& filename() const { return filename_; }
  size_t pos() const { return pos_; }
  void set_pos(size_t pos) { pos_ = pos; }

  // Whitespace and // comments.
  void SkipSpace();
  char Peek() {
    SkipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  // The character `k` places after the position, without skipping anything ('\0' past the end).
  char PeekRaw(size_t k = 0) const { return pos_ + k < text_.size() ? text_[pos_ + k] : '\0'; }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
  }
  bool TryConsume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  // The exact text `s` (after space).
  bool TryConsume(std::string_view s);
  // `word` not followed by an identifier character (so "dim" does not match "dims").
  bool TryKeyword(std::string_view word);
  void Expect(char c, const Expected& what);
  void Expect(std::string_view s, const Expected& what);
  void ExpectKeyword(std::string_view word, const Expected& what);

  // A bare identifier [A-Za-z_][A-Za-z0-9_$.]* ("stablehlo.add", "dims", "f32").
  bool AtBareId();
  std::string_view ReadBareId(const Expected& what);
  // "%name" (returns the name without '%'); names are [A-Za-z0-9_$.-]+.
  std::string_view ReadValueName(const Expected& what);
  // "@name" or "@\"quoted name\"" (returns the name).
  std::string ReadSymbol(const Expected& what);
  // A decimal or 0x-hex integer with an optional '-'.
  bool AtInteger();
  int64_t ReadInt(const Expected& what);
  // A number as written ("-1.5e+03", "42", "0x7FC00000"), for callers that decode it by type.
  std::string_view ReadNumberText(const Expected& what);
  // A double-quoted string with MLIR escapes (\", \\, \n, \t, \XX) decoded.
  std::string ReadString(const Expected& what);
  // From an opening ( [ { < at the position to its matching closer, inclusive. Quoted strings
  // are skipped and "->" inside <...> does not close it. Errors name the unclosed bracket.
  std::string_view ReadBalanced(const Expected& what);

  SourceLocation LocationAt(size_t offset) const;
  [[noreturn]] void ErrorAt(size_t offset, const std::string& message) const;
  // "expected WHAT, found 'x'" at the position.
  [[noreturn]] void ErrorExpected(const Expected& what);
  // What is at the position, for errors: "'x'", "'stablehlo.add'", "end of file".
  std::string DescribeNext();

 private:
  size_t SkipBalancedFrom(size_t start) const;

  std::string_view text_;
  std::string filename_;
  size_t pos_ = 0;
  // LocationAt counts lines from the last offset it located (offsets mostly grow).
  mutable size_t located_offset_ = 0;
  mutable int located_line_ = 1;
  mutable size_t located_line_start_ = 0;
};

inline bool IsIdStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
inline bool IsDigitChar(char c) { return c >= '0' && c <= '9'; }
inline bool IsIdChar(char c) { return IsIdStart(c) || IsDigitChar(c) || c == '$' || c == '.'; }
inline bool IsValueNameChar(char c) { return IsIdChar(c) || c == '-'; }

}  // namespace gspmd::stablehlo
