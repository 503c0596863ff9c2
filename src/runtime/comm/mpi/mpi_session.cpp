// MpiSession: MPI start-up and shut-down, job-wide failure, agreement and transfers.
#include "runtime/comm/mpi/mpi_session.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "runtime/comm/mpi/mpi_handles.h"
#include "runtime/comm/mpi/mpi_watchdog.h"

namespace gspmd {
namespace mpi_internal {

std::string MpiErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(length));
}

void AbortJob(int rank, const std::string& message) {
  const bool located = message.find(": error: ") != std::string::npos;
  std::fflush(stdout);
  std::fprintf(stderr, "gspmd: rank %d: %s%s\n", rank, located ? "" : "error: ", message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  ::_exit(1);
}

void WaitIdle(MPI_Request& request, const char* what) {
  using namespace std::chrono_literals;
  auto pause = 20us;
  for (int tests = 0;; ++tests) {
    int done = 0;
    CheckMpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
    if (done) return;
    if (tests < 64) continue;  // a short spin first: most waits end within microseconds
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, 2000us);
  }
}

}  // namespace mpi_internal

namespace {

using mpi_internal::CheckMpi;
using mpi_internal::Handles;

const char* FirstEnvironment(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return value;
  }
  return nullptr;
}

bool g_session_created = false;

// RAII for a watched wait.
class WatchedWait {
 public:
  WatchedWait(MpiWatchdog& watchdog, std::string what)
      : watchdog_(watchdog), wait_(watchdog_.BeginWait(-1, std::move(what))) {}
  ~WatchedWait() { watchdog_.EndWait(wait_); }

 private:
  MpiWatchdog& watchdog_;
  int64_t wait_;
};

}  // namespace

bool StartedByMpiLauncher() {
  return FirstEnvironment({"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"}) != nullptr;
}

int LauncherRank() {
  const char* value = FirstEnvironment({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"});
  return value == nullptr ? -1 : std::atoi(value);
}

MpiSession::MpiSession(const MpiSessionOptions& options) {
  if (!StartedByMpiLauncher())
    GSPMD_USER_ERROR("--backend mpi: this process was not started by an MPI launcher (no OMPI_COMM_WORLD_SIZE or "
                     "PMIX_RANK in the environment); start it as `mpirun -np R gspmd run FILE --backend mpi ...`, "
                     "or leave out --backend mpi to run every device as a thread of this process");
  GSPMD_CHECK(!g_session_created, "MPI can be initialized once per process");
  g_session_created = true;
  fault_ = FaultInjectionFromEnvironment();
  // Waiting ranks yield the core instead of spinning (OpenMPI turns this on by itself only
  // when it knows the node is oversubscribed); `--mca mpi_yield_when_idle 0` overrides it.
  ::setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
    GSPMD_USER_ERROR("--backend mpi: MPI_Init_thread failed");
  if (provided < MPI_THREAD_MULTIPLE) {
    MPI_Finalize();
    GSPMD_USER_ERROR("--backend mpi: the MPI library does not support MPI_THREAD_MULTIPLE (devices of a rank and "
                     "the watchdog call MPI from several threads); use an OpenMPI built with thread support");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  handles_ = std::make_unique<Handles>();
  CheckMpi(MPI_Comm_dup(MPI_COMM_WORLD, &handles_->collectives), "MPI_Comm_dup");
  CheckMpi(MPI_Comm_dup(MPI_COMM_WORLD, &handles_->transfers), "MPI_Comm_dup");
  CheckMpi(MPI_Comm_dup(MPI_COMM_WORLD, &handles_->watchdog), "MPI_Comm_dup");
  CheckMpi(MPI_Comm_dup(MPI_COMM_WORLD, &handles_->permutes), "MPI_Comm_dup");
  MPI_Comm node = MPI_COMM_NULL;
  CheckMpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
           "MPI_Comm_split_type");
  MPI_Comm_size(node, &local_ranks_);
  MPI_Comm_free(&node);
  watchdog_ = std::make_unique<MpiWatchdog>(*handles_, rank_, size_, options.collective_timeout_seconds);
}

MpiSession::~MpiSession() {
  try {
    Barrier("the barrier at the end of the job");
  } catch (const std::exception& error) {
    FailJob(error.what());
  }
  watchdog_->Stop();
  for (MPI_Comm* comm : {&handles_->collectives, &handles_->transfers, &handles_->watchdog, &handles_->permutes})
    if (*comm != MPI_COMM_NULL) MPI_Comm_free(comm);
  MPI_Finalize();
}

void MpiSession::FailJob(const std::string& message) { mpi_internal::AbortJob(rank_, message); }

MpiSession::AgreedFailure MpiSession::AgreeOnFailure(const std::string& phase, const std::string& my_error) {
  WatchedWait wait(*watchdog_, "the agreement after " + phase);
  int mine = my_error.empty() ? size_ : rank_;
  int lowest = size_;
  MPI_Request request;
  CheckMpi(MPI_Iallreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, handles_->transfers, &request), "MPI_Iallreduce");
  mpi_internal::WaitIdle(request, "the agreement on failures");
  if (lowest == size_) return {};
  int64_t length = rank_ == lowest ? static_cast<int64_t>(my_error.size()) : 0;
  CheckMpi(MPI_Ibcast(&length, 1, MPI_INT64_T, lowest, handles_->transfers, &request), "MPI_Ibcast");
  mpi_internal::WaitIdle(request, "the agreement on failures");
  std::string text = rank_ == lowest ? my_error : std::string(static_cast<size_t>(length), '\0');
  CheckMpi(MPI_Ibcast(text.data(), static_cast<int>(length), MPI_CHAR, lowest, handles_->transfers, &request),
           "MPI_Ibcast");
  mpi_internal::WaitIdle(request, "the agreement on failures");
  return {lowest, text};
}

bool MpiSession::AllRanksAgree(uint64_t value, const std::string& what) {
  WatchedWait wait(*watchdog_, what);
  uint64_t values[2] = {value, ~value};
  uint64_t maxima[2] = {0, 0};
  MPI_Request request;
  CheckMpi(MPI_Iallreduce(values, maxima, 2, MPI_UINT64_T, MPI_MAX, handles_->transfers, &request), "MPI_Iallreduce");
  mpi_internal::WaitIdle(request, "MPI_Iallreduce");
  return maxima[0] == value && maxima[1] == ~value;
}

void MpiSession::Barrier(const std::string& what) {
  WatchedWait wait(*watchdog_, what);
  MPI_Request request;
  CheckMpi(MPI_Ibarrier(handles_->transfers, &request), "MPI_Ibarrier");
  mpi_internal::WaitIdle(request, "MPI_Ibarrier");
}

void MpiSession::Send(int to_rank, int tag, std::span<const uint8_t> data, const std::string& what) {
  WatchedWait wait(*watchdog_, what);
  size_t offset = 0;
  do {  // in pieces of at most 1 GiB (MPI counts are int)
    const size_t piece = std::min<size_t>(data.size() - offset, size_t{1} << 30);
    MPI_Request request;
    CheckMpi(MPI_Isend(data.data() + offset, static_cast<int>(piece), MPI_BYTE, to_rank, tag, handles_->transfers,
                       &request),
             "MPI_Isend");
    mpi_internal::WaitIdle(request, "MPI_Isend");
    offset += piece;
  } while (offset < data.size());
}

void MpiSession::Recv(int from_rank, int tag, std::span<uint8_t> data, const std::string& what) {
  WatchedWait wait(*watchdog_, what);
  size_t offset = 0;
  do {
    const size_t piece = std::min<size_t>(data.size() - offset, size_t{1} << 30);
    MPI_Request request;
    CheckMpi(MPI_Irecv(data.data() + offset, static_cast<int>(piece), MPI_BYTE, from_rank, tag,
                       handles_->transfers, &request),
             "MPI_Irecv");
    mpi_internal::WaitIdle(request, "MPI_Irecv");
    offset += piece;
  } while (offset < data.size());
}

}  // namespace gspmd
