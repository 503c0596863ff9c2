// `gspmd train FILE --steps N [-i IN0.npy ...] [--devices N] [--carry OUT:IN,...] [--data DIR]
// [--check] [--save DIR]`: partitions a training step once and runs it N times on simulated
// devices, feeding its carried outputs back as inputs; shows loss and throughput per step.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "analysis/comm_report.h"
#include "runtime/spmd/like_module.h"
#include "support/diagnostic.h"
#include "tools/commands.h"
#include "tools/partition_pipeline.h"
#include "tools/tool_util.h"
#include "train/trainer.h"

namespace gspmd::tools {
namespace {

struct TrainCommandOptions {
  std::string file;
  std::string steps = "1";
  std::vector<std::string> inputs;
  std::string devices;
  std::string carry;
  std::string data;
  bool check = false;
  double rtol = 1e-4;
  double atol = 1e-6;
  std::string save;
  uint64_t seed = 0;
  std::string progress = "auto";
  std::string backend = "threads";
};

int64_t ParseSteps(const std::string& text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 1)
    GSPMD_USER_ERROR("gspmd train: error: --steps '", text, "' is not a positive number of steps");
  return value;
}

std::string Bytes(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int unit = 0;
  while (bytes >= 1000 && unit < 4) {
    bytes /= 1000;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
  return text;
}

std::string Duration(double seconds) {
  const int64_t s = static_cast<int64_t>(std::llround(seconds));
  char text[32];
  std::snprintf(text, sizeof(text), "%lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  return text;
}

// The scalar outputs shown per step: the module's metric names, else output 0 as the loss
// when it is a float scalar.
std::vector<std::string> MetricNames(const StepSignature& s) {
  if (!s.metrics.empty()) return s.metrics;
  if (!s.outputs.empty() && s.outputs[0].rank() == 0 && IsFloatingPoint(s.outputs[0].element_type())) return {"loss"};
  return {};
}

std::string MetricText(const std::string& name, double value) {
  char text[64];
  const bool is_count = name.find("tokens") != std::string::npos;
  std::snprintf(text, sizeof(text), is_count ? "%s %.0f" : "%s %.4f", name.c_str(), value);
  return text;
}

class StepDisplay {
 public:
  StepDisplay(const std::string& mode, int64_t steps, int64_t tokens_per_step, std::vector<std::string> metrics)
      : steps_(steps), tokens_(tokens_per_step), metrics_(std::move(metrics)) {
    bar_ = mode == "bar" || (mode == "auto" && isatty(fileno(stdout)));
    quiet_ = mode == "quiet";
  }

  void Show(const StepResult& r) {
    total_seconds_ += r.seconds + r.check_seconds;
    run_seconds_ += r.seconds;
    if (quiet_) return;
    std::string metrics;
    for (size_t i = 0; i < metrics_.size(); ++i) metrics += "  " + MetricText(metrics_[i], r.outputs[i].GetAsDouble(0));
    char rate[64] = "";
    if (tokens_ > 0) std::snprintf(rate, sizeof(rate), "  tokens/s %.0f", static_cast<double>(tokens_) / r.seconds);
    if (bar_) {
      const int64_t done = r.step + 1;
      const int width = 24;
      const int filled = static_cast<int>(width * done / steps_);
      std::string bar(static_cast<size_t>(filled), '=');
      bar.resize(width, ' ');
      const double eta = total_seconds_ / static_cast<double>(done) * static_cast<double>(steps_ - done);
      std::printf("\r\033[Kstep %lld/%lld [%s]%s%s  ETA %s", static_cast<long long>(done),
                  static_cast<long long>(steps_), bar.c_str(), metrics.c_str(), rate, Duration(eta).c_str());
      std::fflush(stdout);
      return;
    }
    char check[64] = "";
    if (r.check_seconds > 0)
      std::snprintf(check, sizeof(check), "  %s one device (%.1f ms)", r.mismatch.empty() ? "matches" : "DIFFERS from",
                    r.check_seconds * 1e3);
    std::printf("step %lld/%lld%s  time %.1f ms%s%s\n", static_cast<long long>(r.step + 1),
                static_cast<long long>(steps_), metrics.c_str(), r.seconds * 1e3, rate, check);
    std::fflush(stdout);
  }

  void Finish() {
    if (bar_ && !quiet_) std::printf("\n");
  }
  double run_seconds() const { return run_seconds_; }

 private:
  int64_t steps_;
  int64_t tokens_;
  std::vector<std::string> metrics_;
  bool bar_ = false;
  bool quiet_ = false;
  double total_seconds_ = 0;
  double run_seconds_ = 0;
};

void PrintHeader(const TrainCommandOptions& options, const Module& module, int64_t devices, const Trainer& trainer,
                 const CommReport& comm) {
  const StepSignature& s = trainer.signature();
  const std::string model = ModuleFrontendAttribute(module, "gspmd.model");
  std::printf("train %s%s on %lld devices, %zu inputs, %zu outputs\n", options.file.c_str(),
              model.empty() ? "" : (" (model " + model + ")").c_str(), static_cast<long long>(devices), s.inputs.size(),
              s.outputs.size());
  const char* source = s.carry_source == StepSignature::CarrySource::kModule ? "recorded in the module"
                       : s.carry_source == StepSignature::CarrySource::kFlag ? "from --carry"
                                                                              : "inferred: trailing outputs match trailing inputs in shape and sharding";
  if (s.carry.empty())
    std::printf("carry: none (%s); every step takes the same carried inputs\n",
                s.carry_source == StepSignature::CarrySource::kInferred ? "no trailing output matches a trailing input"
                                                                         : source);
  else
    std::printf("carry: %zu outputs feed the next step's inputs (%s): %s\n", s.carry.size(), source,
                s.carry.size() <= 12 ? s.CarryText().c_str() : (s.CarryText().substr(0, 60) + "...").c_str());
  std::string kinds;
  for (const auto& [kind, stats] : comm.by_kind)
    kinds += StrCat(kinds.empty() ? "" : ", ", kind, " ", Bytes(stats.bytes), " (", stats.count, ")");
  std::printf("communication per step and device: %s%s%s\n", Bytes(comm.comm_bytes_per_device).c_str(),
              kinds.empty() ? "" : ": ", kinds.c_str());
  std::fflush(stdout);
}

void RunTrainCommand(const TrainCommandOptions& options) {
  if (options.backend != "threads")
    GSPMD_USER_ERROR("gspmd train: error: --backend ", options.backend,
                     " is not available in this build (expected threads)");
  if (options.progress != "auto" && options.progress != "bar" && options.progress != "lines" &&
      options.progress != "quiet")
    GSPMD_USER_ERROR("gspmd train: error: --progress ", options.progress, ": expected auto, bar, lines or quiet");
  if (!(options.rtol >= 0) || !(options.atol >= 0))
    GSPMD_USER_ERROR("gspmd train: error: --rtol and --atol must be >= 0");
  const int64_t steps = ParseSteps(options.steps);
  const int64_t requested = options.devices.empty() ? 0 : ParseDeviceCount(options.devices, "train");

  // One copy as written (its attributes describe the step; the interpreter checks it) and
  // one to propagate and partition.
  std::unique_ptr<Module> original = LoadProgram(options.file);
  std::unique_ptr<Module> compiled = LoadProgram(options.file);
  TrainSettings settings;
  settings.carry = options.carry;
  settings.data_dir = options.data;
  settings.check = options.check;
  settings.rtol = options.rtol;
  settings.atol = options.atol;
  settings.seed = options.seed;
  if (!options.inputs.empty()) {
    settings.first_inputs = ReadInputs(options.inputs);
    CheckInputShapes(*original, options.file, settings.first_inputs, options.inputs);
  }

  CliPartition partition = PartitionForCli(*compiled, options.file, requested);
  const Module& per_device = *partition.partitioned.module;
  SpmdRunOptions run_options =
      WithFileContext(options.file, [&] { return OptionsFromLikeModule(per_device, compiled.get()); });
  run_options.num_devices = partition.num_devices;
  Trainer trainer = WithFileContext(options.file, [&] {
    return Trainer(*original, ThreadsRunner(per_device, run_options), std::move(settings));
  });
  const CommReport comm = AnalyzeCommunication(per_device);
  if (options.progress != "quiet") PrintHeader(options, *original, partition.num_devices, trainer, comm);

  const std::vector<std::string> metrics = MetricNames(trainer.signature());
  StepDisplay display(options.progress, steps, trainer.tokens_per_step(), metrics);
  double first_loss = NAN, last_loss = NAN;
  StepResult last;
  for (int64_t step = 0; step < steps; ++step) {
    StepResult result = WithFileContext(options.file, [&] { return trainer.Step(); });
    display.Show(result);
    if (!metrics.empty()) {
      last_loss = result.outputs[0].GetAsDouble(0);
      if (step == 0) first_loss = last_loss;
    }
    if (!result.mismatch.empty()) {
      display.Finish();
      GSPMD_USER_ERROR(options.file, ": error: step ", step + 1, " on ", partition.num_devices,
                       " devices differs from one device: ", result.mismatch, " (rtol ", options.rtol, ", atol ", options.atol, ")");
    }
    last = std::move(result);
  }
  display.Finish();
  if (options.progress != "quiet") {
    char loss[128] = "";
    if (!metrics.empty())
      std::snprintf(loss, sizeof(loss), "; loss %.4f -> %.4f (%.1f%% of the first)", first_loss, last_loss,
                    100.0 * last_loss / first_loss);
    char rate[64] = "";
    if (trainer.tokens_per_step() > 0)
      std::snprintf(rate, sizeof(rate), ", %.0f tokens/s",
                    static_cast<double>(trainer.tokens_per_step() * steps) / display.run_seconds());
    std::printf("done: %lld steps, %.1f ms per step%s%s%s\n", static_cast<long long>(steps),
                display.run_seconds() / static_cast<double>(steps) * 1e3, rate, loss,
                options.check ? "; every step matched one device" : "");
  }
  if (!options.save.empty()) WriteOutputs(options.save, last.outputs);
}

}  // namespace

void AddTrainCommand(CLI::App& app) {
  auto options = std::make_shared<TrainCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "train",
      "Run a training step repeatedly on simulated devices, feeding its outputs back as the next step's inputs");
  command->add_option("FILE", options->file, "HLO text of one training step (gspmd model, or JAX's pre.hlo), or StableHLO (.mlir) text")
      ->required()
      ->type_name("FILE");
  command->add_option("--steps", options->steps, "number of steps (default 1)")->type_name("N");
  command->add_option("-i,--inputs", options->inputs,
                      "the first step's inputs, one .npy per entry parameter (default: made from the module's "
                      "gspmd.init attributes)")
      ->type_name("NPY");
  command->add_option("--devices", options->devices, "number of simulated devices (default: num_partitions)")
      ->type_name("N");
  command->add_option("--carry", options->carry,
                      "output OUT feeds input IN on the next step (default: the module's, else inferred from "
                      "trailing outputs and inputs that match)")
      ->type_name("OUT:IN,...");
  command->add_option("--data", options->data,
                      "batches: DIR/<input name>.npy or DIR/in<i>.npy of shape [N, ...]; step k takes row k mod N")
      ->type_name("DIR");
  command->add_flag("--check", options->check, "also run every step on one device and stop at the first mismatch");
  command->add_option("--rtol", options->rtol, "--check tolerance: relative L2 error per output (default 1e-4)")
      ->type_name("R");
  command->add_option("--atol", options->atol,
                      "--check: an output also matches when its RMS difference is at most this (default 1e-6)")
      ->type_name("A");
  command->add_option("--save", options->save, "write the last step's outputs as DIR/out0.npy, out1.npy, ...")
      ->type_name("DIR");
  command->add_option("--seed", options->seed, "seed of the initial values and the synthetic batches (default 0)")
      ->type_name("S");
  command->add_option("--progress", options->progress,
                      "auto (a bar on a terminal, else a line per step), bar, lines or quiet")
      ->type_name("MODE");
  command->add_option("--backend", options->backend, "threads (default)")->type_name("NAME");
  command->callback([options] { RunTrainCommand(*options); });
}

}  // namespace gspmd::tools
