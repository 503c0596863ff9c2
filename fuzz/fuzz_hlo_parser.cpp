// libFuzzer entry point for the HLO parser and verifier (with the print/parse round trip) (fuzz_targets.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gspmd::fuzz::FuzzHloText(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
