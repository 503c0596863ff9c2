// Communicator: the interface through which per-device programs exchange data. The compiler
// never sees it; the runtime has one implementation per transport (threads, later MPI).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/attributes.h"
#include "ir/element_type.h"
#include "ir/literal.h"
#include "runtime/interp/kernels.h"

namespace gspmd {

// Raised inside a device's thread when the communicator was aborted because another device
// failed. The executor reports the other device's error, not this one.
class CommunicatorAborted : public std::runtime_error {
 public:
  CommunicatorAborted() : std::runtime_error("communicator aborted by another device's error") {}
};

// Every call is collective: each member of `group` calls it with its own `device` id and
// buffers, and the calls of one collective match up by order (every device issues the same
// sequence of collectives). `group` lists device ids in group order and contains `device`; it
// is the same list on every member. Devices are numbered 0..num_devices()-1. Buffers are raw
// bytes in the Literal layout (dense row-major); the caller packs/unpacks dimensions, so a
// transport only moves contiguous blocks (as MPI does). A collective whose members disagree
// on sizes or kind is a UserError. After Abort() every pending and future call throws
// CommunicatorAborted.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int64_t num_devices() const = 0;

  // recv = send_0 op send_1 op ... (members in group order), elementwise over `type`
  // elements. send and recv have equal sizes and may alias (in place).
  virtual void AllReduce(int64_t device, std::span<const int64_t> group, ElementType type,
                         BinaryReducer op, std::span<const uint8_t> send,
                         std::span<uint8_t> recv) = 0;

  // recv = concatenation of every member's send, in group order
  // (recv.size() == group.size() * send.size()).
  virtual void AllGather(int64_t device, std::span<const int64_t> group,
                         std::span<const uint8_t> send, std::span<uint8_t> recv) = 0;

  // send holds group.size() equal chunks; member j's recv = reduction over members of
  // chunk j (send.size() == group.size() * recv.size()).
  virtual void ReduceScatter(int64_t device, std::span<const int64_t> group, ElementType type,
                             BinaryReducer op, std::span<const uint8_t> send,
                             std::span<uint8_t> recv) = 0;

  // send[j] goes to member j; recv[j] receives what member j sent to this member. Sizes must
  // agree pairwise (member i's send[j] has the size of member j's recv[i]).
  virtual void AllToAll(int64_t device, std::span<const int64_t> group,
                        std::span<const std::span<const uint8_t>> send,
                        std::span<const std::span<uint8_t>> recv) = 0;

  // Every device calls it (all num_devices() of them) with the same pairs of device ids.
  // A device sends `send` to the targets of the pairs whose source it is, and receives into
  // `recv` from the source of the pair whose target it is. Returns false when no pair
  // targets this device (recv is then left untouched). Each device is the target of at most
  // one pair; send and recv have equal sizes.
  virtual bool CollectivePermute(int64_t device, std::span<const SourceTargetPair> pairs,
                                 std::span<const uint8_t> send, std::span<uint8_t> recv) = 0;

  // The asynchronous collective-permute (collective-permute-start / -done). Start posts this
  // device's part (the same pairs as CollectivePermute) and returns without waiting for any
  // other device: `send` is handed over, and the communicator keeps it until the transfer no
  // longer needs it. The returned handle goes to FinishCollectivePermute, which waits until
  // this device's part is done and returns what it received: a literal of send's shape, zeros
  // when no pair targets the device (then *received is false). A device may have several
  // permutes in flight and finish them in any order. They match up across devices by the
  // order of their starts (every device starts the same permutes in the same order), apart
  // from the blocking collectives, which may run while they are in flight.
  virtual int64_t StartCollectivePermute(int64_t device, std::span<const SourceTargetPair> pairs, Literal send) = 0;
  virtual Literal FinishCollectivePermute(int64_t device, int64_t handle, bool* received) = 0;

  // data of member `root` (an index into group) is copied into every other member's data.
  virtual void Broadcast(int64_t device, std::span<const int64_t> group, int64_t root,
                         std::span<uint8_t> data) = 0;

  // Makes every pending and future call on any device throw CommunicatorAborted. Called
  // when one device fails so that the others do not wait for it forever. Idempotent.
  virtual void Abort() = 0;

  // Tells the communicator that `device` will issue no more collectives (its program
  // returned). A collective still waiting for it fails instead of hanging.
  virtual void DeviceFinished(int64_t device) = 0;
};

}  // namespace gspmd
