// Tests of the allocation helpers: the process allocator's tuning, sized allocation errors,
// operator new throwing instead of aborting, and the injected failures tests use.
#include "support/allocation.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <string>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

// Freed activations stay with the process for a second (a step's buffers are reused by the
// next step instead of being faulted in again), unless the user set mimalloc's own variable.
TEST(AllocationTest, FreedMemoryIsKeptForASecond) {
  const int64_t delay = AllocatorFreedMemoryDelayMs();
  if (delay < 0) GTEST_SKIP() << "this build does not use mimalloc (sanitizers)";
  if (const char* chosen = std::getenv("MIMALLOC_DECOMMIT_DELAY")) {
    EXPECT_EQ(delay, std::atoll(chosen));
    return;
  }
  EXPECT_EQ(delay, 1000);
}

TEST(AllocationTest, ZeroedBuffersAndOversizedRequests) {
  EXPECT_EQ(AllocateZeroed(16, "f32[4]"), std::vector<uint8_t>(16, 0));
  try {
    AllocateZeroed(uint64_t{1} << 62, "f32[huge]");
    FAIL() << "expected a UserError";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("out of memory: cannot allocate 4.00 EiB (4611686018427387904 bytes) "
                                             "for f32[huge]"),
              std::string::npos)
        << error.what();
  }
}

TEST(AllocationTest, ByteCounts) {
  EXPECT_EQ(ByteCountText(0), "0 bytes");
  EXPECT_EQ(ByteCountText(1023), "1023 bytes");
  EXPECT_EQ(ByteCountText(1536), "1.50 KiB (1536 bytes)");
  EXPECT_EQ(ByteCountText(uint64_t{2} << 30), "2.00 GiB (2147483648 bytes)");
}

// What operator new throws when memory runs out carries the size; ThrowOutOfMemory turns it
// (or a plain std::bad_alloc, which carries nothing) into the UserError every caller reports.
TEST(AllocationTest, OutOfMemoryBecomesASizedUserError) {
  const OutOfMemory failure(uint64_t{3} << 20);
  EXPECT_STREQ(failure.what(), "out of memory: cannot allocate 3145728 bytes");
  try {
    ReportingOutOfMemory("while testing", [&] { throw failure; });
    FAIL() << "expected a UserError";
  } catch (const UserError& error) {
    EXPECT_STREQ(error.what(), "out of memory: cannot allocate 3.00 MiB (3145728 bytes) while testing");
  }
  try {
    ReportingOutOfMemory("while testing", [] { throw std::bad_alloc(); });
    FAIL() << "expected a UserError";
  } catch (const UserError& error) {
    EXPECT_STREQ(error.what(), "out of memory while testing");
  }
  EXPECT_EQ(ReportingOutOfMemory("while testing", [] { return 7; }), 7);
}

// What is left to report when not even a message can be allocated: the text lives in the
// exception object, context and prefixes included.
TEST(AllocationTest, OutOfMemoryCarriesItsTextWithoutAllocating) {
  const OutOfMemory failure(4096, "for f32[1,1024]");
  EXPECT_TRUE(failure.has_context());
  EXPECT_STREQ(failure.Prefixed("device 3: ").Prefixed("").what(),
               "device 3: out of memory: cannot allocate 4096 bytes for f32[1,1024]");
  EXPECT_EQ(failure.Prefixed("device 3: ").bytes(), 4096u);
  EXPECT_STREQ(OutOfMemory(0).what(), "out of memory");
  EXPECT_FALSE(OutOfMemory(0).has_context());
}

// mimalloc's own operator new would abort the process; ours throws OutOfMemory instead. (A
// request over mimalloc's maximum fails at once, touching no memory.)
TEST(AllocationTest, OperatorNewThrowsOutOfMemoryWithTheSize) {
  if (AllocatorFreedMemoryDelayMs() < 0) GTEST_SKIP() << "this build does not use mimalloc (sanitizers)";
  volatile size_t huge = size_t{1} << 62;
  try {
    void* memory = ::operator new(huge);
    ::operator delete(memory);
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& failure) {
    EXPECT_EQ(failure.bytes(), size_t{1} << 62);
  }
  try {
    void* memory = ::operator new[](huge, std::align_val_t{64});
    ::operator delete[](memory, std::align_val_t{64});
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& failure) {
    EXPECT_EQ(failure.bytes(), size_t{1} << 62);
  }
  // The nothrow form still says nullptr (std::stable_sort's temporary buffer relies on it).
  EXPECT_EQ(::operator new(huge, std::nothrow), nullptr);
}

// The test hook: refusing requests over a size, or one chosen request, as memory running out.
TEST(AllocationTest, InjectedFailures) {
  const AllocationFault before = SetAllocationFaultForTesting({1000, 0});
  EXPECT_EQ(AllocateZeroed(1000, "u8[1000]").size(), 1000u);
  EXPECT_THROW(AllocateZeroed(1001, "u8[1001]"), UserError);
  SetAllocationFaultForTesting({UINT64_MAX, 2});
  EXPECT_EQ(AllocateZeroed(8, "u8[8]").size(), 8u);
  try {
    AllocateZeroed(8, "u8[8]");
    FAIL() << "expected the second request to fail";
  } catch (const UserError& error) {
    EXPECT_STREQ(error.what(), "out of memory: cannot allocate 8 bytes for u8[8]");
  }
  EXPECT_EQ(AllocateZeroed(8, "u8[8]").size(), 8u);  // once
  SetAllocationFaultForTesting(before);
}

}  // namespace
}  // namespace gspmd
