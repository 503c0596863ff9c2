// AsyncPermutes: MPI_Isend / MPI_Irecv at collective-permute-start, MPI_Testall at -done.
#include "runtime/comm/mpi/mpi_async_permutes.h"

#include <chrono>
#include <climits>
#include <thread>

#include "runtime/comm/communicator.h"
#include "runtime/comm/mpi/mpi_session.h"
#include "runtime/comm/mpi/mpi_step.h"
#include "runtime/comm/mpi/mpi_watchdog.h"

namespace gspmd::mpi_internal {
namespace {

// What travels ahead of the data: which permute the sender is in, so that the receiver can
// tell a program mismatch from a transfer.
struct Header {
  int64_t sequence = -1;
  int64_t source = -1;
  int64_t bytes = -1;
  uint64_t pairs_hash = 0;
};

uint64_t HashPairs(std::span<const SourceTargetPair> pairs) {
  uint64_t hash = 14695981039346656037ull;  // FNV-1a
  auto add = [&](int64_t value) {
    for (int i = 0; i < 8; ++i) hash = (hash ^ ((static_cast<uint64_t>(value) >> (8 * i)) & 0xff)) * 1099511628211ull;
  };
  add(static_cast<int64_t>(pairs.size()));
  for (const SourceTargetPair& pair : pairs) {
    add(pair.source);
    add(pair.target);
  }
  return hash;
}

}  // namespace

struct AsyncPermutes::InFlight {
  int64_t device = 0;
  int64_t sequence = 0;
  int64_t source = -1;  // the pair targeting this device
  std::vector<int64_t> targets;
  Shape shape;
  int64_t bytes = 0;
  Literal send, recv;
  Header sent, arrived;
  // [0] the header from the source and [1] its data (when there is a source), then the sends.
  std::vector<MPI_Request> requests;
  bool header_checked = false;
};

AsyncPermutes::AsyncPermutes(MpiSession& session, int64_t devices_per_rank)
    : session_(session), per_rank_(devices_per_rank) {
  num_devices_ = per_rank_ * session.size();
  void* value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(session.handles().permutes, MPI_TAG_UB, &value, &found);
  const int64_t tag_ub = found && value != nullptr ? *static_cast<int*>(value) : 32767;
  tag_window_ = std::max<int64_t>(1, (tag_ub + 1) / std::max<int64_t>(1, num_devices_));
}

AsyncPermutes::~AsyncPermutes() = default;

int AsyncPermutes::Tag(int64_t sequence, int64_t target) const {
  return static_cast<int>((sequence % tag_window_) * num_devices_ + target);
}

int64_t AsyncPermutes::Start(int64_t device, int64_t sequence, std::span<const SourceTargetPair> pairs,
                             Literal send) {
  if (aborted_) throw CommunicatorAborted();
  auto permute = std::make_unique<InFlight>();
  permute->device = device;
  permute->sequence = sequence;
  permute->shape = send.shape();
  permute->bytes = send.byte_size();
  for (const SourceTargetPair& pair : pairs) {
    if (pair.target == device) permute->source = pair.source;
    if (pair.source == device) permute->targets.push_back(pair.target);
  }
  permute->sent = Header{sequence, device, permute->bytes, HashPairs(pairs)};
  permute->send = std::move(send);
  if (permute->source >= 0) permute->recv = Literal(permute->shape);

  const int64_t values[] = {permute->bytes};
  const ByteUnit unit = ByteUnitFor(values);
  const int64_t units = permute->bytes / unit.bytes;
  if (units > INT_MAX)
    GSPMD_USER_ERROR("collective-permute of ", permute->bytes, " bytes: too many for one MPI message");
  const int count = static_cast<int>(units);
  MPI_Comm comm = session_.handles().permutes;
  std::vector<MPI_Request>& requests = permute->requests;
  requests.reserve(2 + 2 * permute->targets.size());
  try {
    if (permute->source >= 0) {
      const int from = RankOf(permute->source), tag = Tag(sequence, device);
      requests.push_back(MPI_REQUEST_NULL);
      CheckMpi(MPI_Irecv(&permute->arrived, sizeof(Header), MPI_BYTE, from, tag, comm, &requests.back()), "MPI_Irecv");
      requests.push_back(MPI_REQUEST_NULL);
      CheckMpi(MPI_Irecv(permute->recv.raw(), count, unit.datatype, from, tag, comm, &requests.back()), "MPI_Irecv");
    }
    for (int64_t target : permute->targets) {
      const int to = RankOf(target), tag = Tag(sequence, target);
      requests.push_back(MPI_REQUEST_NULL);
      CheckMpi(MPI_Isend(&permute->sent, sizeof(Header), MPI_BYTE, to, tag, comm, &requests.back()), "MPI_Isend");
      requests.push_back(MPI_REQUEST_NULL);
      CheckMpi(MPI_Isend(permute->send.raw(), count, unit.datatype, to, tag, comm, &requests.back()), "MPI_Isend");
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    abandoned_.push_back(std::move(permute));
    throw;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  in_flight_.emplace(std::make_pair(device, sequence), std::move(permute));
  return sequence;
}

void AsyncPermutes::Wait(InFlight& permute) {
  using namespace std::chrono_literals;
  const bool receives = permute.source >= 0;
  std::string description = StrCat("collective #", permute.sequence + 1, " (collective-permute-done of ",
                                   permute.bytes, " bytes on device ", permute.device);
  if (receives) description += StrCat(", from device ", permute.source, " on rank ", RankOf(permute.source));
  description += ")";
  const std::string detail =
      receives ? StrCat("device ", permute.device, " waits for the data of device ", permute.source, " (rank ",
                        RankOf(permute.source), ")")
               : "";
  MpiWatchdog& watchdog = session_.watchdog();
  const int64_t wait = watchdog.BeginWait(permute.sequence, description, [detail] { return detail; });
  struct EndWait {
    MpiWatchdog& watchdog;
    int64_t wait;
    ~EndWait() { watchdog.EndWait(wait); }
  } end_wait{watchdog, wait};
  auto pause = 20us;
  for (int tests = 0;; ++tests) {
    if (aborted_) throw CommunicatorAborted();
    if (receives && !permute.header_checked) {
      int done = 0;
      CheckMpi(MPI_Test(&permute.requests[0], &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) {
        permute.header_checked = true;
        const Header& got = permute.arrived;
        if (got.sequence != permute.sequence || got.source != permute.source ||
            got.pairs_hash != permute.sent.pairs_hash)
          GSPMD_USER_ERROR("devices ", permute.source, " and ", permute.device,
                           " started different collective-permutes: device ", permute.device, "'s collective #",
                           permute.sequence + 1, " received device ", got.source, "'s collective #",
                           got.sequence + 1, (got.pairs_hash != permute.sent.pairs_hash ? " with other pairs" : ""),
                           " (their programs differ)");
        if (got.bytes != permute.bytes)
          GSPMD_USER_ERROR("collective-permute: device ", permute.source, " sends ", got.bytes, " bytes but device ",
                           permute.device, " expects ", permute.bytes);
      }
    }
    if (!receives || permute.header_checked) {
      int done = 0;
      CheckMpi(MPI_Testall(static_cast<int>(permute.requests.size()), permute.requests.data(), &done,
                           MPI_STATUSES_IGNORE),
               "MPI_Testall");
      if (done) return;
    }
    if (tests < 64) continue;  // a short spin first
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, 2000us);
  }
}

Literal AsyncPermutes::Finish(int64_t device, int64_t handle, bool* received) {
  std::unique_ptr<InFlight> permute;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = in_flight_.find({device, handle});
    GSPMD_CHECK(it != in_flight_.end(), "device ", device, " has no collective-permute in flight with handle ", handle);
    permute = std::move(it->second);
    in_flight_.erase(it);
  }
  try {
    Wait(*permute);
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    abandoned_.push_back(std::move(permute));
    throw;
  }
  if (received != nullptr) *received = permute->source >= 0;
  if (permute->source < 0) return Literal(permute->shape);  // zeros: no pair targets this device
  return std::move(permute->recv);
}

}  // namespace gspmd::mpi_internal
