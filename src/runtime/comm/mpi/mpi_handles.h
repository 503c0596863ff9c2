// Internal to src/runtime/comm/mpi: the MPI handles a session owns and the error check every
// MPI call goes through. The only header that includes mpi.h; nothing outside this folder
// includes it, so the rest of gspmd compiles without MPI.
#pragma once

// The C API only: OpenMPI's deprecated C++ bindings would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <string>

#include "support/diagnostic.h"

namespace gspmd::mpi_internal {

struct Handles {
  MPI_Comm collectives = MPI_COMM_NULL;  // duplicate of MPI_COMM_WORLD for the communicator
  MPI_Comm transfers = MPI_COMM_NULL;    // duplicate for output assembly and agreement
  MPI_Comm watchdog = MPI_COMM_NULL;     // duplicate for the watchdog's status queries
  MPI_Comm permutes = MPI_COMM_NULL;     // duplicate for asynchronous collective-permutes
};

// An MPI call that returned an error (MPI_ERRORS_RETURN is set on every communicator): a
// peer died, a connection was lost, or the library failed. Ends the job like a user error.
class MpiFailure : public UserError {
 public:
  using UserError::UserError;
};

std::string MpiErrorText(int code);

// Throws MpiFailure("WHAT failed: <MPI's error text>") unless code is MPI_SUCCESS.
inline void CheckMpi(int code, const char* what) {
  if (code != MPI_SUCCESS) throw MpiFailure(std::string(what) + " failed: " + MpiErrorText(code) +
                                            " (a rank died or a connection was lost?)");
}

}  // namespace gspmd::mpi_internal

namespace gspmd::mpi_internal {

// Prints "gspmd: rank R: error: MESSAGE" on stderr and ends every rank of the job
// (MPI_Abort on MPI_COMM_WORLD, exit code 1). Safe from any thread.
[[noreturn]] void AbortJob(int rank, const std::string& message);

// Waits for `request` without spinning: tests it, sleeping between tests with a backoff from
// 20 us to 2 ms, so that a waiting rank leaves the cores to ranks that compute.
void WaitIdle(MPI_Request& request, const char* what);

}  // namespace gspmd::mpi_internal
