// Benchmark of one transformer training step (the builder's, d_model 512: compute dominates)
// in three layouts, side by side in each iteration: 8 MPI ranks x 1 device (this binary under
// mpirun), 1 rank x 8 devices as threads (the threads backend, on rank 0 while the others
// wait idle), and one device with the interpreter on the unpartitioned program (rank 0).
//   mpirun --oversubscribe --bind-to none -np 8 build/benchmarks/bench_mpi_train
// Counters: each layout's step time, and its ratio to the single device (target <= 1.25).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "models/model_registry.h"
#include "partitioner/partitioner.h"
#include "propagation/propagation.h"
#include "runtime/comm/mpi/mpi_communicator.h"
#include "runtime/comm/mpi/mpi_handles.h"
#include "runtime/comm/mpi/mpi_session.h"
#include "runtime/interp/evaluator.h"
#include "runtime/interp/kernel_dnnl.h"
#include "runtime/spmd/device_runner.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"
#include "runtime/spmd/spmd_plan.h"

namespace gspmd {

MpiSession* g_session = nullptr;

ModelOptions StepOptions() {
  ModelOptions options;
  options.layers = 2;
  options.batch = 8;
  options.seq = 64;
  options.d_model = 512;
  options.heads = 8;
  options.head_dim = 64;
  options.d_ff = 2048;
  options.data_parallel = 2;
  options.model_parallel = 4;
  options.train = true;
  return options;
}

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void BM_TrainStepLayouts(benchmark::State& state) {
  MpiSession& session = *g_session;
  const bool leader = session.rank() == 0;
  MPI_Comm comm = session.handles().collectives;
  // The same program, inputs and partitioning on every rank (all deterministic).
  std::unique_ptr<Module> global = BuildModel("transformer_train", StepOptions());
  std::unique_ptr<Module> reference = BuildModel("transformer_train", StepOptions());
  const std::vector<Literal> inputs = RandomInputs(*global);
  PropagationOptions propagation;
  propagation.num_partitions = 8;
  PropagateShardings(*global, propagation);
  PartitionOptions partition;
  partition.num_partitions = 8;
  const PartitionResult partitioned = PartitionModule(*global, partition);
  const Module& per_device = *partitioned.module;
  std::vector<std::unique_ptr<ArraySource>> sources;
  std::vector<GlobalArgument> arguments;
  for (const Literal& input : inputs) {
    sources.push_back(MakeLiteralSource(input));
    arguments.push_back(GlobalArgument{input.shape(), {sources.back().get()}});
  }
  SpmdRunOptions options = OptionsFromLikeModule(per_device, global.get());
  options.num_devices = 8;
  const SpmdPlan plan = PlanSpmdRun(per_device, arguments, options);
  MpiCommunicator communicator(session, 8 / session.size());
  std::vector<int64_t> devices;
  for (int64_t d = 0; d < communicator.devices_per_rank(); ++d) devices.push_back(communicator.first_local_device() + d);
  const std::vector<std::vector<Literal>> device_arguments = [&] {
    std::vector<std::vector<Literal>> values;
    for (int64_t d : devices) values.push_back(ReadDeviceArguments(plan, arguments, d));
    return values;
  }();
  DeviceRunHooks hooks;
  hooks.arguments = [&](int64_t d) { return device_arguments[static_cast<size_t>(d - devices.front())]; };

  // Rank 0's baselines use every core; under MPI each rank gets its share (what gspmd run
  // --backend mpi does).
  const int share = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / session.local_ranks());
  auto mpi_step = [&] {
    kernel::SetKernelThreadLimit(share);
    MPI_Barrier(comm);
    const auto start = std::chrono::steady_clock::now();
    RunDevicesOnThreads(per_device, plan, communicator, devices, hooks);
    double seconds = Since(start), slowest = 0;
    MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    return slowest;
  };
  // Rank 0 alone; the other ranks wait idle (MpiSession::Barrier sleeps between tests).
  auto leader_only = [&](auto&& step) {
    double seconds = 0;
    kernel::SetKernelThreadLimit(0);
    if (leader) {
      const auto start = std::chrono::steady_clock::now();
      step();
      seconds = Since(start);
    }
    session.Barrier("the benchmark's barrier");
    return seconds;
  };
  auto threads_step = [&] { RunSpmdOnThreads(per_device, plan, arguments); };
  auto single_step = [&] {
    Evaluator evaluator(*reference);
    benchmark::DoNotOptimize(evaluator.Run(inputs));
  };
  mpi_step();  // warm up (page faults, oneDNN kernels)
  leader_only(threads_step);
  leader_only(single_step);
  double mpi = 0, threads = 0, single = 0;
  for (auto _ : state) {
    const double seconds = mpi_step();
    mpi += seconds;
    threads += leader_only(threads_step);
    single += leader_only(single_step);
    state.SetIterationTime(seconds);
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["ranks_8x1_ms"] = mpi / n * 1e3;
  state.counters["threads_1x8_ms"] = threads / n * 1e3;
  state.counters["single_ms"] = single / n * 1e3;
  state.counters["ratio_8x1"] = mpi / single;
  state.counters["ratio_1x8"] = threads / single;
}

BENCHMARK(BM_TrainStepLayouts)->Iterations(5)->UseManualTime()->Unit(benchmark::kMillisecond);

class NullReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace gspmd

int main(int argc, char** argv) {
  gspmd::MpiSession session(gspmd::MpiSessionOptions{600});
  gspmd::g_session = &session;
  benchmark::Initialize(&argc, argv);
  gspmd::NullReporter quiet;
  if (session.rank() == 0) benchmark::RunSpecifiedBenchmarks();
  else benchmark::RunSpecifiedBenchmarks(&quiet);
  benchmark::Shutdown();
  return 0;
}
