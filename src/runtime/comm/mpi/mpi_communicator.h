// MpiCommunicator: the Communicator of an MPI job. Devices are spread over ranks in blocks
// (device d lives on rank d / devices_per_rank, as a thread of that process); devices of one
// rank exchange data through memory, devices of different ranks through MPI.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>

#include "runtime/comm/communicator.h"

namespace gspmd {

class MpiSession;

// Thrown on the ranks of a sub-communicator that agreed that one of them (the lowest) reports
// a mismatch: they only wait for the job to end.
class ErrorReportedByAnotherRank : public std::runtime_error {
 public:
  explicit ErrorReportedByAnotherRank(int rank)
      : std::runtime_error("rank " + std::to_string(rank) + " reports the error"), rank_(rank) {}
  int reporting_rank() const { return rank_; }

 private:
  int rank_;
};

// How a collective runs. Every collective of the program is a step of the rank: its devices
// meet in memory (every device issues every collective, in the same order), then the thread of
// the last to arrive moves the data of every group that touches the rank, in increasing order
// of the groups' smallest device (the same order on every rank, so blocking MPI calls cannot
// deadlock):
//   a group within the rank: memory copies and the reduction kernel;
//   a group across ranks: the local members are combined first (reduced, or concatenated),
//     then one MPI collective runs on the sub-communicator of the group's ranks (in group
//     order), then its result is copied to the other local members. A sub-communicator is
//     created once per distinct list of ranks (MPI_Comm_create_group, which only the members
//     call, so no rank needs to know the other groups) and cached for the whole run.
//   collective-permute: MPI_Isend/MPI_Irecv between the ranks of each pair (tag = target).
// The asynchronous collective-permute (Start/FinishCollectivePermute) is no step: each device
// posts its sends and receives at the start and waits for them at the finish, on a communicator
// of their own (mpi_async_permutes.h).
// Before moving data across ranks the members check that they issue the same collective (a
// nonblocking all-gather, or on groups of over 64 ranks an all-reduce, of a hash of kind,
// sequence number, group, type, reducer and sizes, overlapped with the transfer): a mismatch
// is a UserError describing each rank's collective, instead of MPI mismatching buffers. The
// rank's watchdog knows which collective it waits in.
//
//   MpiSession session(options);
//   MpiCommunicator comm(session, /*devices_per_rank=*/4);   // on rank r: devices 4r..4r+3
class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MpiSession& session, int64_t devices_per_rank);
  ~MpiCommunicator() override;

  int64_t num_devices() const override;
  int64_t devices_per_rank() const;
  int64_t first_local_device() const;
  // Sub-communicators created so far (one per distinct rank list; for tests).
  int64_t subcommunicators_created() const;

  void AllReduce(int64_t device, std::span<const int64_t> group, ElementType type, BinaryReducer op,
                 std::span<const uint8_t> send, std::span<uint8_t> recv) override;
  void AllGather(int64_t device, std::span<const int64_t> group, std::span<const uint8_t> send,
                 std::span<uint8_t> recv) override;
  void ReduceScatter(int64_t device, std::span<const int64_t> group, ElementType type, BinaryReducer op,
                     std::span<const uint8_t> send, std::span<uint8_t> recv) override;
  void AllToAll(int64_t device, std::span<const int64_t> group, std::span<const std::span<const uint8_t>> send,
                std::span<const std::span<uint8_t>> recv) override;
  bool CollectivePermute(int64_t device, std::span<const SourceTargetPair> pairs, std::span<const uint8_t> send,
                         std::span<uint8_t> recv) override;
  void Broadcast(int64_t device, std::span<const int64_t> group, int64_t root, std::span<uint8_t> data) override;
  int64_t StartCollectivePermute(int64_t device, std::span<const SourceTargetPair> pairs, Literal send) override;
  Literal FinishCollectivePermute(int64_t device, int64_t handle, bool* received) override;
  void Abort() override;
  void DeviceFinished(int64_t device) override;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gspmd
