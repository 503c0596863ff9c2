// Allocation of large buffers with located, sized errors.
#include "support/allocation.h"

#include <unistd.h>

#include <new>
#include <stdexcept>

#include "support/diagnostic.h"

namespace gspmd {

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
