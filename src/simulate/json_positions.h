// Where each field of a JSON text starts (its key; array elements: their value), by JSON
// pointer, so that errors about a field of a description file can name its position; and parsing with positioned syntax errors.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "support/diagnostic.h"

namespace gspmd::simulate {

class JsonPositions {
 public:
  // `text` must be valid JSON (parse it first).
  explicit JsonPositions(const std::string& text);

  // Position of the field at `pointer` ("/network/levels/1/bandwidth"); the nearest enclosing
  // value that exists when that one does not (a missing field: its object).
  SourceLocation Find(const std::string& file, const std::string& pointer) const;

 private:
  std::map<std::string, std::pair<int, int>> starts_;
};

// Parses `text`; a syntax error is a UserError "origin:line:col: error: ...".
nlohmann::json ParseJsonText(const std::string& text, const std::string& origin);

// "/a/b/0/c" -> "a.b[0].c", for messages.
std::string PointerToFieldName(const std::string& pointer);

}  // namespace gspmd::simulate
