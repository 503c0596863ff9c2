// DeviceThreadPool: device threads kept from run to run (see the header for why).
#include "runtime/spmd/device_thread_pool.h"

#include "support/diagnostic.h"

namespace gspmd {

DeviceThreadPool& DeviceThreadPool::Shared() {
  static DeviceThreadPool* pool = new DeviceThreadPool();  // never destroyed (see the header)
  return *pool;
}

DeviceThreadPool::~DeviceThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void DeviceThreadPool::Run(size_t count, const std::function<void(size_t)>& task) {
  if (count == 0) return;
  std::unique_lock<std::mutex> run_lock(run_mutex_, std::try_to_lock);
  if (!run_lock.owns_lock()) {
    // Busy: the same work on threads of its own.
    std::vector<std::thread> threads;
    threads.reserve(count);
    for (size_t i = 0; i < count; ++i) threads.emplace_back(task, i);
    for (std::thread& thread : threads) thread.join();
    return;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  while (threads_.size() < count) threads_.emplace_back(&DeviceThreadPool::Work, this, threads_.size());
  task_ = &task;
  count_ = count;
  running_ = count;
  ++generation_;
  work_ready_.notify_all();
  work_done_.wait(lock, [&] { return running_ == 0; });
  task_ = nullptr;
}

void DeviceThreadPool::Work(size_t index) {
  uint64_t seen = 0;
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
