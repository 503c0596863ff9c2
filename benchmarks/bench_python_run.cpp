// The baseline of bench_python_run.py: the in-process run `gspmd run --spmd --like` does
// (api::Run of a per-device program with its global program), timed in C++ on the same inputs.
//
//   build/benchmarks/bench_python_run PROGRAM.hlo INPUT_DIR REPEATS
// partitions PROGRAM once, reads INPUT_DIR/in<i>.npy, runs once to warm up, then REPEATS times,
// and prints one line: {"seconds": [t1, t2, ...]}.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "api/gspmd.h"
#include "io/array_source.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s PROGRAM.hlo INPUT_DIR REPEATS\n", argv[0]);
    return 2;
  }
  try {
    using namespace gspmd;
    const api::Program global = api::Program::Load(argv[1]);
    const api::Partitioned partitioned = api::Partition(global);
    std::vector<Literal> inputs;
    for (int64_t i = 0; i < global.module().entry()->num_parameters(); ++i)
      inputs.push_back(ReadArrayFile(std::string(argv[2]) + "/in" + std::to_string(i) + ".npy"));
    api::RunOptions options;
    options.like = &partitioned.global;
    api::Run(partitioned.per_device, inputs, options);  // warm-up: device threads, allocator
    std::printf("{\"seconds\": [");
    const int repeats = std::atoi(argv[3]);
    for (int r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      std::vector<Literal> outputs = api::Run(partitioned.per_device, inputs, options);
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      std::printf("%s%.6f", r == 0 ? "" : ", ", elapsed.count());
    }
    std::printf("]}\n");
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
  return 0;
}
