// Parsing GSPMD_MPI_FAULT and firing the fault.
#include "runtime/comm/mpi/fault_injection.h"

#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

[[noreturn]] void Malformed(const std::string& text, const std::string& why) {
  GSPMD_USER_ERROR(kFaultInjectionVariable, "='", text, "': ", why,
                   " (expected rank=R,after=K,mode=error|crash|hang)");
}

int64_t ParseCount(const std::string& text, const std::string& value) {
  int64_t result = 0;
  const char* end = value.data() + value.size();
  auto [ptr, ec] = std::from_chars(value.data(), end, result);
  if (ec != std::errc() || ptr != end || result < 0) Malformed(text, "'" + value + "' is not a non-negative integer");
  return result;
}

}  // namespace

std::optional<FaultInjection> ParseFaultInjection(const std::string& text) {
  if (text.empty()) return std::nullopt;
  FaultInjection fault;
  bool has_rank = false, has_after = false, has_mode = false;
  std::stringstream parts(text);
  std::string part;
  while (std::getline(parts, part, ',')) {
    const size_t equals = part.find('=');
    if (equals == std::string::npos) Malformed(text, "'" + part + "' is not key=value");
    const std::string key = part.substr(0, equals);
    const std::string value = part.substr(equals + 1);
    if (key == "rank") {
      fault.rank = static_cast<int>(ParseCount(text, value));
      has_rank = true;
    } else if (key == "after") {
      fault.after_collectives = ParseCount(text, value);
      has_after = true;
    } else if (key == "mode") {
      if (value == "error") fault.mode = FaultInjection::Mode::kError;
      else if (value == "crash") fault.mode = FaultInjection::Mode::kCrash;
      else if (value == "hang") fault.mode = FaultInjection::Mode::kHang;
      else Malformed(text, "unknown mode '" + value + "'");
      has_mode = true;
    } else {
      Malformed(text, "unknown key '" + key + "'");
    }
  }
  if (!has_rank || !has_after || !has_mode) Malformed(text, "rank, after and mode are all required");
  return fault;
}

std::optional<FaultInjection> FaultInjectionFromEnvironment() {
  const char* value = std::getenv(kFaultInjectionVariable);
  return ParseFaultInjection(value == nullptr ? "" : value);
}

void MaybeInjectFault(const std::optional<FaultInjection>& fault, int rank, int64_t completed) {
  if (!fault.has_value() || fault->rank != rank || fault->after_collectives != completed) return;
  switch (fault->mode) {
    case FaultInjection::Mode::kError:
      GSPMD_USER_ERROR("injected fault (", kFaultInjectionVariable, "): rank ", rank, " fails after ", completed,
                       " collectives");
    case FaultInjection::Mode::kCrash:
      std::fprintf(stderr, "gspmd: rank %d: injected fault: crashing with SIGSEGV after %lld collectives (pid %d)\n",
                   rank, static_cast<long long>(completed), static_cast<int>(::getpid()));
      std::fflush(stderr);
      ::signal(SIGSEGV, SIG_DFL);
      ::raise(SIGSEGV);
      std::abort();
    case FaultInjection::Mode::kHang:
      std::fprintf(stderr, "gspmd: rank %d: injected fault: hanging after %lld collectives (pid %d)\n", rank,
                   static_cast<long long>(completed), static_cast<int>(::getpid()));
      std::fflush(stderr);
      while (true) ::pause();
  }
}

}  // namespace gspmd
