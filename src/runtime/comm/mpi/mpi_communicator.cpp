// MpiCommunicator: the step rendezvous of a rank's devices, the groups of a step, the check that
// all ranks issue the same collective, sub-communicators, and collective-permute.
#include "runtime/comm/mpi/mpi_communicator.h"

#include <algorithm>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "runtime/comm/mpi/mpi_async_permutes.h"
#include "runtime/comm/mpi/mpi_reduction.h"
#include "runtime/comm/mpi/mpi_session.h"
#include "runtime/comm/mpi/mpi_step.h"
#include "runtime/comm/mpi/mpi_watchdog.h"
#include "runtime/comm/reduction.h"

namespace gspmd {

using mpi_internal::Call;
using mpi_internal::CheckMpi;
using mpi_internal::CollectiveKind;
using mpi_internal::GroupPlan;
using mpi_internal::GroupText;

namespace mpi_internal {

const char* CollectiveKindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return "all-reduce";
    case CollectiveKind::kAllGather: return "all-gather";
    case CollectiveKind::kReduceScatter: return "reduce-scatter";
    case CollectiveKind::kAllToAll: return "all-to-all";
    case CollectiveKind::kPermute: return "collective-permute";
    case CollectiveKind::kBroadcast: return "collective-broadcast";
  }
  return "collective";
}

std::string GroupText(std::span<const int64_t> group) {
  constexpr size_t kShown = 16;
  std::string text = "{";
  for (size_t i = 0; i < group.size() && i < kShown; ++i) {
    if (i > 0) text += ',';
    text += std::to_string(group[i]);
  }
  if (group.size() > kShown) text += ",... (" + std::to_string(group.size()) + " devices)";
  return text + "}";
}

void AgreeOrThrow(MPI_Comm comm, const std::string& my_error, int world_rank) {
  int mine = my_error.empty() ? INT_MAX : world_rank;
  int lowest = INT_MAX;
  CheckMpi(MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (lowest == INT_MAX) return;
  if (lowest == world_rank) throw UserError(my_error);
  throw ErrorReportedByAnotherRank(lowest);
}

}  // namespace mpi_internal

namespace {

// FNV-1a over the fields every member of a collective must agree on.
class SignatureHash {
 public:
  template <typename T>
  void Add(const T& value) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(&value);
    for (size_t i = 0; i < sizeof(T); ++i) hash_ = (hash_ ^ bytes[i]) * 1099511628211ull;
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 14695981039346656037ull;
};

// What must be equal on every member of `plan`'s group (sizes per member, not per rank).
uint64_t GroupSignature(const Call& call, int64_t sequence, const GroupPlan& plan) {
  SignatureHash hash;
  hash.Add(static_cast<int>(call.kind));
  hash.Add(sequence);
  for (int64_t device : plan.group) hash.Add(device);
  hash.Add(static_cast<int>(call.type));
  hash.Add(static_cast<int>(call.op));
  hash.Add(call.root);
  if (call.kind == CollectiveKind::kReduceScatter || call.kind == CollectiveKind::kBroadcast) hash.Add(call.recv.size());
  if (call.kind == CollectiveKind::kAllReduce || call.kind == CollectiveKind::kAllGather) hash.Add(call.send.size());
  if (call.kind == CollectiveKind::kAllToAll) hash.Add(call.send_list.size());
  if (call.kind == CollectiveKind::kPermute) {
    hash.Add(call.send.size());
    for (const SourceTargetPair& pair : call.pairs) {
      hash.Add(pair.source);
      hash.Add(pair.target);
    }
  }
  return hash.value();
}

const char* ReducerName(BinaryReducer op) {
  switch (op) {
    case BinaryReducer::kAdd: return "add";
    case BinaryReducer::kMultiply: return "multiply";
    case BinaryReducer::kMaximum: return "maximum";
    case BinaryReducer::kMinimum: return "minimum";
    case BinaryReducer::kAnd: return "and";
    case BinaryReducer::kOr: return "or";
    case BinaryReducer::kXor: return "xor";
    case BinaryReducer::kUnknown: break;
  }
  return "?";
}

std::string DescribeCall(const Call& call, int64_t sequence) {
  std::string text = StrCat("collective #", sequence + 1, " (", mpi_internal::CollectiveKindName(call.kind));
  switch (call.kind) {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kReduceScatter:
      text += StrCat(" of ", call.send.size(), " bytes of ", ElementTypeName(call.type), " (", ReducerName(call.op), ")");
      break;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kPermute: text += StrCat(" of ", call.send.size(), " bytes"); break;
    case CollectiveKind::kBroadcast: text += StrCat(" of ", call.recv.size(), " bytes"); break;
    case CollectiveKind::kAllToAll: break;
  }
  if (call.kind == CollectiveKind::kPermute) return text + StrCat(" with ", call.pairs.size(), " pairs)");
  return text + " over devices " + GroupText(call.group) + ")";
}

uint64_t Mix(uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// For all-to-all: the chunks this rank's members send, minus those they expect to receive,
// each as a hash of (from, to, bytes). Summed over the ranks it is zero exactly when every
// chunk is as large as its receiver expects (with overwhelming probability otherwise not).
uint64_t ChunkBalance(const GroupPlan& plan) {
  uint64_t balance = 0;
  auto chunk = [](int64_t from, int64_t to, size_t bytes) {
    return Mix(Mix(Mix(static_cast<uint64_t>(from)) ^ static_cast<uint64_t>(to)) ^ bytes);
  };
  for (const Call* call : plan.local_calls) {
    if (call->kind != CollectiveKind::kAllToAll) return 0;
    for (size_t j = 0; j < plan.group.size(); ++j) {
      balance += chunk(call->device, plan.group[j], call->send_list[j].size());
      balance -= chunk(plan.group[j], call->device, call->recv_list[j].size());
    }
  }
  return balance;
}

// Combines signatures: lanes 0 and 1 by maximum (equal hashes have max(h) = h and
// max(~h) = ~h), lane 2 by wrapping sum (zero exactly when every all-to-all chunk is as large
// as its receiver expects).
void CombineSignatures(const uint64_t* in, uint64_t* inout) {
  inout[0] = std::max(in[0], inout[0]);
  inout[1] = std::max(in[1], inout[1]);
  inout[2] += in[2];
}

void CombineSignatureLanes(void* in, void* inout, int* length, MPI_Datatype*) {
  for (int i = 0; i + 2 < *length; i += 3)
    CombineSignatures(static_cast<const uint64_t*>(in) + i, static_cast<uint64_t*>(inout) + i);
}

// Up to this many member ranks, the check gathers every member's signature (one round of
// messages) and combines them locally; past it, a reduction (log2(ranks) rounds one after
// another, but no buffer that grows with the ranks). With more ranks than cores, every round is
// a round of context switches: the gather took all-to-all at 1 MiB per rank from 0.82 to 0.90
// of MPI_Alltoall's bandwidth on 8 ranks (docs/performance.md, section e).
// GSPMD_MPI_GATHERED_CHECK_RANKS (set by tests only) lowers it, so small jobs test both paths.
size_t GatheredCheckRanks() {
  static const size_t ranks = [] {
    const char* chosen = std::getenv("GSPMD_MPI_GATHERED_CHECK_RANKS");
    return chosen != nullptr ? static_cast<size_t>(std::max(0LL, std::atoll(chosen))) : size_t{64};
  }();
  return ranks;
}

// How many times the check is polled after the data has moved before waiting for it.
constexpr int kCheckPolls = 64;

// The check that every member rank issues the same collective, started before the data moves
// and finished after, so that its latency overlaps the transfer. MPI reads and writes its
// buffers until the request completes: it stays where it was started.
struct SignatureCheck {
  uint64_t values[3] = {0, 0, 0};
  uint64_t combined[3] = {0, 0, 0};
  std::vector<uint64_t> gathered;  // 3 per member rank (small groups)
  MPI_Request request = MPI_REQUEST_NULL;

  SignatureCheck() = default;
  SignatureCheck(const SignatureCheck&) = delete;
  SignatureCheck& operator=(const SignatureCheck&) = delete;

  // After the request completed: the combination of a gathered check.
  void CombineGathered() {
    if (gathered.empty()) return;
    std::copy(gathered.begin(), gathered.begin() + 3, combined);
    for (size_t i = 3; i + 2 < gathered.size(); i += 3) CombineSignatures(&gathered[i], combined);
  }
  bool agreed() const { return combined[0] == values[0] && combined[1] == values[1] && combined[2] == 0; }
};

}  // namespace

struct MpiCommunicator::Impl {
  struct Step {
    int64_t sequence = 0;
    std::vector<Call*> calls;
    int64_t arrived = 0;
    bool done = false;
    std::string error;       // a UserError for every local device
    int reported_by = -1;    // >= 0: another rank reports the error
    int64_t wait = -1;       // the watchdog's id of the rank's wait in it
  };

  Impl(MpiSession& session, int64_t devices_per_rank)
      : session(session),
        rank(session.rank()),
        num_ranks(session.size()),
        per_rank(devices_per_rank),
        first_local(session.rank() * devices_per_rank),
        next_sequence(static_cast<size_t>(devices_per_rank), 0),
        finished(static_cast<size_t>(devices_per_rank), false),
        async_permutes(session, devices_per_rank) {
    GSPMD_CHECK(devices_per_rank >= 1, "devices_per_rank must be positive");
    CheckMpi(MPI_Op_create(&CombineSignatureLanes, /*commute=*/1, &signature_op), "MPI_Op_create");
  }

  ~Impl() {
    if (signature_op != MPI_OP_NULL) MPI_Op_free(&signature_op);
    for (auto& [ranks, comm] : subcommunicators)
      if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
    mpi_internal::FreeUserReductions();
    mpi_internal::FreeByteUnits();
  }

  int64_t num_devices() const { return per_rank * num_ranks; }
  int RankOf(int64_t device) const { return static_cast<int>(device / per_rank); }
  bool IsLocal(int64_t device) const { return device >= first_local && device < first_local + per_rank; }

  // ---- checks on the calling device's thread ----

  void CheckGroup(const Call& call) const {
    std::vector<bool> seen(static_cast<size_t>(num_devices()), false);
    bool contains = false;
    for (int64_t member : call.group) {
      if (member < 0 || member >= num_devices())
        GSPMD_USER_ERROR("collective group ", GroupText(call.group), " names device ", member, " but there are ",
                         num_devices(), " devices");
      if (seen[static_cast<size_t>(member)])
        GSPMD_USER_ERROR("collective group ", GroupText(call.group), " lists device ", member, " twice");
      seen[static_cast<size_t>(member)] = true;
      contains |= member == call.device;
    }
    if (!contains)
      GSPMD_USER_ERROR("collective group ", GroupText(call.group), " does not contain the calling device ", call.device);
  }

  void CheckSizes(const Call& call) const {
    const size_t n = call.group.size();
    const size_t element = IsArrayType(call.type) ? static_cast<size_t>(ElementByteSize(call.type)) : 1;
    const std::string where = StrCat("device ", call.device, ": ", mpi_internal::CollectiveKindName(call.kind), " over ",
                                     GroupText(call.group));
    switch (call.kind) {
      case CollectiveKind::kAllReduce:
        if (call.send.size() != call.recv.size() || call.send.size() % element != 0)
          GSPMD_USER_ERROR(where, ": input and output sizes differ (", call.send.size(), " and ", call.recv.size(),
                           " bytes) or are not whole elements");
        return;
      case CollectiveKind::kAllGather:
        if (call.recv.size() != n * call.send.size())
          GSPMD_USER_ERROR(where, ": the output has ", call.recv.size(), " bytes, expected the group size times the ",
                           call.send.size(), " input bytes");
        return;
      case CollectiveKind::kReduceScatter:
        if (call.send.size() != n * call.recv.size() || call.recv.size() % element != 0)
          GSPMD_USER_ERROR(where, ": the input has ", call.send.size(), " bytes, expected the group size times the ",
                           call.recv.size(), " output bytes");
        return;
      case CollectiveKind::kAllToAll:
        if (call.send_list.size() != n || call.recv_list.size() != n)
          GSPMD_USER_ERROR(where, ": expected one chunk per member in each direction, got ", call.send_list.size(),
                           " and ", call.recv_list.size());
        return;
      case CollectiveKind::kBroadcast:
        if (call.root < 0 || call.root >= static_cast<int64_t>(n))
          GSPMD_USER_ERROR("broadcast root index ", call.root, " is outside the group ", GroupText(call.group));
        return;
      case CollectiveKind::kPermute:
        if (call.send.size() != call.recv.size())
          GSPMD_USER_ERROR("device ", call.device, ": collective-permute input and output sizes differ");
        return;
    }
  }

  // ---- the rendezvous ----

  void Join(Call& call) {
    GSPMD_CHECK(IsLocal(call.device), "device ", call.device, " is not on rank ", rank);
    if (call.kind != CollectiveKind::kPermute) CheckGroup(call);
    CheckSizes(call);
    const size_t local = static_cast<size_t>(call.device - first_local);
    const int64_t sequence = next_sequence[local]++;
    MaybeInjectFault(session.fault(), rank, sequence);

    std::unique_lock<std::mutex> lock(mutex);
    if (aborted) throw CommunicatorAborted();
    if (!current) {
      current = std::make_shared<Step>();
      current->sequence = sequence;
      current->calls.assign(static_cast<size_t>(per_rank), nullptr);
      current->wait =
          session.watchdog().BeginWait(sequence, DescribeCall(call, sequence), [this] { return MissingLocalDevices(); });
    }
    std::shared_ptr<Step> step = current;
    GSPMD_CHECK(step->sequence == sequence, "device ", call.device, " issued collective #", sequence + 1,
                " while its rank is at #", step->sequence + 1);
    if (!step->error.empty()) throw UserError(step->error);
    step->calls[local] = &call;
    for (int64_t i = 0; i < per_rank; ++i) {
      if (finished[static_cast<size_t>(i)] && step->calls[static_cast<size_t>(i)] == nullptr) {
        step->error = StrCat(DescribeCall(call, sequence), " waits for device ", first_local + i,
                             ", which finished its program without issuing it");
        Finish(step);
        throw UserError(step->error);
      }
    }
    if (++step->arrived == per_rank) {
      lock.unlock();
      Execute(*step);
      lock.lock();
      Finish(step);
    } else {
      changed.wait(lock, [&] { return step->done || aborted; });
      if (!step->done) throw CommunicatorAborted();
    }
    if (step->reported_by >= 0) throw ErrorReportedByAnotherRank(step->reported_by);
    if (!step->error.empty()) throw UserError(step->error);
  }

  // With the lock held.
  void Finish(const std::shared_ptr<Step>& step) {
    step->done = true;
    if (current == step) current.reset();
    session.watchdog().EndWait(step->wait);
    changed.notify_all();
  }

  std::string MissingLocalDevices() {
    std::lock_guard<std::mutex> lock(mutex);
    if (!current || per_rank == 1) return "";
    std::string missing;
    for (int64_t i = 0; i < per_rank; ++i)
      if (current->calls[static_cast<size_t>(i)] == nullptr) missing += (missing.empty() ? "" : ", ") + std::to_string(first_local + i);
    if (missing.empty()) return "";
    return "device(s) " + missing + " of rank " + std::to_string(rank) + " have not reached it";
  }

  void Execute(Step& step) {
    try {
      ExecuteStep(step);
    } catch (const ErrorReportedByAnotherRank& other) {
      step.reported_by = other.reporting_rank();
      step.error = other.what();
    } catch (const std::exception& error) {
      step.error = error.what();
    }
  }

  // ---- one step ----

  void ExecuteStep(Step& step) {
    const Call& first = *step.calls[0];
    for (const Call* call : step.calls) {
      if (call->kind != first.kind || call->type != first.type || call->op != first.op || call->root != first.root ||
          (first.kind == CollectiveKind::kPermute && !std::ranges::equal(call->pairs, first.pairs)))
        GSPMD_USER_ERROR("devices ", first.device, " and ", call->device, " issued different collectives at the same "
                         "position: ", DescribeCall(first, step.sequence), " and ", DescribeCall(*call, step.sequence));
    }
    if (first.kind == CollectiveKind::kPermute) return Permute(step);
    std::map<int64_t, GroupPlan> plans;  // by the group's smallest device: the order every rank uses
    for (Call* call : step.calls) {
      const int64_t key = *std::min_element(call->group.begin(), call->group.end());
      auto [it, inserted] = plans.try_emplace(key);
      GroupPlan& plan = it->second;
      if (inserted) {
        BuildPlan(call->group, plan);
      } else if (plan.group != call->group) {
        GSPMD_USER_ERROR("devices ", plan.local_calls[0]->device, " and ", call->device, " disagree on their group: ",
                         GroupText(plan.group), " and ", GroupText(call->group));
      }
      const size_t position = static_cast<size_t>(std::find(plan.group.begin(), plan.group.end(), call->device) -
                                                  plan.group.begin());
      plan.local_members.push_back(position);
      plan.local_calls.push_back(call);
    }
    for (auto& [key, plan] : plans) {
      SortLocalMembers(plan);
      if (plan.ranks.size() == 1) {
        mpi_internal::RunLocalGroup(plan);
        continue;
      }
      MPI_Comm comm = SubCommunicator(plan.ranks);
      SignatureCheck check;
      StartSignatureCheck(check, comm, *plan.local_calls[0], step.sequence, plan);
      std::exception_ptr failure;
      try {
        mpi_internal::RunGroupAcrossRanks(plan, comm, scratch);
      } catch (const mpi_internal::MpiFailure&) {
        failure = std::current_exception();  // a mismatch explains it better, if there is one
      }
      FinishSignatureCheck(comm, check, *plan.local_calls[0], step.sequence, plan, failure);
    }
  }

  void BuildPlan(const std::vector<int64_t>& group, GroupPlan& plan) const {
    plan.group = group;
    for (int64_t device : group) {
      const int r = RankOf(device);
      auto it = std::find(plan.ranks.begin(), plan.ranks.end(), r);
      if (it == plan.ranks.end()) {
        plan.ranks.push_back(r);
        plan.members_per_rank.push_back(0);
        it = plan.ranks.end() - 1;
      }
      const size_t index = static_cast<size_t>(it - plan.ranks.begin());
      ++plan.members_per_rank[index];
      if (!plan.member_rank_index.empty() && static_cast<int>(index) < plan.member_rank_index.back()) plan.rank_major = false;
      plan.member_rank_index.push_back(static_cast<int>(index));
    }
    plan.my_index = static_cast<int>(std::find(plan.ranks.begin(), plan.ranks.end(), rank) - plan.ranks.begin());
  }

  static void SortLocalMembers(GroupPlan& plan) {
    std::vector<size_t> order(plan.local_members.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return plan.local_members[a] < plan.local_members[b]; });
    std::vector<size_t> members;
    std::vector<Call*> calls;
    for (size_t i : order) {
      members.push_back(plan.local_members[i]);
      calls.push_back(plan.local_calls[i]);
    }
    plan.local_members = std::move(members);
    plan.local_calls = std::move(calls);
  }

  MPI_Comm SubCommunicator(const std::vector<int>& ranks) {
    if (static_cast<int>(ranks.size()) == num_ranks) {
      bool identity = true;
      for (int r = 0; r < num_ranks; ++r) identity &= ranks[static_cast<size_t>(r)] == r;
      if (identity) return session.handles().collectives;
    }
    auto [it, inserted] = subcommunicators.try_emplace(ranks, MPI_COMM_NULL);
    if (!inserted) return it->second;
    MPI_Group world_group, group;
    CheckMpi(MPI_Comm_group(session.handles().collectives, &world_group), "MPI_Comm_group");
    CheckMpi(MPI_Group_incl(world_group, static_cast<int>(ranks.size()), ranks.data(), &group), "MPI_Group_incl");
    // Concurrent creations involving this rank happen one after another in the same global
    // order, so a tag derived from the rank list only guards against stray matches.
    uint64_t tag = 0;
    for (int r : ranks) tag = tag * 31 + static_cast<uint64_t>(r);
    CheckMpi(MPI_Comm_create_group(session.handles().collectives, group, static_cast<int>(tag % 30000) + 1000,
                                   &it->second),
             "MPI_Comm_create_group");
    MPI_Comm_set_errhandler(it->second, MPI_ERRORS_RETURN);
    MPI_Group_free(&group);
    MPI_Group_free(&world_group);
    return it->second;
  }

  void StartSignatureCheck(SignatureCheck& check, MPI_Comm comm, const Call& call, int64_t sequence,
                           const GroupPlan& plan) {
    const uint64_t hash = GroupSignature(call, sequence, plan);
    check.values[0] = hash;
    check.values[1] = ~hash;
    check.values[2] = ChunkBalance(plan);
    if (plan.ranks.size() <= GatheredCheckRanks()) {
      check.gathered.resize(3 * plan.ranks.size());
      CheckMpi(MPI_Iallgather(check.values, 3, MPI_UINT64_T, check.gathered.data(), 3, MPI_UINT64_T, comm,
                              &check.request),
               "MPI_Iallgather");
      return;
    }
    CheckMpi(MPI_Iallreduce(check.values, check.combined, 3, MPI_UINT64_T, signature_op, comm, &check.request),
             "MPI_Iallreduce");
  }

  // Every member rank issued the same collective with sizes that fit: fine (the data failure,
  // if any, is rethrown). Otherwise a UserError describing each rank's collective, raised by
  // the lowest rank (the others throw ErrorReportedByAnotherRank).
  void FinishSignatureCheck(MPI_Comm comm, SignatureCheck& check, const Call& call, int64_t sequence,
                            const GroupPlan& plan, std::exception_ptr data_failure) {
    // Every member posted its signature before its data, so after the data the check is
    // usually a few progress calls from done: poll for it briefly before MPI_Wait, which on an
    // oversubscribed node yields the core (mpi_yield_when_idle) and comes back a time slice later.
    int done = 0;
    for (int poll = 0; poll < kCheckPolls && !done; ++poll)
      CheckMpi(MPI_Test(&check.request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (!done) CheckMpi(MPI_Wait(&check.request, MPI_STATUS_IGNORE), "MPI_Wait");
    check.CombineGathered();
    const bool same_hash = check.combined[0] == check.values[0] && check.combined[1] == check.values[1];
    if (check.agreed()) {
      if (data_failure) std::rethrow_exception(data_failure);
      return;
    }
    if (same_hash) {  // the same all-to-all, but chunk sizes that do not pair up: find one
      mpi_internal::AgreeOrThrow(comm, mpi_internal::ExchangeAllToAllSizes(plan, comm), rank);
      GSPMD_CHECK(false, "all-to-all sizes disagree but no rank found the pair");
    }
    constexpr int kDescription = 384;
    char mine[kDescription] = {};
    const std::string description = DescribeCall(call, sequence);
    std::memcpy(mine, description.data(), std::min<size_t>(description.size(), kDescription - 1));
    int size = 0;
    MPI_Comm_size(comm, &size);
    std::vector<char> all(static_cast<size_t>(size) * kDescription);
    CheckMpi(MPI_Allgather(mine, kDescription, MPI_CHAR, all.data(), kDescription, MPI_CHAR, comm), "MPI_Allgather");
    std::string message = "ranks disagree on the collective they issue next (their programs differ):";
    for (int i = 0; i < size && i < 16; ++i)
      message += StrCat(i > 0 ? ";" : "", " rank ", plan.ranks[static_cast<size_t>(i)], " issues ",
                        std::string(all.data() + static_cast<size_t>(i) * kDescription));
    mpi_internal::AgreeOrThrow(comm, plan.my_index == 0 ? message : "", rank);
    GSPMD_CHECK(false, "the agreement on a mismatch returned");
  }

  // ---- collective-permute: point-to-point between the ranks of each pair ----

  void Permute(Step& step) {
    const Call& first = *step.calls[0];
    // Everyone takes part, so the whole job checks that it agrees.
    GroupPlan everyone;
    everyone.ranks.resize(static_cast<size_t>(num_ranks));
    for (int r = 0; r < num_ranks; ++r) everyone.ranks[static_cast<size_t>(r)] = r;
    everyone.my_index = rank;
    SignatureCheck check;
    StartSignatureCheck(check, session.handles().collectives, first, step.sequence, everyone);
    auto local_call = [&](int64_t device) { return step.calls[static_cast<size_t>(device - first_local)]; };
    std::vector<MPI_Request> requests;
    std::vector<std::pair<Call*, size_t>> receives;  // call and request index
    MPI_Comm comm = session.handles().collectives;
    for (const SourceTargetPair& pair : first.pairs) {
      const bool source_here = IsLocal(pair.source), target_here = IsLocal(pair.target);
      if (!source_here && !target_here) continue;
      if (source_here && target_here) {
        Call* to = local_call(pair.target);
        const Call* from = local_call(pair.source);
        if (from->send.size() != to->recv.size())
          GSPMD_USER_ERROR("collective-permute: device ", pair.source, " sends ", from->send.size(), " bytes but device ",
                           pair.target, " expects ", to->recv.size());
        if (!from->send.empty()) std::memcpy(to->recv.data(), from->send.data(), from->send.size());
        to->received = true;
        continue;
      }
      const int64_t values[] = {static_cast<int64_t>(first.send.size())};
      const mpi_internal::ByteUnit unit = mpi_internal::ByteUnitFor(values);
      const int count = static_cast<int>(first.send.size() / static_cast<size_t>(unit.bytes));
      requests.emplace_back();
      if (source_here) {
        CheckMpi(MPI_Isend(local_call(pair.source)->send.data(), count, unit.datatype, RankOf(pair.target),
                           static_cast<int>(pair.target), comm, &requests.back()),
                 "MPI_Isend");
      } else {
        Call* to = local_call(pair.target);
        CheckMpi(MPI_Irecv(to->recv.data(), count, unit.datatype, RankOf(pair.source), static_cast<int>(pair.target),
                           comm, &requests.back()),
                 "MPI_Irecv");
        to->received = true;
        receives.emplace_back(to, requests.size() - 1);
      }
    }
    std::vector<MPI_Status> statuses(requests.size());
    std::exception_ptr failure;
    try {
      CheckMpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), statuses.data()), "MPI_Waitall");
    } catch (const mpi_internal::MpiFailure&) {
      failure = std::current_exception();
    }
    FinishSignatureCheck(comm, check, first, step.sequence, everyone, failure);
  }

  MpiSession& session;
  const int rank;
  const int num_ranks;
  const int64_t per_rank;
  const int64_t first_local;
  std::mutex mutex;
  std::condition_variable changed;
  bool aborted = false;
  std::vector<int64_t> next_sequence;  // per local device; touched only by its thread
  std::vector<bool> finished;
  std::shared_ptr<Step> current;
  std::map<std::vector<int>, MPI_Comm> subcommunicators;
  mpi_internal::Scratch scratch;
  MPI_Op signature_op = MPI_OP_NULL;
  mpi_internal::AsyncPermutes async_permutes;
};

MpiCommunicator::MpiCommunicator(MpiSession& session, int64_t devices_per_rank)
    : impl_(std::make_unique<Impl>(session, devices_per_rank)) {}

MpiCommunicator::~MpiCommunicator() = default;

int64_t MpiCommunicator::num_devices() const { return impl_->num_devices(); }
int64_t MpiCommunicator::devices_per_rank() const { return impl_->per_rank; }
int64_t MpiCommunicator::first_local_device() const { return impl_->first_local; }
int64_t MpiCommunicator::subcommunicators_created() const {
  return static_cast<int64_t>(impl_->subcommunicators.size());
}

void MpiCommunicator::AllReduce(int64_t device, std::span<const int64_t> group, ElementType type, BinaryReducer op,
                                std::span<const uint8_t> send, std::span<uint8_t> recv) {
  if (!IsNativeReduction(op, type))
    GSPMD_USER_ERROR("all-reduce of ", ElementTypeName(type), " has no native kernel for the reducer; use the generic path");
  Call call;
  call.kind = CollectiveKind::kAllReduce;
  call.device = device;
  call.group.assign(group.begin(), group.end());
  call.type = type;
  call.op = op;
  call.send = send;
  call.recv = recv;
  impl_->Join(call);
}

void MpiCommunicator::AllGather(int64_t device, std::span<const int64_t> group, std::span<const uint8_t> send,
                                std::span<uint8_t> recv) {
  Call call;
  call.kind = CollectiveKind::kAllGather;
  call.device = device;
  call.group.assign(group.begin(), group.end());
  call.send = send;
  call.recv = recv;
  impl_->Join(call);
}

void MpiCommunicator::ReduceScatter(int64_t device, std::span<const int64_t> group, ElementType type,
                                    BinaryReducer op, std::span<const uint8_t> send, std::span<uint8_t> recv) {
  if (!IsNativeReduction(op, type))
    GSPMD_USER_ERROR("reduce-scatter of ", ElementTypeName(type),
                     " has no native kernel for the reducer; use the generic path");
  Call call;
  call.kind = CollectiveKind::kReduceScatter;
  call.device = device;
  call.group.assign(group.begin(), group.end());
  call.type = type;
  call.op = op;
  call.send = send;
  call.recv = recv;
  impl_->Join(call);
}

void MpiCommunicator::AllToAll(int64_t device, std::span<const int64_t> group,
                               std::span<const std::span<const uint8_t>> send,
                               std::span<const std::span<uint8_t>> recv) {
  Call call;
  call.kind = CollectiveKind::kAllToAll;
  call.device = device;
  call.group.assign(group.begin(), group.end());
  call.send_list = send;
  call.recv_list = recv;
  impl_->Join(call);
}

namespace {

void CheckPermutePairs(std::span<const SourceTargetPair> pairs, int64_t n) {
  std::vector<bool> targeted(static_cast<size_t>(n), false);
  for (const SourceTargetPair& pair : pairs) {
    if (pair.source < 0 || pair.source >= n || pair.target < 0 || pair.target >= n)
      GSPMD_USER_ERROR("collective-permute pair {", pair.source, ",", pair.target, "} names a device outside 0..", n - 1);
    if (targeted[static_cast<size_t>(pair.target)])
      GSPMD_USER_ERROR("collective-permute: device ", pair.target, " is the target of more than one pair");
    targeted[static_cast<size_t>(pair.target)] = true;
  }
}

}  // namespace

bool MpiCommunicator::CollectivePermute(int64_t device, std::span<const SourceTargetPair> pairs,
                                        std::span<const uint8_t> send, std::span<uint8_t> recv) {
  CheckPermutePairs(pairs, num_devices());
  Call call;
  call.kind = CollectiveKind::kPermute;
  call.device = device;
  call.pairs = pairs;
  call.send = send;
  call.recv = recv;
  impl_->Join(call);
  return call.received;
}

void MpiCommunicator::Broadcast(int64_t device, std::span<const int64_t> group, int64_t root, std::span<uint8_t> data) {
  Call call;
  call.kind = CollectiveKind::kBroadcast;
  call.device = device;
  call.group.assign(group.begin(), group.end());
  call.root = root;
  call.recv = data;
  impl_->Join(call);
}

// The start takes a collective number like any collective (GSPMD_MPI_FAULT counts it, and the
// watchdog reports the done's wait under it); the done takes none but is a point where a fault
// strikes (after=K, with K the start's number + 1, strikes while the permute is in flight).
int64_t MpiCommunicator::StartCollectivePermute(int64_t device, std::span<const SourceTargetPair> pairs, Literal send) {
  CheckPermutePairs(pairs, num_devices());
  const int64_t local = device - impl_->first_local;
  GSPMD_CHECK(local >= 0 && local < impl_->per_rank, "device ", device, " is not on rank ", impl_->rank);
  const int64_t sequence = impl_->next_sequence[static_cast<size_t>(local)]++;
  MaybeInjectFault(impl_->session.fault(), impl_->rank, sequence);
  return impl_->async_permutes.Start(device, sequence, pairs, std::move(send));
}

Literal MpiCommunicator::FinishCollectivePermute(int64_t device, int64_t handle, bool* received) {
  const int64_t local = device - impl_->first_local;
  GSPMD_CHECK(local >= 0 && local < impl_->per_rank, "device ", device, " is not on rank ", impl_->rank);
  MaybeInjectFault(impl_->session.fault(), impl_->rank, impl_->next_sequence[static_cast<size_t>(local)]);
  return impl_->async_permutes.Finish(device, handle, received);
}

void MpiCommunicator::Abort() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->aborted = true;
  impl_->async_permutes.Abort();
  impl_->changed.notify_all();
}

void MpiCommunicator::DeviceFinished(int64_t device) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const int64_t local = device - impl_->first_local;
  GSPMD_CHECK(local >= 0 && local < impl_->per_rank, "device ", device, " is not on this rank");
  impl_->finished[static_cast<size_t>(local)] = true;
  if (impl_->current && impl_->current->calls[static_cast<size_t>(local)] == nullptr && !impl_->current->done) {
    impl_->current->error = StrCat("collective #", impl_->current->sequence + 1,
                                   " waits for device ", device, ", which finished its program without issuing it");
    impl_->Finish(impl_->current);
  }
}

}  // namespace gspmd
