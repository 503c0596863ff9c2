// MpiWatchdog: the status protocol (query every rank, collect answers, name who is missing)
// and the timeout check, on a thread that sleeps between polls.
#include "runtime/comm/mpi/mpi_watchdog.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/comm/mpi/mpi_handles.h"

namespace gspmd {
namespace {

using Clock = std::chrono::steady_clock;
using mpi_internal::Handles;

constexpr int kTagQuery = 1;
constexpr int kTagAnswer = 2;
constexpr auto kPollInterval = std::chrono::milliseconds(20);
constexpr auto kAnswerDeadline = std::chrono::seconds(3);
// A rank that finds another rank waiting longer in the same wait leaves the report to it
// for this long.
constexpr auto kDeferral = std::chrono::seconds(4);
constexpr size_t kDescriptionBytes = 480;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string SecondsText(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", seconds);
  return text;
}

}  // namespace

// What one rank answers to a status query (sent as raw bytes between identical binaries).
struct MpiWatchdog::Status {
  int64_t query = 0;
  int64_t completed = 0;
  int64_t wait_step = -1;
  int32_t waiting = 0;
  int32_t rank = 0;
  double waited_seconds = 0;
  char description[kDescriptionBytes] = {};

  std::string Description() const { return std::string(description, strnlen(description, sizeof(description))); }
};

struct MpiWatchdog::Serving {
  MPI_Request query_request = MPI_REQUEST_NULL;
  int64_t query_buffer = 0;
  struct Answer {
    MPI_Request request = MPI_REQUEST_NULL;
    std::unique_ptr<Status> status;
  };
  std::vector<Answer> answers;
  int64_t next_query = 0;
  int64_t query_sent = 0;  // the buffer of the query sends (alive while they may be in flight)
  int64_t reported_serial = -1;
  int64_t deferred_serial = -1;
  Clock::time_point deferred_until;
};

MpiWatchdog::MpiWatchdog(Handles& handles, int rank, int size, double timeout_seconds)
    : handles_(handles), rank_(rank), size_(size), timeout_seconds_(timeout_seconds) {
  serving_ = new Serving;
  MPI_Irecv(&serving_->query_buffer, 1, MPI_INT64_T, MPI_ANY_SOURCE, kTagQuery, handles_.watchdog,
            &serving_->query_request);
  thread_ = std::thread([this] { Loop(); });
}

MpiWatchdog::~MpiWatchdog() {
  Stop();
  delete serving_;
}

void MpiWatchdog::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_ && !thread_.joinable()) return;
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (serving_->query_request != MPI_REQUEST_NULL) {
    MPI_Cancel(&serving_->query_request);
    MPI_Wait(&serving_->query_request, MPI_STATUS_IGNORE);
  }
  for (Serving::Answer& answer : serving_->answers) {
    int done = 0;
    MPI_Test(&answer.request, &done, MPI_STATUS_IGNORE);
    if (!done) MPI_Request_free(&answer.request);
  }
  serving_->answers.clear();
}

int64_t MpiWatchdog::BeginWait(int64_t step, std::string description, std::function<std::string()> detail) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t serial = ++wait_serial_;
  waits_.emplace(serial, Wait{step, std::move(description), std::move(detail), Clock::now()});
  return serial;
}

void MpiWatchdog::EndWait(int64_t wait) {
  std::function<std::string()> detail;  // destroyed without the lock
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = waits_.find(wait);
  if (it == waits_.end()) return;
  if (it->second.step >= 0) completed_ = std::max(completed_, it->second.step + 1);
  detail = std::move(it->second.detail);
  waits_.erase(it);
}

int64_t MpiWatchdog::completed_collectives() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_;
}

MpiWatchdog::Status MpiWatchdog::CurrentStatus() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Status status;
  status.rank = rank_;
  status.completed = completed_;
  status.waiting = waits_.empty() ? 0 : 1;
  if (waits_.empty()) return status;
  const Wait& oldest = waits_.begin()->second;
  status.wait_step = oldest.step;
  status.waited_seconds = SecondsSince(oldest.since);
  const size_t length = std::min(oldest.description.size(), sizeof(status.description) - 1);
  std::memcpy(status.description, oldest.description.data(), length);
  return status;
}

void MpiWatchdog::ServeQueries() {
  Serving& serving = *serving_;
  while (serving.query_request != MPI_REQUEST_NULL) {
    int arrived = 0;
    MPI_Status mpi_status;
    if (MPI_Test(&serving.query_request, &arrived, &mpi_status) != MPI_SUCCESS || !arrived) break;
    Serving::Answer answer;
    answer.status = std::make_unique<Status>(CurrentStatus());
    answer.status->query = serving.query_buffer;
    MPI_Isend(answer.status.get(), sizeof(Status), MPI_BYTE, mpi_status.MPI_SOURCE, kTagAnswer, handles_.watchdog,
              &answer.request);
    serving.answers.push_back(std::move(answer));
    MPI_Irecv(&serving.query_buffer, 1, MPI_INT64_T, MPI_ANY_SOURCE, kTagQuery, handles_.watchdog,
              &serving.query_request);
  }
  // Drop answers that have gone out.
  std::erase_if(serving.answers, [](Serving::Answer& answer) {
    int done = 0;
    MPI_Test(&answer.request, &done, MPI_STATUS_IGNORE);
    return done != 0;
  });
}

void MpiWatchdog::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    lock.unlock();
    ServeQueries();
    lock.lock();
    const int64_t oldest = waits_.empty() ? -1 : waits_.begin()->first;
    const bool due = oldest >= 0 && oldest != serving_->reported_serial &&
                     SecondsSince(waits_.begin()->second.since) > timeout_seconds_ &&
                     !(oldest == serving_->deferred_serial && Clock::now() < serving_->deferred_until);
    if (due) {
      lock.unlock();
      HandleTimeout();
      lock.lock();
      continue;
    }
    changed_.wait_for(lock, kPollInterval);
  }
}

void MpiWatchdog::HandleTimeout() {
  Serving& serving = *serving_;
  int64_t serial;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (waits_.empty()) return;
    serial = waits_.begin()->first;
  }
  // Ask every other rank where it is, answering their queries meanwhile.
  const int64_t query = ++serving.next_query;
  serving.query_sent = query;
  std::vector<Status> statuses(static_cast<size_t>(size_));
  std::vector<bool> answered(static_cast<size_t>(size_), false);
  std::vector<MPI_Request> sends(static_cast<size_t>(size_), MPI_REQUEST_NULL);
  std::vector<MPI_Request> receives(static_cast<size_t>(size_), MPI_REQUEST_NULL);
  std::vector<Clock::time_point> answered_at(static_cast<size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    MPI_Isend(&serving.query_sent, 1, MPI_INT64_T, r, kTagQuery, handles_.watchdog, &sends[static_cast<size_t>(r)]);
    MPI_Irecv(&statuses[static_cast<size_t>(r)], sizeof(Status), MPI_BYTE, r, kTagAnswer, handles_.watchdog,
              &receives[static_cast<size_t>(r)]);
  }
  const Clock::time_point deadline = Clock::now() + kAnswerDeadline;
  int pending = size_ - 1;
  while (pending > 0 && Clock::now() < deadline) {
    ServeQueries();
    for (int r = 0; r < size_; ++r) {
      MPI_Request& request = receives[static_cast<size_t>(r)];
      if (request == MPI_REQUEST_NULL) continue;
      int done = 0;
      if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || !done) continue;
      Status& status = statuses[static_cast<size_t>(r)];
      if (status.query != query) {  // an answer to an earlier query: wait for this one's
        MPI_Irecv(&status, sizeof(Status), MPI_BYTE, r, kTagAnswer, handles_.watchdog, &request);
        continue;
      }
      answered[static_cast<size_t>(r)] = true;
      answered_at[static_cast<size_t>(r)] = Clock::now();
      --pending;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (int r = 0; r < size_; ++r) {
    MPI_Request& receive = receives[static_cast<size_t>(r)];
    if (receive != MPI_REQUEST_NULL) {
      MPI_Cancel(&receive);
      MPI_Wait(&receive, MPI_STATUS_IGNORE);
    }
    MPI_Request& send = sends[static_cast<size_t>(r)];
    int done = 0;
    if (send != MPI_REQUEST_NULL) MPI_Test(&send, &done, MPI_STATUS_IGNORE);
    if (send != MPI_REQUEST_NULL && !done) MPI_Request_free(&send);
  }

  Status mine = CurrentStatus();
  // Every answer's wait as of now, so that waits compare at one moment.
  for (int r = 0; r < size_; ++r) {
    Status& other = statuses[static_cast<size_t>(r)];
    if (answered[static_cast<size_t>(r)] && other.waiting) other.waited_seconds += SecondsSince(answered_at[static_cast<size_t>(r)]);
  }
  std::function<std::string()> detail_of_wait;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = waits_.find(serial);
    if (it == waits_.end()) return;  // the wait ended meanwhile
    detail_of_wait = it->second.detail;
  }
  // Called without our lock: it takes the communicator's, which is held around BeginWait.
  const std::string detail = detail_of_wait ? detail_of_wait() : "";
  // Leave the report to a rank that has waited longer (it timed out first, in the earliest
  // stuck wait, which says most about the cause), so that the job reports once.
  if (serving.deferred_serial != serial) {
    for (int r = 0; r < size_; ++r) {
      const Status& other = statuses[static_cast<size_t>(r)];
      if (r == rank_ || !answered[static_cast<size_t>(r)] || !other.waiting) continue;
      const bool longer = other.waited_seconds > mine.waited_seconds ||
                          (other.waited_seconds == mine.waited_seconds && r < rank_);
      if (longer) {
        serving.deferred_serial = serial;
        serving.deferred_until = Clock::now() + kDeferral;
        return;
      }
    }
  }
  serving.reported_serial = serial;
  std::string message = Report(mine, statuses, answered);
  if (!detail.empty()) message += "; " + detail;
  mpi_internal::AbortJob(rank_, message);
}

std::string MpiWatchdog::Report(const Status& mine, const std::vector<Status>& statuses,
                                const std::vector<bool>& answered) const {
  std::string message = mine.Description() + " did not complete within --collective-timeout " +
                        SecondsText(timeout_seconds_) + " s (waited " + SecondsText(mine.waited_seconds) + " s)";
  std::vector<std::string> missing;
  std::vector<int> missing_ranks;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const Status& other = statuses[static_cast<size_t>(r)];
    if (!answered[static_cast<size_t>(r)]) {
      missing_ranks.push_back(r);
      missing.push_back("rank " + std::to_string(r) + " did not answer a status query within " +
                        std::to_string(kAnswerDeadline.count()) + " s");
      continue;
    }
    const bool arrived = mine.wait_step >= 0
                             ? (other.waiting && other.wait_step == mine.wait_step) || other.completed > mine.wait_step
                             : other.waiting && other.Description() == mine.Description();
    if (arrived) continue;
    missing_ranks.push_back(r);
    std::string where = "rank " + std::to_string(r) + " has completed " + std::to_string(other.completed) +
                        " collectives and ";
    where += other.waiting ? "is waiting in " + other.Description() : std::string("is not in one: computing or stuck");
    missing.push_back(where);
  }
  if (missing_ranks.empty()) {
    message += ": every rank has reached it, so the ranks disagree on what it is";
    for (int r = 0; r < size_ && r < 8; ++r) {
      if (r == rank_) continue;
      message += "; rank " + std::to_string(r) + " waits in " + statuses[static_cast<size_t>(r)].Description();
    }
    return message;
  }
  std::string ranks;
  for (size_t i = 0; i < missing_ranks.size(); ++i) ranks += (i > 0 ? ", " : "") + std::to_string(missing_ranks[i]);
  message += ": rank" + std::string(missing_ranks.size() > 1 ? "s " : " ") + ranks + " did not arrive (";
  constexpr size_t kMaxListed = 16;
  for (size_t i = 0; i < missing.size() && i < kMaxListed; ++i) message += (i > 0 ? "; " : "") + missing[i];
  if (missing.size() > kMaxListed) message += "; ...";
  return message + ")";
}

}  // namespace gspmd
