// A test program run under mpirun by mpi_communicator_test.cpp: drives MpiCommunicator directly
// (what HLO programs cannot express: all-to-all with uneven chunk sizes, the sub-communicator
// cache, ranks issuing different collectives) and prints "rank R: ok" or what went wrong.
//   mpirun -np R gspmd_mpi_worker K [sizes]    (R x K devices, K threads per rank)
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/comm/mpi/mpi_communicator.h"
#include "runtime/comm/mpi/mpi_session.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

std::mutex g_mutex;
std::vector<std::string> g_failures;

void Fail(int64_t device, const std::string& what) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_failures.push_back("device " + std::to_string(device) + ": " + what);
}

// Device i sends device j (i + 2j + 1) bytes of value 16i + j.
uint8_t Byte(int64_t from, int64_t to) { return static_cast<uint8_t>(16 * from + to); }
size_t ChunkBytes(int64_t from, int64_t to) { return static_cast<size_t>(from + 2 * to + 1); }

void UnevenAllToAll(MpiCommunicator& comm, int64_t device, const std::vector<int64_t>& group) {
  std::vector<std::vector<uint8_t>> send, recv;
  std::vector<std::span<const uint8_t>> send_spans;
  std::vector<std::span<uint8_t>> recv_spans;
  for (int64_t member : group) {
    send.emplace_back(ChunkBytes(device, member), Byte(device, member));
    recv.emplace_back(ChunkBytes(member, device), 0);
  }
  for (size_t j = 0; j < group.size(); ++j) {
    send_spans.emplace_back(send[j]);
    recv_spans.emplace_back(recv[j]);
  }
  comm.AllToAll(device, group, send_spans, recv_spans);
  for (size_t j = 0; j < group.size(); ++j)
    for (uint8_t byte : recv[j])
      if (byte != Byte(group[j], device)) return Fail(device, "all-to-all chunk from device " + std::to_string(group[j]));
}

// The group of `device` among groups of `size` consecutive devices, in reverse order.
std::vector<int64_t> ReversedBlock(int64_t device, int64_t size) {
  std::vector<int64_t> group;
  const int64_t first = device / size * size;
  for (int64_t d = first + size - 1; d >= first; --d) group.push_back(d);
  return group;
}

// The group of `device` among the devices with the same parity.
std::vector<int64_t> SameParity(int64_t device, int64_t n) {
  std::vector<int64_t> group;
  for (int64_t d = device % 2; d < n; d += 2) group.push_back(d);
  return group;
}

void RunDevice(MpiCommunicator& comm, int64_t device, int rank, std::vector<int64_t>& created) {
  const int64_t n = comm.num_devices();
  std::vector<int64_t> everyone;
  for (int64_t d = 0; d < n; ++d) everyone.push_back(d);
  try {
    UnevenAllToAll(comm, device, everyone);
    UnevenAllToAll(comm, device, SameParity(device, n));
    UnevenAllToAll(comm, device, ReversedBlock(device, 2));
    // The same two group sets, many times: sub-communicators are created on first use only.
    for (int round = 0; round < 20; ++round) {
      std::vector<int64_t> value = {device, round};
      std::vector<int64_t> sum(2);
      const std::vector<int64_t> group = round % 2 ? SameParity(device, n) : ReversedBlock(device, 2);
      comm.AllReduce(device, group, ElementType::kS64, BinaryReducer::kAdd,
                     {reinterpret_cast<const uint8_t*>(value.data()), 16}, {reinterpret_cast<uint8_t*>(sum.data()), 16});
      int64_t expected = 0;
      for (int64_t member : group) expected += member;
      if (sum[0] != expected || sum[1] != round * static_cast<int64_t>(group.size())) Fail(device, "all-reduce sum");
      if (round == 1) created[static_cast<size_t>(device - comm.first_local_device())] = comm.subcommunicators_created();
    }
    if (comm.subcommunicators_created() != created[static_cast<size_t>(device - comm.first_local_device())])
      Fail(device, "a sub-communicator was created again for a group set seen before");
  } catch (const std::exception& error) {
    Fail(device, error.what());
  }
  // Rank 1's devices take the maximum, the others the sum: the ranks disagree, and the lowest
  // rank of the group says so. (Ranks disagreeing on sizes may instead block in MPI; the
  // watchdog reports those after --collective-timeout, see mpi_failure_test.cpp.)
  try {
    std::vector<uint8_t> send(16, 1), recv(send.size());
    comm.AllReduce(device, everyone, ElementType::kU8, rank == 1 ? BinaryReducer::kMaximum : BinaryReducer::kAdd,
                   send, recv);
    Fail(device, "an all-reduce whose ranks disagree on the reducer went through");
  } catch (const ErrorReportedByAnotherRank& other) {
    if (other.reporting_rank() != 0) Fail(device, "the mismatch is reported by rank " + std::to_string(other.reporting_rank()));
  } catch (const UserError& error) {
    const std::string text = error.what();
    if (rank != 0 || text.find("ranks disagree on the collective they issue next") == std::string::npos ||
        text.find("rank 1 issues collective #24 (all-reduce of 16 bytes of u8 (maximum)") == std::string::npos ||
        text.find("rank 0 issues collective #24 (all-reduce of 16 bytes of u8 (add)") == std::string::npos)
      Fail(device, "unexpected mismatch report: " + text);
    else if (device == 0)
      std::printf("rank 0 reports: %s\n", text.c_str());
  }
  comm.DeviceFinished(device);
}

}  // namespace
}  // namespace gspmd

// `gspmd_mpi_worker K sizes`: rank 1 all-reduces 8 bytes, the others 16, which blocks in MPI;
// the watchdog must end the job after its 2 s timeout, describing each rank's collective.
int DisagreeOnSizes(int64_t per_rank) {
  using namespace gspmd;
  MpiSession session(MpiSessionOptions{2});
  MpiCommunicator comm(session, per_rank);
  std::vector<int64_t> everyone;
  for (int64_t d = 0; d < comm.num_devices(); ++d) everyone.push_back(d);
  std::vector<std::thread> threads;
  for (int64_t i = 0; i < per_rank; ++i) {
    threads.emplace_back([&, device = comm.first_local_device() + i] {
      std::vector<uint8_t> send(session.rank() == 1 ? 8 : 16, 1), recv(send.size());
      comm.AllReduce(device, everyone, ElementType::kU8, BinaryReducer::kAdd, send, recv);
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::printf("rank %d: the disagreeing all-reduce returned\n", session.rank());
  return 1;
}

int main(int argc, char** argv) {
  using namespace gspmd;
  const int64_t per_rank = argc > 1 ? std::atoll(argv[1]) : 1;
  if (argc > 2 && std::string(argv[2]) == "sizes") return DisagreeOnSizes(per_rank);
  try {
    MpiSession session(MpiSessionOptions{30});
    {
      MpiCommunicator comm(session, per_rank);
      std::vector<int64_t> created(static_cast<size_t>(per_rank), 0);
      std::vector<std::thread> threads;
      for (int64_t i = 0; i < per_rank; ++i)
        threads.emplace_back(RunDevice, std::ref(comm), comm.first_local_device() + i, session.rank(), std::ref(created));
      for (std::thread& thread : threads) thread.join();
    }
    for (const std::string& failure : g_failures) std::printf("rank %d: FAIL %s\n", session.rank(), failure.c_str());
    if (g_failures.empty()) std::printf("rank %d: ok\n", session.rank());
    std::fflush(stdout);
    const MpiSession::AgreedFailure agreed = session.AgreeOnFailure("the checks", g_failures.empty() ? "" : "failed");
    return agreed.failed_rank >= 0 ? 1 : 0;
  } catch (const std::exception& error) {
    std::printf("error: %s\n", error.what());
    return 1;
  }
}
