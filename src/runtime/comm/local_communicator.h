// LocalCommunicator: N simulated devices as threads of one process, exchanging data through
// shared memory.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "runtime/comm/communicator.h"

namespace gspmd {

// Each collective is a rendezvous of its group's threads: every member publishes pointers to
// its buffers and waits until all have arrived; then each member moves its share of the data
// directly between the members' buffers (no staging copies: an all-reduce member reduces a
// 1/n slice of every buffer and writes the result into every member's output); a second
// barrier keeps buffers alive until everyone is done. Rendezvous are keyed by (per-device
// collective sequence number, smallest device of the group), so disjoint groups of the same
// collective proceed independently.
//
//   LocalCommunicator comm(8);
//   // on thread d:  comm.AllReduce(d, group, ElementType::kF32, BinaryReducer::kAdd, in, out);
class LocalCommunicator final : public Communicator {
 public:
  explicit LocalCommunicator(int64_t num_devices);
  ~LocalCommunicator() override;

  int64_t num_devices() const override { return num_devices_; }

  void AllReduce(int64_t device, std::span<const int64_t> group, ElementType type,
                 BinaryReducer op, std::span<const uint8_t> send,
                 std::span<uint8_t> recv) override;
  void AllGather(int64_t device, std::span<const int64_t> group, std::span<const uint8_t> send,
                 std::span<uint8_t> recv) override;
  void ReduceScatter(int64_t device, std::span<const int64_t> group, ElementType type,
                     BinaryReducer op, std::span<const uint8_t> send,
                     std::span<uint8_t> recv) override;
  void AllToAll(int64_t device, std::span<const int64_t> group,
                std::span<const std::span<const uint8_t>> send,
                std::span<const std::span<uint8_t>> recv) override;
  bool CollectivePermute(int64_t device, std::span<const SourceTargetPair> pairs,
                         std::span<const uint8_t> send, std::span<uint8_t> recv) override;
  void Broadcast(int64_t device, std::span<const int64_t> group, int64_t root,
                 std::span<uint8_t> data) override;
  void Abort() override;
  void DeviceFinished(int64_t device) override;

  bool aborted() const;

 private:
  enum class Kind { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kPermute, kBroadcast };

  // What one member publishes.
  struct Contribution {
    std::span<const uint8_t> send;
    std::span<uint8_t> recv;
    std::span<const std::span<const uint8_t>> send_list;  // all-to-all
    std::span<const std::span<uint8_t>> recv_list;        // all-to-all
  };

  // The properties every member of a collective must agree on.
  struct Signature {
    Kind kind = Kind::kAllReduce;
    std::vector<int64_t> group;
    ElementType type = ElementType::kInvalid;
    BinaryReducer op = BinaryReducer::kUnknown;
    int64_t root = 0;
    std::vector<SourceTargetPair> pairs;
    bool operator==(const Signature&) const = default;
  };

  struct Rendezvous {
    Signature signature;
    int64_t sequence = 0;
    std::vector<Contribution> members;  // by index in the group
    std::vector<bool> arrived;
    int64_t arrived_count = 0;
    int64_t done_count = 0;
    int64_t departed_count = 0;
    std::string error;  // set by the last arrival when the members disagree
  };

  // The caller's collective: validates arguments, joins the rendezvous, publishes its
  // contribution and waits until every member has. Returns the rendezvous (valid until
  // Leave) and the caller's index in the group.
  std::pair<Rendezvous*, int64_t> Join(int64_t device, Signature signature,
                                       Contribution contribution);
  // Waits until every member has finished moving data, then drops the rendezvous.
  void Leave(Rendezvous* rendezvous);

  // Checks that the members' buffers fit together; "" when they do.
  static std::string CheckSizes(const Rendezvous& rendezvous);
  bool MissingMemberFinished(const Rendezvous& rendezvous) const;
  int64_t GroupIndex(std::span<const int64_t> group, int64_t device) const;

  const int64_t num_devices_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool aborted_ = false;
  std::vector<int64_t> next_sequence_;  // per device; touched only by that device's thread
  std::vector<bool> finished_;
  std::map<std::pair<int64_t, int64_t>, Rendezvous> pending_;
};

}  // namespace gspmd
