// `gspmd run FILE [--spmd [--like OTHER]] [--devices N] -i ... -o OUTDIR`: runs a program on N
// devices with global inputs and outputs. Without --spmd, FILE is a global program: it is
// propagated (when not fully sharded) and partitioned first. With --spmd, FILE is already a
// per-device program. The devices are threads of this process (--backend threads, the
// default), or spread over the ranks of an MPI job (`mpirun -np R gspmd run ... --backend mpi
// [--devices-per-rank K]`, R x K devices). Inputs are .npy files or shard indexes; each device
// reads only its shards of them. The job is api::RunJob; this file reads the command line.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "api/gspmd.h"
#include "support/diagnostic.h"
#include "tools/commands.h"
#include "tools/tool_util.h"

namespace gspmd::tools {
namespace {

struct RunOptions {
  std::string file;
  bool spmd = false;
  std::string like;
  std::string devices;  // validated by ParseDeviceCount
  std::vector<std::string> inputs;
  std::string out_dir;
  BoundaryFlags boundary;
  std::string backend = "threads";
  int64_t devices_per_rank = 0;  // 0: not given
  double collective_timeout = 0;  // 0: not given
  bool sharded_output = false;
  bool report_memory = false;
};

void RunCommand(const RunOptions& options) {
  if (!options.like.empty() && !options.spmd)
    GSPMD_USER_ERROR("gspmd run: error: --like needs --spmd (it describes the program a per-device FILE was "
                     "partitioned from; without --spmd FILE is that program)");
  const bool mpi = options.backend == "mpi";
  if (!mpi && options.devices_per_rank > 0)
    GSPMD_USER_ERROR("gspmd run: error: --devices-per-rank needs --backend mpi (with threads, --devices gives the "
                     "device count)");
  if (!mpi && options.collective_timeout > 0)
    GSPMD_USER_ERROR("gspmd run: error: --collective-timeout needs --backend mpi");
  api::RunJobOptions job;
  job.file = options.file;
  job.spmd = options.spmd;
  job.like = options.like;
  job.devices = options.devices.empty() ? 0 : ParseDeviceCount(options.devices, "run");
  job.inputs = options.inputs;
  job.out_dir = options.out_dir;
  job.boundary = api::BoundaryOptions{options.boundary.to_parameters, options.boundary.to_outputs};
  job.sharded_output = options.sharded_output;
  job.report_memory = options.report_memory;
  if (mpi) {
    job.mpi.emplace();
    if (options.devices_per_rank > 0) job.mpi->devices_per_rank = options.devices_per_rank;
    if (options.collective_timeout > 0) job.mpi->collective_timeout_s = options.collective_timeout;
  }
  if (api::RunJob(job)) return;
  std::fflush(stdout);  // an MPI job failed: its ranks have said why
  std::exit(1);
}

}  // namespace

void AddRunCommand(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand(
      "run",
      "Run a program on devices with global inputs and outputs: FILE is partitioned first (propagating shardings if "
      "needed), unless --spmd says it is a per-device program already. Devices are threads of this process, or with "
      "--backend mpi spread over the ranks of `mpirun -np R`");
  command->add_option("FILE", options->file, "HLO text file, or StableHLO (.mlir) text")->required()->type_name("FILE");
  command->add_flag("--spmd", options->spmd, "FILE is a per-device (partitioned) program: run it on every device as is");
  command->add_option("--like", options->like,
                      "with --spmd: HLO module whose entry supplies parameter/root shardings and global "
                      "result shapes FILE lacks (e.g. XLA's propagated.hlo for its partitioned.hlo)")
      ->type_name("OTHER");
  command->add_option("--devices", options->devices,
                      "number of devices (default: num_partitions, else derived from the shardings; with --backend "
                      "mpi it must equal ranks x --devices-per-rank)")
      ->type_name("N");
  command->add_option("-i,--inputs", options->inputs,
                      "one global value per entry parameter, in order: a .npy file or a shard index (.json) written "
                      "by --sharded-output")
      ->type_name("NPY");
  command->add_option("-o,--out", options->out_dir, "output directory (created) for out0.npy, out1.npy, ...")
      ->required()
      ->type_name("DIR");
  AddBoundaryOptions(*command, options->boundary);
  command->add_option("--backend", options->backend,
                      "threads (default): every device is a thread of this process; mpi: devices are spread over "
                      "the ranks of an MPI job started by mpirun")
      ->check(CLI::IsMember({"threads", "mpi"}))
      ->type_name("threads|mpi");
  command->add_option("--devices-per-rank", options->devices_per_rank,
                      "with --backend mpi: devices per rank, run as threads (default 1); ranks x K devices in all")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}))
      ->type_name("K");
  command->add_option("--collective-timeout", options->collective_timeout,
                      "with --backend mpi: end the job when a collective waits longer than this (default 300), "
                      "naming the ranks that did not arrive")
      ->check(CLI::PositiveNumber)
      ->type_name("SECONDS");
  command->add_flag("--sharded-output", options->sharded_output,
                    "write each distinct shard of every result once (out<i>.shard<k>.npy) plus a shard index "
                    "out<i>.json, instead of assembling global out<i>.npy files; the index is accepted as an input");
  command->add_flag("--report-memory", options->report_memory,
                    "print each process's peak resident memory beside the bytes of its devices' shards (stderr)");
  command->callback([options] { RunCommand(*options); });
}

}  // namespace gspmd::tools
