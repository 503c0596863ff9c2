// User-facing errors (with a source location) and internal assertions.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace gspmd {

// A position in an input file. line and column are 1-based; 0 means unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  std::string ToString() const;  // "file:line:col" (parts that are unknown are left out)
};

// An error caused by the user's input (HLO text, shardings, shapes, .npy files, CLI
// arguments). The message names where the problem is and what was expected. Tools print
// what() and exit with code 1.
class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(message) {}
  // Whether the message already says where ("LOCATION: error: ..."); callers that know more
  // context add it only to messages that do not.
  bool HasLocation() const;
};

// Throws a UserError whose message is "LOCATION: error: MESSAGE".
[[noreturn]] void ThrowUserErrorAt(const SourceLocation& where, const std::string& message);

// Builds a message from streamable parts: StrCat("dim ", 3, " of ", shape).
template <typename... Parts>
std::string StrCat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

[[noreturn]] void InternalError(const char* file, int line, const std::string& message);

}  // namespace gspmd

// An internal invariant: a failure is a bug in gspmd, never the user's fault.
#define GSPMD_CHECK(condition, ...)                                                   \
  do {                                                                                \
    if (!(condition))                                                                 \
      ::gspmd::InternalError(__FILE__, __LINE__,                                      \
                             ::gspmd::StrCat("check failed: " #condition ": ", __VA_ARGS__)); \
  } while (false)

// Raises a UserError with a message built from parts.
#define GSPMD_USER_ERROR(...) throw ::gspmd::UserError(::gspmd::StrCat(__VA_ARGS__))
