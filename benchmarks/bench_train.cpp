// Benchmarks of training: (1) time per training step of the small GShard MoE and dense LM on 8
// simulated devices against the same step on one device (the interpreter), side by side in
// the same iterations; (2) writing and partitioning the full-size models (the 1T dense LM and
// the 600B GShard MoE) for 2048 partitions against fewer partitions of the same model, to
// show the compile time does not grow with the partition count.
//
// BM_StepSideBySide/<model> reports ms_8 (8 devices), ms_1 (one device) and ratio = ms_8/ms_1.
// BM_CompileFullSize/<preset>/<partitions> reports build_ms (gspmd model), propagate_ms,
// partition_ms and total_ms, plus the process's peak RSS so far (peak_rss_mb: the benchmark
// runs them in increasing size, so each figure bounds that compile's peak).
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "models/model_catalog.h"
#include "partitioner/partitioner.h"
#include "propagation/propagation.h"
#include "runtime/spmd/like_module.h"
#include "text/parser.h"
#include "text/printer.h"
#include "train/trainer.h"

namespace gspmd {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double PeakRssMb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // kilobytes on Linux
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

// The main job's MoE and a dense LM of similar size, on a 2x4 mesh.
ModelConfig SmallModel(const std::string& name) {
  ModelConfig config = FindTrainingModel(name).config();
  for (const char* setting : {"layers=4", "d_model=64", "head_dim=8", "d_ff=128", "batch=16", "seq=16"})
    config.SetAssignment(setting);
  if (name == "gshard_moe") {
    config.SetAssignment("expert_hidden=128");
    config.SetAssignment("groups=16");
  }
  return config;
}

void BM_StepSideBySide(benchmark::State& state, const std::string& model) {
  ModelConfig config = SmallModel(model);
  std::unique_ptr<Module> global = ParseModule(PrintModule(*FindTrainingModel(model).build(config)));
  std::unique_ptr<Module> propagated = ParseModule(PrintModule(*global));
  PropagateShardings(*propagated);
  std::unique_ptr<Module> per_device = std::move(PartitionModule(*propagated).module);
  SpmdRunOptions options = OptionsFromLikeModule(*per_device, propagated.get());
  Trainer sharded(*global, ThreadsRunner(*per_device, options), {});
  Trainer single(*global, InterpreterRunner(*global), {});
  std::vector<double> ms_8, ms_1;
  for (auto _ : state) {
    ms_8.push_back(sharded.Step().seconds * 1e3);
    ms_1.push_back(single.Step().seconds * 1e3);
  }
  state.counters["ms_8"] = Median(ms_8);
  state.counters["ms_1"] = Median(ms_1);
  state.counters["ratio"] = Median(ms_8) / Median(ms_1);
}

void BM_CompileFullSize(benchmark::State& state, const std::string& preset_name, const std::string& mesh) {
  const ModelPreset& preset = FindModelPreset(preset_name);
  ModelConfig config = PresetConfig(preset);
  config.SetMesh(mesh);
  double build_ms = 0, propagate_ms = 0, partition_ms = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    std::unique_ptr<Module> module = FindTrainingModel(preset.model).build(config);
    build_ms = MsSince(start);
    start = Clock::now();
    PropagateShardings(*module);
    propagate_ms = MsSince(start);
    start = Clock::now();
    PartitionResult partitioned = PartitionModule(*module);
    partition_ms = MsSince(start);
    benchmark::DoNotOptimize(partitioned.module.get());
  }
  state.counters["partitions"] = static_cast<double>(config.mesh().num_devices());
  state.counters["build_ms"] = build_ms;
  state.counters["propagate_ms"] = propagate_ms;
  state.counters["partition_ms"] = partition_ms;
  state.counters["total_ms"] = build_ms + propagate_ms + partition_ms;
  state.counters["peak_rss_mb"] = PeakRssMb();
}

BENCHMARK_CAPTURE(BM_StepSideBySide, gshard_moe, std::string("gshard_moe"))->Unit(benchmark::kMillisecond)->Iterations(20);
BENCHMARK_CAPTURE(BM_StepSideBySide, dense_lm, std::string("dense_lm"))->Unit(benchmark::kMillisecond)->Iterations(20);

// The same model, 128 / 512 / 2048 partitions (GShard: experts stay 2048, spread over the
// expert axis; dense: the 2-D mesh grows).
BENCHMARK_CAPTURE(BM_CompileFullSize, gshard_600b_128, std::string("gshard-2048e-36l"), std::string("data=1,expert=128"))
    ->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_CompileFullSize, gshard_600b_512, std::string("gshard-2048e-36l"), std::string("data=1,expert=512"))
    ->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_CompileFullSize, gshard_600b_2048, std::string("gshard-2048e-36l"), std::string("data=1,expert=2048"))
    ->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_CompileFullSize, dense_1t_128, std::string("dense-1t"), std::string("x=8,y=16"))
    ->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_CompileFullSize, dense_1t_512, std::string("dense-1t"), std::string("x=16,y=32"))
    ->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_CompileFullSize, dense_1t_2048, std::string("dense-1t"), std::string("x=32,y=64"))
    ->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace gspmd

BENCHMARK_MAIN();
