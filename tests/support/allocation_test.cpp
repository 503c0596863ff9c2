// Tests of the allocation helpers: the process allocator's tuning and sized allocation errors.
#include "support/allocation.h"

#include <gtest/gtest.h>

#include <cstdlib>
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
    EXPECT_NE(std::string(error.what()).find("f32[huge]"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace gspmd
