// The MPI backend's run: this rank's devices execute the per-device program over an
// MpiCommunicator, each reading only its shards of the inputs, and the results are written as
// global .npy files assembled by rank 0 piece by piece (no rank holds a whole result it does
// not own) or, sharded, by the ranks owning each shard.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/module.h"
#include "runtime/spmd/spmd_plan.h"

namespace gspmd {

class MpiSession;

struct MpiRunOptions {
  int64_t devices_per_rank = 1;
  std::string out_dir;
  bool sharded_output = false;
  bool report_memory = false;  // each rank prints its peak RSS beside the bytes of its shards
  // Global outputs only: file names in out_dir per result (empty: out<i>.npy), and whether
  // rank 0 lists the files it wrote (gspmd train says one line of its own).
  std::vector<std::string> result_files;
  bool print_files = true;
};

// Runs and writes the outputs; rank 0 prints one line per result file. Every rank must call it
// with the same module and plan (plan.num_devices == ranks x devices_per_rank). A failure on
// any rank ends the whole job (MpiSession::FailJob) with its message; it returns only when
// every output file is in place.
void RunSpmdOverMpi(MpiSession& session, const Module& per_device_module, const SpmdPlan& plan,
                    std::span<const GlobalArgument> arguments, const MpiRunOptions& options);

// Writes results this rank's devices computed (results[j] of device rank x K + j, e.g. the last
// step of `gspmd train`) as RunSpmdOverMpi writes its own; every rank calls it.
void WriteResultsOverMpi(MpiSession& session, const Module& per_device_module, const SpmdPlan& plan,
                         std::vector<std::vector<Literal>> results, const MpiRunOptions& options);

// Limits each kernel call to this rank's share of the machine's cores (the ranks on one
// machine share them), unless OMP_NUM_THREADS chose a team size; RunSpmdOverMpi does it too.
void LimitKernelThreadsToRankShare(const MpiSession& session);

// Ends a phase on every rank: the ranks agree on the lowest failing one
// (MpiSession::AgreeOnFailure) and that rank alone prints its error to stderr ("gspmd: rank R:
// error: ..."), before any rank can reach MPI_Finalize (the launcher ends the job as soon as a
// rank exits with an error). Returns the failing rank, or -1 when every rank succeeded.
int AgreeAndReportFailure(MpiSession& session, const std::string& phase, const std::string& my_error);

// A window size for assembling global outputs (bytes); exposed for tests of uneven windows.
inline constexpr int64_t kOutputWindowBytes = 16 << 20;

}  // namespace gspmd
