// The data movement of one group of one collective step: within the rank (copies and the
// reduction kernel) or across ranks (local members combined, then one MPI collective).
#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <mutex>

#include "runtime/comm/mpi/mpi_communicator.h"
#include "runtime/comm/mpi/mpi_reduction.h"
#include "runtime/comm/mpi/mpi_step.h"
#include "runtime/comm/reduction.h"

namespace gspmd::mpi_internal {
namespace {

// Local reductions work in blocks of this many bytes so the accumulator stays in L1.
constexpr int64_t kReduceBlockBytes = 16 * 1024;
// Largest element count of one MPI reduction call.
constexpr int64_t kMaxCount = int64_t{1} << 30;

void Copy(uint8_t* dst, const uint8_t* src, size_t bytes) {
  if (bytes == 0 || dst == src) return;
  std::memcpy(dst, src, bytes);
}

int Int(int64_t value, const char* what) {
  if (value > INT_MAX) GSPMD_USER_ERROR(what, ": ", value, " elements or units do not fit an MPI count");
  return static_cast<int>(value);
}

// out[e] = reduction over calls (in order) of send[offset + e], blockwise, for `count` elements.
void ReduceMembers(const std::vector<Call*>& calls, size_t offset, int64_t count, uint8_t* out) {
  const ElementType type = calls[0]->type;
  const BinaryReducer op = calls[0]->op;
  const int64_t element_size = ElementByteSize(type);
  const int64_t block_elements = std::max<int64_t>(1, kReduceBlockBytes / element_size);
  std::array<uint8_t, kReduceBlockBytes> accumulator;
  for (int64_t block = 0; block < count; block += block_elements) {
    const int64_t length = std::min(block_elements, count - block);
    const size_t at = offset + static_cast<size_t>(block * element_size);
    const size_t bytes = static_cast<size_t>(length * element_size);
    std::memcpy(accumulator.data(), calls[0]->send.data() + at, bytes);
    for (size_t m = 1; m < calls.size(); ++m) ReduceInto(type, op, accumulator.data(), calls[m]->send.data() + at, length);
    std::memcpy(out + static_cast<size_t>(block * element_size), accumulator.data(), bytes);
  }
}

std::string Mismatch(const GroupPlan& plan, size_t a, size_t b, const char* what) {
  return StrCat("devices ", plan.local_calls[a]->device, " and ", plan.local_calls[b]->device, " of a ",
                CollectiveKindName(plan.local_calls[0]->kind), " over ", GroupText(plan.group), " disagree on ", what);
}

// Local members agree on the sizes every member of a group must share.
void CheckLocalSizes(const GroupPlan& plan) {
  const std::vector<Call*>& calls = plan.local_calls;
  for (size_t i = 1; i < calls.size(); ++i) {
    const bool same = calls[0]->kind == CollectiveKind::kReduceScatter ? calls[i]->recv.size() == calls[0]->recv.size()
                      : calls[0]->kind == CollectiveKind::kBroadcast  ? calls[i]->recv.size() == calls[0]->recv.size()
                                                                       : calls[i]->send.size() == calls[0]->send.size();
    if (calls[0]->kind != CollectiveKind::kAllToAll && !same) GSPMD_USER_ERROR(Mismatch(plan, 0, i, "the buffer size"));
  }
}

// ---- within the rank ----

void LocalAllToAll(const GroupPlan& plan) {
  const std::vector<Call*>& calls = plan.local_calls;
  for (size_t i = 0; i < calls.size(); ++i) {
    for (size_t j = 0; j < calls.size(); ++j) {
      const std::span<const uint8_t> from = calls[j]->send_list[i];
      const std::span<uint8_t> to = calls[i]->recv_list[j];
      if (from.size() != to.size()) GSPMD_USER_ERROR(Mismatch(plan, j, i, "the size of the chunk one sends the other"));
      Copy(to.data(), from.data(), from.size());
    }
  }
}

}  // namespace

void RunLocalGroup(const GroupPlan& plan) {
  CheckLocalSizes(plan);
  const std::vector<Call*>& calls = plan.local_calls;
  const Call& first = *calls[0];
  switch (first.kind) {
    case CollectiveKind::kAllReduce: {
      // Every member's recv gets the reduction; reduce into the first, then copy.
      const int64_t count = static_cast<int64_t>(first.send.size()) / ElementByteSize(first.type);
      std::vector<uint8_t> result(first.send.size());
      ReduceMembers(calls, 0, count, result.data());
      for (Call* call : calls) Copy(call->recv.data(), result.data(), result.size());
      return;
    }
    case CollectiveKind::kAllGather: {
      const size_t chunk = first.send.size();
      for (Call* to : calls)
        for (size_t j = 0; j < calls.size(); ++j) Copy(to->recv.data() + j * chunk, calls[j]->send.data(), chunk);
      return;
    }
    case CollectiveKind::kReduceScatter: {
      const size_t chunk = first.recv.size();
      const int64_t count = static_cast<int64_t>(chunk) / ElementByteSize(first.type);
      for (size_t j = 0; j < calls.size(); ++j) ReduceMembers(calls, j * chunk, count, calls[j]->recv.data());
      return;
    }
    case CollectiveKind::kAllToAll: return LocalAllToAll(plan);
    case CollectiveKind::kBroadcast: {
      const Call& root = *calls[static_cast<size_t>(first.root)];
      for (Call* call : calls) Copy(call->recv.data(), root.recv.data(), root.recv.size());
      return;
    }
    case CollectiveKind::kPermute: break;
  }
  GSPMD_CHECK(false, "RunLocalGroup of a collective-permute");
}

namespace {

// ---- across ranks ----

void AllReduceAcross(const GroupPlan& plan, MPI_Comm comm) {
  const Call& first = *plan.local_calls[0];
  const MpiReduction reduction = MpiReductionFor(first.type, first.op);
  const int64_t element_size = ElementByteSize(first.type);
  const int64_t count = static_cast<int64_t>(first.send.size()) / element_size;
  uint8_t* result = first.recv.data();
  const bool in_place = plan.local_calls.size() > 1 || first.send.data() == first.recv.data();
  if (plan.local_calls.size() > 1) ReduceMembers(plan.local_calls, 0, count, result);
  for (int64_t offset = 0; offset < count || (count == 0 && offset == 0); offset += kMaxCount) {
    const int64_t piece = std::min(kMaxCount, count - offset);
    uint8_t* out = result + offset * element_size;
    const void* in = in_place ? MPI_IN_PLACE : static_cast<const void*>(first.send.data() + offset * element_size);
    CheckMpi(MPI_Allreduce(in, out, static_cast<int>(piece), reduction.datatype, reduction.op, comm), "MPI_Allreduce");
    if (count == 0) break;
  }
  for (size_t i = 1; i < plan.local_calls.size(); ++i) Copy(plan.local_calls[i]->recv.data(), result, first.recv.size());
}

// The byte offset of each rank's block when the group's chunks are laid out rank-major.
std::vector<int64_t> RankBlockOffsets(const GroupPlan& plan, int64_t chunk) {
  std::vector<int64_t> offsets(plan.ranks.size() + 1, 0);
  for (size_t r = 0; r < plan.ranks.size(); ++r) offsets[r + 1] = offsets[r] + plan.members_per_rank[r] * chunk;
  return offsets;
}

// For each group position, the byte offset of its chunk in rank-major layout.
std::vector<int64_t> RankMajorChunkOffsets(const GroupPlan& plan, int64_t chunk) {
  const std::vector<int64_t> blocks = RankBlockOffsets(plan, chunk);
  std::vector<int64_t> next(blocks.begin(), blocks.end() - 1);
  std::vector<int64_t> offsets(plan.group.size());
  for (size_t j = 0; j < plan.group.size(); ++j) {
    const int r = plan.member_rank_index[j];
    offsets[j] = next[static_cast<size_t>(r)];
    next[static_cast<size_t>(r)] += chunk;
  }
  return offsets;
}

void AllGatherAcross(const GroupPlan& plan, MPI_Comm comm, Scratch& scratch) {
  const Call& first = *plan.local_calls[0];
  const int64_t chunk = static_cast<int64_t>(first.send.size());
  const int64_t n = static_cast<int64_t>(plan.group.size());
  const int64_t local_bytes = chunk * static_cast<int64_t>(plan.local_calls.size());
  // What this rank contributes: its members' inputs, in group order.
  const uint8_t* contribution = first.send.data();
  if (plan.local_calls.size() > 1) {
    uint8_t* packed = scratch.Sized(scratch.a, static_cast<size_t>(local_bytes)).data();
    for (size_t i = 0; i < plan.local_calls.size(); ++i)
      Copy(packed + i * static_cast<size_t>(chunk), plan.local_calls[i]->send.data(), static_cast<size_t>(chunk));
    contribution = packed;
  }
  uint8_t* gathered = plan.rank_major ? first.recv.data() : scratch.Sized(scratch.b, static_cast<size_t>(n * chunk)).data();
  if (static_cast<int64_t>(plan.ranks.size()) == n) {
    const int64_t values[] = {chunk};
    const ByteUnit unit = ByteUnitFor(values);
    CheckMpi(MPI_Allgather(contribution, Int(chunk / unit.bytes, "all-gather"), unit.datatype, gathered,
                           Int(chunk / unit.bytes, "all-gather"), unit.datatype, comm),
             "MPI_Allgather");
  } else {
    const std::vector<int64_t> blocks = RankBlockOffsets(plan, chunk);
    std::vector<int64_t> values(blocks.begin(), blocks.end());
    values.push_back(chunk);
    const ByteUnit unit = ByteUnitFor(values);
    std::vector<int> counts, displacements;
    for (size_t r = 0; r < plan.ranks.size(); ++r) {
      counts.push_back(Int(plan.members_per_rank[r] * chunk / unit.bytes, "all-gather"));
      displacements.push_back(Int(blocks[r] / unit.bytes, "all-gather"));
    }
    CheckMpi(MPI_Allgatherv(contribution, Int(local_bytes / unit.bytes, "all-gather"), unit.datatype, gathered,
                            counts.data(), displacements.data(), unit.datatype, comm),
             "MPI_Allgatherv");
  }
  if (!plan.rank_major) {
    const std::vector<int64_t> at = RankMajorChunkOffsets(plan, chunk);
    for (int64_t j = 0; j < n; ++j)
      Copy(first.recv.data() + j * chunk, gathered + at[static_cast<size_t>(j)], static_cast<size_t>(chunk));
  }
  for (size_t i = 1; i < plan.local_calls.size(); ++i)
    Copy(plan.local_calls[i]->recv.data(), first.recv.data(), first.recv.size());
}

void ReduceScatterAcross(const GroupPlan& plan, MPI_Comm comm, Scratch& scratch) {
  const Call& first = *plan.local_calls[0];
  const MpiReduction reduction = MpiReductionFor(first.type, first.op);
  const int64_t element_size = ElementByteSize(first.type);
  const int64_t chunk = static_cast<int64_t>(first.recv.size());
  const int64_t n = static_cast<int64_t>(plan.group.size());
  const size_t total = static_cast<size_t>(n * chunk);
  // The rank's combined input, rank-major.
  const uint8_t* input = first.send.data();
  if (plan.local_calls.size() > 1) {
    uint8_t* reduced = scratch.Sized(scratch.a, total).data();
    ReduceMembers(plan.local_calls, 0, n * chunk / element_size, reduced);
    input = reduced;
  }
  if (!plan.rank_major) {
    const std::vector<int64_t> at = RankMajorChunkOffsets(plan, chunk);
    uint8_t* reordered = scratch.Sized(scratch.b, total).data();
    for (int64_t j = 0; j < n; ++j)
      Copy(reordered + at[static_cast<size_t>(j)], input + j * chunk, static_cast<size_t>(chunk));
    if (input == scratch.a.data()) {  // keep scratch.a free for the output below
      std::swap(scratch.a, scratch.b);
      reordered = scratch.a.data();
    }
    input = reordered;
  }
  const int chunk_count = Int(chunk / element_size, "reduce-scatter");
  if (plan.local_calls.size() == 1 && static_cast<int64_t>(plan.ranks.size()) == n) {
    CheckMpi(MPI_Reduce_scatter_block(input, first.recv.data(), chunk_count, reduction.datatype, reduction.op, comm),
             "MPI_Reduce_scatter_block");
    return;
  }
  std::vector<int> counts;
  for (int64_t members : plan.members_per_rank) counts.push_back(Int(members * chunk / element_size, "reduce-scatter"));
  const size_t local_bytes = plan.local_calls.size() * static_cast<size_t>(chunk);
  uint8_t* output = plan.local_calls.size() == 1 ? first.recv.data()
                    : input == scratch.b.data() ? scratch.Sized(scratch.a, local_bytes).data()
                                                : scratch.Sized(scratch.b, local_bytes).data();
  CheckMpi(MPI_Reduce_scatter(input, output, counts.data(), reduction.datatype, reduction.op, comm),
           "MPI_Reduce_scatter");
  for (size_t i = 0; i < plan.local_calls.size(); ++i)
    Copy(plan.local_calls[i]->recv.data(), output + i * static_cast<size_t>(chunk), static_cast<size_t>(chunk));
}

// Whether the spans lie back to back in memory, in order.
template <typename Span>
bool Contiguous(std::span<const Span> spans) {
  for (size_t j = 1; j < spans.size(); ++j)
    if (spans[j].data() != spans[j - 1].data() + spans[j - 1].size()) return false;
  return true;
}

// The members of each of the plan's ranks (positions in the group, in group order).
std::vector<std::vector<size_t>> MembersOfRanks(const GroupPlan& plan) {
  std::vector<std::vector<size_t>> members_of(plan.ranks.size());
  for (size_t j = 0; j < plan.group.size(); ++j) members_of[static_cast<size_t>(plan.member_rank_index[j])].push_back(j);
  return members_of;
}

}  // namespace

std::string ExchangeAllToAllSizes(const GroupPlan& plan, MPI_Comm comm) {
  const size_t num_ranks = plan.ranks.size();
  const std::vector<std::vector<size_t>> members_of = MembersOfRanks(plan);
  const std::vector<Call*>& calls = plan.local_calls;
  // The chunk sizes: sender's local member x receiver's member, in group order.
  std::vector<int64_t> sizes_out, sizes_expected;
  std::vector<int> out_counts(num_ranks), out_displacements(num_ranks), in_counts(num_ranks), in_displacements(num_ranks);
  for (size_t r = 0; r < num_ranks; ++r) {
    out_displacements[r] = static_cast<int>(sizes_out.size());
    for (Call* call : calls)
      for (size_t b : members_of[r]) sizes_out.push_back(static_cast<int64_t>(call->send_list[b].size()));
    out_counts[r] = static_cast<int>(sizes_out.size()) - out_displacements[r];
    in_displacements[r] = static_cast<int>(sizes_expected.size());
    for (size_t s : members_of[r])
      for (Call* call : calls) sizes_expected.push_back(static_cast<int64_t>(call->recv_list[s].size()));
    in_counts[r] = static_cast<int>(sizes_expected.size()) - in_displacements[r];
  }
  std::vector<int64_t> sizes_in(sizes_expected.size());
  CheckMpi(MPI_Alltoallv(sizes_out.data(), out_counts.data(), out_displacements.data(), MPI_INT64_T, sizes_in.data(),
                         in_counts.data(), in_displacements.data(), MPI_INT64_T, comm),
           "MPI_Alltoallv");
  for (size_t r = 0; r < num_ranks; ++r) {
    size_t k = static_cast<size_t>(in_displacements[r]);
    for (size_t s : members_of[r]) {
      for (Call* call : calls) {
        if (sizes_in[k] != sizes_expected[k])
          return StrCat("all-to-all over ", GroupText(plan.group), ": device ", plan.group[s], " sends ", sizes_in[k],
                        " bytes to device ", call->device, ", which expects ", sizes_expected[k]);
        ++k;
      }
    }
  }
  return "";
}

namespace {

// Every chunk size is known locally (what this rank sends, what it expects to receive); the
// signature check (StartSignatureCheck) verifies that they pair up across ranks.
void AllToAllAcross(const GroupPlan& plan, MPI_Comm comm, Scratch& scratch) {
  const size_t num_ranks = plan.ranks.size();
  const std::vector<std::vector<size_t>> members_of = MembersOfRanks(plan);
  const std::vector<Call*>& calls = plan.local_calls;
  // One block per rank pair: chunks ordered by (sender's local member, receiver's member).
  std::vector<int64_t> send_bytes(num_ranks, 0), recv_bytes(num_ranks, 0);
  for (size_t r = 0; r < num_ranks; ++r) {
    for (Call* call : calls)
      for (size_t b : members_of[r]) send_bytes[r] += static_cast<int64_t>(call->send_list[b].size());
    for (size_t s : members_of[r])
      for (Call* call : calls) recv_bytes[r] += static_cast<int64_t>(call->recv_list[s].size());
  }
  const bool direct = calls.size() == 1 && num_ranks == plan.group.size();
  const bool direct_send = direct && Contiguous(calls[0]->send_list);
  const bool direct_recv = direct && Contiguous(calls[0]->recv_list);
  int64_t send_total = 0, recv_total = 0;
  for (size_t r = 0; r < num_ranks; ++r) {
    send_total += send_bytes[r];
    recv_total += recv_bytes[r];
  }
  const uint8_t* send_base = direct_send && !calls[0]->send_list.empty() ? calls[0]->send_list[0].data() : nullptr;
  uint8_t* recv_base = direct_recv && !calls[0]->recv_list.empty() ? calls[0]->recv_list[0].data() : nullptr;
  if (send_base == nullptr) {
    uint8_t* packed = scratch.Sized(scratch.a, static_cast<size_t>(send_total)).data();
    size_t at = 0;
    for (size_t r = 0; r < num_ranks; ++r)
      for (Call* call : calls)
        for (size_t b : members_of[r]) {
          Copy(packed + at, call->send_list[b].data(), call->send_list[b].size());
          at += call->send_list[b].size();
        }
    send_base = packed;
  }
  if (recv_base == nullptr) recv_base = scratch.Sized(scratch.b, static_cast<size_t>(recv_total)).data();
  std::vector<int64_t> send_offsets(num_ranks, 0), recv_offsets(num_ranks, 0), values;
  for (size_t r = 1; r < num_ranks; ++r) {
    send_offsets[r] = send_offsets[r - 1] + send_bytes[r - 1];
    recv_offsets[r] = recv_offsets[r - 1] + recv_bytes[r - 1];
  }
  values.insert(values.end(), send_bytes.begin(), send_bytes.end());
  values.insert(values.end(), recv_bytes.begin(), recv_bytes.end());
  values.insert(values.end(), send_offsets.begin(), send_offsets.end());
  values.insert(values.end(), recv_offsets.begin(), recv_offsets.end());
  const ByteUnit unit = ByteUnitFor(values);
  std::vector<int> sc(num_ranks), sd(num_ranks), rc(num_ranks), rd(num_ranks);
  for (size_t r = 0; r < num_ranks; ++r) {
    sc[r] = Int(send_bytes[r] / unit.bytes, "all-to-all");
    sd[r] = Int(send_offsets[r] / unit.bytes, "all-to-all");
    rc[r] = Int(recv_bytes[r] / unit.bytes, "all-to-all");
    rd[r] = Int(recv_offsets[r] / unit.bytes, "all-to-all");
  }
  // Equal, packed blocks both ways: MPI_Alltoall, which OpenMPI can run with algorithms that
  // MPI_Alltoallv lacks. The choice is the same on every rank of an agreed program: blocks are
  // equal exactly when every rank holds as many members of the group and the members' chunk
  // sizes sum alike per rank, which depends on the collective, not on the rank.
  bool uniform = true;
  for (size_t r = 0; r < num_ranks && uniform; ++r)
    uniform = sc[r] == sc[0] && rc[r] == sc[0] && sd[r] == static_cast<int>(r) * sc[0] &&
              rd[r] == static_cast<int>(r) * sc[0];
  if (uniform) {
    CheckMpi(MPI_Alltoall(send_base, sc[0], unit.datatype, recv_base, sc[0], unit.datatype, comm), "MPI_Alltoall");
  } else {
    CheckMpi(MPI_Alltoallv(send_base, sc.data(), sd.data(), unit.datatype, recv_base, rc.data(), rd.data(),
                           unit.datatype, comm),
             "MPI_Alltoallv");
  }
  if (direct_recv && !calls[0]->recv_list.empty()) return;
  size_t at = 0;
  for (size_t r = 0; r < num_ranks; ++r)
    for (size_t s : members_of[r])
      for (Call* call : calls) {
        Copy(call->recv_list[s].data(), recv_base + at, call->recv_list[s].size());
        at += call->recv_list[s].size();
      }
}

void BroadcastAcross(const GroupPlan& plan, MPI_Comm comm) {
  const Call& first = *plan.local_calls[0];
  const size_t root_position = static_cast<size_t>(first.root);
  const int root_index = plan.member_rank_index[root_position];
  // The buffer MPI broadcasts into (or from, on the root's rank): the root's own, else the first member's.
  uint8_t* data = first.recv.data();
  for (size_t i = 0; i < plan.local_members.size(); ++i)
    if (plan.local_members[i] == root_position) data = plan.local_calls[i]->recv.data();
  const size_t bytes = first.recv.size();
  for (size_t offset = 0; offset < bytes || (bytes == 0 && offset == 0); offset += size_t{1} << 30) {
    const size_t piece = std::min<size_t>(bytes - offset, size_t{1} << 30);
    CheckMpi(MPI_Bcast(data + offset, static_cast<int>(piece), MPI_BYTE, root_index, comm), "MPI_Bcast");
    if (bytes == 0) break;
  }
  for (Call* call : plan.local_calls) Copy(call->recv.data(), data, bytes);
}

std::mutex g_units_mutex;
std::array<MPI_Datatype, 21> g_units{};  // g_units[k]: 2^k contiguous bytes (k >= 1)

}  // namespace

void RunGroupAcrossRanks(const GroupPlan& plan, MPI_Comm comm, Scratch& scratch) {
  CheckLocalSizes(plan);
  switch (plan.local_calls[0]->kind) {
    case CollectiveKind::kAllReduce: return AllReduceAcross(plan, comm);
    case CollectiveKind::kAllGather: return AllGatherAcross(plan, comm, scratch);
    case CollectiveKind::kReduceScatter: return ReduceScatterAcross(plan, comm, scratch);
    case CollectiveKind::kAllToAll: return AllToAllAcross(plan, comm, scratch);
    case CollectiveKind::kBroadcast: return BroadcastAcross(plan, comm);
    case CollectiveKind::kPermute: break;
  }
  GSPMD_CHECK(false, "RunGroupAcrossRanks of a collective-permute");
}

ByteUnit ByteUnitFor(std::span<const int64_t> values) {
  int64_t largest = 0;
  uint64_t bits = 0;
  for (int64_t value : values) {
    largest = std::max(largest, value);
    bits |= static_cast<uint64_t>(value);
  }
  if (largest <= INT_MAX) return {};
  int k = 1;
  while (k < 20 && (bits & ((uint64_t{1} << (k + 1)) - 1)) == 0) ++k;
  if ((bits & ((uint64_t{1} << k) - 1)) != 0) return {};  // no common power of two: counts overflow (reported by Int)
  std::lock_guard<std::mutex> lock(g_units_mutex);
  MPI_Datatype& unit = g_units[static_cast<size_t>(k)];
  if (unit == MPI_DATATYPE_NULL || unit == 0) {
    CheckMpi(MPI_Type_contiguous(1 << k, MPI_BYTE, &unit), "MPI_Type_contiguous");
    CheckMpi(MPI_Type_commit(&unit), "MPI_Type_commit");
  }
  return {unit, int64_t{1} << k};
}

void FreeByteUnits() {
  std::lock_guard<std::mutex> lock(g_units_mutex);
  for (MPI_Datatype& unit : g_units)
    if (unit != MPI_DATATYPE_NULL && unit != 0) MPI_Type_free(&unit);
  g_units.fill(MPI_Datatype{});
}

}  // namespace gspmd::mpi_internal
