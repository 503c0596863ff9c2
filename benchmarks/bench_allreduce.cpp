// Benchmark of LocalCommunicator's all-reduce against a memcpy baseline of the same bytes.
//
// What "bandwidth" means here: with n simulated devices each holding a buffer of B bytes, one
// all-reduce processes n*B bytes (every device's buffer: each must be read and every device's
// result written). Bandwidth = n*B / wall time. The memcpy baseline copies the same n*B bytes
// with the same n device threads (thread d copies its own B-byte input into its own output
// buffer), so both move at least n*B bytes in and n*B bytes out of memory; the all-reduce
// additionally does the arithmetic. "ratio" = all-reduce bandwidth / memcpy bandwidth (the
// target is >= 0.5 for 64 MiB per device on 8 devices). BM_AllReduceVsMemcpy times both in
// the same iteration so that machine noise affects them alike.
#include <benchmark/benchmark.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "runtime/comm/local_communicator.h"

namespace gspmd {
namespace {

// n persistent threads that run one task per device on request (so thread start-up is not
// measured).
class DeviceThreads {
 public:
  explicit DeviceThreads(int64_t n) : n_(n) {
    for (int64_t d = 0; d < n; ++d) threads_.emplace_back([this, d] { Loop(d); });
  }
  ~DeviceThreads() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      ++generation_;
    }
    start_.notify_all();
    for (std::thread& thread : threads_) thread.join();
  }

  // Runs task(d) on every device thread and waits for all of them.
  void Run(const std::function<void(int64_t)>& task) {
    std::unique_lock<std::mutex> lock(mutex_);
    task_ = &task;
    remaining_ = n_;
    ++generation_;
    start_.notify_all();
    done_.wait(lock, [&] { return remaining_ == 0; });
  }

 private:
  void Loop(int64_t d) {
    int64_t seen = 0;
    while (true) {
      const std::function<void(int64_t)>* task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        start_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (stop_) return;
        task = task_;
      }
      (*task)(d);
      std::lock_guard<std::mutex> lock(mutex_);
      if (--remaining_ == 0) done_.notify_one();
    }
  }

  const int64_t n_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  const std::function<void(int64_t)>* task_ = nullptr;
  int64_t generation_ = 0;
  int64_t remaining_ = 0;
  bool stop_ = false;
};

// Per-device input and output buffers of `bytes` each, touched so pages are mapped.
struct Buffers {
  Buffers(int64_t n, int64_t bytes) : inputs(n), outputs(n) {
    for (int64_t d = 0; d < n; ++d) {
      inputs[d].resize(static_cast<size_t>(bytes) / sizeof(float));
      outputs[d].resize(inputs[d].size());
      for (size_t i = 0; i < inputs[d].size(); ++i) inputs[d][i] = static_cast<float>((i + d) % 97);
    }
  }
  std::span<const uint8_t> In(int64_t d) const {
    return {reinterpret_cast<const uint8_t*>(inputs[d].data()), inputs[d].size() * sizeof(float)};
  }
  std::span<uint8_t> Out(int64_t d) {
    return {reinterpret_cast<uint8_t*>(outputs[d].data()), outputs[d].size() * sizeof(float)};
  }
  std::vector<std::vector<float>> inputs, outputs;
};

std::vector<int64_t> AllDevices(int64_t n) {
  std::vector<int64_t> group(static_cast<size_t>(n));
  for (int64_t d = 0; d < n; ++d) group[static_cast<size_t>(d)] = d;
  return group;
}

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Args: MiB per device, number of devices.
void BM_MemcpyBaseline(benchmark::State& state) {
  const int64_t bytes = state.range(0) << 20, n = state.range(1);
  Buffers buffers(n, bytes);
  DeviceThreads threads(n);
  const std::function<void(int64_t)> copy = [&](int64_t d) {
    std::memcpy(buffers.Out(d).data(), buffers.In(d).data(), static_cast<size_t>(bytes));
  };
  threads.Run(copy);  // warm up
  for (auto _ : state) threads.Run(copy);
  state.SetBytesProcessed(state.iterations() * n * bytes);
}

void BM_AllReduce(benchmark::State& state) {
  const int64_t bytes = state.range(0) << 20, n = state.range(1);
  Buffers buffers(n, bytes);
  DeviceThreads threads(n);
  LocalCommunicator communicator(n);
  const std::vector<int64_t> group = AllDevices(n);
  const std::function<void(int64_t)> reduce = [&](int64_t d) {
    communicator.AllReduce(d, group, ElementType::kF32, BinaryReducer::kAdd, buffers.In(d), buffers.Out(d));
  };
  threads.Run(reduce);
  for (auto _ : state) threads.Run(reduce);
  state.SetBytesProcessed(state.iterations() * n * bytes);
}

// Both in each iteration; reports each one's bandwidth and their ratio.
void BM_AllReduceVsMemcpy(benchmark::State& state) {
  const int64_t bytes = state.range(0) << 20, n = state.range(1);
  Buffers buffers(n, bytes);
  DeviceThreads threads(n);
  LocalCommunicator communicator(n);
  const std::vector<int64_t> group = AllDevices(n);
  const std::function<void(int64_t)> copy = [&](int64_t d) {
    std::memcpy(buffers.Out(d).data(), buffers.In(d).data(), static_cast<size_t>(bytes));
  };
  const std::function<void(int64_t)> reduce = [&](int64_t d) {
    communicator.AllReduce(d, group, ElementType::kF32, BinaryReducer::kAdd, buffers.In(d), buffers.Out(d));
  };
  threads.Run(copy);
  threads.Run(reduce);
  double memcpy_seconds = 0, reduce_seconds = 0;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    threads.Run(copy);
    memcpy_seconds += Seconds(start);
    start = std::chrono::steady_clock::now();
    threads.Run(reduce);
    const double seconds = Seconds(start);
    reduce_seconds += seconds;
    state.SetIterationTime(seconds);
  }
  const double total_bytes = static_cast<double>(state.iterations()) * static_cast<double>(n * bytes);
  state.counters["memcpy_GBps"] = total_bytes / memcpy_seconds / 1e9;
  state.counters["allreduce_GBps"] = total_bytes / reduce_seconds / 1e9;
  state.counters["ratio"] = memcpy_seconds / reduce_seconds;
}

BENCHMARK(BM_MemcpyBaseline)->Args({64, 8})->Args({1, 8})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AllReduce)->Args({64, 8})->Args({1, 8})->Args({64, 2})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AllReduceVsMemcpy)->Args({64, 8})->Unit(benchmark::kMillisecond)->UseManualTime();

}  // namespace
}  // namespace gspmd

BENCHMARK_MAIN();
