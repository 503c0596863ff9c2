// Benchmark of MpiCommunicator against OpenMPI's own collectives called directly on the same
// buffers and the same communicator, in one binary. Run it under mpirun (8 ranks, 1 device per
// rank):
//   mpirun --oversubscribe --bind-to none -np 8 build/benchmarks/bench_mpi_collectives
// Sizes are bytes per rank of the larger buffer: all-reduce and all-to-all S in and S out,
// all-gather S out (S/8 in), reduce-scatter S in (S/8 out). "bandwidth" is S / time on the
// slowest rank. Each iteration times both, interleaved, so machine noise affects them alike;
// ratio = direct time / our time (the target is >= 0.9 at 1 MiB and above). Our calls add a
// rendezvous of the rank's devices and a 24-byte-per-rank agreement on what the collective is.
#include <benchmark/benchmark.h>

#include <chrono>
#include <vector>

#include "runtime/comm/mpi/mpi_communicator.h"
#include "runtime/comm/mpi/mpi_handles.h"
#include "runtime/comm/mpi/mpi_session.h"

namespace gspmd {

MpiSession* g_session = nullptr;
MpiCommunicator* g_communicator = nullptr;

enum class Which { kAllReduce, kAllGather, kReduceScatter, kAllToAll };

double SlowestRank(double seconds) {
  double slowest = 0;
  MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, g_session->handles().collectives);
  return slowest;
}

template <Which kWhich>
void BM_Collective(benchmark::State& state) {
  const int64_t bytes = state.range(0);
  const int n = g_session->size();
  const int64_t device = g_session->rank();
  MPI_Comm comm = g_session->handles().collectives;
  std::vector<int64_t> group;
  for (int64_t d = 0; d < n; ++d) group.push_back(d);
  const size_t floats = static_cast<size_t>(bytes) / sizeof(float);
  const size_t part = floats / static_cast<size_t>(n);
  std::vector<float> in(kWhich == Which::kAllGather ? part : floats, 1.0f);
  std::vector<float> out(kWhich == Which::kReduceScatter ? part : floats, 0.0f);
  auto as_bytes = [](std::vector<float>& v) { return std::span<uint8_t>(reinterpret_cast<uint8_t*>(v.data()), v.size() * 4); };
  std::span<const uint8_t> send = as_bytes(in);
  std::span<uint8_t> recv = as_bytes(out);
  std::vector<std::span<const uint8_t>> send_chunks;
  std::vector<std::span<uint8_t>> recv_chunks;
  for (int j = 0; j < n; ++j) {
    send_chunks.push_back(send.subspan(static_cast<size_t>(j) * part * 4, part * 4));
    recv_chunks.push_back(recv.subspan(static_cast<size_t>(j) * part * 4, part * 4));
  }
  auto ours = [&] {
    switch (kWhich) {
      case Which::kAllReduce: return g_communicator->AllReduce(device, group, ElementType::kF32, BinaryReducer::kAdd, send, recv);
      case Which::kAllGather: return g_communicator->AllGather(device, group, send, recv);
      case Which::kReduceScatter:
        return g_communicator->ReduceScatter(device, group, ElementType::kF32, BinaryReducer::kAdd, send, recv);
      case Which::kAllToAll: return g_communicator->AllToAll(device, group, send_chunks, recv_chunks);
    }
  };
  auto direct = [&] {
    const int count = static_cast<int>(part);
    switch (kWhich) {
      case Which::kAllReduce: MPI_Allreduce(in.data(), out.data(), static_cast<int>(floats), MPI_FLOAT, MPI_SUM, comm); return;
      case Which::kAllGather: MPI_Allgather(in.data(), count, MPI_FLOAT, out.data(), count, MPI_FLOAT, comm); return;
      case Which::kReduceScatter: MPI_Reduce_scatter_block(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM, comm); return;
      case Which::kAllToAll: MPI_Alltoall(in.data(), count, MPI_FLOAT, out.data(), count, MPI_FLOAT, comm); return;
    }
  };
  ours();  // warm up: sub-communicators, user operations, page faults
  direct();
  double ours_seconds = 0, direct_seconds = 0;
  for (auto _ : state) {
    MPI_Barrier(comm);
    auto start = std::chrono::steady_clock::now();
    direct();
    direct_seconds += SlowestRank(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    MPI_Barrier(comm);
    start = std::chrono::steady_clock::now();
    ours();
    const double seconds = SlowestRank(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    ours_seconds += seconds;
    state.SetIterationTime(seconds);
  }
  const double total = static_cast<double>(state.iterations()) * static_cast<double>(bytes);
  state.counters["ours_MBps"] = total / ours_seconds / 1e6;
  state.counters["direct_MBps"] = total / direct_seconds / 1e6;
  state.counters["ratio"] = direct_seconds / ours_seconds;
}

// Fixed iteration counts (every rank must run the same number of collectives), one
// registration per size since an iteration count applies to a whole registration.
void Register(const char* name, void (*function)(benchmark::State&)) {
  for (int64_t bytes = 4 << 10; bytes <= 64 << 20; bytes *= 4) {
    const int64_t iterations = std::max<int64_t>(10, std::min<int64_t>(400, (int64_t{512} << 20) / bytes));
    benchmark::RegisterBenchmark(name, function)
        ->Args({bytes})
        ->Iterations(iterations)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

class NullReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace gspmd

int main(int argc, char** argv) {
  gspmd::MpiSession session(gspmd::MpiSessionOptions{600});
  gspmd::MpiCommunicator communicator(session, 1);
  gspmd::g_session = &session;
  gspmd::g_communicator = &communicator;
  gspmd::Register("AllReduce", gspmd::BM_Collective<gspmd::Which::kAllReduce>);
  gspmd::Register("AllGather", gspmd::BM_Collective<gspmd::Which::kAllGather>);
  gspmd::Register("ReduceScatter", gspmd::BM_Collective<gspmd::Which::kReduceScatter>);
  gspmd::Register("AllToAll", gspmd::BM_Collective<gspmd::Which::kAllToAll>);
  benchmark::Initialize(&argc, argv);
  if (session.rank() == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    gspmd::NullReporter quiet;
    benchmark::RunSpecifiedBenchmarks(&quiet);
  }
  benchmark::Shutdown();
  return 0;
}
