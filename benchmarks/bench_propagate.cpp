// Benchmark of sharding propagation: the 32-layer transformer training step JAX exported
// (benchmarks/data/transformer_train_32l/pre.hlo, ~12,500 lines), and builder-made transformer
// training steps of 8, 32 and 128 layers measured in one run.
//
// The requirement: propagating the 32-layer pre.hlo takes well under a second, and the
// time grows linearly with the number of layers. Each benchmark times PropagateShardings only
// (parsing/building a fresh module per iteration is excluded) and reports us_per_layer and
// ns_per_instruction; BM_PropagateLayerScaling propagates all three sizes in every iteration
// and reports per_layer_ratio = (time/layer at 128) / (time/layer at 8), ~1 when linear.
// Set GSPMD_BENCH_PRE_HLO to benchmark another pre-propagation file.
//
//   build-*/benchmarks/bench_propagate --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "ir/module.h"
#include "models/transformer.h"
#include "propagation/propagation.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd {
namespace {

constexpr int64_t kCorpusLayers = 32;

std::string PreHloPath() {
  if (const char* path = std::getenv("GSPMD_BENCH_PRE_HLO")) return path;
  std::filesystem::path here = std::filesystem::path(__FILE__).parent_path();
  return (here / "data" / "transformer_train_32l" / "pre.hlo").string();
}

int64_t InstructionCount(const Module& module) {
  int64_t count = 0;
  for (const auto& computation : module.computations()) count += computation->instruction_count();
  return count;
}

// The corpus's shapes (batch 4, seq 16, d_model 32, 4 heads of 8, d_ff 128, 2x4 mesh).
ModelOptions TransformerOptions(int64_t layers) {
  ModelOptions options;
  options.layers = layers;
  options.train = true;
  return options;
}

double SecondsToPropagate(Module& module) {
  auto start = std::chrono::steady_clock::now();
  PropagationResult result = PropagateShardings(module);
  benchmark::DoNotOptimize(result.num_partitions);
  auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(stop - start).count();
}

void SetPerLayerCounters(benchmark::State& state, double seconds, int64_t layers, int64_t instructions) {
  const double per_iteration = seconds / static_cast<double>(state.iterations());
  state.counters["layers"] = static_cast<double>(layers);
  state.counters["instructions"] = static_cast<double>(instructions);
  state.counters["us_per_layer"] = per_iteration * 1e6 / static_cast<double>(layers);
  state.counters["ns_per_instruction"] = per_iteration * 1e9 / static_cast<double>(instructions);
}

// JAX's export, parsed afresh for every iteration (the parse is not timed).
void BM_PropagateCorpus32Layers(benchmark::State& state) {
  const std::string text = PrintModule(*ParseModuleFile(PreHloPath()));
  double seconds = 0;
  int64_t instructions = 0;
  for (auto _ : state) {
    std::unique_ptr<Module> module = ParseModule(text, PreHloPath());
    instructions = InstructionCount(*module);
    const double elapsed = SecondsToPropagate(*module);
    seconds += elapsed;
    state.SetIterationTime(elapsed);
  }
  SetPerLayerCounters(state, seconds, kCorpusLayers, instructions);
}
BENCHMARK(BM_PropagateCorpus32Layers)->UseManualTime()->Unit(benchmark::kMillisecond);

// Builder-made training steps; the module is built afresh for every iteration (not timed).
void BM_PropagateTransformer(benchmark::State& state) {
  const int64_t layers = state.range(0);
  double seconds = 0;
  int64_t instructions = 0;
  for (auto _ : state) {
    std::unique_ptr<Module> module = BuildTransformer(TransformerOptions(layers));
    instructions = InstructionCount(*module);
    const double elapsed = SecondsToPropagate(*module);
    seconds += elapsed;
    state.SetIterationTime(elapsed);
  }
  SetPerLayerCounters(state, seconds, layers, instructions);
  state.SetComplexityN(layers);
}
BENCHMARK(BM_PropagateTransformer)
    ->Arg(8)
    ->Arg(32)
    ->Arg(128)
    ->UseManualTime()
    ->Complexity(benchmark::oN)
    ->Unit(benchmark::kMillisecond);

// 8, 32 and 128 layers in every iteration, so that machine noise affects all three alike.
void BM_PropagateLayerScaling(benchmark::State& state) {
  const int64_t sizes[] = {8, 32, 128};
  double seconds[3] = {0, 0, 0};
  for (auto _ : state) {
    double total = 0;
    for (int i = 0; i < 3; ++i) {
      std::unique_ptr<Module> module = BuildTransformer(TransformerOptions(sizes[i]));
      const double elapsed = SecondsToPropagate(*module);
      seconds[i] += elapsed;
      total += elapsed;
    }
    state.SetIterationTime(total);
  }
  const double n = static_cast<double>(state.iterations());
  for (int i = 0; i < 3; ++i) {
    const std::string suffix = "_" + std::to_string(sizes[i]);
    state.counters["ms" + suffix] = seconds[i] / n * 1e3;
    state.counters["us_per_layer" + suffix] = seconds[i] / n * 1e6 / static_cast<double>(sizes[i]);
  }
  const double per_layer_8 = seconds[0] / 8.0, per_layer_128 = seconds[2] / 128.0;
  state.counters["per_layer_ratio"] = per_layer_8 > 0 ? per_layer_128 / per_layer_8 : 0.0;
}
BENCHMARK(BM_PropagateLayerScaling)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gspmd

BENCHMARK_MAIN();
