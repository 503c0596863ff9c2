// Tests of DeviceThreadPool: every task of a run runs at the same time (devices block on each
// other in collectives), runs reuse the same threads, and a run started while another is under
// way gets threads of its own instead of waiting for it.
#include "runtime/spmd/device_thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace gspmd {
namespace {

// The tasks of one run meet at a barrier: it only completes if all of them run at once.
TEST(DeviceThreadPoolTest, RunsEveryTaskAtTheSameTime) {
  DeviceThreadPool pool;
  for (size_t count : {2u, 8u, 3u}) {
    std::barrier meeting(static_cast<std::ptrdiff_t>(count));
    std::vector<int> ran(count, 0);
    pool.Run(count, [&](size_t i) {
      meeting.arrive_and_wait();
      ran[i] = 1;
    });
    EXPECT_EQ(ran, std::vector<int>(count, 1)) << count << " tasks";
  }
}

TEST(DeviceThreadPoolTest, LaterRunsReuseTheSameThreads) {
  DeviceThreadPool pool;
  std::mutex mutex;
  auto threads_of_a_run = [&](size_t count) {
    std::set<std::thread::id> ids;
    std::barrier meeting(static_cast<std::ptrdiff_t>(count));
    pool.Run(count, [&](size_t) {
      meeting.arrive_and_wait();  // all at once, so every task has a thread of its own
      std::lock_guard<std::mutex> lock(mutex);
      ids.insert(std::this_thread::get_id());
    });
    return ids;
  };
  const std::set<std::thread::id> first = threads_of_a_run(4);
  EXPECT_EQ(first.size(), 4u);
  EXPECT_EQ(threads_of_a_run(4), first);
  // A smaller run uses some of them; a larger one adds threads to them.
  for (std::thread::id id : threads_of_a_run(2)) EXPECT_TRUE(first.count(id));
  const std::set<std::thread::id> larger = threads_of_a_run(6);
  EXPECT_EQ(larger.size(), 6u);
  for (std::thread::id id : first) EXPECT_TRUE(larger.count(id));
}

// A task that runs devices itself (and a second caller thread) does not wait for the pool's
// current run, which is waiting for that task: it gets fresh threads.
TEST(DeviceThreadPoolTest, ARunDuringAnotherUsesThreadsOfItsOwn) {
  DeviceThreadPool pool;
  std::atomic<int> inner_tasks{0};
  pool.Run(2, [&](size_t i) {
    if (i != 0) return;
    std::barrier meeting(3);
    pool.Run(3, [&](size_t) {
      meeting.arrive_and_wait();
      ++inner_tasks;
    });
  });
  EXPECT_EQ(inner_tasks.load(), 3);
}

TEST(DeviceThreadPoolTest, TheSharedPoolIsOnePool) {
  EXPECT_EQ(&DeviceThreadPool::Shared(), &DeviceThreadPool::Shared());
  std::atomic<int> ran{0};
  DeviceThreadPool::Shared().Run(3, [&](size_t) { ++ran; });
  EXPECT_EQ(ran.load(), 3);
}

}  // namespace
}  // namespace gspmd
