// PendingFiles: temporary names, commit by rename, and removal of leftovers on error or SIGTERM.
#include "io/output_files.h"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
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

}  // namespace

std::string FinalPathOf(const std::string& path) {
  const std::filesystem::path file(path);
  const std::string name = file.filename().string();
  const size_t marker = name.rfind(".tmp-");
  if (name.size() < 2 || name[0] != '.' || marker == std::string::npos || marker < 1) return path;
  return (file.parent_path() / name.substr(1, marker - 1)).string();
}

PendingFiles::~PendingFiles() { Discard(); }

std::string PendingFiles::Add(const std::string& final_path) {
  const std::filesystem::path path(final_path);
  std::string name = ".";
  name += path.filename().string();
  name += ".tmp-";
  name += std::to_string(::getpid());
  name += '-';
  name += std::to_string(++g_next_temporary);
  Entry entry;
  entry.temporary = (path.parent_path() / name).string();
  entry.final_path = final_path;
  entry.signal_slot = ClaimSlot(entry.temporary);
  entries_.push_back(entry);
  return entries_.back().temporary;
}

void PendingFiles::Commit() {
  for (size_t i = 0; i < entries_.size(); ++i) {
    Entry& entry = entries_[i];
    if (std::rename(entry.temporary.c_str(), entry.final_path.c_str()) != 0) {
      const std::string reason = std::strerror(errno);
      const std::string failed = entry.final_path;
      entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(i));
      ThrowUserErrorAt(SourceLocation{failed, 0, 0},
                       "cannot move the finished output into place: " + reason + " (expected a writable directory)");
    }
    ReleaseSlot(entry.signal_slot);
  }
  entries_.clear();
}

void PendingFiles::Discard() {
  for (const Entry& entry : entries_) {
    ::unlink(entry.temporary.c_str());
    ReleaseSlot(entry.signal_slot);
  }
  entries_.clear();
}

}  // namespace gspmd
