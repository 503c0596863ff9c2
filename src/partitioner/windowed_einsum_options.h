// When the partitioner turns a dot's all-gather into a windowed einsum (a loop of partial dots
// passing the gathered operand's windows around the devices; handlers/dot_windowed.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gspmd {

enum class WindowedEinsumMode {
  kAuto,    // only where the gathered operand is large (threshold_bytes) and the loop short (max_trips)
  kOff,     // never: the operand is all-gathered before the dot
  kAlways,  // wherever a supported case arises
};

struct WindowedEinsumOptions {
  WindowedEinsumMode mode = WindowedEinsumMode::kAuto;
  // auto: the gathered operand's bytes per device (after the gather) at least this many.
  int64_t threshold_bytes = int64_t{1} << 30;
  // auto: at most this many trips (devices along the gathered axes).
  int64_t max_trips = 64;
};

// "auto", "off" or "always"; nullopt for anything else.
inline std::optional<WindowedEinsumMode> ParseWindowedEinsumMode(const std::string& text) {
  if (text == "auto") return WindowedEinsumMode::kAuto;
  if (text == "off") return WindowedEinsumMode::kOff;
  if (text == "always") return WindowedEinsumMode::kAlways;
  return std::nullopt;
}

}  // namespace gspmd
