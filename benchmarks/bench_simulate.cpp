// Benchmark of `gspmd simulate` on the paper-sized programs: the 600B GShard MoE
// (gshard-2048e-36l) and the 1T dense LM (dense-1t), each on 2048 TPU v3 cores.
//
// The requirement: simulating the partitioned program takes well under a second beyond
// partitioning. BM_SimulateBesidePartition/<preset> builds the preset's training step,
// propagates and partitions it once (timed: the baseline, partition_s), then times Simulate on
// the per-device program (simulate_s, the median over the iterations) and, for scale, gspmd
// report's analysis of the same program (report_s). Counters: partition_s, simulate_s,
// report_s, simulate_over_partition (the ratio), and the predicted step_time_s.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "analysis/comm_report.h"
#include "models/model_catalog.h"
#include "partitioner/partitioner.h"
#include "propagation/propagation.h"
#include "simulate/chip_spec.h"
#include "simulate/simulator.h"
#include "simulate/topology.h"

namespace gspmd {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

struct Partitioned {
  std::unique_ptr<Module> per_device;
  double partition_s = 0;
};

// The preset's program, propagated and partitioned (the time of those two steps).
Partitioned BuildAndPartition(const std::string& preset_name) {
  const ModelPreset& preset = FindModelPreset(preset_name);
  std::unique_ptr<Module> global = FindTrainingModel(preset.model).build(PresetConfig(preset));
  const auto start = std::chrono::steady_clock::now();
  PropagationOptions propagation;
  propagation.num_partitions = global->num_partitions();
  PropagateShardings(*global, propagation);
  PartitionOptions options;
  options.num_partitions = global->num_partitions();
  Partitioned result;
  result.per_device = PartitionModule(*global, options).module;
  result.partition_s = SecondsSince(start);
  return result;
}

void BM_SimulateBesidePartition(benchmark::State& state, const std::string& preset) {
  const Partitioned program = BuildAndPartition(preset);
  const simulate::ChipSpec chip = simulate::LoadChipSpec("tpu-v3");
  std::vector<double> simulate_times, report_times;
  double step_time = 0;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    const simulate::Topology topology = simulate::Topology::Build(chip, program.per_device->num_partitions());
    const simulate::SimulationReport report = simulate::Simulate(*program.per_device, chip, topology);
    simulate_times.push_back(SecondsSince(start));
    step_time = report.step_time_s;
    benchmark::DoNotOptimize(report.step_time_s);
    start = std::chrono::steady_clock::now();
    const CommReport comm = AnalyzeCommunication(*program.per_device);
    report_times.push_back(SecondsSince(start));
    benchmark::DoNotOptimize(comm.comm_bytes_per_device);
  }
  const double simulate_s = Median(simulate_times);
  state.counters["partition_s"] = program.partition_s;
  state.counters["simulate_s"] = simulate_s;
  state.counters["report_s"] = Median(report_times);
  state.counters["simulate_over_partition"] = simulate_s / program.partition_s;
  state.counters["step_time_s"] = step_time;
}

BENCHMARK_CAPTURE(BM_SimulateBesidePartition, gshard_2048e_36l, std::string("gshard-2048e-36l"))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5);
BENCHMARK_CAPTURE(BM_SimulateBesidePartition, dense_1t, std::string("dense-1t"))
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5);

}  // namespace
}  // namespace gspmd

BENCHMARK_MAIN();
