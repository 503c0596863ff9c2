// Internal to src/runtime/comm/mpi: the asynchronous collective-permutes of one rank's devices
// (collective-permute-start / -done), point to point on a communicator of their own.
//
// A start posts, for each pair the device is in, MPI_Isend (to each target) or MPI_Irecv (from
// its source) of a small header and then of the data, and returns. The done waits for them
// (MPI_Testall, backing off like the rank's other idle waits, and watched by the watchdog: a
// peer that never sends ends the job after --collective-timeout with a report naming its rank;
// a peer that dies ends it at once through the launcher). Before it takes the data it checks
// the header: the peer's permute must be the same one (position, pairs, size), else a
// UserError says how they differ. Messages are told apart by tag: (the device's count of
// permute starts, modulo what MPI's tag bound leaves) x devices + target device, so that
// several permutes may be in flight and the devices of a rank may post theirs in any order.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "ir/attributes.h"
#include "ir/literal.h"

namespace gspmd {

class MpiSession;

namespace mpi_internal {

class AsyncPermutes {
 public:
  AsyncPermutes(MpiSession& session, int64_t devices_per_rank);
  ~AsyncPermutes();

  // `sequence` is the device's collective number the start takes (the handle it returns).
  int64_t Start(int64_t device, int64_t sequence, std::span<const SourceTargetPair> pairs, Literal send);
  Literal Finish(int64_t device, int64_t handle, bool* received);
  // Every waiting and later call throws CommunicatorAborted.
  void Abort() { aborted_ = true; }

  struct InFlight;

 private:
  int RankOf(int64_t device) const { return static_cast<int>(device / per_rank_); }
  int Tag(int64_t sequence, int64_t target) const;
  void Wait(InFlight& permute);

  MpiSession& session_;
  const int64_t per_rank_;
  int64_t num_devices_ = 0;
  int64_t tag_window_ = 1;  // sequences told apart by tag
  std::atomic<bool> aborted_{false};
  std::mutex mutex_;
  std::map<std::pair<int64_t, int64_t>, std::unique_ptr<InFlight>> in_flight_;  // by (device, handle)
  // Permutes whose done failed: MPI may still touch their buffers, so they live until the end.
  std::vector<std::unique_ptr<InFlight>> abandoned_;
};

}  // namespace mpi_internal
}  // namespace gspmd
