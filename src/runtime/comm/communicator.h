// Communicator: the interface through which per-device programs exchange data. The compiler
// never sees it; the runtime has one implementation per transport (threads, MPI).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ir/literal.h"

namespace gspmd {

// Every call is collective over the devices named: each member of the group calls it with its
// own `device` id and operand, and each gets its own result. Groups are lists of device
// (partition) ids; every device of the program is in exactly one group of `groups`.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int64_t num_devices() const = 0;

  // Exchanges byte buffers within the caller's group: returns, for each member of the group in
  // group order, the buffer that member contributed. The building block for the collectives.
  virtual std::vector<std::vector<uint8_t>> AllGatherBytes(
      int64_t device, const std::vector<std::vector<int64_t>>& groups,
      std::span<const uint8_t> contribution) = 0;

  // Point to point: sends `data` to `target` (if target >= 0) and receives from `source`
  // (if source >= 0). Returns what was received (empty when source < 0).
  virtual std::vector<uint8_t> SendRecv(int64_t device, int64_t target, int64_t source,
                                        std::span<const uint8_t> data,
                                        const std::vector<std::pair<int64_t, int64_t>>& all_pairs) = 0;
};

}  // namespace gspmd
