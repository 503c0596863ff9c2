// DeviceThreadPool: long-lived threads for simulated devices, reused from one run to the next.
//
// Each simulated device runs on a thread of its own for a whole program, blocking in
// collectives until its group arrives, so the devices of a run need as many threads at once.
// Starting fresh threads for every run (every training step) throws away what a thread keeps:
// its allocator heap (new threads fault in fresh pages for every activation) and its oneDNN
// stream and scratchpad. The pool keeps the threads, and so all of that, across runs:
//   DeviceThreadPool::Shared().Run(8, [&](size_t device) { ... });  // 8 threads at once
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gspmd {

class DeviceThreadPool {
 public:
  // The process's pool. It is never destroyed; at a normal exit its idle threads are joined (so
  // that what they keep per thread, a oneDNN stream and scratchpad, the matmul memories, is
  // freed as the threads end and not left to leak checkers); a run under way at exit (a worker
  // ending the job, e.g. an MPI rank's fatal error) is left to end with the process.
  static DeviceThreadPool& Shared();

  // Joins the idle threads (none while a run is under way); a later run starts new ones.
  void EndIdleThreads();

  // Runs task(0) .. task(count - 1) at the same time, each on its own thread, and returns when
  // all have returned. `task` must not throw. A Run while another is under way (another caller
  // thread, or a task that runs devices itself) uses fresh threads instead of waiting. When a
  // thread cannot be started (no memory for its stack), no task runs and Run throws a UserError.
  void Run(size_t count, const std::function<void(size_t)>& task);

  DeviceThreadPool() = default;
  ~DeviceThreadPool();  // EndIdleThreads (a pool is destroyed only between runs)
  DeviceThreadPool(const DeviceThreadPool&) = delete;
  DeviceThreadPool& operator=(const DeviceThreadPool&) = delete;

 private:
  // A worker's loop; `seen` is the run under way when it was started (it waits for the next).
  void Work(size_t index, uint64_t seen);

  std::mutex run_mutex_;  // held for a whole Run: one at a time on the pool's threads
  std::mutex mutex_;      // guards what follows
  std::condition_variable work_ready_, work_done_;
  std::vector<std::thread> threads_;
  const std::function<void(size_t)>* task_ = nullptr;
  size_t count_ = 0;        // threads 0 .. count_ - 1 take part in the current run
  uint64_t generation_ = 0;  // one per run
  size_t running_ = 0;      // tasks of the current run not finished yet
  bool stopping_ = false;
};

}  // namespace gspmd
