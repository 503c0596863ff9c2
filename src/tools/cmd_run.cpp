// `gspmd run FILE [--per-device [--like OTHER] | --global] [--devices N] -i ... -o OUTDIR [--check]`:
// runs a program on N devices with global inputs and outputs. A global FILE is propagated (when
// not fully sharded) and partitioned first; a per-device one (detected, or --per-device) runs as
// it is. The devices are threads of this process (--backend threads, the
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
  ProgramKindFlags kind;
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
  bool check = false;
  double rtol = kDefaultRtol;
  double atol = kDefaultAtol;
  std::string windowed_einsum = api::kWindowedEinsumDefault;
};

void RunCommand(const RunOptions& options) {
  CheckTolerances(options.rtol, options.atol, "run");
  const bool mpi = options.backend == "mpi";
  if (!mpi && options.devices_per_rank > 0)
    GSPMD_USER_ERROR("gspmd run: error: --devices-per-rank needs --backend mpi (with threads, --devices gives the "
                     "device count)");
  if (!mpi && options.collective_timeout > 0)
    GSPMD_USER_ERROR("gspmd run: error: --collective-timeout needs --backend mpi");
  api::RunJobOptions job;
  job.file = options.file;
  job.per_device = options.kind.Override();
  job.like = options.like;
  job.devices = options.devices.empty() ? 0 : ParseDeviceCount(options.devices, "run");
  job.inputs = options.inputs;
  job.out_dir = options.out_dir;
  job.boundary = api::BoundaryOptions{options.boundary.to_parameters, options.boundary.to_outputs};
  job.sharded_output = options.sharded_output;
  job.report_memory = options.report_memory;
  job.check = options.check;
  job.windowed_einsum = options.windowed_einsum;
  job.rtol = options.rtol;
  job.atol = options.atol;
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
      "Run a program on devices with global inputs and outputs: a global FILE is partitioned first (propagating "
      "shardings if needed), a per-device one runs as it is. Devices are threads of this process, or with "
      "--backend mpi spread over the ranks of `mpirun -np R`");
  command->add_option("FILE", options->file, "HLO text file, or StableHLO (.mlir) text")->required()->type_name("FILE");
  AddProgramKindOptions(*command, options->kind, "partitioned first");
  AddHiddenFlagAlias(*command, "--spmd", options->kind.per_device);  // the spelling before --per-device (one release)
  command->add_option("--like", options->like,
                      "for a per-device FILE: the global module whose entry supplies parameter/root shardings and "
                      "global result shapes FILE lacks (e.g. XLA's propagated.hlo for its partitioned.hlo)")
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
  AddWindowedEinsumOption(*command, options->windowed_einsum);
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
  CLI::Option* check = command->add_flag(
      "--check", options->check,
      "also run the global program (FILE, or --like for a per-device FILE) on one device with the interpreter and "
      "compare every output; exit 1 at the first difference");
  AddToleranceOptions(*command, options->rtol, options->atol, "with --check, per output: ", check);
  command->callback([options] { RunCommand(*options); });
}

}  // namespace gspmd::tools
