// User errors with locations, and the handler for failed internal checks.
#include "support/diagnostic.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace gspmd {

std::string SourceLocation::ToString() const {
  std::string out = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  return out;
}

bool UserError::HasLocation() const { return std::string_view(what()).find(": error: ") != std::string_view::npos; }

void ThrowUserErrorAt(const SourceLocation& where, const std::string& message, UserErrorKind kind) {
  throw UserError(where.ToString() + ": error: " + message, kind);
}

void InternalError(const char* file, int line, const std::string& message) {
  std::fprintf(stderr, "gspmd internal error at %s:%d: %s\n", file, line, message.c_str());
  std::abort();
}

}  // namespace gspmd
