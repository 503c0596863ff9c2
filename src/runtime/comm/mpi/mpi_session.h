// One process's part in an MPI job (`mpirun ... gspmd run --backend mpi`): MPI_Init and
// MPI_Finalize, rank and size, the watchdog, ending the job when this rank fails, and the few
// steps the runtime needs beside the program's collectives (agreeing that a phase succeeded,
// moving output pieces to rank 0). Nothing here includes mpi.h.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "runtime/comm/mpi/fault_injection.h"

namespace gspmd {

class MpiWatchdog;
namespace mpi_internal {
struct Handles;
}

// Whether this process was started by an MPI launcher (mpirun/orterun set
// OMPI_COMM_WORLD_SIZE; PMIx launchers set PMIX_RANK).
bool StartedByMpiLauncher();
// This process's rank as the launcher's environment says (-1 when not launched by one):
// known before MPI_Init, for messages about errors that happen before it.
int LauncherRank();

struct MpiSessionOptions {
  double collective_timeout_seconds = 300;
};

// At most one per process: MPI can be initialized once. Construction calls MPI_Init_thread
// (MPI_THREAD_MULTIPLE: device threads and the watchdog call MPI) and starts the watchdog;
// destruction waits for every rank at a final barrier, stops the watchdog and calls
// MPI_Finalize. Errors before that are UserErrors (e.g. not started by a launcher).
class MpiSession {
 public:
  explicit MpiSession(const MpiSessionOptions& options);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Ranks of this job on this machine (this one included).
  int local_ranks() const { return local_ranks_; }
  const std::optional<FaultInjection>& fault() const { return fault_; }

  // Ends the whole job because this rank failed: prints "gspmd: rank R: error: MESSAGE" and
  // calls MPI_Abort, which makes the launcher stop every rank (exit code non-zero). Never returns.
  [[noreturn]] void FailJob(const std::string& message);

  // Every rank calls it at the end of a phase with its error ("" for success). When any rank
  // failed, every rank gets the lowest failing rank and its error, so that all stop together
  // and only that rank reports (failed_rank is -1 when all succeeded).
  struct AgreedFailure {
    int failed_rank = -1;
    std::string message;
  };
  AgreedFailure AgreeOnFailure(const std::string& phase, const std::string& my_error);

  // Whether every rank passed the same value (e.g. a hash of the program it compiled).
  bool AllRanksAgree(uint64_t value, const std::string& what);

  // Waits (idle, watched) until every rank has called it.
  void Barrier(const std::string& what);

  // Blocking transfers of raw bytes between two ranks on a communicator of their own,
  // watched by the watchdog (`what` names the transfer in a timeout report).
  void Send(int to_rank, int tag, std::span<const uint8_t> data, const std::string& what);
  void Recv(int from_rank, int tag, std::span<uint8_t> data, const std::string& what);

  MpiWatchdog& watchdog() { return *watchdog_; }
  mpi_internal::Handles& handles() { return *handles_; }

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_ranks_ = 1;
  std::optional<FaultInjection> fault_;
  std::unique_ptr<mpi_internal::Handles> handles_;
  std::unique_ptr<MpiWatchdog> watchdog_;
};

}  // namespace gspmd
