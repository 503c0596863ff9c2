// What each libFuzzer target does with one input, as plain functions so that the regression
// test (tests/fuzz) replays found inputs in the ordinary build. Each returns normally for
// valid input and for input rejected with a UserError; anything else (a crash, an internal
// check, a round trip that does not hold) aborts, which is what the fuzzer reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gspmd::fuzz {

// Parses HLO text (which verifies it); an accepted module must print, parse back and
// print identically.
void FuzzHloText(std::string_view text);

// Reads the bytes as a .npy file (from a temporary file: the reader takes paths).
void FuzzNpyBytes(const uint8_t* data, size_t size);

// Parses HLO text, then propagates shardings and partitions it as `gspmd partition` does and
// prints the per-device program. Modules beyond kMaxFuzzDevices devices are skipped (they are
// valid, only slow to partition per input).
inline constexpr int64_t kMaxFuzzDevices = 64;
void FuzzPartitionText(std::string_view text);

}  // namespace gspmd::fuzz
