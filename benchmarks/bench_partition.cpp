// Benchmark of the SPMD partitioner on the 32-layer transformer training step: parse time, and
// partition time on its own 8-device mesh (2x4) against the same program on 2048 devices,
// measured side by side (alternating, in the same iterations) so that machine noise affects
// both alike.
//
// The requirement: partitioning takes well under a second, and the time does not
// depend on the number of partitions (2048 vs 8 within 1.2x). Two 2048-device versions:
//   scaled      every mesh axis scaled: 2x4 -> 32x64 (dims of 4 split 32 or 64 ways become
//               uneven, so the per-device program gains padding masks)
//   replicated  2x4 plus a 256-way axis every value is replicated over: the same per-device
//               program on 2048 devices (collective groups and offsets over 2048 ids)
// BM_PartitionSideBySide/<version> reports medians: ms_8, ms_2048 and ratio (of ms_2048 to
// ms_8), in wall time and in thread CPU time (cpu_*: less sensitive to other load). Set
// GSPMD_BENCH_HLO to benchmark another file (it must have a 2x4 mesh).
#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ir/module.h"
#include "partitioner/mesh_rewrite.h"
#include "partitioner/partitioner.h"
#include "text/parser.h"

namespace gspmd {
namespace {

const MeshScale kScaledMesh{{2, 4}, {16, 16}};          // 2x4 -> 32x64
const MeshScale kReplicatedMesh{{2, 4, 1}, {1, 1, 256}};  // 2x4 -> 2x4x256

std::string BenchHloPath() {
  if (const char* path = std::getenv("GSPMD_BENCH_HLO")) return path;
  std::filesystem::path here = std::filesystem::path(__FILE__).parent_path();
  return (here / "data" / "transformer_train_32l" / "propagated.hlo").string();
}

// The module on 8 devices (as written) and its two 2048-device versions, parsed once.
struct Programs {
  std::unique_ptr<Module> on_8;
  std::unique_ptr<Module> scaled;
  std::unique_ptr<Module> replicated;
};

const Programs& LoadPrograms() {
  static const Programs programs = [] {
    Programs p;
    p.on_8 = ParseModuleFile(BenchHloPath());
    p.scaled = ParseModuleFile(BenchHloPath());
    ScaleModuleMesh(*p.scaled, kScaledMesh);
    p.replicated = ParseModuleFile(BenchHloPath());
    ScaleModuleMesh(*p.replicated, kReplicatedMesh);
    return p;
  }();
  return programs;
}

const Module& ProgramFor(int64_t version) {
  const Programs& programs = LoadPrograms();
  if (version == 0) return *programs.on_8;
  return version == 1 ? *programs.scaled : *programs.replicated;
}

double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

struct Timing {
  double wall = 0;
  double cpu = 0;
};

Timing TimePartition(const Module& module) {
  double cpu_start = ThreadCpuSeconds();
  auto start = std::chrono::steady_clock::now();
  PartitionResult result = PartitionModule(module);
  benchmark::DoNotOptimize(result.module.get());
  auto stop = std::chrono::steady_clock::now();
  return {std::chrono::duration<double>(stop - start).count(), ThreadCpuSeconds() - cpu_start};
}

void BM_Parse(benchmark::State& state) {
  std::string path = BenchHloPath();
  for (auto _ : state) {
    std::unique_ptr<Module> module = ParseModuleFile(path);
    benchmark::DoNotOptimize(module.get());
  }
}
BENCHMARK(BM_Parse)->Unit(benchmark::kMillisecond);

// One program: 0 = 8 devices, 1 = scaled to 2048, 2 = replicated to 2048.
void BM_Partition(benchmark::State& state) {
  const Module& module = ProgramFor(state.range(0));
  for (auto _ : state) {
    PartitionResult result = PartitionModule(module);
    benchmark::DoNotOptimize(result.module.get());
  }
  state.counters["partitions"] = static_cast<double>(module.num_partitions());
}
BENCHMARK(BM_Partition)->ArgName("version")->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

// 8 devices and one 2048-device version (1 = scaled, 2 = replicated) in every iteration,
// alternating which goes first. Medians over the iterations (robust to bursts of other load):
// ms_8 / ms_2048 wall time, ratio = median of the per-iteration ratios; cpu_* the same in
// thread CPU time.
void BM_PartitionSideBySide(benchmark::State& state) {
  const Module& on_8 = ProgramFor(0);
  const Module& on_2048 = ProgramFor(state.range(0));
  std::vector<double> wall_8, wall_2048, cpu_8, cpu_2048, wall_ratio, cpu_ratio;
  int64_t iteration = 0;
  for (auto _ : state) {
    Timing t8, t2048;
    if (iteration++ % 2 == 0) {
      t8 = TimePartition(on_8);
      t2048 = TimePartition(on_2048);
    } else {
      t2048 = TimePartition(on_2048);
      t8 = TimePartition(on_8);
    }
    wall_8.push_back(t8.wall);
    wall_2048.push_back(t2048.wall);
    cpu_8.push_back(t8.cpu);
    cpu_2048.push_back(t2048.cpu);
    wall_ratio.push_back(t2048.wall / t8.wall);
    cpu_ratio.push_back(t2048.cpu / t8.cpu);
    state.SetIterationTime(t8.wall + t2048.wall);
  }
  state.counters["ms_8"] = 1e3 * Median(wall_8);
  state.counters["ms_2048"] = 1e3 * Median(wall_2048);
  state.counters["ratio"] = Median(wall_ratio);
  state.counters["cpu_ms_8"] = 1e3 * Median(cpu_8);
  state.counters["cpu_ms_2048"] = 1e3 * Median(cpu_2048);
  state.counters["cpu_ratio"] = Median(cpu_ratio);
}
BENCHMARK(BM_PartitionSideBySide)
    ->ArgName("version")
    ->Arg(1)
    ->Arg(2)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3.0);

}  // namespace
}  // namespace gspmd

BENCHMARK_MAIN();
