// `gspmd train --checkpoint-dir DIR [--checkpoint-every K] [--keep N] [--resume [--fallback]]`
// on the threads backend: a ShardedTrainer over all devices of this process; each device
// writes the chunks it owns in parallel; a resume verifies the checkpoint, checks it was
// written by this program, and lets each device read only its shards' regions.
#include "api/train_checkpoint.h"

#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <thread>

#include "analysis/comm_report.h"
#include "api/cli_files.h"
#include "api/file_context.h"
#include "api/pipeline.h"
#include "checkpoint/checkpoint_store.h"
#include "checkpoint/program_fingerprint.h"
#include "runtime/comm/local_communicator.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"
#include "support/diagnostic.h"
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

// What every checkpoint of this run records but the step, metrics and files.
CheckpointMeta MetaTemplate(const TrainJobOptions& options, const Module& original, const ShardedTrainer& trainer,
                            const std::vector<std::string>& metrics, int64_t devices) {
  CheckpointMeta meta;
  meta.fingerprint = ProgramFingerprint(original);
  meta.program = options.file;
  const std::string model = ModuleFrontendAttribute(original, "gspmd.model");
  std::string config;
  SplitMesh(ModuleFrontendAttribute(original, "gspmd.config"), config, meta.mesh);
  meta.model = model.empty() ? "" : config.empty() ? model : model + " " + config;
  meta.num_devices = devices;
  meta.carry = trainer.signature().CarryText();
  meta.seed = options.train.seed;
  meta.data_dir = options.train.data_dir;
  meta.metric_names = metrics;
  const std::vector<SavedOutput> names = SavedOutputNames(trainer.signature(), metrics);
  for (const CarryPair& pair : trainer.signature().carry) {
    CheckpointArray array;
    const std::string& file = names[pair.output].file;
    array.name = file.substr(0, file.size() - 4);  // without ".npy"
    array.input = pair.input;
    array.output = pair.output;
    array.leaf = trainer.plan().arguments[pair.input][0];
    meta.arrays.push_back(std::move(array));
  }
  return meta;
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

std::string WriteCheckpoint(const CheckpointOptions& options, CheckpointMeta meta, const ShardedTrainer& trainer) {
  meta.step = trainer.steps_done();
  meta.data_position = trainer.steps_done();
  const std::string tmp = PrepareCheckpoint(options.dir, meta);
  const std::vector<int64_t>& devices = trainer.local_devices();
  std::vector<std::vector<CheckpointFile>> written(devices.size());
  OnEveryDevice(devices.size(), [&](size_t j) {
    std::vector<const Literal*> shards;
    for (const CheckpointArray& array : meta.arrays) shards.push_back(&trainer.NextInputShard(j, array.input));
    written[j] = WriteDeviceChunks(tmp, meta, devices[j], shards);
  });
  for (std::vector<CheckpointFile>& files : written) meta.files.insert(meta.files.end(), files.begin(), files.end());
  return CommitCheckpoint(options.dir, tmp, meta, options.keep);
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

}  // namespace

bool TrainWithCheckpoints(const TrainJobOptions& options) {
  const CheckpointOptions& checkpoint = options.checkpoint;
  if (options.mpi)
    GSPMD_USER_ERROR("gspmd train: error: --checkpoint-dir needs the threads backend for now (checkpoints under "
                     "--backend mpi are not built yet)");
  if (options.train.check)
    GSPMD_USER_ERROR("gspmd train: error: --check cannot be combined with --checkpoint-dir (the checkpointed carry "
                     "stays sharded on the devices; checking against one device would gather it)");
  if (options.json || !options.plot.empty())
    GSPMD_USER_ERROR("gspmd train: error: --", options.json ? "json" : "plot",
                     " cannot be combined with --checkpoint-dir yet");
  if (checkpoint.every < 0) GSPMD_USER_ERROR("gspmd train: error: --checkpoint-every ", checkpoint.every, " is negative");
  if (checkpoint.keep < 0) GSPMD_USER_ERROR("gspmd train: error: --keep ", checkpoint.keep, " is negative");
  if (checkpoint.fallback && !checkpoint.resume)
    GSPMD_USER_ERROR("gspmd train: error: --resume-fallback needs --resume");
  const bool quiet = options.progress == "quiet";

  std::unique_ptr<Module> original = LoadProgram(options.file);
  std::unique_ptr<Module> compiled = LoadProgram(options.file);
  CompiledPartition partition = PartitionForCli(*compiled, options.file, options.devices);
  const Module& per_device = *partition.partitioned.module;
  SpmdRunOptions run_options =
      WithFileContext(options.file, [&] { return OptionsFromLikeModule(per_device, compiled.get()); });
  const int64_t devices = partition.num_devices;
  run_options.num_devices = devices;
  std::vector<int64_t> local;
  for (int64_t d = 0; d < devices; ++d) local.push_back(d);
  TrainOptions train = options.train;
  if (!options.inputs.empty()) {
    train.inputs = ReadInputs(options.inputs);
    CheckInputShapes(*original, options.file, train.inputs, options.inputs);
  }
  TrainSettings settings;
  settings.carry = train.carry;
  settings.data_dir = train.data_dir;
  settings.first_inputs = std::move(train.inputs);
  settings.seed = train.seed;
  std::unique_ptr<ShardedTrainer> owned = WithFileContext(options.file, [&] {
    return std::make_unique<ShardedTrainer>(
        *original, per_device, run_options, local, [devices] { return std::make_unique<LocalCommunicator>(devices); },
        std::move(settings));
  });
  ShardedTrainer& trainer = *owned;
  const std::vector<std::string> metrics = ShownMetrics(trainer.signature());
  const CheckpointMeta meta = MetaTemplate(options, *original, trainer, metrics, devices);

  std::vector<std::vector<double>> history;
  if (checkpoint.resume) {
    std::optional<CheckpointEntry> entry = CheckpointToResume(checkpoint);
    if (!entry) {
      if (!quiet) std::printf("no checkpoint in %s: starting at step 1\n", checkpoint.dir.c_str());
    } else {
      const CheckpointMeta stored = ReadCheckpointMeta(entry->path);
      CheckResumable(stored, meta, entry->path, options.steps);
      std::vector<std::unique_ptr<ArraySource>> sources = OpenCheckpointArrays(entry->path, stored);
      std::vector<const ArraySource*> carried(trainer.signature().inputs.size(), nullptr);
      for (size_t i = 0; i < stored.arrays.size(); ++i) carried[stored.arrays[i].input] = sources[i].get();
      for (const CarryPair& pair : trainer.signature().carry)
        if (carried[pair.input] == nullptr)
          ThrowUserErrorAt(SourceLocation{entry->path + "/checkpoint.json", 0, 0},
                           StrCat("no array for carried input ", pair.input, " (%",
                                  trainer.signature().inputs[pair.input].name, ")"));
      trainer.Restore(stored.step, carried);
      history = stored.metrics;
      if (!quiet)
        std::printf("resumed from %s: %lld of %lld steps done (written on %lld devices%s%s)\n", entry->path.c_str(),
                    static_cast<long long>(stored.step), static_cast<long long>(options.steps),
                    static_cast<long long>(stored.num_devices), stored.mesh.empty() ? "" : ", mesh ",
                    stored.mesh.c_str());
    }
  }

  if (!quiet && !options.json)
    PrintTrainHeader(options.file, ModuleFrontendAttribute(*original, "gspmd.model"), devices,
                     "sharded carry, checkpoints in " + checkpoint.dir, trainer.signature(),
                     AnalyzeCommunication(per_device));
  StepDisplay display(options.progress, options.steps, trainer.tokens_per_step(), metrics);
  bool ran = false;
  while (trainer.steps_done() < options.steps) {
    ShardedStepResult result = trainer.Step();
    ran = true;
    display.Show(result.step, result.metrics, result.seconds);
    history.push_back(result.metrics);
    const int64_t done = trainer.steps_done();
    if (done == options.steps || (checkpoint.every > 0 && done % checkpoint.every == 0)) {
      CheckpointMeta now = meta;
      now.metrics = history;
      WriteCheckpoint(checkpoint, std::move(now), trainer);
    }
  }
  display.Finish(false);
  if (!quiet)
    std::printf("checkpoint: %s\n", (fs::path(checkpoint.dir) / CheckpointDirName(trainer.steps_done())).c_str());
  if (!options.save.empty()) {
    if (!ran)
      GSPMD_USER_ERROR("gspmd train: error: -o ", options.save, ": no step ran (the checkpoint had done all ",
                       options.steps, " steps), so there are no outputs to save");
    const SpmdPlan& plan = trainer.plan();
    std::vector<Literal> outputs;
    for (size_t i = 0; i < plan.results.size(); ++i) {
      std::vector<const Literal*> shards;
      for (const std::vector<Literal>& device : trainer.last_results()) shards.push_back(&device[i]);
      outputs.push_back(AssembleGlobal(shards, plan.results[i].sharding, plan.results[i].global));
    }
    WriteSavedOutputs(options.save, outputs, SavedOutputNames(trainer.signature(), metrics));
    if (!quiet)
      std::printf("saved %zu array%s to %s (and index.json naming them)\n", outputs.size(),
                  outputs.size() == 1 ? "" : "s", options.save.c_str());
  }
  std::fflush(stdout);
  return true;
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
