// Shardy's custom-call targets (xla.sdy.FuncResultSharding, ...) under both spellings JAX exports.
#pragma once

#include <string_view>

namespace gspmd {

// The part of a Shardy custom-call target after "xla.sdy." ("FuncResultSharding"). Newer
// exports prefix the targets with "local_" ("local_xla.sdy.FuncResultSharding"); both forms
// give the same name. Empty for targets that are not Shardy's.
inline std::string_view SdyTargetName(std::string_view target) {
  constexpr std::string_view kLocal = "local_";
  constexpr std::string_view kSdy = "xla.sdy.";
  if (target.starts_with(kLocal)) target.remove_prefix(kLocal.size());
  if (!target.starts_with(kSdy)) return {};
  return target.substr(kSdy.size());
}

}  // namespace gspmd
