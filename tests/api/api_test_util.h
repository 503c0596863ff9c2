// Helpers of the library API's tests: the kind and the message of the UserError a call throws.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "support/diagnostic.h"

namespace gspmd::api::test_util {

inline UserErrorKind KindOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const UserError& error) {
    return error.kind();
  }
  ADD_FAILURE() << "no UserError";
  return UserErrorKind::kInput;
}

inline std::string MessageOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const UserError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no UserError";
  return "";
}

}  // namespace gspmd::api::test_util
