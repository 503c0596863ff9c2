// DeviceThreadPool: device threads kept from run to run (see the header for why).
#include "runtime/spmd/device_thread_pool.h"

#include <cstdlib>
#include <system_error>

#include "support/diagnostic.h"

namespace gspmd {

DeviceThreadPool& DeviceThreadPool::Shared() {
  static DeviceThreadPool* pool = [] {
    auto* made = new DeviceThreadPool();  // never destroyed (see the header)
    std::atexit([] { Shared().EndIdleThreads(); });
    return made;
  }();
  return *pool;
}

DeviceThreadPool::~DeviceThreadPool() { EndIdleThreads(); }

void DeviceThreadPool::EndIdleThreads() {
  // A run under way (a device thread ending the process, or another thread running devices):
  // its threads are left to end with the process.
  std::unique_lock<std::mutex> run_lock(run_mutex_, std::try_to_lock);
  if (!run_lock.owns_lock()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& thread : threads_) thread.join();
  std::lock_guard<std::mutex> lock(mutex_);
  threads_.clear();
  stopping_ = false;  // a later run starts threads afresh
}

namespace {

// A thread that could not be started (no memory for its stack, or the process's thread limit
// reached) is a UserError: the devices of a run cannot share threads.
[[noreturn]] void FailToStart(size_t index, size_t count, const std::system_error& error) {
  throw UserError(StrCat("cannot start the thread of device ", index, " of ", count, ": ", error.what(),
                         " (out of memory for its stack, or the process's thread limit; every simulated "
                         "device needs a thread of its own)"),
                  UserErrorKind::kResource);
}

// The busy pool's fallback: fresh threads that start the task only once all of them exist, so
// that a thread that cannot be started leaves no device waiting in a collective for it.
void RunOnFreshThreads(size_t count, const std::function<void(size_t)>& task) {
  std::mutex mutex;
  std::condition_variable started;
  bool go = false, cancelled = false;
  std::vector<std::thread> threads;
  threads.reserve(count);
  auto release = [&](bool cancel) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      go = true;
      cancelled = cancel;
    }
    started.notify_all();
  };
  for (size_t i = 0; i < count; ++i) {
    try {
      threads.emplace_back([&, i] {
        {
          std::unique_lock<std::mutex> lock(mutex);
          started.wait(lock, [&] { return go; });
          if (cancelled) return;
        }
        task(i);
      });
    } catch (const std::system_error& error) {
      release(/*cancel=*/true);
      for (std::thread& thread : threads) thread.join();
      FailToStart(i, count, error);
    }
  }
  release(/*cancel=*/false);
  for (std::thread& thread : threads) thread.join();
}

}  // namespace

void DeviceThreadPool::Run(size_t count, const std::function<void(size_t)>& task) {
  if (count == 0) return;
  std::unique_lock<std::mutex> run_lock(run_mutex_, std::try_to_lock);
  if (!run_lock.owns_lock()) {
    // Busy: the same work on threads of its own.
    RunOnFreshThreads(count, task);
    return;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  // Every thread exists before any task starts; a thread that cannot be started ends the run
  // before it begins (those started wait, idle, for the next).
  while (threads_.size() < count) {
    try {
      threads_.emplace_back(&DeviceThreadPool::Work, this, threads_.size(), generation_);
    } catch (const std::system_error& error) {
      FailToStart(threads_.size(), count, error);
    }
  }
  task_ = &task;
  count_ = count;
  running_ = count;
  ++generation_;
  work_ready_.notify_all();
  work_done_.wait(lock, [&] { return running_ == 0; });
  task_ = nullptr;
}

void DeviceThreadPool::Work(size_t index, uint64_t seen) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    work_ready_.wait(lock, [&] { return generation_ != seen || stopping_; });
    if (stopping_) return;
    seen = generation_;
    if (index >= count_) continue;  // not needed this run
    const std::function<void(size_t)>* task = task_;
    GSPMD_CHECK(task != nullptr, "a device thread woke for a run without a task");
    lock.unlock();
    (*task)(index);
    lock.lock();
    if (--running_ == 0) work_done_.notify_all();
  }
}

}  // namespace gspmd
