// Scanner: a character cursor over HLO text (whitespace/comment skipping, names, numbers,
// quoted strings, raw balanced attribute values) that reports errors as FILE:LINE:COL.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "support/diagnostic.h"

namespace gspmd::hlo_text {

// What the parser expected at a position, kept as up to three pieces so that building it
// costs nothing unless an error is reported: What("'=' after attribute ", name).
struct What {
  What(const char* a) : a(a) {}
  What(std::string_view a) : a(a) {}
  What(const std::string& a) : a(a) {}
  What(std::string_view a, std::string_view b, std::string_view c = {}) : a(a), b(b), c(c) {}
  std::string str() const { return StrCat(a, b, c); }
  std::string_view a, b, c;
};

// Offsets are byte offsets into the whole text; line/column are computed only when an error
// is reported, so scanning stays a tight loop over characters.
class Scanner {
 public:
  Scanner(std::string_view text, std::string filename)
      : text_(text), filename_(std::move(filename)) {}

  std::string_view text() const { return text_; }
  size_t pos() const { return pos_; }
  void set_pos(size_t pos) { pos_ = pos; }

  // Skips whitespace, /* ... */ comments and // comments (to the end of the line).
  void SkipSpace();
  // Skips spaces, tabs and comments but stops at a line end ('\n' or '\r'; a // comment ends
  // before it).
  void SkipSpaceInLine();
  // The next significant character ('\0' at the end of the text).
  char Peek() {
    SkipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
  }
  // Consumes `c` (after skipping space) when it is next.
  bool TryConsume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  // Consumes the exact text `s` (after skipping space) when it is next.
  bool TryConsume(std::string_view s);
  // Consumes `c` or reports "expected <what>".
  void Expect(char c, const What& what);
  void Expect(std::string_view s, const What& what);

  // Whether a name starts here (optionally with '%').
  bool AtName();
  // A name [A-Za-z_][A-Za-z0-9_.-]*, optionally written with a leading '%' (not returned).
  // Stops before "->". Reports "expected <what>" when there is none.
  std::string_view ReadName(const What& what);
  // A keyword-like word [A-Za-z_][A-Za-z0-9_]* (no dots or dashes); empty when none.
  std::string_view ReadWord();
  // A signed decimal integer.
  int64_t ReadInt(const What& what);
  // A double-quoted string with backslash escapes, returned with its quotes.
  std::string_view ReadQuoted(const What& what);
  // From an opening bracket ( [ { < to its matching closer, inclusive; quoted strings inside
  // are skipped. Reports an error when the closer is missing.
  std::string_view ReadBalanced();
  // A raw attribute value: a quoted string, or a run of balanced groups and characters other
  // than whitespace, ',' and closing brackets. A "mesh[...]" group may be followed by
  // whitespace and a braced group (replica_groups=mesh['a'=2] {'a'}).
  std::string_view ReadRawValue(const What& what);

  // Line and column (1-based) of an offset; cheap when offsets are asked for in text order.
  SourceLocation LocationAt(size_t offset) const;
  // "expected X, found Y" style errors.
  [[noreturn]] void ErrorAt(size_t offset, const std::string& message) const;
  [[noreturn]] void ErrorExpected(const What& what);
  // A short description of what is at the current position ("'x'", "end of file").
  std::string DescribeNext();

 private:
  size_t SkipBalanced(size_t start) const;  // returns the offset after the matching closer

  std::string_view text_;
  std::string filename_;
  size_t pos_ = 0;
  // The last offset LocationAt resolved, so that asking in text order costs O(text) in all.
  mutable size_t located_offset_ = 0;
  mutable int located_line_ = 1;
  mutable size_t located_line_start_ = 0;
};

inline bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c) || c == '.' || c == '-'; }

}  // namespace gspmd::hlo_text
