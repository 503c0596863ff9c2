// libFuzzer entry point for the .npy reader (fuzz_targets.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gspmd::fuzz::FuzzNpyBytes(data, size);
  return 0;
}
