// User-facing errors (with a source location) and internal assertions.
#pragma once

#include <charconv>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace gspmd {

// A position in an input file. line and column are 1-based; 0 means unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  std::string ToString() const;  // "file:line:col" (parts that are unknown are left out)
};

// What kind of input a UserError is about, for front ends that raise typed errors (the
// Python package's gspmd.ParseError, ...). The message says the rest.
enum class UserErrorKind {
  kInput,     // arrays, .npy files, options, chip files, inputs that do not fit the program
  kParse,     // program text (HLO, StableHLO) that does not read
  kSharding,  // shardings that do not read or do not fit the program or the devices
  kResource,  // memory, files that cannot be written, a failed rank or collective
};

// An error caused by the user's input (HLO text, shardings, shapes, .npy files, CLI
// arguments). The message names where the problem is and what was expected. Tools print
// what() and exit with code 1.
class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message, UserErrorKind kind = UserErrorKind::kInput)
      : std::runtime_error(message), kind_(kind) {}
  // Whether the message already says where ("LOCATION: error: ..."); callers that know more
  // context add it only to messages that do not.
  bool HasLocation() const;
  UserErrorKind kind() const { return kind_; }
  // The same kind of error with another message (callers that add context rethrow this).
  UserError Reworded(const std::string& message) const { return UserError(message, kind_); }

 private:
  UserErrorKind kind_;
};

// Throws a UserError whose message is "LOCATION: error: MESSAGE".
[[noreturn]] void ThrowUserErrorAt(const SourceLocation& where, const std::string& message,
                                   UserErrorKind kind = UserErrorKind::kInput);

namespace strcat_internal {
// Text and integers are appended directly (names and messages are built on hot paths); any
// other part goes through an ostream, as does a whole StrCat with such a part, so the text is
// always what `ostream <<` prints.
template <typename T>
inline constexpr bool kDirect =
    std::is_convertible_v<const T&, std::string_view> ||
    (std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, signed char> &&
     !std::is_same_v<T, unsigned char>);

template <typename T>
void AppendDirect(std::string& out, const T& part) {
  if constexpr (std::is_pointer_v<T>) {
    if (part != nullptr) out.append(part);  // as ostream: a null string prints nothing
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    out.append(std::string_view(part));
  } else if constexpr (std::is_same_v<T, char>) {
    out.push_back(part);
  } else {
    char digits[24];
    const std::to_chars_result written = std::to_chars(digits, digits + sizeof(digits), part);
    out.append(digits, written.ptr);
  }
}
}  // namespace strcat_internal

// Builds a message from streamable parts: StrCat("dim ", 3, " of ", shape).
template <typename... Parts>
std::string StrCat(const Parts&... parts) {
  if constexpr ((strcat_internal::kDirect<Parts> && ...)) {
    std::string out;
    (strcat_internal::AppendDirect(out, parts), ...);
    return out;
  } else {
    std::ostringstream out;
    (out << ... << parts);
    return out.str();
  }
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
