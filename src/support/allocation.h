// Overflow-checked size arithmetic and allocations that fail with a UserError giving the bytes
// asked for (never an abort inside the allocator).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace gspmd {

// a * b and a + b, or nullopt when the result does not fit in int64.
inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result)) return std::nullopt;
  return result;
}
inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t result = 0;
  if (__builtin_add_overflow(a, b, &result)) return std::nullopt;
  return result;
}

// The machine's physical memory in bytes (0 when unknown).
uint64_t PhysicalMemoryBytes();

// How long the process allocator keeps freed memory before returning it to the system, in
// milliseconds (mimalloc's decommit delay; 1000 unless MIMALLOC_DECOMMIT_DELAY says otherwise),
// or -1 when the build does not use mimalloc (sanitizer builds).
int64_t AllocatorFreedMemoryDelayMs();

// `bytes` zero-filled bytes for `what` (e.g. "f32[1000000000000]"). More than the machine's
// physical memory, or an allocation the allocator refuses, is a UserError:
//   "cannot allocate 4000000000000 bytes for f32[1000000000000] (the machine has 25769803776)"
std::vector<uint8_t> AllocateZeroed(uint64_t bytes, std::string_view what);

}  // namespace gspmd
