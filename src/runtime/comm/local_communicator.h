// LocalCommunicator: N simulated devices as threads of one process, exchanging data through
// shared memory.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
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
// The asynchronous collective-permute does not meet: a start leaves the data for each target
// in a mailbox keyed by (the device's count of asynchronous permutes, target) and returns; the
// target's finish waits for its message there and takes it (the sender's buffer itself, when
// it has one target). Nobody waits for the sender.
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
  int64_t StartCollectivePermute(int64_t device, std::span<const SourceTargetPair> pairs, Literal send) override;
  Literal FinishCollectivePermute(int64_t device, int64_t handle, bool* received) override;
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

  // One asynchronous permute's data on its way to `target`, and one device's permute in flight.
  struct Message {
    int64_t source = -1;
    std::shared_ptr<const std::vector<SourceTargetPair>> pairs;
    Literal data;
  };
  struct InFlight {
    std::shared_ptr<const std::vector<SourceTargetPair>> pairs;
    int64_t source = -1;  // the pair targeting this device
    Shape shape;          // of the device's own send (and of what it receives)
    int64_t bytes = 0;
  };
  // Checks the pairs name devices and target each at most once; returns this device's source.
  int64_t PermuteSource(int64_t device, std::span<const SourceTargetPair> pairs) const;

  const int64_t num_devices_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool aborted_ = false;
  std::vector<int64_t> next_sequence_;  // per device; touched only by that device's thread
  std::vector<bool> finished_;
  std::map<std::pair<int64_t, int64_t>, Rendezvous> pending_;
  std::vector<int64_t> next_async_;                           // per device; only its thread
  std::map<std::pair<int64_t, int64_t>, Message> mailbox_;    // by (async sequence, target)
  std::vector<std::map<int64_t, InFlight>> in_flight_;        // per device, by handle
};

}  // namespace gspmd
