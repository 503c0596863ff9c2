// api::RunJob: `gspmd run` from files to files, on threads of this process or over the ranks
// of an MPI job (each device reads only its shards of the inputs).
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "api/cli_files.h"
#include "api/file_context.h"
#include "api/gspmd.h"
#include "api/pipeline.h"
#include "analysis/literal_compare.h"
#include "io/array_source.h"
#include "runtime/comm/mpi/mpi_session.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/result_files.h"
#include "runtime/spmd/spmd_executor.h"
#include "runtime/spmd/spmd_mpi.h"
#include "runtime/spmd/spmd_plan.h"
#include "support/diagnostic.h"
#include "text/printer.h"

namespace gspmd::api {
namespace {

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
  std::unique_ptr<Module> module;  // the global program (or the per-device one)
  bool is_per_device = false;  // FILE is a per-device program (detected or said)
  std::unique_ptr<Module> like;
  CompiledPartition partition;          // when FILE is a global program
  const Module* per_device = nullptr;
  OpenInputs inputs;
  SpmdPlan plan;
};

// `devices` > 0: the device count the run must have (--devices, or R x K under MPI);
// `device_source` says where that number comes from, for messages.
PreparedRun Prepare(const RunJobOptions& options, int64_t devices, const std::string& device_source, bool print_warnings) {
  PreparedRun run;
  run.module = LoadProgram(options.file);
  run.is_per_device = options.per_device.value_or(IsPerDeviceProgram(*run.module));
  if (!options.like.empty() && !run.is_per_device)
    GSPMD_USER_ERROR("gspmd run: error: --like describes the global program a per-device FILE was partitioned "
                     "from, but ", options.file, " is a global program",
                     options.per_device ? " (--global)" : " (detected; --per-device to read it as one device's)");
  if (run.is_per_device && !options.per_device && print_warnings)
    std::fprintf(stderr, "gspmd run: %s: per-device program (detected; --global reads it as a global one)\n",
                 options.file.c_str());
  if (options.check && run.is_per_device && options.like.empty())
    GSPMD_USER_ERROR("gspmd run: error: --check runs the global program on one device, and ", options.file,
                     " is per-device: give the global program it came from with --like GLOBAL");
  if (options.check && options.sharded_output)
    GSPMD_USER_ERROR("gspmd run: error: --check compares the assembled outputs; drop --sharded-output");
  auto with_devices = [&](auto&& fn) {
    try {
      return fn();
    } catch (const UserError& error) {
      if (device_source.empty()) throw;
      throw UserError(StrCat(error.what(), " (running on ", device_source, ")"));
    }
  };
  if (run.is_per_device) {
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
  run.partition = with_devices([&] { return PartitionForCli(*run.module, options.file, devices, BoundaryFlags{options.boundary.to_parameters, options.boundary.to_outputs}, print_warnings, ParseWindowedEinsum(options.windowed_einsum)); });
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

// --check: the global program on one device against the files the run wrote.
void CheckAgainstInterpreter(const RunJobOptions& options, const std::string& global_text) {
  const std::string& global_file = options.like.empty() ? options.file : options.like;
  const std::vector<Literal> expected = WithFileContext(global_file, [&] {
    return Eval(Program::FromText(global_text, global_file, Format::kHlo), ReadInputs(options.inputs));
  });
  for (size_t i = 0; i < expected.size(); ++i) {
    const std::string path = (std::filesystem::path(options.out_dir) / StrCat("out", i, ".npy")).string();
    const LiteralComparison comparison = CompareLiterals(ReadArrayFile(path), expected[i], options.rtol, options.atol);
    if (!comparison.matches)
      ThrowUserErrorAt(SourceLocation{path, 0, 0},
                       StrCat("differs from the one-device run of ", global_file, ": ", comparison.message,
                              " (--rtol ", options.rtol, ", --atol ", options.atol, ")"));
  }
  std::printf("check: %zu output%s the one-device run (rtol %g, atol %g)\n", expected.size(),
              expected.size() == 1 ? " matches" : "s match", options.rtol, options.atol);
}

void RunOnThreads(const RunJobOptions& options, int64_t devices) {
  PreparedRun run = Prepare(options, devices, "", true);
  const SpmdDeviceResults results = WithFileContext(options.file, [&] {
    return RunSpmdOnThreads(*run.per_device, run.plan, run.inputs.arguments);
  });
  for (const std::string& line : WriteResultsFromAllDevices(run.plan, results.per_device, options.out_dir,
                                                            options.sharded_output))
    std::printf("%s\n", line.c_str());
  if (options.report_memory) PrintPeakMemory("threads backend", run.plan);
  if (options.check) CheckAgainstInterpreter(options, PrintModule(run.like ? *run.like : *run.module));
}

uint64_t Fingerprint(const std::string& text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

// Every rank compiles the same program (the partitioner is deterministic) and opens the same
// inputs; the ranks agree that this worked before any device runs.
bool RunOnMpi(const RunJobOptions& options, const MpiOptions& mpi, int64_t devices) {
  MpiSessionOptions session_options;
  session_options.collective_timeout_seconds = mpi.collective_timeout_s;
  const int64_t per_rank = mpi.devices_per_rank;
  int failed_rank = -1;
  std::string checked_text;  // rank 0 with --check: the global program, checked after MPI_Finalize
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
      if (options.check && session.rank() == 0) checked_text = PrintModule(run.like ? *run.like : *run.module);
    }
  }  // MPI_Finalize
  if (failed_rank < 0 && !checked_text.empty()) CheckAgainstInterpreter(options, checked_text);
  return failed_rank < 0;
}

}  // namespace

bool RunJob(const RunJobOptions& options) {
  if (options.mpi) return RunOnMpi(options, *options.mpi, options.devices);
  RunOnThreads(options, options.devices);
  return true;
}

}  // namespace gspmd::api
