// Benchmark of the StableHLO reader against the HLO text parser on the same program: the
// 32-layer transformer training step (benchmarks/data/transformer_train_32l), parsed from
// HLO once and printed both as HLO text (PrintModule) and as StableHLO text (PrintStableHlo,
// the pretty form JAX prints, and the generic form). Each iteration reads both texts
// (alternating which goes first, so machine noise affects both alike).
//
// The requirement: reading StableHLO is at least as fast in MB/s as reading HLO text.
// BM_ReadSideBySide/<program>/<form> reports medians of hlo_MBps, mlir_MBps, ratio (mlir MB/s
// over HLO MB/s, the requirement: >= 1), and time_ratio (mlir time over HLO time for the same
// program: the text sizes differ). program 0 = pre.hlo (as JAX hands it to XLA: shardings on
// parameters and constraints only), 1 = propagated.hlo (a sharding on every instruction);
// form 0 = pretty, 1 = generic. GSPMD_BENCH_DIR sets another directory with those files.
#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "frontend/stablehlo/reader.h"
#include "frontend/stablehlo/writer.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd {
namespace {

std::filesystem::path BenchDir() {
  if (const char* dir = std::getenv("GSPMD_BENCH_DIR")) return dir;
  return std::filesystem::path(__FILE__).parent_path() / "data" / "transformer_train_32l";
}

struct Texts {
  std::string hlo;
  std::string pretty;
  std::string generic;
};

const Texts& ProgramTexts(int64_t program) {
  static const std::vector<Texts> texts = [] {
    std::vector<Texts> all;
    for (const char* file : {"pre.hlo", "propagated.hlo"}) {
      std::unique_ptr<Module> module = ParseModuleFile((BenchDir() / file).string());
      Texts t;
      t.hlo = PrintModule(*module);
      t.pretty = PrintStableHlo(*module);
      StableHloWriteOptions generic;
      generic.generic = true;
      t.generic = PrintStableHlo(*module, generic);
      all.push_back(std::move(t));
    }
    return all;
  }();
  return texts.at(static_cast<size_t>(program));
}

double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

double TimeHlo(const std::string& text) {
  double start = ThreadCpuSeconds();
  std::unique_ptr<Module> module = ParseModule(text, "bench.hlo");
  benchmark::DoNotOptimize(module.get());
  return ThreadCpuSeconds() - start;
}

double TimeMlir(const std::string& text) {
  double start = ThreadCpuSeconds();
  std::unique_ptr<Module> module = ParseStableHlo(text, "bench.mlir");
  benchmark::DoNotOptimize(module.get());
  return ThreadCpuSeconds() - start;
}

void BM_ReadHlo(benchmark::State& state) {
  const std::string& text = ProgramTexts(state.range(0)).hlo;
  for (auto _ : state) {
    std::unique_ptr<Module> module = ParseModule(text, "bench.hlo");
    benchmark::DoNotOptimize(module.get());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ReadHlo)->ArgName("program")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_ReadStableHlo(benchmark::State& state) {
  const Texts& texts = ProgramTexts(state.range(0));
  const std::string& text = state.range(1) == 0 ? texts.pretty : texts.generic;
  for (auto _ : state) {
    std::unique_ptr<Module> module = ParseStableHlo(text, "bench.mlir");
    benchmark::DoNotOptimize(module.get());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ReadStableHlo)->ArgNames({"program", "form"})->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond);

// Both readers in every iteration, medians of thread CPU time.
void BM_ReadSideBySide(benchmark::State& state) {
  const Texts& texts = ProgramTexts(state.range(0));
  const std::string& mlir = state.range(1) == 0 ? texts.pretty : texts.generic;
  std::vector<double> hlo_mbps, mlir_mbps, ratio, time_ratio;
  int64_t iteration = 0;
  for (auto _ : state) {
    double hlo_seconds, mlir_seconds;
    if (iteration++ % 2 == 0) {
      hlo_seconds = TimeHlo(texts.hlo);
      mlir_seconds = TimeMlir(mlir);
    } else {
      mlir_seconds = TimeMlir(mlir);
      hlo_seconds = TimeHlo(texts.hlo);
    }
    double hlo_rate = static_cast<double>(texts.hlo.size()) / hlo_seconds / 1e6;
    double mlir_rate = static_cast<double>(mlir.size()) / mlir_seconds / 1e6;
    hlo_mbps.push_back(hlo_rate);
    mlir_mbps.push_back(mlir_rate);
    ratio.push_back(mlir_rate / hlo_rate);
    time_ratio.push_back(mlir_seconds / hlo_seconds);
    state.SetIterationTime(hlo_seconds + mlir_seconds);
  }
  state.counters["hlo_MB"] = static_cast<double>(texts.hlo.size()) / 1e6;
  state.counters["mlir_MB"] = static_cast<double>(mlir.size()) / 1e6;
  state.counters["hlo_MBps"] = Median(hlo_mbps);
  state.counters["mlir_MBps"] = Median(mlir_mbps);
  state.counters["ratio"] = Median(ratio);
  state.counters["time_ratio"] = Median(time_ratio);
}
BENCHMARK(BM_ReadSideBySide)
    ->ArgNames({"program", "form"})
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->UseManualTime()
    ->Iterations(15)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gspmd

BENCHMARK_MAIN();
