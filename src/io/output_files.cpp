// PendingFiles: nameless files (O_TMPFILE) or temporary names, commit by link and rename, and
// removal of leftovers on error or SIGTERM.
#include "io/output_files.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

// Temporary paths a signal handler may remove: fixed storage, so that the handler needs no
// allocation or lock (async-signal-safe). Paths beyond the capacity are still removed on
// errors, just not on signals.
constexpr int kSignalSlots = 1024;
constexpr size_t kMaxSignalPath = 1024;
std::array<std::array<char, kMaxSignalPath>, kSignalSlots> g_slot_paths;
std::array<std::atomic<bool>, kSignalSlots> g_slot_used;
std::mutex g_slot_mutex;  // taken by Add/Release only, never by the handler
std::once_flag g_handlers_installed;
struct sigaction g_previous_term, g_previous_int;

void RemoveTemporariesAndReraise(int signal_number) {
  for (int slot = 0; slot < kSignalSlots; ++slot) {
    if (g_slot_used[slot].load(std::memory_order_acquire)) ::unlink(g_slot_paths[slot].data());
  }
  struct sigaction& previous = signal_number == SIGTERM ? g_previous_term : g_previous_int;
  ::sigaction(signal_number, &previous, nullptr);
  ::raise(signal_number);
}

void InstallHandlers() {
  struct sigaction action {};
  action.sa_handler = RemoveTemporariesAndReraise;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;
  ::sigaction(SIGTERM, &action, &g_previous_term);
  ::sigaction(SIGINT, &action, &g_previous_int);
}

int ClaimSlot(const std::string& path) {
  if (path.size() + 1 > kMaxSignalPath) return -1;
  std::call_once(g_handlers_installed, InstallHandlers);
  std::lock_guard<std::mutex> lock(g_slot_mutex);
  for (int slot = 0; slot < kSignalSlots; ++slot) {
    if (g_slot_used[slot].load(std::memory_order_relaxed)) continue;
    std::memcpy(g_slot_paths[slot].data(), path.c_str(), path.size() + 1);
    g_slot_used[slot].store(true, std::memory_order_release);
    return slot;
  }
  return -1;
}

void ReleaseSlot(int slot) {
  if (slot < 0) return;
  std::lock_guard<std::mutex> lock(g_slot_mutex);
  g_slot_used[slot].store(false, std::memory_order_release);
}

std::atomic<int64_t> g_next_temporary{0};

// Nameless files held open at once, at most (each holds a descriptor until committed); later
// files get temporary names instead.
constexpr int kMaxNamelessFiles = 256;
std::mutex g_nameless_mutex;
std::map<std::string, std::string> g_nameless_final;  // "/proc/self/fd/N" -> final path

std::string TemporaryNameFor(const std::filesystem::path& final_path) {
  std::string name = ".";
  name += final_path.filename().string();
  name += ".tmp-";
  name += std::to_string(::getpid());
  name += '-';
  name += std::to_string(++g_next_temporary);
  return (final_path.parent_path() / name).string();
}

// A file without a name in final_path's directory (O_TMPFILE), or -1 where the file system or
// the kernel has none. It vanishes with the process however the process ends, SIGKILL included.
int OpenNameless(const std::filesystem::path& final_path) {
#ifdef O_TMPFILE
  static const bool have_proc = ::access("/proc/self/fd", X_OK) == 0;
  if (!have_proc) return -1;
  std::lock_guard<std::mutex> lock(g_nameless_mutex);
  if (g_nameless_final.size() >= kMaxNamelessFiles) return -1;
  const std::string dir = final_path.parent_path().empty() ? "." : final_path.parent_path().string();
  return ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
#else
  (void)final_path;
  return -1;
#endif
}

}  // namespace

std::string FinalPathOf(const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(g_nameless_mutex);
    const auto it = g_nameless_final.find(path);
    if (it != g_nameless_final.end()) return it->second;
  }
  const std::filesystem::path file(path);
  const std::string name = file.filename().string();
  const size_t marker = name.rfind(".tmp-");
  if (name.size() < 2 || name[0] != '.' || marker == std::string::npos || marker < 1) return path;
  return (file.parent_path() / name.substr(1, marker - 1)).string();
}

PendingFiles::~PendingFiles() { Discard(); }

std::string PendingFiles::Add(const std::string& final_path) {
  Entry entry;
  entry.final_path = final_path;
  entry.fd = OpenNameless(final_path);
  if (entry.fd >= 0) {
    entry.temporary = "/proc/self/fd/" + std::to_string(entry.fd);
    std::lock_guard<std::mutex> lock(g_nameless_mutex);
    g_nameless_final[entry.temporary] = final_path;
  } else {
    entry.temporary = TemporaryNameFor(final_path);
    entry.signal_slot = ClaimSlot(entry.temporary);
  }
  entries_.push_back(entry);
  return entries_.back().temporary;
}

void PendingFiles::Commit() {
  for (size_t i = 0; i < entries_.size(); ++i) {
    Entry& entry = entries_[i];
    std::string failure;
    if (entry.fd >= 0) {
      // Give the nameless file a temporary name (link fails on an existing name), then move
      // it over the final one, as for named temporaries.
      const std::string nameless = entry.temporary;
      entry.temporary = TemporaryNameFor(entry.final_path);
      entry.signal_slot = ClaimSlot(entry.temporary);
      if (::linkat(AT_FDCWD, nameless.c_str(), AT_FDCWD, entry.temporary.c_str(), AT_SYMLINK_FOLLOW) != 0)
        failure = std::strerror(errno);
      ForgetNameless(entry);
    }
    if (failure.empty() && std::rename(entry.temporary.c_str(), entry.final_path.c_str()) != 0)
      failure = std::strerror(errno);
    if (!failure.empty()) {
      const std::string failed = entry.final_path;
      ::unlink(entry.temporary.c_str());
      ReleaseSlot(entry.signal_slot);
      entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      Discard();
      ThrowUserErrorAt(SourceLocation{failed, 0, 0},
                       "cannot move the finished output into place: " + failure + " (expected a writable directory)");
    }
    ReleaseSlot(entry.signal_slot);
  }
  entries_.clear();
}

void PendingFiles::Discard() {
  for (Entry& entry : entries_) {
    if (entry.fd >= 0) ForgetNameless(entry);  // closing it frees the file
    else ::unlink(entry.temporary.c_str());
    ReleaseSlot(entry.signal_slot);
  }
  entries_.clear();
}

void PendingFiles::ForgetNameless(Entry& entry) {
  {
    std::lock_guard<std::mutex> lock(g_nameless_mutex);
    g_nameless_final.erase("/proc/self/fd/" + std::to_string(entry.fd));
  }
  ::close(entry.fd);
  entry.fd = -1;
}

}  // namespace gspmd
