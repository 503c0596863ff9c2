// `gspmd train --checkpoint-dir DIR [--checkpoint-every K] [--keep N] [--resume
// [--resume-fallback]]`: a ShardedTrainer over the devices of this process (all of them on
// threads, one rank's under MPI); each device writes the chunks it owns, in parallel; a resume
// verifies the checkpoint (rank 0), checks it was written by this program, and lets each device
// read only its shards' regions. Under MPI rank 0 prepares and commits, after every rank wrote.
#include "api/train_checkpoint.h"

#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "analysis/comm_report.h"
#include "api/cli_files.h"
#include "api/file_context.h"
#include "api/pipeline.h"
#include "api/train_record.h"
#include "checkpoint/checkpoint_store.h"
#include "checkpoint/durable_files.h"
#include "checkpoint/program_fingerprint.h"
#include "runtime/comm/local_communicator.h"
#include "runtime/comm/mpi/mpi_communicator.h"
#include "runtime/comm/mpi/mpi_session.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"
#include "runtime/spmd/spmd_mpi.h"
#include "support/diagnostic.h"
#include "text/printer.h"
#include "train/loss_plot.h"
#include "train/progress_display.h"
#include "train/saved_outputs.h"
#include "train/sharded_trainer.h"

namespace gspmd::api {
namespace {

namespace fs = std::filesystem;

// "layers=2 ... mesh=x=2,y=4" -> "x=2,y=4" (mesh) and the rest.
void SplitMesh(const std::string& config, std::string& rest, std::string& mesh) {
  const size_t at = config.find("mesh=");
  if (at == std::string::npos || (at > 0 && config[at - 1] != ' ')) {
    rest = config;
    return;
  }
  const size_t end = config.find(' ', at);
  mesh = config.substr(at + 5, end == std::string::npos ? std::string::npos : end - at - 5);
  rest = config.substr(0, at > 0 ? at - 1 : 0) + (end == std::string::npos ? "" : config.substr(end));
}

// What every checkpoint of this run records but the step, metrics, files and (until
// AddArrays) the arrays.
CheckpointMeta MetaTemplate(const TrainJobOptions& options, const Module& original, const StepSignature& signature,
                            const std::vector<std::string>& metrics, int64_t devices) {
  CheckpointMeta meta;
  meta.fingerprint = ProgramFingerprint(original);
  meta.program = options.file;
  const std::string model = ModuleFrontendAttribute(original, "gspmd.model");
  std::string config;
  SplitMesh(ModuleFrontendAttribute(original, "gspmd.config"), config, meta.mesh);
  meta.model = model.empty() ? "" : config.empty() ? model : model + " " + config;
  meta.num_devices = devices;
  meta.carry = signature.CarryText();
  meta.seed = options.train.seed;
  meta.data_dir = options.train.data_dir;
  meta.metric_names = metrics;
  return meta;
}

// One array per carried value, named after the input it restores, laid out as the trainer's plan.
void AddArrays(CheckpointMeta& meta, const ShardedTrainer& trainer) {
  const std::vector<SavedOutput> names = SavedOutputNames(trainer.signature(), meta.metric_names);
  for (const CarryPair& pair : trainer.signature().carry) {
    CheckpointArray array;
    const std::string& file = names[pair.output].file;
    array.name = file.substr(0, file.size() - 4);  // without ".npy"
    array.input = pair.input;
    array.output = pair.output;
    array.leaf = trainer.plan().arguments[pair.input][0];
    meta.arrays.push_back(std::move(array));
  }
}

// Runs fn(j) for every local device on its own thread; rethrows the first error.
template <typename Fn>
void OnEveryDevice(size_t devices, Fn&& fn) {
  std::vector<std::exception_ptr> errors(devices);
  std::vector<std::thread> threads;
  for (size_t j = 0; j < devices; ++j)
    threads.emplace_back([&, j] {
      try {
        fn(j);
      } catch (...) {
        errors[j] = std::current_exception();
      }
    });
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
}

// The newest complete checkpoint that verifies (older ones only with fallback, said on
// stderr); nullopt when DIR holds none. A corrupt one without fallback is a UserError naming
// the file and the checkpoint.
std::optional<CheckpointEntry> CheckpointToResume(const CheckpointOptions& options) {
  for (const CheckpointEntry& entry : ListCheckpoints(options.dir)) {
    const std::string problem = VerifyCheckpoint(entry.path);
    const std::string name = fs::path(entry.path).filename().string();
    if (problem.empty()) return entry;
    if (!options.fallback)
      ThrowUserErrorAt(SourceLocation{entry.path, 0, 0},
                       StrCat("checkpoint ", name, " is corrupt: ", problem,
                              "; nothing was loaded (--resume-fallback resumes from the newest checkpoint that "
                              "verifies instead)"),
                       UserErrorKind::kResource);
    std::fprintf(stderr, "gspmd train: checkpoint %s is corrupt: %s; falling back to an earlier one\n",
                 entry.path.c_str(), problem.c_str());
  }
  return std::nullopt;
}

// Refuses a checkpoint this run cannot continue exactly.
void CheckResumable(const CheckpointMeta& stored, const CheckpointMeta& now, const std::string& path, int64_t steps) {
  const std::string file = (fs::path(path) / "checkpoint.json").string();
  const std::string name = fs::path(path).filename().string();
  auto refuse = [&](const std::string& why) {
    ThrowUserErrorAt(SourceLocation{file, 0, 0}, StrCat("cannot resume from checkpoint ", name, ": ", why));
  };
  if (stored.fingerprint != now.fingerprint)
    refuse(StrCat("it was written by another program (", stored.model.empty() ? stored.program : stored.model,
                  ", fingerprint ", stored.fingerprint, "); ", now.program, " is ",
                  now.model.empty() ? std::string("another") : now.model, " (fingerprint ", now.fingerprint,
                  "); expected the same model on any mesh"));
  if (stored.carry != now.carry) refuse(StrCat("its carry is ", stored.carry, " but this run's is ", now.carry));
  if (stored.seed != now.seed)
    refuse(StrCat("it was written with --seed ", stored.seed, " but this run has --seed ", now.seed,
                  " (the batches would differ)"));
  if (stored.data_dir != now.data_dir)
    refuse(StrCat("it was written with --data '", stored.data_dir, "' but this run has '", now.data_dir, "'"));
  if (stored.step > steps)
    refuse(StrCat("it has done ", stored.step, " steps, more than --steps ", steps, " (the total to reach)"));
}

// How the processes of a run take part in a checkpoint: one process with every device
// (threads), or the ranks of an MPI job, where rank 0 leads (chooses the checkpoint to resume,
// prepares and commits) and every rank writes and reads its devices' shards.
class Coordinator {
 public:
  virtual ~Coordinator() = default;
  virtual bool leader() const = 0;
  // Runs fn on this process; under MPI the ranks then agree whether one failed, and if so the
  // lowest failing rank reports and every rank throws JobFailed.
  virtual void Phase(const std::string& phase, const std::function<void()>& fn) = 0;
  // The leader's `text` on every process.
  virtual std::string FromLeader(const std::string& text) = 0;
  // Every process's files, on the leader (others get theirs back).
  virtual std::vector<CheckpointFile> GatherToLeader(std::vector<CheckpointFile> files) = 0;
};

struct JobFailed {};  // an MPI phase failed and its rank has said why

class LocalCoordinator final : public Coordinator {
 public:
  bool leader() const override { return true; }
  void Phase(const std::string&, const std::function<void()>& fn) override { fn(); }
  std::string FromLeader(const std::string& text) override { return text; }
  std::vector<CheckpointFile> GatherToLeader(std::vector<CheckpointFile> files) override { return files; }
};

class MpiCoordinator final : public Coordinator {
 public:
  explicit MpiCoordinator(MpiSession& session) : session_(session) {}
  bool leader() const override { return session_.rank() == 0; }
  void Phase(const std::string& phase, const std::function<void()>& fn) override {
    std::string error;
    try {
      fn();
    } catch (const UserError& e) {
      error = e.what();
    }
    if (AgreeAndReportFailure(session_, phase, error) >= 0) throw JobFailed{};
  }
  std::string FromLeader(const std::string& text) override {
    if (leader()) {
      for (int r = 1; r < session_.size(); ++r) SendText(r, text, "sending the checkpoint's path");
      return text;
    }
    return ReceiveText(0, "receiving the checkpoint's path from rank 0");
  }
  std::vector<CheckpointFile> GatherToLeader(std::vector<CheckpointFile> files) override {
    if (!leader()) {
      SendText(0, WriteFileList(files), "sending the chunk files written to rank 0");
      return files;
    }
    for (int r = 1; r < session_.size(); ++r) {
      ReadFileList(ReceiveText(r, StrCat("receiving the chunk files rank ", r, " wrote")), files);
    }
    return files;
  }

 private:
  static constexpr int kTag = 0x4350;  // "CP"
  void SendText(int rank, const std::string& text, const std::string& what) {
    const uint64_t size = text.size();
    session_.Send(rank, kTag, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(&size), sizeof size), what);
    if (size > 0)
      session_.Send(rank, kTag + 1, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), size), what);
  }
  std::string ReceiveText(int rank, const std::string& what) {
    uint64_t size = 0;
    session_.Recv(rank, kTag, std::span<uint8_t>(reinterpret_cast<uint8_t*>(&size), sizeof size), what);
    std::string text(size, '\0');
    if (size > 0) session_.Recv(rank, kTag + 1, std::span<uint8_t>(reinterpret_cast<uint8_t*>(text.data()), size), what);
    return text;
  }
  MpiSession& session_;
};

// A compiled step and its trainer, on either backend.
struct CheckpointedRun {
  std::unique_ptr<Module> original;
  std::unique_ptr<Module> compiled;
  CompiledPartition partition;
  std::unique_ptr<ShardedTrainer> trainer;
  // Makes `trainer`; with `restoring`, the carried inputs' first values are not made.
  std::function<void(bool restoring)> make_trainer;
  int64_t devices = 0;
  std::string layout;  // "" on threads, "2 MPI ranks x 4 devices per rank" under MPI
};

void CompileRun(const TrainJobOptions& options, CheckpointedRun& run, int64_t devices, bool print_warnings,
                std::vector<int64_t> local, ShardedTrainer::CommunicatorFactory communicators,
                std::function<void(std::exception_ptr)> on_first_error) {
  run.original = LoadProgram(options.file);
  run.compiled = LoadProgram(options.file);
  run.partition = PartitionForCli(*run.compiled, options.file, devices, BoundaryFlags{}, print_warnings,
                                  ParseWindowedEinsum(options.windowed_einsum));
  const Module& per_device = *run.partition.partitioned.module;
  SpmdRunOptions run_options =
      WithFileContext(options.file, [&] { return OptionsFromLikeModule(per_device, run.compiled.get()); });
  run.devices = run.partition.num_devices;
  run_options.num_devices = run.devices;
  if (devices > 0 && run.devices != devices)
    ThrowUserErrorAt(SourceLocation{options.file, 0, 0},
                     StrCat("the step runs on ", run.devices, " devices but the job has ", run.layout, " = ", devices,
                            " (expected mpirun -np R and --devices-per-rank K with R x K = ", run.devices, ")"));
  if (local.empty())
    for (int64_t d = 0; d < run.devices; ++d) local.push_back(d);
  TrainOptions train = options.train;
  if (!options.inputs.empty()) {
    train.inputs = ReadInputs(options.inputs);
    CheckInputShapes(*run.original, options.file, train.inputs, options.inputs);
  }
  TrainSettings settings;
  settings.carry = train.carry;
  settings.data_dir = train.data_dir;
  settings.first_inputs = std::move(train.inputs);
  settings.seed = train.seed;
  if (!communicators) {
    const int64_t n = run.devices;
    communicators = [n] { return std::make_unique<LocalCommunicator>(n); };
  }
  run.make_trainer = [&run, file = options.file, run_options, local, communicators, on_first_error,
                      settings = std::move(settings)](bool restoring) mutable {
    settings.carry_from_checkpoint = restoring;
    run.trainer = WithFileContext(file, [&] {
      return std::make_unique<ShardedTrainer>(*run.original, *run.partition.partitioned.module, run_options, local,
                                              communicators, std::move(settings), on_first_error);
    });
  };
}

void CheckCheckpointOptions(const TrainJobOptions& options) {
  const CheckpointOptions& checkpoint = options.checkpoint;
  if (options.train.check)
    GSPMD_USER_ERROR("gspmd train: error: --check cannot be combined with --checkpoint-dir (the checkpointed carry "
                     "stays sharded on the devices; checking against one device would gather it)");
  if (checkpoint.every < 0) GSPMD_USER_ERROR("gspmd train: error: --checkpoint-every ", checkpoint.every, " is negative");
  if (checkpoint.keep < 0) GSPMD_USER_ERROR("gspmd train: error: --keep ", checkpoint.keep, " is negative");
  if (checkpoint.fallback && !checkpoint.resume)
    GSPMD_USER_ERROR("gspmd train: error: --resume-fallback needs --resume");
}

// Where the lines beside the progress go: stdout, or stderr beside --json's object.
std::FILE* Out(const TrainJobOptions& options) { return options.json ? stderr : stdout; }

// With --resume, the newest usable checkpoint, chosen and checked by the leader and known to
// every process ("" when there is none: the run starts at step 1, saying so).
std::string ChooseCheckpoint(const TrainJobOptions& options, Coordinator& c, const CheckpointMeta& meta, bool quiet) {
  const CheckpointOptions& checkpoint = options.checkpoint;
  if (!checkpoint.resume) return "";
  std::string chosen;
  c.Phase("choosing the checkpoint to resume", [&] {
    if (!c.leader()) return;
    const std::optional<CheckpointEntry> entry = CheckpointToResume(checkpoint);
    if (!entry) return;
    CheckResumable(ReadCheckpointMeta(entry->path), meta, entry->path, options.steps);
    chosen = entry->path;
  });
  chosen = c.FromLeader(chosen);
  if (chosen.empty() && !quiet)
    std::fprintf(Out(options), "no checkpoint in %s: starting at step 1\n", checkpoint.dir.c_str());
  return chosen;
}

// Every device reads its shards' regions of `chosen`; returns the metric history it had.
std::vector<std::vector<double>> Restore(const TrainJobOptions& options, Coordinator& c, ShardedTrainer& trainer,
                                         const std::string& chosen, bool quiet) {
  CheckpointMeta stored;
  c.Phase("reading the checkpoint", [&] {
    stored = ReadCheckpointMeta(chosen);
    std::vector<std::unique_ptr<ArraySource>> sources = OpenCheckpointArrays(chosen, stored);
    std::vector<const ArraySource*> carried(trainer.signature().inputs.size(), nullptr);
    for (size_t i = 0; i < stored.arrays.size(); ++i)
      if (stored.arrays[i].input >= 0 && static_cast<size_t>(stored.arrays[i].input) < carried.size())
        carried[stored.arrays[i].input] = sources[i].get();
    for (const CarryPair& pair : trainer.signature().carry)
      if (carried[pair.input] == nullptr)
        ThrowUserErrorAt(SourceLocation{chosen + "/checkpoint.json", 0, 0},
                         StrCat("no array for carried input ", pair.input, " (%",
                                trainer.signature().inputs[pair.input].name, ")"));
    trainer.Restore(stored.step, carried);
  });
  if (!quiet)
    std::fprintf(Out(options), "resumed from %s: %lld of %lld steps done (written on %lld devices%s%s)\n", chosen.c_str(),
                static_cast<long long>(stored.step), static_cast<long long>(options.steps),
                static_cast<long long>(stored.num_devices), stored.mesh.empty() ? "" : ", mesh ", stored.mesh.c_str());
  return stored.metrics;
}

// --plot: the loss of every step of the run, those of the checkpoint it resumed from included.
void WritePlot(const TrainJobOptions& options, const Module& original, const std::vector<std::string>& metrics,
               const std::vector<std::vector<double>>& history, int64_t devices, bool quiet) {
  if (metrics.empty())
    GSPMD_USER_ERROR(options.file, ": error: --plot needs a loss: the step's output 0 is not a float scalar and the "
                                   "module names no metrics (gspmd.metrics)");
  std::vector<double> losses;
  for (const std::vector<double>& step : history) losses.push_back(step.empty() ? 0.0 : step[0]);
  const std::string model = ModuleFrontendAttribute(original, "gspmd.model");
  const std::string name = model.empty() ? fs::path(options.file).filename().string() : model;
  WriteLossPlot(options.plot, StrCat(name, ": ", metrics[0], " per step on ", devices, " devices"), metrics[0], losses);
  if (!quiet) std::fprintf(Out(options), "wrote %s (%s of %zu steps)\n", options.plot.c_str(), metrics[0].c_str(), losses.size());
}

// Prepare (leader), every device's chunks (in parallel), commit (leader).
void WriteCheckpoint(const CheckpointOptions& options, Coordinator& c, CheckpointMeta meta,
                     const ShardedTrainer& trainer) {
  meta.step = trainer.steps_done();
  meta.data_position = trainer.steps_done();
  std::string tmp;
  c.Phase("preparing the checkpoint", [&] {
    if (c.leader()) tmp = PrepareCheckpoint(options.dir, meta);
  });
  tmp = c.FromLeader(tmp);
  const std::vector<int64_t>& devices = trainer.local_devices();
  std::vector<std::vector<CheckpointFile>> written(devices.size());
  c.Phase("writing the checkpoint's chunks", [&] {
    OnEveryDevice(devices.size(), [&](size_t j) {
      std::vector<const Literal*> shards;
      for (const CheckpointArray& array : meta.arrays) shards.push_back(&trainer.NextInputShard(j, array.input));
      written[j] = WriteDeviceChunks(tmp, meta, devices[j], shards);
    });
    SyncFilesystem(tmp);  // this process's files, all at once
  });
  std::vector<CheckpointFile> mine;
  for (std::vector<CheckpointFile>& files : written) mine.insert(mine.end(), files.begin(), files.end());
  meta.files = c.GatherToLeader(std::move(mine));
  c.Phase("committing the checkpoint", [&] {
    if (c.leader()) CommitCheckpoint(options.dir, tmp, meta, options.keep);
  });
}

// The loop, on either backend; `save` writes -o from the last step's results.
void TrainCheckpointed(const TrainJobOptions& options, Coordinator& c, CheckpointedRun& run,
                       const std::function<void(const std::vector<SavedOutput>&)>& save) {
  const bool quiet = options.progress == "quiet" || !c.leader();
  // The checkpoint is chosen before the trainer is made, so that a resumed run never builds
  // the first values of what it restores.
  StepSignature signature;
  c.Phase("reading the step's carry and inputs", [&] {
    signature = WithFileContext(options.file, [&] { return ReadStepSignature(*run.original, options.train.carry); });
  });
  const std::vector<std::string> metrics = ShownMetrics(signature);
  CheckpointMeta meta = MetaTemplate(options, *run.original, signature, metrics, run.devices);
  const std::string chosen = ChooseCheckpoint(options, c, meta, quiet);
  c.Phase("making the first step's inputs", [&] { run.make_trainer(!chosen.empty()); });
  ShardedTrainer& trainer = *run.trainer;
  AddArrays(meta, trainer);
  std::vector<std::vector<double>> history;
  if (!chosen.empty()) history = Restore(options, c, trainer, chosen, quiet);
  const std::string layout = run.layout.empty() ? "" : run.layout + ", ";
  const std::string model = ModuleFrontendAttribute(*run.original, "gspmd.model");
  if (!quiet && !options.json)
    PrintTrainHeader(options.file, model, run.devices, layout + "sharded carry, checkpoints in " + options.checkpoint.dir,
                     trainer.signature(), AnalyzeCommunication(*run.partition.partitioned.module));
  StepDisplay display(quiet || options.json ? "quiet" : options.progress, options.steps, trainer.tokens_per_step(),
                      metrics);
  TrainRecord record(options, model, run.devices, metrics, trainer.tokens_per_step());
  const int64_t resumed_step = trainer.steps_done();
  bool ran = false;
  while (trainer.steps_done() < options.steps) {
    ShardedStepResult result = trainer.Step();
    ran = true;
    display.Show(result.step, result.metrics, result.seconds);
    record.Add(result.step, result.metrics, result.seconds, 0, false);
    history.push_back(result.metrics);
    const int64_t done = trainer.steps_done();
    if (done == options.steps || (options.checkpoint.every > 0 && done % options.checkpoint.every == 0)) {
      CheckpointMeta now = meta;
      now.metrics = history;
      WriteCheckpoint(options.checkpoint, c, std::move(now), trainer);
    }
  }
  display.Finish(false);
  if (!options.plot.empty() && c.leader()) WritePlot(options, *run.original, metrics, history, run.devices, quiet);
  if (!quiet)
    std::fprintf(Out(options), "checkpoint: %s\n",
                (fs::path(options.checkpoint.dir) / CheckpointDirName(trainer.steps_done())).c_str());
  if (!options.save.empty()) {
    c.Phase("saving the outputs", [&] {
      if (!ran)
        GSPMD_USER_ERROR("gspmd train: error: -o ", options.save, ": no step ran (the checkpoint had done all ",
                         options.steps, " steps), so there are no outputs to save");
    });
    const std::vector<SavedOutput> saved = SavedOutputNames(trainer.signature(), metrics);
    save(saved);
    if (!quiet)
      std::fprintf(Out(options), "saved %zu array%s to %s (and index.json naming them)\n", saved.size(),
                   saved.size() == 1 ? "" : "s", options.save.c_str());
    record.Saved(options.save, static_cast<int64_t>(saved.size()));
  }
  if (options.json && c.leader()) {
    // "steps" and "per_step" are the steps this run made; a resumed run says where it began.
    record.Set("checkpoint",
               {{"dir", options.checkpoint.dir},
                {"resumed_from", chosen.empty() ? nlohmann::json(nullptr) : nlohmann::json(chosen)},
                {"resumed_step", resumed_step},
                {"latest", (fs::path(options.checkpoint.dir) / CheckpointDirName(trainer.steps_done())).string()}});
    record.Print(run.layout);
  }
  std::fflush(stdout);
}

bool TrainCheckpointedOnThreads(const TrainJobOptions& options) {
  CheckpointedRun run;
  CompileRun(options, run, options.devices, /*print_warnings=*/true, {}, nullptr, nullptr);
  LocalCoordinator coordinator;
  TrainCheckpointed(options, coordinator, run, [&](const std::vector<SavedOutput>& saved) {
    const SpmdPlan& plan = run.trainer->plan();
    std::vector<Literal> outputs;
    for (size_t i = 0; i < plan.results.size(); ++i) {
      std::vector<const Literal*> shards;
      for (const std::vector<Literal>& device : run.trainer->last_results()) shards.push_back(&device[i]);
      outputs.push_back(AssembleGlobal(shards, plan.results[i].sharding, plan.results[i].global));
    }
    WriteSavedOutputs(options.save, outputs, saved);
  });
  return true;
}

// A device's or a write's failure on this rank ends the job (every rank stops).
[[noreturn]] void EndJob(MpiSession& session, std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& failure) {
    session.FailJob(failure.what());
  } catch (...) {
    session.FailJob("unknown error");
  }
}

bool TrainCheckpointedOnMpi(const TrainJobOptions& options, const MpiOptions& mpi) {
  MpiSessionOptions session_options;
  session_options.collective_timeout_seconds = mpi.collective_timeout_s;
  const int64_t per_rank = mpi.devices_per_rank;
  bool ok = true;
  {
    MpiSession session(session_options);
    LimitKernelThreadsToRankShare(session);
    MpiCoordinator coordinator(session);
    const int64_t total = per_rank * session.size();
    CheckpointedRun run;
    run.layout = StrCat(session.size(), " MPI rank", session.size() == 1 ? "" : "s", " x ", per_rank, " device",
                        per_rank == 1 ? "" : "s", " per rank");
    try {
      coordinator.Phase("compiling the step and its first inputs", [&] {
        if (options.devices > 0 && options.devices != total)
          GSPMD_USER_ERROR("gspmd train: error: --devices ", options.devices, " does not match ", run.layout, " = ",
                           total, " (expected --devices ", total, " or no --devices)");
        std::vector<int64_t> local;
        for (int64_t d = 0; d < per_rank; ++d) local.push_back(session.rank() * per_rank + d);
        CompileRun(
            options, run, total, coordinator.leader(), local,
            [&session, per_rank] { return std::make_unique<MpiCommunicator>(session, per_rank); },
            [&session](std::exception_ptr e) { EndJob(session, e); });
      });
      const std::string text = PrintModule(*run.partition.partitioned.module);
      const uint64_t hash =
          Fnv1a64(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
      if (!session.AllRanksAgree(hash, "comparing the compiled steps"))
        session.FailJob("the ranks compiled different per-device programs from " + options.file +
                        " (is FILE the same file on every machine?)");
      TrainCheckpointed(options, coordinator, run, [&](const std::vector<SavedOutput>& saved) {
        MpiRunOptions save;
        save.devices_per_rank = per_rank;
        save.out_dir = options.save;
        save.print_files = false;
        for (const SavedOutput& output : saved) save.result_files.push_back(output.file);
        WriteResultsOverMpi(session, *run.partition.partitioned.module, run.trainer->plan(),
                            run.trainer->last_results(), save);
        if (coordinator.leader()) WriteSavedOutputsIndex(options.save, saved, run.trainer->signature().outputs);
      });
    } catch (const JobFailed&) {
      ok = false;
    }
  }  // MPI_Finalize
  return ok;
}

}  // namespace

bool TrainWithCheckpoints(const TrainJobOptions& options) {
  CheckCheckpointOptions(options);
  if (options.mpi) return TrainCheckpointedOnMpi(options, *options.mpi);
  return TrainCheckpointedOnThreads(options);
}

std::vector<CheckpointSummary> DescribeCheckpoints(const std::string& dir, bool verify) {
  if (!fs::is_directory(dir)) GSPMD_USER_ERROR(dir, ": error: no such directory (expected a --checkpoint-dir)");
  std::vector<CheckpointEntry> entries;
  if (fs::exists(fs::path(dir) / "checkpoint.json")) {
    entries.push_back({dir, 0});
  } else {
    entries = ListCheckpoints(dir);
  }
  std::vector<CheckpointSummary> summaries;
  for (const CheckpointEntry& entry : entries) {
    CheckpointSummary summary;
    summary.path = entry.path;
    summary.step = entry.step;
    try {
      const CheckpointMeta meta = ReadCheckpointMeta(entry.path);
      summary.step = meta.step;
      summary.bytes = meta.total_bytes();
      summary.arrays = static_cast<int64_t>(meta.arrays.size());
      summary.num_devices = meta.num_devices;
      summary.mesh = meta.mesh;
      summary.model = meta.model.empty() ? meta.program : meta.model;
      if (verify) summary.problem = VerifyCheckpoint(entry.path);
    } catch (const UserError&) {
      summary.problem = VerifyCheckpoint(entry.path);  // says what is wrong with the metadata
    }
    summaries.push_back(std::move(summary));
  }
  for (const std::string& path : IncompleteCheckpoints(dir)) {
    CheckpointSummary summary;
    summary.path = path;
    summary.incomplete = true;
    summaries.push_back(std::move(summary));
  }
  return summaries;
}

}  // namespace gspmd::api
