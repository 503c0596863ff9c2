// Giving a UserError its kind by the stage it came from: what fails while reading text is a
// parse error, while propagating or partitioning a sharding error, and so on.
#pragma once

#include <utility>

#include "support/diagnostic.h"

namespace gspmd::api {

// Runs fn; a UserError of the default kind (kInput) that escapes it is rethrown as `kind`.
// Errors that already have a more specific kind (a resource failure) keep it.
template <typename Fn>
decltype(auto) WithErrorKind(UserErrorKind kind, Fn&& fn) {
  try {
    return std::forward<Fn>(fn)();
  } catch (const UserError& error) {
    if (error.kind() != UserErrorKind::kInput) throw;
    throw UserError(error.what(), kind);
  }
}

}  // namespace gspmd::api
