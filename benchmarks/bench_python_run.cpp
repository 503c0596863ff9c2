// The baseline of bench_python_run.py: the in-process run `gspmd run --per-device --like` does
// (api::Run of a per-device program with its global program), on the 32-layer training step
// partitioned once for 8 devices. bench_python_run.py times Program.run from Python on the same
// program and inputs beside it and reports the ratio.
//
//   build/benchmarks/bench_python_run --benchmark_repetitions=5
// GSPMD_BENCH_HLO names another global program; GSPMD_BENCH_INPUTS a directory of its inputs
// (in<i>.npy, what bench_python_run.py writes); without it the inputs are random (N(0, 0.02)).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "api/gspmd.h"
#include "io/array_source.h"

namespace gspmd {
namespace {

std::string ProgramPath() {
  if (const char* path = std::getenv("GSPMD_BENCH_HLO")) return path;
  return (std::filesystem::path(__FILE__).parent_path() / "data" / "transformer_train_32l" / "pre.hlo").string();
}

std::vector<Literal> Inputs(const api::Program& program) {
  std::vector<Literal> inputs;
  const char* directory = std::getenv("GSPMD_BENCH_INPUTS");
  std::mt19937 rng(0);
  std::normal_distribution<double> normal(0.0, 0.02);
  for (const Instruction* parameter : program.module().entry()->parameters()) {
    if (directory != nullptr) {
      inputs.push_back(ReadArrayFile(std::string(directory) + "/in" + std::to_string(parameter->parameter_number) + ".npy"));
      continue;
    }
    Literal literal(parameter->shape());
    for (int64_t i = 0; i < literal.element_count(); ++i) literal.SetFromDouble(i, normal(rng));
    inputs.push_back(std::move(literal));
  }
  return inputs;
}

void BM_ApiRunPerDevice(benchmark::State& state) {
  const api::Program global = api::Program::Load(ProgramPath());
  const api::Partitioned partitioned = api::Partition(global);
  const std::vector<Literal> inputs = Inputs(global);
  api::RunOptions options;
  options.like = &partitioned.global;
  api::Run(partitioned.per_device, inputs, options);  // warm-up: device threads, allocator
  for (auto _ : state) {
    std::vector<Literal> outputs = api::Run(partitioned.per_device, inputs, options);
    benchmark::DoNotOptimize(outputs.data());
  }
}
// cpu_time is the whole process's (every device thread's) CPU time of the run, which
// bench_python_run.py sets beside Python's process_time on a shared machine.
BENCHMARK(BM_ApiRunPerDevice)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime()->Iterations(1);

}  // namespace
}  // namespace gspmd

BENCHMARK_MAIN();
