// Records the line:col where each JSON value starts by walking the (already valid) text once.
#include "simulate/json_positions.h"

#include <algorithm>
#include <cctype>

namespace gspmd::simulate {
namespace {

// A JSON pointer token escapes '~' as "~0" and '/' as "~1".
std::string EscapePointerToken(const std::string& token) {
  std::string out;
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

class Walker {
 public:
  Walker(const std::string& text, std::map<std::string, std::pair<int, int>>& starts) : text_(text), starts_(starts) {}

  void Run() {
    SkipSpace();
    Value("", {line_, column_});
  }

 private:
  void Advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }

  void SkipSpace() {
    while (!AtEnd() && std::isspace(static_cast<unsigned char>(Peek()))) Advance();
  }

  // Reads a string literal and returns its (unescaped enough for keys) contents.
  std::string String() {
    std::string out;
    Advance();  // opening quote
    while (!AtEnd() && Peek() != '"') {
      if (Peek() == '\\') {
        Advance();
        if (AtEnd()) break;
      }
      out += Peek();
      Advance();
    }
    if (!AtEnd()) Advance();  // closing quote
    return out;
  }

  // A value; an object member is recorded at its key, an array element at its value.
  void Value(const std::string& pointer, std::pair<int, int> where) {
    starts_.emplace(pointer, where);
    const char c = Peek();
    if (c == '{') return Object(pointer);
    if (c == '[') return Array(pointer);
    if (c == '"') {
      String();
      return;
    }
    while (!AtEnd() && Peek() != ',' && Peek() != '}' && Peek() != ']' && !std::isspace(static_cast<unsigned char>(Peek())))
      Advance();
  }

  void Object(const std::string& pointer) {
    Advance();
    SkipSpace();
    while (!AtEnd() && Peek() != '}') {
      const std::pair<int, int> where = {line_, column_};
      const std::string key = String();
      SkipSpace();
      if (Peek() == ':') Advance();
      SkipSpace();
      Value(pointer + "/" + EscapePointerToken(key), where);
      SkipSpace();
      if (Peek() == ',') Advance();
      SkipSpace();
    }
    if (!AtEnd()) Advance();
  }

  void Array(const std::string& pointer) {
    Advance();
    SkipSpace();
    for (int index = 0; !AtEnd() && Peek() != ']'; ++index) {
      Value(pointer + "/" + std::to_string(index), {line_, column_});
      SkipSpace();
      if (Peek() == ',') Advance();
      SkipSpace();
    }
    if (!AtEnd()) Advance();
  }

  const std::string& text_;
  std::map<std::string, std::pair<int, int>>& starts_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace

JsonPositions::JsonPositions(const std::string& text) { Walker(text, starts_).Run(); }

SourceLocation JsonPositions::Find(const std::string& file, const std::string& pointer) const {
  std::string key = pointer;
  while (true) {
    if (auto it = starts_.find(key); it != starts_.end()) return SourceLocation{file, it->second.first, it->second.second};
    if (key.empty()) return SourceLocation{file, 0, 0};
    key = key.substr(0, key.rfind('/'));
  }
}

nlohmann::json ParseJsonText(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    // error.byte is the 1-based offset of the byte where parsing failed.
    int line = 1, column = 1;
    const size_t end = error.byte == 0 ? 0 : std::min<size_t>(error.byte - 1, text.size());
    for (size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = error.what();
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error ..."
    if (size_t colon = what.find(": ", what.find("parse error")); colon != std::string::npos) what = what.substr(colon + 2);
    ThrowUserErrorAt(SourceLocation{origin, line, column}, "malformed JSON: " + what);
  }
}

std::string PointerToFieldName(const std::string& pointer) {
  std::string out;
  size_t pos = 1;
  while (pos <= pointer.size() && !pointer.empty()) {
    size_t next = pointer.find('/', pos);
    std::string token = pointer.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
    const bool is_index = !token.empty() && std::all_of(token.begin(), token.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (is_index) out += "[" + token + "]";
    else out += (out.empty() ? "" : ".") + token;
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return out.empty() ? "(top level)" : out;
}

}  // namespace gspmd::simulate
