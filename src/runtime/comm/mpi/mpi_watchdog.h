// The watchdog of one MPI rank: a thread that knows what the rank is waiting for, ends the job
// when a wait outlasts --collective-timeout (naming the wait and the ranks that did not
// arrive), and answers other ranks' status queries meanwhile. MPI itself cannot tell which
// peer is missing from a blocked collective, so the rank whose wait times out asks every
// rank's watchdog where it is.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace gspmd {

namespace mpi_internal {
struct Handles;
}

class MpiWatchdog {
 public:
  // A wait in a collective of the communicator has a step (0-based collective number); other
  // waits (agreement, output transfers, the end of the job) have step -1 and are told apart by
  // their description.
  MpiWatchdog(mpi_internal::Handles& handles, int rank, int size, double timeout_seconds);
  ~MpiWatchdog();
  MpiWatchdog(const MpiWatchdog&) = delete;
  MpiWatchdog& operator=(const MpiWatchdog&) = delete;

  // Stops the thread (cancelling its pending receive); idempotent. Call before MPI_Finalize.
  void Stop();

  // The rank starts waiting in `description` (e.g. "collective #5 (all-reduce of 64 bytes of
  // f32 over devices {0,1})"); `detail`, when set, is called at report time for what the wait
  // is missing locally (e.g. "devices 2 and 3 of this rank have not reached it"). Returns the
  // wait's id for EndWait. Several waits may be open at once (devices of the rank waiting for
  // their asynchronous permutes beside the rank's collective step): the oldest is the one
  // reported and timed.
  int64_t BeginWait(int64_t step, std::string description, std::function<std::string()> detail = {});
  // The wait ended; for a collective step the rank has now completed step + 1 collectives.
  void EndWait(int64_t wait);

  int64_t completed_collectives() const;
  double timeout_seconds() const { return timeout_seconds_; }

 private:
  struct Status;
  void Loop();
  void ServeQueries();
  void HandleTimeout();
  Status CurrentStatus() const;
  std::string Report(const Status& mine, const std::vector<Status>& statuses, const std::vector<bool>& answered) const;

  mpi_internal::Handles& handles_;
  const int rank_;
  const int size_;
  const double timeout_seconds_;

  struct Wait {
    int64_t step = -1;
    std::string description;
    std::function<std::string()> detail;
    std::chrono::steady_clock::time_point since;
  };

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_ = false;
  int64_t completed_ = 0;
  std::map<int64_t, Wait> waits_;  // open waits by serial; the first is the oldest
  int64_t wait_serial_ = 0;        // counts waits, so a timeout is reported once per wait

  // Owned by the watchdog thread.
  struct Serving;
  Serving* serving_ = nullptr;
  std::thread thread_;
};

}  // namespace gspmd
