// Allocation of large buffers with located, sized errors; the process allocator's tuning, and
// operator new throwing OutOfMemory where mimalloc would abort.
#include "support/allocation.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

#ifdef GSPMD_HAVE_MIMALLOC
#include <mimalloc.h>
#endif

#include "support/diagnostic.h"
#include "support/units.h"

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

constexpr uint64_t kNoLimit = std::numeric_limits<uint64_t>::max();
constexpr const char* kLimitVariable = "GSPMD_TEST_MAX_ALLOCATION";

// GSPMD_TEST_MAX_ALLOCATION as a byte count; kNoLimit when unset; 0 with `malformed` set when
// it is not a number.
struct EnvironmentLimit {
  uint64_t bytes = kNoLimit;
  bool malformed = false;
};

EnvironmentLimit ReadEnvironmentLimit() {
  const char* text = std::getenv(kLimitVariable);
  if (text == nullptr) return {};
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (*text < '0' || *text > '9' || end == text || *end != '\0' || errno != 0) return {0, true};
  return {static_cast<uint64_t>(value), false};
}

const EnvironmentLimit& EnvironmentAllocationLimit() {
  static const EnvironmentLimit limit = ReadEnvironmentLimit();
  return limit;
}

// SetAllocationFaultForTesting's: the byte limit, and the requests left before the one that
// fails (0: none armed).
std::atomic<uint64_t> g_testing_max_bytes{kNoLimit};
std::atomic<int64_t> g_testing_calls_left{0};

// Whether a request of `bytes` must fail because a test said so.
bool RefusedForTesting(uint64_t bytes) {
  const EnvironmentLimit& environment = EnvironmentAllocationLimit();
  if (environment.malformed)
    GSPMD_USER_ERROR(kLimitVariable, "=", std::getenv(kLimitVariable),
                     ": error: expected a byte count (a test setting: larger allocations fail as out of memory)");
  if (bytes > environment.bytes || bytes > g_testing_max_bytes.load(std::memory_order_relaxed)) return true;
  if (g_testing_calls_left.load(std::memory_order_relaxed) <= 0) return false;
  return g_testing_calls_left.fetch_sub(1, std::memory_order_relaxed) == 1;
}

// Under an address-space limit (RLIMIT_AS: `ulimit -v`, `prlimit --as`), a large request that
// would leave less than this much of it free is refused before it is made: the rest is what
// the error's message, the other threads' allocator heaps (mimalloc maps tens of MiB per
// thread at a time) and the MPI library need. OpenMPI does not check its own allocations: with
// the limit exhausted, a message arriving from another rank crashes it.
constexpr uint64_t kAddressSpaceReserve = uint64_t{128} << 20;
// Requests from this size up are checked (reading the limit and the size of the address space
// costs a few microseconds, nothing beside filling a MiB).
constexpr uint64_t kCheckedRequestBytes = uint64_t{1} << 20;

// The address-space limit and how much of it is mapped now (limit 0: no limit).
struct AddressSpace {
  uint64_t limit = 0;
  uint64_t used = 0;
};

AddressSpace CurrentAddressSpace() {
  struct rlimit limit {};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return {};
  // /proc/self/statm starts with the size of the address space in pages; read without
  // allocating (this runs when memory is short).
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char text[128];
  const ssize_t length = ::read(fd, text, sizeof(text) - 1);
  ::close(fd);
  if (length <= 0) return {};
  text[length] = '\0';
  const unsigned long long pages = std::strtoull(text, nullptr, 10);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  return {static_cast<uint64_t>(limit.rlim_cur), static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size)};
}

// Whether a request of `bytes` leaves the reserve of `space` free (always, without a limit).
bool LeavesReserve(const AddressSpace& space, uint64_t bytes) {
  return space.limit == 0 || (space.used < space.limit && space.limit - space.used >= bytes + kAddressSpaceReserve);
}

// "1.50 GiB", "96 bytes".
std::string ShortByteCount(uint64_t bytes) {
  const std::string text = ByteCountText(bytes);
  return text.substr(0, text.find(" ("));
}

}  // namespace

OutOfMemory::OutOfMemory(uint64_t bytes, std::string_view context) : bytes_(bytes), has_context_(!context.empty()) {
  // snprintf of integers and strings into a buffer allocates nothing.
  int length = bytes == 0 ? std::snprintf(text_, sizeof(text_), "out of memory")
                          : std::snprintf(text_, sizeof(text_), "out of memory: cannot allocate %" PRIu64 " bytes", bytes);
  if (has_context_ && length >= 0 && static_cast<size_t>(length) < sizeof(text_))
    std::snprintf(text_ + length, sizeof(text_) - static_cast<size_t>(length), " %.*s", static_cast<int>(context.size()),
                  context.data());
}

OutOfMemory OutOfMemory::Prefixed(std::string_view prefix) const {
  OutOfMemory prefixed = *this;
  // Cut at the buffer's end when too long (the return value says by how much; nothing to do).
  if (std::snprintf(prefixed.text_, sizeof(prefixed.text_), "%.*s%s", static_cast<int>(prefix.size()), prefix.data(),
                    text_) < 0)
    prefixed.text_[0] = '\0';
  return prefixed;
}

std::string ByteCountText(uint64_t bytes) {
  if (bytes < 1024) return StrCat(bytes, " bytes");
  return StrCat(FormatBytes(static_cast<double>(bytes)), " (", bytes, " bytes)");
}

void ThrowOutOfMemory(const std::bad_alloc& failure, std::string_view context) {
  const auto* sized = dynamic_cast<const OutOfMemory*>(&failure);
  const uint64_t bytes = sized != nullptr ? sized->bytes() : 0;
  try {
    if (bytes == 0) throw UserError(StrCat("out of memory ", context), UserErrorKind::kResource);
    throw UserError(StrCat("out of memory: cannot allocate ", ByteCountText(bytes), " ", context),
                    UserErrorKind::kResource);
  } catch (const std::bad_alloc&) {
    // No memory for the message (other threads hold what is left): the failure itself, with
    // the most specific context that fits in it.
    if (sized != nullptr && sized->has_context()) throw *sized;
    throw OutOfMemory(bytes, context);
  }
}

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

AllocationFault SetAllocationFaultForTesting(AllocationFault fault) {
  AllocationFault before;
  before.max_bytes = g_testing_max_bytes.exchange(fault.max_bytes);
  before.fail_call = std::max<int64_t>(0, g_testing_calls_left.exchange(std::max<int64_t>(0, fault.fail_call)));
  return before;
}

std::vector<uint8_t> AllocateZeroed(uint64_t bytes, std::string_view what) {
  const uint64_t memory = PhysicalMemoryBytes();
  if (memory > 0 && bytes > memory)
    throw UserError(StrCat("out of memory: cannot allocate ", ByteCountText(bytes), " for ", what,
                           " (the machine has ", ByteCountText(memory), ")"),
                    UserErrorKind::kResource);
  AddressSpace space;
  try {
    if (RefusedForTesting(bytes)) throw OutOfMemory(bytes);
    if (bytes >= kCheckedRequestBytes) {
      space = CurrentAddressSpace();
      if (!LeavesReserve(space, bytes)) throw OutOfMemory(bytes);
    }
    if (bytes > std::vector<uint8_t>().max_size()) throw OutOfMemory(bytes);
    return std::vector<uint8_t>(static_cast<size_t>(bytes), 0);
  } catch (const std::bad_alloc&) {
    // With the request's own size (a plain std::bad_alloc, as sanitizer builds throw, has none).
    std::string context;
    try {
      if (bytes < kCheckedRequestBytes) space = CurrentAddressSpace();
      context = StrCat("for ", what);
      if (space.limit > 0)
        context += StrCat(" (the address-space limit, as ulimit -v sets it, is ", ShortByteCount(space.limit), "; ",
                          ShortByteCount(space.used), " of it is in use)");
    } catch (const std::bad_alloc&) {
      char fixed[200];  // no memory left for a string
      std::snprintf(fixed, sizeof(fixed), "for %.*s", static_cast<int>(what.size()), what.data());
      throw OutOfMemory(bytes, fixed);
    }
    ThrowOutOfMemory(OutOfMemory(bytes), context);
  }
}

}  // namespace gspmd

#ifdef GSPMD_HAVE_MIMALLOC
// mimalloc replaces malloc and operator new for the whole process, but it is a C library: when
// memory runs out, its operator new cannot throw and calls abort() (the process dies by SIGABRT
// with no message) unless a new-handler is installed, and a throwing new-handler would escape
// its noexcept nothrow forms (which std::stable_sort's temporary buffer uses). These
// definitions take precedence over mimalloc's (the executable's come first) and throw
// OutOfMemory, with the size, instead. The nothrow forms and every operator delete stay
// mimalloc's, which free what mi_malloc returns.
namespace {

// Large requests (a kernel's index lists, copies of values) keep the address-space reserve
// free too, as AllocateZeroed's do.
bool LargeRequestRefused(std::size_t size) {
  return size >= gspmd::kCheckedRequestBytes && !gspmd::LeavesReserve(gspmd::CurrentAddressSpace(), size);
}

void* NewOrThrow(std::size_t size) {
  if (LargeRequestRefused(size)) throw gspmd::OutOfMemory(size);
  if (void* memory = mi_malloc(size)) return memory;
  throw gspmd::OutOfMemory(size);
}

void* AlignedNewOrThrow(std::size_t size, std::align_val_t alignment) {
  if (LargeRequestRefused(size)) throw gspmd::OutOfMemory(size);
  if (void* memory = mi_malloc_aligned(size, static_cast<std::size_t>(alignment))) return memory;
  throw gspmd::OutOfMemory(size);
}

}  // namespace

void* operator new(std::size_t size) { return NewOrThrow(size); }
void* operator new[](std::size_t size) { return NewOrThrow(size); }
void* operator new(std::size_t size, std::align_val_t alignment) { return AlignedNewOrThrow(size, alignment); }
void* operator new[](std::size_t size, std::align_val_t alignment) { return AlignedNewOrThrow(size, alignment); }
#endif
