// Fault injection for the MPI backend's failure tests: one rank fails on purpose at a chosen
// point. Set only by tests, through one environment variable:
//
//   GSPMD_MPI_FAULT="rank=3,after=5,mode=crash"
//
// makes rank 3, once it has completed 5 collectives, (error) fail with a user error, (crash)
// die by SIGSEGV, or (hang) stop forever without reaching the next collective (as a deadlocked
// or stuck process would; tests also use it to kill the process from outside). The point is
// checked as each local device reaches a collective, so after=0 fires at the first one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gspmd {

inline constexpr char kFaultInjectionVariable[] = "GSPMD_MPI_FAULT";

struct FaultInjection {
  enum class Mode { kError, kCrash, kHang };
  int rank = 0;
  int64_t after_collectives = 0;
  Mode mode = Mode::kError;
};

// The fault the variable asks for (nullopt when it is unset or empty); a malformed value is a
// UserError naming the variable and the expected form.
std::optional<FaultInjection> FaultInjectionFromEnvironment();
std::optional<FaultInjection> ParseFaultInjection(const std::string& text);

// Called by rank `rank` as a device reaches its collective number `completed` (0-based, i.e.
// after `completed` collectives). Does nothing unless the fault is due; then throws, raises
// SIGSEGV or sleeps forever.
void MaybeInjectFault(const std::optional<FaultInjection>& fault, int rank, int64_t completed);

}  // namespace gspmd
