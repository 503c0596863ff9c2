// LocalCommunicator: rendezvous of device threads and direct shared-memory data movement.
#include "runtime/comm/local_communicator.h"

#include <algorithm>
#include <cstring>

#include "runtime/comm/reduction.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// Reductions work in blocks of this many bytes so the accumulator stays in L1.
constexpr int64_t kReduceBlockBytes = 16 * 1024;

std::string GroupText(std::span<const int64_t> group) {
  std::string text = "{";
  for (size_t i = 0; i < group.size(); ++i) {
    if (i > 0) text += ",";
    text += std::to_string(group[i]);
  }
  return text + "}";
}

void CopyBytes(uint8_t* dst, const uint8_t* src, size_t size) {
  if (size == 0 || dst == src) return;
  std::memcpy(dst, src, size);
}

}  // namespace

LocalCommunicator::LocalCommunicator(int64_t num_devices)
    : num_devices_(num_devices),
      next_sequence_(static_cast<size_t>(num_devices), 0),
      finished_(static_cast<size_t>(num_devices), false),
      next_async_(static_cast<size_t>(num_devices), 0),
      in_flight_(static_cast<size_t>(num_devices)) {
  GSPMD_CHECK(num_devices >= 1, "a communicator needs at least one device");
}

LocalCommunicator::~LocalCommunicator() = default;

bool LocalCommunicator::aborted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return aborted_;
}

void LocalCommunicator::Abort() {
  std::lock_guard<std::mutex> lock(mutex_);
  aborted_ = true;
  changed_.notify_all();
}

void LocalCommunicator::DeviceFinished(int64_t device) {
  GSPMD_CHECK(device >= 0 && device < num_devices_, "device ", device, " out of range");
  std::lock_guard<std::mutex> lock(mutex_);
  finished_[static_cast<size_t>(device)] = true;
  changed_.notify_all();
}

int64_t LocalCommunicator::GroupIndex(std::span<const int64_t> group, int64_t device) const {
  std::vector<bool> seen(static_cast<size_t>(num_devices_), false);
  int64_t index = -1;
  for (size_t i = 0; i < group.size(); ++i) {
    int64_t member = group[i];
    if (member < 0 || member >= num_devices_)
      GSPMD_USER_ERROR("collective group ", GroupText(group), " names device ", member,
                       " but there are ", num_devices_, " devices");
    if (seen[static_cast<size_t>(member)])
      GSPMD_USER_ERROR("collective group ", GroupText(group), " lists device ", member, " twice");
    seen[static_cast<size_t>(member)] = true;
    if (member == device) index = static_cast<int64_t>(i);
  }
  if (index < 0)
    GSPMD_USER_ERROR("collective group ", GroupText(group), " does not contain the calling device ",
                     device);
  return index;
}

bool LocalCommunicator::MissingMemberFinished(const Rendezvous& rendezvous) const {
  const std::vector<int64_t>& group = rendezvous.signature.group;
  for (size_t i = 0; i < group.size(); ++i) {
    if (!rendezvous.arrived[i] && finished_[static_cast<size_t>(group[i])]) return true;
  }
  return false;
}

std::string LocalCommunicator::CheckSizes(const Rendezvous& rendezvous) {
  const Signature& signature = rendezvous.signature;
  const std::vector<Contribution>& members = rendezvous.members;
  const size_t n = members.size();
  const size_t element_size =
      IsArrayType(signature.type) ? static_cast<size_t>(ElementByteSize(signature.type)) : 1;
  auto mismatch = [&](size_t a, size_t b, const char* what) {
    return StrCat("members ", signature.group[a], " and ", signature.group[b],
                  " of a collective over ", GroupText(signature.group), " disagree on ", what);
  };
  switch (signature.kind) {
    case Kind::kAllReduce:
    case Kind::kBroadcast:
      for (size_t i = 0; i < n; ++i) {
        if (members[i].recv.size() != members[0].recv.size()) return mismatch(0, i, "the buffer size");
        if (signature.kind == Kind::kAllReduce && members[i].send.size() != members[i].recv.size())
          return mismatch(i, i, "input and output sizes");
        if (members[i].recv.size() % element_size != 0) return mismatch(i, i, "the element size");
      }
      return "";
    case Kind::kAllGather:
      for (size_t i = 0; i < n; ++i) {
        if (members[i].send.size() != members[0].send.size()) return mismatch(0, i, "the input size");
        if (members[i].recv.size() != n * members[i].send.size())
          return mismatch(i, i, "the output size (group size times the input size)");
      }
      return "";
    case Kind::kReduceScatter:
      for (size_t i = 0; i < n; ++i) {
        if (members[i].recv.size() != members[0].recv.size()) return mismatch(0, i, "the output size");
        if (members[i].send.size() != n * members[i].recv.size())
          return mismatch(i, i, "the input size (group size times the output size)");
        if (members[i].recv.size() % element_size != 0) return mismatch(i, i, "the element size");
      }
      return "";
    case Kind::kAllToAll:
      for (size_t i = 0; i < n; ++i) {
        if (members[i].send_list.size() != n || members[i].recv_list.size() != n)
          return mismatch(i, i, "the number of chunks (one per member)");
      }
      for (size_t i = 0; i < n; ++i) {
        for (size_t j = 0; j < n; ++j) {
          if (members[i].send_list[j].size() != members[j].recv_list[i].size())
            return mismatch(i, j, "the size of the chunk one sends the other");
        }
      }
      return "";
    case Kind::kPermute:
      for (const SourceTargetPair& pair : signature.pairs) {
        auto source = static_cast<size_t>(pair.source);
        auto target = static_cast<size_t>(pair.target);
        if (members[source].send.size() != members[target].recv.size())
          return mismatch(source, target, "the size of the permuted buffer");
      }
      return "";
  }
  return "";
}

std::pair<LocalCommunicator::Rendezvous*, int64_t> LocalCommunicator::Join(
    int64_t device, Signature signature, Contribution contribution) {
  GSPMD_CHECK(device >= 0 && device < num_devices_, "device ", device, " out of range");
  const int64_t index = GroupIndex(signature.group, device);
  const int64_t group_size = static_cast<int64_t>(signature.group.size());
  const int64_t leader = *std::min_element(signature.group.begin(), signature.group.end());
  const int64_t sequence = next_sequence_[static_cast<size_t>(device)]++;

  std::unique_lock<std::mutex> lock(mutex_);
  if (aborted_) throw CommunicatorAborted();
  auto [it, inserted] = pending_.try_emplace({sequence, leader});
  Rendezvous& rendezvous = it->second;
  if (inserted) {
    try {
      rendezvous.signature = signature;
      rendezvous.sequence = sequence;
      rendezvous.members.resize(static_cast<size_t>(group_size));
      rendezvous.arrived.assign(static_cast<size_t>(group_size), false);
    } catch (...) {
      // Out of memory: no member may find it half made (this device's failure aborts the rest).
      pending_.erase(it);
      throw;
    }
  } else if (rendezvous.error.empty() && !(rendezvous.signature == signature)) {
    rendezvous.error = StrCat("device ", device, " issued collective #", sequence, " over ",
                              GroupText(signature.group), " but device ",
                              rendezvous.signature.group.front(),
                              " issued a different collective (kind, group, type, reducer or "
                              "pairs differ) at the same position");
    changed_.notify_all();
  }
  if (!rendezvous.error.empty()) throw UserError(rendezvous.error);

  rendezvous.members[static_cast<size_t>(index)] = contribution;
  rendezvous.arrived[static_cast<size_t>(index)] = true;
  if (++rendezvous.arrived_count == group_size) {
    rendezvous.error = CheckSizes(rendezvous);
    changed_.notify_all();
  }
  changed_.wait(lock, [&] {
    return rendezvous.arrived_count == group_size || !rendezvous.error.empty() || aborted_ ||
           MissingMemberFinished(rendezvous);
  });
  if (!rendezvous.error.empty()) throw UserError(rendezvous.error);
  if (rendezvous.arrived_count == group_size) return {&rendezvous, index};
  if (aborted_) throw CommunicatorAborted();
  rendezvous.error = StrCat("collective #", sequence, " over ", GroupText(signature.group),
                            " waits for a device that finished its program without issuing it");
  changed_.notify_all();
  throw UserError(rendezvous.error);
}

void LocalCommunicator::Leave(Rendezvous* rendezvous) {
  std::unique_lock<std::mutex> lock(mutex_);
  const int64_t group_size = static_cast<int64_t>(rendezvous->members.size());
  if (++rendezvous->done_count == group_size) changed_.notify_all();
  // Not abortable: every member got past Join, so every member reaches here without waiting,
  // and leaving early would free buffers that others are still reading.
  changed_.wait(lock, [&] { return rendezvous->done_count == group_size; });
  if (++rendezvous->departed_count == group_size) {
    pending_.erase({rendezvous->sequence,
                    *std::min_element(rendezvous->signature.group.begin(),
                                      rendezvous->signature.group.end())});
  }
}

void LocalCommunicator::AllReduce(int64_t device, std::span<const int64_t> group,
                                  ElementType type, BinaryReducer op,
                                  std::span<const uint8_t> send, std::span<uint8_t> recv) {
  if (!IsNativeReduction(op, type))
    GSPMD_USER_ERROR("all-reduce of ", ElementTypeName(type),
                     " has no native kernel for the reducer; use the generic path");
  const int64_t element_size = ElementByteSize(type);
  const int64_t block_elements = std::max<int64_t>(1, kReduceBlockBytes / element_size);
  std::vector<uint8_t> accumulator(static_cast<size_t>(block_elements * element_size));

  Signature signature{Kind::kAllReduce, {group.begin(), group.end()}, type, op, 0, {}};
  auto [rendezvous, me] = Join(device, std::move(signature), Contribution{send, recv, {}, {}});
  const std::vector<Contribution>& members = rendezvous->members;
  const int64_t n = static_cast<int64_t>(members.size());
  const int64_t count = static_cast<int64_t>(send.size()) / element_size;
  // This member owns elements [begin, end) of every buffer.
  const int64_t begin = count * me / n;
  const int64_t end = count * (me + 1) / n;
  uint8_t* acc = accumulator.data();
  for (int64_t block = begin; block < end; block += block_elements) {
    const int64_t length = std::min(block_elements, end - block);
    const size_t offset = static_cast<size_t>(block * element_size);
    const size_t bytes = static_cast<size_t>(length * element_size);
    std::memcpy(acc, members[0].send.data() + offset, bytes);
    for (int64_t m = 1; m < n; ++m)
      ReduceInto(type, op, acc, members[static_cast<size_t>(m)].send.data() + offset, length);
    for (int64_t m = 0; m < n; ++m)
      std::memcpy(members[static_cast<size_t>(m)].recv.data() + offset, acc, bytes);
  }
  Leave(rendezvous);
}

void LocalCommunicator::AllGather(int64_t device, std::span<const int64_t> group,
                                  std::span<const uint8_t> send, std::span<uint8_t> recv) {
  Signature signature{Kind::kAllGather, {group.begin(), group.end()}, ElementType::kInvalid,
                      BinaryReducer::kUnknown, 0, {}};
  auto [rendezvous, me] = Join(device, std::move(signature), Contribution{send, recv, {}, {}});
  const std::vector<Contribution>& members = rendezvous->members;
  const size_t chunk = send.size();
  for (size_t m = 0; m < members.size(); ++m)
    CopyBytes(recv.data() + m * chunk, members[m].send.data(), chunk);
  Leave(rendezvous);
}

void LocalCommunicator::ReduceScatter(int64_t device, std::span<const int64_t> group,
                                      ElementType type, BinaryReducer op,
                                      std::span<const uint8_t> send, std::span<uint8_t> recv) {
  if (!IsNativeReduction(op, type))
    GSPMD_USER_ERROR("reduce-scatter of ", ElementTypeName(type),
                     " has no native kernel for the reducer; use the generic path");
  const int64_t element_size = ElementByteSize(type);
  const int64_t block_elements = std::max<int64_t>(1, kReduceBlockBytes / element_size);

  Signature signature{Kind::kReduceScatter, {group.begin(), group.end()}, type, op, 0, {}};
  auto [rendezvous, me] = Join(device, std::move(signature), Contribution{send, recv, {}, {}});
  const std::vector<Contribution>& members = rendezvous->members;
  const int64_t count = static_cast<int64_t>(recv.size()) / element_size;
  const size_t chunk_offset = static_cast<size_t>(me) * recv.size();
  for (int64_t block = 0; block < count; block += block_elements) {
    const int64_t length = std::min(block_elements, count - block);
    const size_t offset = static_cast<size_t>(block * element_size);
    uint8_t* out = recv.data() + offset;
    std::memcpy(out, members[0].send.data() + chunk_offset + offset,
                static_cast<size_t>(length * element_size));
    for (size_t m = 1; m < members.size(); ++m)
      ReduceInto(type, op, out, members[m].send.data() + chunk_offset + offset, length);
  }
  Leave(rendezvous);
}

void LocalCommunicator::AllToAll(int64_t device, std::span<const int64_t> group,
                                 std::span<const std::span<const uint8_t>> send,
                                 std::span<const std::span<uint8_t>> recv) {
  Signature signature{Kind::kAllToAll, {group.begin(), group.end()}, ElementType::kInvalid,
                      BinaryReducer::kUnknown, 0, {}};
  auto [rendezvous, me] = Join(device, std::move(signature), Contribution{{}, {}, send, recv});
  const std::vector<Contribution>& members = rendezvous->members;
  for (size_t m = 0; m < members.size(); ++m) {
    std::span<const uint8_t> from = members[m].send_list[static_cast<size_t>(me)];
    CopyBytes(recv[m].data(), from.data(), from.size());
  }
  Leave(rendezvous);
}

int64_t LocalCommunicator::PermuteSource(int64_t device, std::span<const SourceTargetPair> pairs) const {
  GSPMD_CHECK(device >= 0 && device < num_devices_, "device ", device, " out of range");
  int64_t source = -1;
  std::vector<bool> targeted(static_cast<size_t>(num_devices_), false);
  for (const SourceTargetPair& pair : pairs) {
    if (pair.source < 0 || pair.source >= num_devices_ || pair.target < 0 ||
        pair.target >= num_devices_)
      GSPMD_USER_ERROR("collective-permute pair {", pair.source, ",", pair.target,
                       "} names a device outside 0..", num_devices_ - 1);
    if (targeted[static_cast<size_t>(pair.target)])
      GSPMD_USER_ERROR("collective-permute: device ", pair.target,
                       " is the target of more than one pair");
    targeted[static_cast<size_t>(pair.target)] = true;
    if (pair.target == device) source = pair.source;
  }
  return source;
}

bool LocalCommunicator::CollectivePermute(int64_t device, std::span<const SourceTargetPair> pairs,
                                          std::span<const uint8_t> send, std::span<uint8_t> recv) {
  std::vector<int64_t> everyone(static_cast<size_t>(num_devices_));
  for (int64_t d = 0; d < num_devices_; ++d) everyone[static_cast<size_t>(d)] = d;
  const int64_t source = PermuteSource(device, pairs);
  Signature signature{Kind::kPermute, std::move(everyone), ElementType::kInvalid,
                      BinaryReducer::kUnknown, 0, {pairs.begin(), pairs.end()}};
  auto [rendezvous, me] = Join(device, std::move(signature), Contribution{send, recv, {}, {}});
  if (source >= 0) {
    std::span<const uint8_t> from = rendezvous->members[static_cast<size_t>(source)].send;
    CopyBytes(recv.data(), from.data(), from.size());
  }
  Leave(rendezvous);
  return source >= 0;
}

int64_t LocalCommunicator::StartCollectivePermute(int64_t device, std::span<const SourceTargetPair> pairs,
                                                  Literal send) {
  const int64_t source = PermuteSource(device, pairs);
  const int64_t sequence = next_async_[static_cast<size_t>(device)]++;
  auto shared_pairs = std::make_shared<const std::vector<SourceTargetPair>>(pairs.begin(), pairs.end());
  InFlight record{shared_pairs, source, send.shape(), send.byte_size()};
  // The messages, made before taking the lock: the last target gets the buffer itself, the
  // others copies.
  std::vector<std::pair<int64_t, Message>> messages;
  for (const SourceTargetPair& pair : pairs)
    if (pair.source == device) messages.push_back({pair.target, Message{device, shared_pairs, Literal()}});
  for (size_t i = 0; i < messages.size(); ++i)
    messages[i].second.data = i + 1 == messages.size() ? std::move(send) : send;

  std::lock_guard<std::mutex> lock(mutex_);
  if (aborted_) throw CommunicatorAborted();
  for (auto& [target, message] : messages) {
    auto [it, inserted] = mailbox_.try_emplace({sequence, target}, std::move(message));
    if (!inserted)
      GSPMD_USER_ERROR("devices ", it->second.source, " and ", device, " both send to device ", target,
                       " in asynchronous collective-permute #", sequence + 1,
                       " (the devices started different collective-permutes there)");
  }
  in_flight_[static_cast<size_t>(device)].emplace(sequence, std::move(record));
  if (!messages.empty()) changed_.notify_all();
  return sequence;
}

Literal LocalCommunicator::FinishCollectivePermute(int64_t device, int64_t handle, bool* received) {
  GSPMD_CHECK(device >= 0 && device < num_devices_, "device ", device, " out of range");
  std::unique_lock<std::mutex> lock(mutex_);
  std::map<int64_t, InFlight>& mine = in_flight_[static_cast<size_t>(device)];
  auto record_it = mine.find(handle);
  GSPMD_CHECK(record_it != mine.end(), "device ", device, " has no collective-permute in flight with handle ", handle);
  InFlight record = std::move(record_it->second);
  mine.erase(record_it);
  if (received != nullptr) *received = record.source >= 0;
  if (record.source < 0) {
    lock.unlock();
    return Literal(record.shape);  // zeros: no pair targets this device
  }
  const std::pair<int64_t, int64_t> key{handle, device};
  const size_t source = static_cast<size_t>(record.source);
  changed_.wait(lock, [&] { return aborted_ || mailbox_.count(key) > 0 || finished_[source]; });
  auto it = mailbox_.find(key);
  if (it == mailbox_.end()) {
    if (aborted_) throw CommunicatorAborted();
    GSPMD_USER_ERROR("asynchronous collective-permute #", handle + 1, ": device ", device, " waits for device ",
                     record.source, ", which finished its program without starting it");
  }
  Message message = std::move(it->second);
  mailbox_.erase(it);
  lock.unlock();
  if (message.source != record.source || *message.pairs != *record.pairs)
    GSPMD_USER_ERROR("devices ", message.source, " and ", device, " started different collective-permutes as "
                     "asynchronous collective-permute #", handle + 1, " (their source_target_pairs differ)");
  if (message.data.byte_size() != record.bytes)
    GSPMD_USER_ERROR("collective-permute: device ", message.source, " sends ", message.data.byte_size(),
                     " bytes but device ", device, " expects ", record.bytes);
  if (message.data.shape().Compatible(record.shape)) return std::move(message.data);
  Literal result(record.shape);
  CopyBytes(result.raw(), message.data.raw(), static_cast<size_t>(record.bytes));
  return result;
}

void LocalCommunicator::Broadcast(int64_t device, std::span<const int64_t> group, int64_t root,
                                  std::span<uint8_t> data) {
  if (root < 0 || root >= static_cast<int64_t>(group.size()))
    GSPMD_USER_ERROR("broadcast root index ", root, " is outside the group ", GroupText(group));
  Signature signature{Kind::kBroadcast, {group.begin(), group.end()}, ElementType::kInvalid,
                      BinaryReducer::kUnknown, root, {}};
  auto [rendezvous, me] = Join(device, std::move(signature), Contribution{{}, data, {}, {}});
  if (me != root) {
    std::span<uint8_t> from = rendezvous->members[static_cast<size_t>(root)].recv;
    CopyBytes(data.data(), from.data(), from.size());
  }
  Leave(rendezvous);
}

}  // namespace gspmd
