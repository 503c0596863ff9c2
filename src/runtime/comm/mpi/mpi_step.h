// Internal to src/runtime/comm/mpi: one rank's view of one collective step — each local
// device's call, the groups that touch the rank — and the data movement for one group, within
// the rank or across ranks (mpi_group_collectives.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/attributes.h"
#include "ir/element_type.h"
#include "runtime/comm/mpi/mpi_handles.h"
#include "runtime/interp/kernels.h"

namespace gspmd::mpi_internal {

enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kPermute, kBroadcast };
const char* CollectiveKindName(CollectiveKind kind);

// One local device's call, as it published it (buffers stay valid until the step is done).
struct Call {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  int64_t device = 0;
  std::vector<int64_t> group;  // device ids in group order (all devices for permute)
  ElementType type = ElementType::kInvalid;
  BinaryReducer op = BinaryReducer::kUnknown;
  int64_t root = 0;
  std::span<const SourceTargetPair> pairs;
  std::span<const uint8_t> send;
  std::span<uint8_t> recv;  // broadcast: the data
  std::span<const std::span<const uint8_t>> send_list;
  std::span<const std::span<uint8_t>> recv_list;
  bool received = false;  // permute: some pair targeted this device
};

// A group that touches this rank: its members on this rank and the ranks it spans.
struct GroupPlan {
  std::vector<int64_t> group;
  std::vector<size_t> local_members;  // positions in group of this rank's devices, increasing
  std::vector<Call*> local_calls;     // the calls of those devices, in the same order
  std::vector<int> ranks;             // ranks holding members, in order of first appearance
  std::vector<int64_t> members_per_rank;  // parallel to ranks
  std::vector<int> member_rank_index;     // for each group position, its rank's index in ranks
  int my_index = 0;                   // of this rank in `ranks`
  bool rank_major = true;             // group order = members of ranks[0], then of ranks[1], ...
};

// Reusable scratch buffers of the rank (only the step-executing thread uses them).
struct Scratch {
  std::vector<uint8_t> a, b;
  std::vector<uint8_t>& Sized(std::vector<uint8_t>& buffer, size_t bytes) {
    if (buffer.size() < bytes) buffer.resize(bytes);
    return buffer;
  }
};

// Moves the data of a group whose members are all on this rank. Member buffers whose sizes do
// not fit together are a UserError.
void RunLocalGroup(const GroupPlan& plan);
// Moves the data of a group spanning several ranks over `comm` (ranks in plan.ranks order).
// The caller checks that every rank issues the same collective with sizes that fit together.
void RunGroupAcrossRanks(const GroupPlan& plan, MPI_Comm comm, Scratch& scratch);

// For the description of a mismatch: every member rank calls it; exchanges the all-to-all chunk
// sizes and returns the first pair this rank finds that disagrees ("" when none here).
std::string ExchangeAllToAllSizes(const GroupPlan& plan, MPI_Comm comm);

// For messages: "{0,1,2,3}" (long groups shortened).
std::string GroupText(std::span<const int64_t> group);

// An agreement on `comm` about an error some members found: returns when none did; otherwise
// the lowest such member throws UserError(its error) and the others ErrorReportedByAnotherRank.
void AgreeOrThrow(MPI_Comm comm, const std::string& my_error, int world_rank);

// MPI counts are int: byte counts are given in units of a contiguous datatype of `bytes`
// bytes (a power of two dividing every value), MPI_BYTE when every value fits.
struct ByteUnit {
  MPI_Datatype datatype = MPI_BYTE;
  int64_t bytes = 1;
};
ByteUnit ByteUnitFor(std::span<const int64_t> byte_values);
void FreeByteUnits();

}  // namespace gspmd::mpi_internal
