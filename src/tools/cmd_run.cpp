// `gspmd run FILE [--spmd [--like OTHER]] [--devices N] -i ... -o OUTDIR`: runs a program on N
// devices with global inputs and outputs. Without --spmd, FILE is a global program: it is
// propagated (when not fully sharded) and partitioned first. With --spmd, FILE is already a
// per-device program. The devices are threads of this process (--backend threads, the
// default), or spread over the ranks of an MPI job (`mpirun -np R gspmd run ... --backend mpi
// [--devices-per-rank K]`, R x K devices). Inputs are .npy files or shard indexes; each device
// reads only its shards of them.
#include <CLI/CLI.hpp>

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "io/array_source.h"
#include "runtime/comm/mpi/mpi_session.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/result_files.h"
#include "runtime/spmd/spmd_executor.h"
#include "runtime/spmd/spmd_mpi.h"
#include "runtime/spmd/spmd_plan.h"
#include "support/diagnostic.h"
#include "text/printer.h"
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

constexpr double kDefaultCollectiveTimeoutSeconds = 300;

// The inputs, opened (headers checked) but not read.
struct OpenInputs {
  std::vector<std::unique_ptr<ArraySource>> sources;
  std::vector<GlobalArgument> arguments;
};

OpenInputs OpenInputFiles(const std::vector<std::string>& paths) {
  OpenInputs inputs;
  for (const std::string& path : paths) {
    inputs.sources.push_back(OpenArrayFile(path));
    inputs.arguments.push_back(GlobalArgument{inputs.sources.back()->shape(), {inputs.sources.back().get()}});
  }
  return inputs;
}

// A global program's inputs must have its parameters' shapes.
void CheckInputShapes(const Module& module, const std::string& file, const OpenInputs& inputs) {
  CheckInputCount(module, file, inputs.sources.size());
  for (size_t i = 0; i < inputs.sources.size(); ++i) {
    const Instruction* parameter = module.entry()->parameter(static_cast<int64_t>(i));
    const Shape& expected = parameter->shape();
    if (!expected.IsArray())
      ThrowUserErrorAt(SourceLocation{file, 0, 0},
                       StrCat("parameter ", i, " (%", parameter->name(), ") has shape ", expected.ToString(false),
                              ", which a .npy file cannot hold (expected array parameters only)"));
    if (inputs.sources[i]->shape().Compatible(expected)) continue;
    ThrowUserErrorAt(SourceLocation{inputs.sources[i]->name(), 0, 0},
                     InputMismatchMessage(inputs.sources[i]->shape(), expected, static_cast<int64_t>(i),
                                          parameter->name(), file));
  }
}

// What both backends run: the per-device program, its plan and the opened inputs.
struct PreparedRun {
  std::unique_ptr<Module> module;  // the global program (or the --spmd one)
  std::unique_ptr<Module> like;
  CompiledPartition partition;          // when FILE is a global program
  const Module* per_device = nullptr;
  OpenInputs inputs;
  SpmdPlan plan;
};

// `devices` > 0: the device count the run must have (--devices, or R x K under MPI);
// `device_source` says where that number comes from, for messages.
PreparedRun Prepare(const RunOptions& options, int64_t devices, const std::string& device_source, bool print_warnings) {
  PreparedRun run;
  run.module = LoadProgram(options.file);
  auto with_devices = [&](auto&& fn) {
    try {
      return fn();
    } catch (const UserError& error) {
      if (device_source.empty()) throw;
      throw UserError(StrCat(error.what(), " (running on ", device_source, ")"));
    }
  };
  if (options.spmd) {
    if (!options.like.empty()) run.like = LoadProgram(options.like);
    if (devices > 0) with_devices([&] { CheckDevicesMatchModule(*run.module, options.file, devices); return 0; });
    CheckInputCount(*run.module, options.file, options.inputs.size());
    if (options.like.empty()) CheckGlobalOutputsKnown(*run.module, options.file, devices);
    run.inputs = OpenInputFiles(options.inputs);
    run.per_device = run.module.get();
    SpmdRunOptions run_options = WithFileContext(options.like.empty() ? options.file : options.like, [&] {
      return OptionsFromLikeModule(*run.module, run.like.get());
    });
    if (devices > 0) run_options.num_devices = devices;
    run.plan = with_devices([&] {
      return WithFileContext(options.file, [&] { return PlanSpmdRun(*run.per_device, run.inputs.arguments, run_options); });
    });
    return run;
  }
  if (devices > 0) with_devices([&] { CheckDevicesMatchModule(*run.module, options.file, devices); return 0; });
  run.inputs = OpenInputFiles(options.inputs);
  CheckInputShapes(*run.module, options.file, run.inputs);
  run.partition = with_devices([&] { return PartitionForCli(*run.module, options.file, devices, options.boundary, print_warnings); });
  run.per_device = run.partition.partitioned.module.get();
  SpmdRunOptions run_options =
      WithFileContext(options.file, [&] { return OptionsFromLikeModule(*run.per_device, run.module.get()); });
  run_options.num_devices = run.partition.num_devices;
  run.plan = with_devices([&] {
    return WithFileContext(options.file, [&] { return PlanSpmdRun(*run.per_device, run.inputs.arguments, run_options); });
  });
  return run;
}

void PrintPeakMemory(const char* who, const SpmdPlan& plan) {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  const double mib = 1024.0 * 1024.0;
  std::fprintf(stderr, "gspmd: %s: peak RSS %.1f MiB; shards of %lld device(s) %.1f MiB\n", who,
               static_cast<double>(usage.ru_maxrss) * 1024.0 / mib, static_cast<long long>(plan.num_devices),
               static_cast<double>((plan.ArgumentBytes() + plan.ResultBytes()) * plan.num_devices) / mib);
}

void RunOnThreads(const RunOptions& options, int64_t devices) {
  PreparedRun run = Prepare(options, devices, "", true);
  const SpmdDeviceResults results = WithFileContext(options.file, [&] {
    return RunSpmdOnThreads(*run.per_device, run.plan, run.inputs.arguments);
  });
  for (const std::string& line : WriteResultsFromAllDevices(run.plan, results.per_device, options.out_dir,
                                                            options.sharded_output))
    std::printf("%s\n", line.c_str());
  if (options.report_memory) PrintPeakMemory("threads backend", run.plan);
}

uint64_t Fingerprint(const std::string& text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

// Every rank compiles the same program (the partitioner is deterministic) and opens the same
// inputs; the ranks agree that this worked before any device runs.
void RunOnMpi(const RunOptions& options, int64_t devices) {
  MpiSessionOptions session_options;
  session_options.collective_timeout_seconds =
      options.collective_timeout > 0 ? options.collective_timeout : kDefaultCollectiveTimeoutSeconds;
  const int64_t per_rank = options.devices_per_rank > 0 ? options.devices_per_rank : 1;
  int failed_rank = -1;
  {
    MpiSession session(session_options);
    const int64_t total = per_rank * session.size();
    const std::string layout = StrCat(session.size(), " MPI rank", session.size() == 1 ? "" : "s", " x ", per_rank,
                                      " device", per_rank == 1 ? "" : "s", " per rank = ", total, " devices");
    PreparedRun run;
    std::string error;
    try {
      if (devices > 0 && devices != total)
        GSPMD_USER_ERROR("gspmd run: error: --devices ", devices, " does not match ", layout,
                         " (expected --devices ", total, " or no --devices)");
      run = Prepare(options, total, layout, session.rank() == 0);
      if (run.plan.num_devices != total)
        ThrowUserErrorAt(SourceLocation{options.file, 0, 0},
                         StrCat("the program runs on ", run.plan.num_devices, " devices but the job has ", layout,
                                " (expected mpirun -np R and --devices-per-rank K with R x K = ", run.plan.num_devices,
                                ")"));
    } catch (const UserError& user_error) {
      error = user_error.what();
    }
    failed_rank = AgreeAndReportFailure(session, "reading the program and inputs", error);
    if (failed_rank < 0) {
      if (!session.AllRanksAgree(Fingerprint(PrintModule(*run.per_device)), "comparing the compiled programs"))
        session.FailJob("the ranks compiled different per-device programs from " + options.file +
                        " (is FILE the same file on every machine?)");
      MpiRunOptions mpi_options;
      mpi_options.devices_per_rank = per_rank;
      mpi_options.out_dir = options.out_dir;
      mpi_options.sharded_output = options.sharded_output;
      mpi_options.report_memory = options.report_memory;
      RunSpmdOverMpi(session, *run.per_device, run.plan, run.inputs.arguments, mpi_options);
    }
  }  // MPI_Finalize
  if (failed_rank < 0) return;
  std::fflush(stdout);
  std::exit(1);
}

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
  const int64_t devices = options.devices.empty() ? 0 : ParseDeviceCount(options.devices, "run");
  if (mpi) {
    RunOnMpi(options, devices);
    return;
  }
  RunOnThreads(options, devices);
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
