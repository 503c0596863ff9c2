// Scanner: character-level reading of HLO text and located error reporting.
#include "text/scanner.h"

namespace gspmd::hlo_text {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsOpener(char c) { return c == '(' || c == '[' || c == '{'; }
bool IsCloser(char c) { return c == ')' || c == ']' || c == '}'; }

char CloserFor(char opener) {
  if (opener == '(') return ')';
  if (opener == '[') return ']';
  return '}';
}

}  // namespace

void Scanner::SkipSpace() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (IsSpace(c)) {
      ++pos_;
      continue;
    }
    if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
      size_t end = text_.find("*/", pos_ + 2);
      if (end == std::string_view::npos) ErrorAt(pos_, "unterminated comment: expected '*/'");
      pos_ = end + 2;
      continue;
    }
    if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {  // to the end of the line
      size_t end = text_.find_first_of("\r\n", pos_ + 2);
      pos_ = end == std::string_view::npos ? text_.size() : end;
      continue;
    }
    return;
  }
}

void Scanner::SkipSpaceInLine() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t') {
      ++pos_;
      continue;
    }
    if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
      size_t end = text_.find("*/", pos_ + 2);
      if (end == std::string_view::npos) ErrorAt(pos_, "unterminated comment: expected '*/'");
      pos_ = end + 2;
      continue;
    }
    if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {  // to the end of the line
      size_t end = text_.find_first_of("\r\n", pos_ + 2);
      pos_ = end == std::string_view::npos ? text_.size() : end;
      continue;
    }
    return;
  }
}

bool Scanner::TryConsume(std::string_view s) {
  SkipSpace();
  if (text_.substr(pos_, s.size()) != s) return false;
  pos_ += s.size();
  return true;
}

void Scanner::Expect(char c, const What& what) {
  if (!TryConsume(c)) ErrorExpected(what);
}

void Scanner::Expect(std::string_view s, const What& what) {
  if (!TryConsume(s)) ErrorExpected(what);
}

bool Scanner::AtName() {
  char c = Peek();
  if (c == '%') return pos_ + 1 < text_.size() && IsNameStart(text_[pos_ + 1]);
  return IsNameStart(c);
}

std::string_view Scanner::ReadName(const What& what) {
  SkipSpace();
  size_t start = pos_;
  if (start < text_.size() && text_[start] == '%') ++start;
  if (start >= text_.size() || !IsNameStart(text_[start])) ErrorExpected(what);
  size_t end = start + 1;
  while (end < text_.size() && IsNameChar(text_[end])) {
    if (text_[end] == '-' && end + 1 < text_.size() && text_[end + 1] == '>') break;
    ++end;
  }
  pos_ = end;
  return text_.substr(start, end - start);
}

std::string_view Scanner::ReadWord() {
  SkipSpace();
  size_t start = pos_;
  if (start >= text_.size() || !IsNameStart(text_[start])) return {};
  size_t end = start + 1;
  while (end < text_.size() && (IsNameStart(text_[end]) || IsDigit(text_[end]))) ++end;
  pos_ = end;
  return text_.substr(start, end - start);
}

int64_t Scanner::ReadInt(const What& what) {
  SkipSpace();
  size_t start = pos_;
  size_t p = pos_;
  bool negative = false;
  if (p < text_.size() && (text_[p] == '-' || text_[p] == '+')) {
    negative = text_[p] == '-';
    ++p;
  }
  if (p >= text_.size() || !IsDigit(text_[p])) ErrorExpected(what);
  uint64_t value = 0;
  while (p < text_.size() && IsDigit(text_[p])) {
    uint64_t digit = static_cast<uint64_t>(text_[p] - '0');
    if (value > (UINT64_MAX - digit) / 10) ErrorAt(start, StrCat("integer out of range: expected ", what.str()));
    value = value * 10 + digit;
    ++p;
  }
  uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (value > limit) ErrorAt(start, StrCat("integer out of range: expected ", what.str()));
  pos_ = p;
  return negative ? static_cast<int64_t>(0 - value) : static_cast<int64_t>(value);
}

std::string_view Scanner::ReadQuoted(const What& what) {
  if (Peek() != '"') ErrorExpected(what);
  size_t start = pos_;
  size_t p = pos_ + 1;
  while (p < text_.size() && text_[p] != '"') {
    if (text_[p] == '\\') ++p;
    ++p;
  }
  if (p >= text_.size()) ErrorAt(start, "unterminated string: expected a closing '\"'");
  pos_ = p + 1;
  return text_.substr(start, pos_ - start);
}

size_t Scanner::SkipBalanced(size_t start) const {
  // A small explicit stack of expected closers; nesting in HLO attributes is shallow.
  std::string closers;
  size_t p = start;
  while (p < text_.size()) {
    char c = text_[p];
    if (c == '"') {
      size_t quote = p++;
      while (p < text_.size() && text_[p] != '"') {
        if (text_[p] == '\\') ++p;
        ++p;
      }
      if (p >= text_.size()) ErrorAt(quote, "unterminated string: expected a closing '\"'");
      ++p;
      continue;
    }
    if (c == '\'') {  // 'axis' names in shardings; a lone quote is an ordinary character
      size_t close = p + 1;
      while (close < text_.size() && text_[close] != '\'' && text_[close] != '\n') ++close;
      p = (close < text_.size() && text_[close] == '\'') ? close + 1 : p + 1;
      continue;
    }
    if (IsOpener(c)) {
      closers.push_back(CloserFor(c));
      ++p;
      continue;
    }
    if (IsCloser(c)) {
      if (closers.empty() || closers.back() != c)
        ErrorAt(p, StrCat("unbalanced '", std::string(1, c), "': expected '",
                          closers.empty() ? std::string("?") : std::string(1, closers.back()), "'"));
      closers.pop_back();
      ++p;
      if (closers.empty()) return p;
      continue;
    }
    ++p;
  }
  ErrorAt(text_.size(), StrCat("expected '", std::string(1, closers.empty() ? '}' : closers.back()),
                               "' to close the '", std::string(1, text_[start]),
                               "' opened at ", LocationAt(start).ToString(),
                               ", but reached the end of the file"));
}

std::string_view Scanner::ReadBalanced() {
  SkipSpace();
  size_t start = pos_;
  if (start >= text_.size() || !IsOpener(text_[start])) ErrorExpected("'{', '[' or '('");
  pos_ = SkipBalanced(start);
  return text_.substr(start, pos_ - start);
}

std::string_view Scanner::ReadRawValue(const What& what) {
  SkipSpace();
  if (pos_ < text_.size() && text_[pos_] == '"') return ReadQuoted(what);
  size_t start = pos_;
  size_t p = pos_;
  while (p < text_.size()) {
    char c = text_[p];
    if (IsOpener(c)) {
      p = SkipBalanced(p);
      continue;
    }
    if (c == '"') {
      pos_ = p;
      ReadQuoted(what);
      p = pos_;
      continue;
    }
    if (IsSpace(c) || c == ',' || IsCloser(c)) break;
    ++p;
  }
  if (p == start) ErrorExpected(what);
  // replica_groups=mesh['a'=2,'b'=4] {'a'}: the mesh is followed by a space and the axes.
  std::string_view so_far = text_.substr(start, p - start);
  if (so_far.substr(0, 5) == "mesh[" && so_far.back() == ']') {
    size_t q = p;
    while (q < text_.size() && (text_[q] == ' ' || text_[q] == '\t')) ++q;
    if (q < text_.size() && text_[q] == '{') p = SkipBalanced(q);
  }
  pos_ = p;
  return text_.substr(start, p - start);
}

SourceLocation Scanner::LocationAt(size_t offset) const {
  if (offset > text_.size()) offset = text_.size();
  if (offset < located_offset_) {
    located_offset_ = 0;
    located_line_ = 1;
    located_line_start_ = 0;
  }
  for (size_t i = located_offset_; i < offset; ++i) {
    bool lone_carriage_return = text_[i] == '\r' && (i + 1 >= text_.size() || text_[i + 1] != '\n');
    if (text_[i] == '\n' || lone_carriage_return) {
      ++located_line_;
      located_line_start_ = i + 1;
    }
  }
  located_offset_ = offset;
  return SourceLocation{filename_, located_line_, static_cast<int>(offset - located_line_start_) + 1};
}

void Scanner::ErrorAt(size_t offset, const std::string& message) const {
  ThrowUserErrorAt(LocationAt(offset), message);
}

std::string Scanner::DescribeNext() {
  SkipSpace();
  if (pos_ >= text_.size()) return "end of file";
  char c = text_[pos_];
  if (IsNameStart(c) || c == '%') {
    size_t end = pos_ + 1;
    while (end < text_.size() && IsNameChar(text_[end]) && end - pos_ < 40) ++end;
    return StrCat("'", text_.substr(pos_, end - pos_), "'");
  }
  if (c == '\n') return "end of line";
  return StrCat("'", std::string(1, c), "'");
}

void Scanner::ErrorExpected(const What& what) {
  std::string found = DescribeNext();
  if (pos_ >= text_.size())
    ErrorAt(pos_, StrCat("expected ", what.str(), ", but reached the end of the file"));
  ErrorAt(pos_, StrCat("expected ", what.str(), ", found ", found));
}

}  // namespace gspmd::hlo_text
