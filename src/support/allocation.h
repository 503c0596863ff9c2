// Overflow-checked size arithmetic, and memory running out as a UserError giving the bytes asked
// for (never an abort inside the allocator).
#pragma once

#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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

// A request for memory the process could not satisfy: a std::bad_alloc that knows the bytes
// asked for. operator new throws it in builds that use mimalloc (whose own operator new calls
// abort() when memory runs out). what() is "out of memory: cannot allocate 2147483648 bytes",
// plus what the thrower could add ("for f32[8,67108864]"). Its text lives in the object, so it
// can be made and extended when no memory is left at all (exception objects then come from the
// C++ runtime's emergency pool): it is what is left to report when a UserError's message cannot
// be allocated because other threads hold the rest of the memory.
class OutOfMemory : public std::bad_alloc {
 public:
  explicit OutOfMemory(uint64_t bytes, std::string_view context = {});
  uint64_t bytes() const { return bytes_; }
  bool has_context() const { return has_context_; }
  const char* what() const noexcept override { return text_; }
  // The same failure with `prefix` before the message ("device 3: "); allocates nothing.
  OutOfMemory Prefixed(std::string_view prefix) const;

 private:
  uint64_t bytes_;
  bool has_context_ = false;
  char text_[320];
};

// "2.00 GiB (2147483648 bytes)": as every command spells bytes (support/units.h), with the exact
// count an error message owes; "512 bytes" below a KiB.
std::string ByteCountText(uint64_t bytes);

// The UserError (kind kResource) for a failed allocation: "out of memory: cannot allocate 2.00
// GiB (2147483648 bytes) CONTEXT" (e.g. context "for f32[8,67108864]"). `failure` gives the
// bytes when it is an OutOfMemory; a plain std::bad_alloc (a sanitizer build's allocator) says
// only "out of memory CONTEXT". When not even the message can be allocated, an OutOfMemory with
// the bytes and (if the failure had none) the context is thrown instead.
[[noreturn]] void ThrowOutOfMemory(const std::bad_alloc& failure, std::string_view context);

// For callers whose context costs allocations to build (context() returns it): as
// ThrowOutOfMemory, except that when memory for the context or the message is lacking, the
// failure is rethrown as an OutOfMemory prefixed with `prefix` (a fixed text: "%dot.3: ").
template <typename Context>
[[noreturn]] void ThrowOutOfMemory(const std::bad_alloc& failure, Context&& context, std::string_view prefix) {
  std::string text;
  try {
    text = context();
  } catch (const std::bad_alloc&) {
    const auto* sized = dynamic_cast<const OutOfMemory*>(&failure);
    throw (sized != nullptr ? *sized : OutOfMemory(0)).Prefixed(prefix);
  }
  try {
    ThrowOutOfMemory(failure, text);
  } catch (const OutOfMemory& fallback) {
    throw fallback.Prefixed(prefix);
  }
}

// Runs fn(); memory running out anywhere inside it (a container growing, a value copied)
// becomes the UserError of ThrowOutOfMemory with `context`, e.g. "while reading the inputs".
template <typename Fn>
decltype(auto) ReportingOutOfMemory(std::string_view context, Fn&& fn) {
  try {
    return std::forward<Fn>(fn)();
  } catch (const std::bad_alloc& failure) {
    ThrowOutOfMemory(failure, context);
  }
}

// `bytes` zero-filled bytes for `what` (e.g. "f32[1000000000000]"): every new array value
// (Literal) and the runtime's large buffers come from here. More than the machine's physical
// memory, or an allocation the allocator refuses, is the UserError of ThrowOutOfMemory:
//   "out of memory: cannot allocate 3.64 TiB (4000000000000 bytes) for f32[1000000000000]
//    (the machine has 24.00 GiB)"
// Tests only: GSPMD_TEST_MAX_ALLOCATION=BYTES in the environment makes any request of more
// than BYTES fail here as if memory had run out (sanitizer builds cannot run under a small
// address-space limit, so this is how they exercise the path).
std::vector<uint8_t> AllocateZeroed(uint64_t bytes, std::string_view what);

// The same for tests inside one process: AllocateZeroed refuses requests of more than
// `max_bytes`, and (when fail_call > 0) the fail_call-th request from now of any size, once:
// with several device threads, that fails one device while the others go on into their
// collectives. Returns the fault before, to put back.
struct AllocationFault {
  uint64_t max_bytes = UINT64_MAX;
  int64_t fail_call = 0;
};
AllocationFault SetAllocationFaultForTesting(AllocationFault fault);

}  // namespace gspmd
