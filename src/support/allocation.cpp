// Allocation of large buffers with located, sized errors.
#include "support/allocation.h"

#include <unistd.h>

#include <cstdlib>
#include <new>
#include <stdexcept>

#ifdef GSPMD_HAVE_MIMALLOC
#include <mimalloc.h>
#endif

#include "support/diagnostic.h"

namespace gspmd {
namespace {

#ifdef GSPMD_HAVE_MIMALLOC
// The interpreter frees and allocates activation-sized buffers (megabytes) many times a step.
// mimalloc returns freed memory to the system after 25 ms by default, so each step faulted
// every page of its activations back in and zero-filled it: 6x more page faults, and half of
// a training step on 8 simulated devices (docs/performance.md, section e). Freed memory is
// kept for a second instead, unless the user chose a delay (MIMALLOC_DECOMMIT_DELAY).
const bool kAllocatorTuned = [] {
  if (std::getenv("MIMALLOC_DECOMMIT_DELAY") == nullptr) mi_option_set(mi_option_decommit_delay, 1000);
  return true;
}();
#endif

}  // namespace

int64_t AllocatorFreedMemoryDelayMs() {
#ifdef GSPMD_HAVE_MIMALLOC
  return kAllocatorTuned ? mi_option_get(mi_option_decommit_delay) : -1;
#else
  return -1;
#endif
}

uint64_t PhysicalMemoryBytes() {
  static const uint64_t bytes = [] {
    long pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0) return uint64_t{0};
    return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
  }();
  return bytes;
}

std::vector<uint8_t> AllocateZeroed(uint64_t bytes, std::string_view what) {
  uint64_t memory = PhysicalMemoryBytes();
  if (memory > 0 && bytes > memory)
    GSPMD_USER_ERROR("cannot allocate ", bytes, " bytes for ", what, ": more than the machine's ", memory,
                     " bytes of memory");
  try {
    return std::vector<uint8_t>(static_cast<size_t>(bytes), 0);
  } catch (const std::bad_alloc&) {
    GSPMD_USER_ERROR("cannot allocate ", bytes, " bytes for ", what, ": out of memory");
  } catch (const std::length_error&) {
    GSPMD_USER_ERROR("cannot allocate ", bytes, " bytes for ", what, ": too large");
  }
}

}  // namespace gspmd
