// Cursor: character-level reading of MLIR text and located error reporting.
#include "frontend/stablehlo/cursor.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace gspmd::stablehlo {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

char CloserFor(char opener) {
  switch (opener) {
    case '(': return ')';
    case '[': return ']';
    case '{': return '}';
    default: return '>';
  }
}

bool IsHexDigit(char c) { return IsDigitChar(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

int HexValue(char c) {
  if (IsDigitChar(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

}  // namespace

void Cursor::SkipSpace() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (IsSpace(c)) {
      ++pos_;
      continue;
    }
    if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      size_t end = text_.find('\n', pos_);
      pos_ = end == std::string_view::npos ? text_.size() : end + 1;
      continue;
    }
    return;
  }
}

bool Cursor::TryConsume(std::string_view s) {
  SkipSpace();
  if (text_.compare(pos_, s.size(), s) != 0) return false;
  pos_ += s.size();
  return true;
}

bool Cursor::TryKeyword(std::string_view word) {
  SkipSpace();
  if (text_.compare(pos_, word.size(), word) != 0) return false;
  size_t after = pos_ + word.size();
  if (after < text_.size() && IsIdChar(text_[after])) return false;
  pos_ = after;
  return true;
}

void Cursor::Expect(char c, const Expected& what) {
  if (!TryConsume(c)) ErrorExpected(what);
}

void Cursor::Expect(std::string_view s, const Expected& what) {
  if (!TryConsume(s)) ErrorExpected(what);
}

void Cursor::ExpectKeyword(std::string_view word, const Expected& what) {
  if (!TryKeyword(word)) ErrorExpected(what);
}

bool Cursor::AtBareId() { return IsIdStart(Peek()); }

std::string_view Cursor::ReadBareId(const Expected& what) {
  if (!AtBareId()) ErrorExpected(what);
  size_t start = pos_;
  ++pos_;
  while (pos_ < text_.size() && IsIdChar(text_[pos_])) ++pos_;
  return text_.substr(start, pos_ - start);
}

std::string_view Cursor::ReadValueName(const Expected& what) {
  if (Peek() != '%') ErrorExpected(what);
  size_t start = pos_ + 1;
  size_t end = start;
  while (end < text_.size() && IsValueNameChar(text_[end])) ++end;
  if (end == start) ErrorExpected(what);
  pos_ = end;
  return text_.substr(start, end - start);
}

std::string Cursor::ReadSymbol(const Expected& what) {
  if (Peek() != '@') ErrorExpected(what);
  ++pos_;
  if (PeekRaw() == '"') return ReadString(what);
  size_t start = pos_;
  while (pos_ < text_.size() && IsValueNameChar(text_[pos_])) ++pos_;
  if (pos_ == start) ErrorExpected(what);
  return std::string(text_.substr(start, pos_ - start));
}

bool Cursor::AtInteger() {
  char c = Peek();
  if (c == '-') return IsDigitChar(PeekRaw(1));
  return IsDigitChar(c);
}

int64_t Cursor::ReadInt(const Expected& what) {
  if (!AtInteger()) ErrorExpected(what);
  size_t start = pos_;
  bool negative = text_[pos_] == '-';
  if (negative) ++pos_;
  uint64_t magnitude = 0;
  if (text_.compare(pos_, 2, "0x") == 0 && pos_ + 2 < text_.size() && IsHexDigit(text_[pos_ + 2])) {
    pos_ += 2;
    while (pos_ < text_.size() && IsHexDigit(text_[pos_])) {
      if (magnitude >> 60) ErrorAt(start, StrCat("integer ", text_.substr(start, pos_ - start), "... does not fit in 64 bits"));
      magnitude = magnitude * 16 + static_cast<uint64_t>(HexValue(text_[pos_++]));
    }
  } else {
    const char* begin = text_.data() + pos_;
    auto [ptr, error] = std::from_chars(begin, text_.data() + text_.size(), magnitude);
    if (error != std::errc()) {
      while (pos_ < text_.size() && IsDigitChar(text_[pos_])) ++pos_;
      ErrorAt(start, StrCat("integer ", text_.substr(start, pos_ - start), " does not fit in 64 bits"));
    }
    pos_ += static_cast<size_t>(ptr - begin);
  }
  if (pos_ < text_.size() && (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E')) {
    pos_ = start;
    ErrorExpected(what);
  }
  return negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
}

std::string_view Cursor::ReadNumberText(const Expected& what) {
  char c = Peek();
  size_t start = pos_;
  size_t end = pos_;
  if (c == '-' || c == '+') ++end;
  if (end >= text_.size() || !(IsDigitChar(text_[end]) || text_[end] == '.')) ErrorExpected(what);
  if (text_.compare(end, 2, "0x") == 0) {
    end += 2;
    while (end < text_.size() && IsHexDigit(text_[end])) ++end;
  } else {
    while (end < text_.size()) {
      char d = text_[end];
      bool exponent_sign = (d == '-' || d == '+') && (text_[end - 1] == 'e' || text_[end - 1] == 'E');
      if (!(IsDigitChar(d) || d == '.' || d == 'e' || d == 'E' || exponent_sign)) break;
      ++end;
    }
  }
  pos_ = end;
  return text_.substr(start, end - start);
}

std::string Cursor::ReadString(const Expected& what) {
  if (Peek() != '"') ErrorExpected(what);
  size_t start = pos_;
  ++pos_;
  // Most strings have no escapes: one copy of the span.
  size_t end = text_.find_first_of("\"\\\n", pos_);
  if (end != std::string_view::npos && text_[end] == '"') {
    std::string value(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return value;
  }
  std::string value;
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '"') {
      ++pos_;
      return value;
    }
    if (c == '\n') break;
    if (c != '\\') {
      value += c;
      ++pos_;
      continue;
    }
    if (pos_ + 1 >= text_.size()) break;
    char e = text_[pos_ + 1];
    if (e == '"' || e == '\\') {
      value += e;
      pos_ += 2;
    } else if (e == 'n') {
      value += '\n';
      pos_ += 2;
    } else if (e == 't') {
      value += '\t';
      pos_ += 2;
    } else if (pos_ + 2 < text_.size() && IsHexDigit(e) && IsHexDigit(text_[pos_ + 2])) {
      value += static_cast<char>(HexValue(e) * 16 + HexValue(text_[pos_ + 2]));
      pos_ += 3;
    } else {
      ErrorAt(pos_, "unknown escape in string: expected \\\", \\\\, \\n, \\t or two hex digits");
    }
  }
  ErrorAt(start, "unterminated string: expected a closing '\"' on the same line");
}

size_t Cursor::SkipBalancedFrom(size_t start) const {
  // A stack of expected closers; strings are skipped whole.
  std::string closers(1, CloserFor(text_[start]));
  size_t i = start + 1;
  while (i < text_.size()) {
    char c = text_[i];
    if (c == '"') {
      ++i;
      while (i < text_.size() && text_[i] != '"') i += text_[i] == '\\' ? 2 : 1;
      ++i;
      continue;
    }
    if (c == '-' && i + 1 < text_.size() && text_[i + 1] == '>') {
      i += 2;
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      closers.push_back(CloserFor(c));
    } else if (c == closers.back()) {
      closers.pop_back();
      if (closers.empty()) return i + 1;
    } else if (c == ')' || c == ']' || c == '}') {
      ErrorAt(i, StrCat("unbalanced '", std::string(1, c), "': expected '", std::string(1, closers.back()), "'"));
    }
    ++i;
  }
  ErrorAt(start, StrCat("'", std::string(1, text_[start]), "' is never closed: expected '",
                        std::string(1, closers.back()), "' before the end of the file"));
}

std::string_view Cursor::ReadBalanced(const Expected& what) {
  char c = Peek();
  if (c != '(' && c != '[' && c != '{' && c != '<') ErrorExpected(what);
  size_t start = pos_;
  pos_ = SkipBalancedFrom(start);
  return text_.substr(start, pos_ - start);
}

SourceLocation Cursor::LocationAt(size_t offset) const {
  offset = std::min(offset, text_.size());
  if (offset < located_offset_) {
    located_offset_ = 0;
    located_line_ = 1;
    located_line_start_ = 0;
  }
  const char* const base = text_.data();
  const char* at = base + located_offset_;
  const char* const end = base + offset;
  while (at < end) {
    const void* newline = std::memchr(at, '\n', static_cast<size_t>(end - at));
    if (newline == nullptr) break;
    ++located_line_;
    at = static_cast<const char*>(newline) + 1;
    located_line_start_ = static_cast<size_t>(at - base);
  }
  located_offset_ = offset;
  return SourceLocation{filename_, located_line_, static_cast<int>(offset - located_line_start_) + 1};
}

void Cursor::ErrorAt(size_t offset, const std::string& message) const { ThrowUserErrorAt(LocationAt(offset), message); }

void Cursor::ErrorExpected(const Expected& what) {
  SkipSpace();
  ErrorAt(pos_, StrCat("expected ", what.str(), ", found ", DescribeNext()));
}

std::string Cursor::DescribeNext() {
  SkipSpace();
  if (pos_ >= text_.size()) return "end of file";
  size_t end = pos_;
  char c = text_[pos_];
  if (IsIdStart(c) || c == '%' || c == '@' || c == '#' || c == '!' || c == '^' || IsDigitChar(c) || c == '-') {
    end = pos_ + 1;
    while (end < text_.size() && (IsValueNameChar(text_[end]) || text_[end] == '#') && end - pos_ < 40) ++end;
  } else {
    end = pos_ + 1;
  }
  return StrCat("'", text_.substr(pos_, end - pos_), "'");
}

}  // namespace gspmd::stablehlo
