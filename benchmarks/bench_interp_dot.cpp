// The interpreter's dot against the best f32 GEMM on this machine (a direct oneDNN matmul), side
// by side on the same sizes; the GFLOP counter is a rate (GFLOP/s). Acceptance: EvaluateDot >= 70% of the
// baseline.
//
//   build-*/benchmarks/bench_interp_dot --benchmark_counters_tabular=true
#include <cstdint>
#include <random>
#include <vector>

#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.hpp>

#include "ir/instruction.h"
#include "ir/literal.h"
#include "runtime/interp/kernels.h"

namespace gspmd {

void FillRandom(float* data, int64_t count) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < count; ++i) data[i] = dist(rng);
}

void SetFlops(benchmark::State& state, double flops) {
  state.counters["GFLOP"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Baseline: a oneDNN f32 matmul [B, M, K] x [B, K, N], primitive and buffers made once.
void BM_DnnlMatmul(benchmark::State& state) {
  const int64_t b = state.range(0), m = state.range(1), n = state.range(2), k = state.range(3);
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  dnnl::memory::desc a_md({b, m, k}, dt::f32, tag::abc), b_md({b, k, n}, dt::f32, tag::abc),
      c_md({b, m, n}, dt::f32, tag::abc);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), engine);
  dnnl::matmul matmul(pd);
  std::vector<float> a(b * m * k), bm(b * k * n), c(b * m * n);
  FillRandom(a.data(), static_cast<int64_t>(a.size()));
  FillRandom(bm.data(), static_cast<int64_t>(bm.size()));
  dnnl::memory a_mem(a_md, engine, a.data()), b_mem(b_md, engine, bm.data()), c_mem(c_md, engine, c.data());
  for (auto _ : state) {
    matmul.execute(stream, {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}});
    stream.wait();
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state, 2.0 * b * m * n * k);
}

// The interpreter: EvaluateDot on literals, including the result allocation. rhs_transposed
// contracts the rhs on its last dim (x @ w^T), which the kernel reads without a copy.
void RunEvaluateDot(benchmark::State& state, bool rhs_transposed) {
  const int64_t b = state.range(0), m = state.range(1), n = state.range(2), k = state.range(3);
  const bool batched = b > 1;
  std::vector<int64_t> lhs_dims = batched ? std::vector<int64_t>{b, m, k} : std::vector<int64_t>{m, k};
  std::vector<int64_t> rhs_dims = rhs_transposed ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
  if (batched) rhs_dims.insert(rhs_dims.begin(), b);
  std::vector<int64_t> out_dims = batched ? std::vector<int64_t>{b, m, n} : std::vector<int64_t>{m, n};
  Literal lhs(Shape(ElementType::kF32, lhs_dims)), rhs(Shape(ElementType::kF32, rhs_dims));
  FillRandom(lhs.data<float>(), lhs.element_count());
  FillRandom(rhs.data<float>(), rhs.element_count());
  Instruction dot(Opcode::kDot, Shape(ElementType::kF32, out_dims), "dot");
  const int64_t offset = batched ? 1 : 0;
  if (batched) dot.mutable_dot_dims() = {{0}, {0}, {}, {}};
  dot.mutable_dot_dims().lhs_contracting_dims = {offset + 1};
  dot.mutable_dot_dims().rhs_contracting_dims = {rhs_transposed ? offset + 1 : offset};
  for (auto _ : state) {
    Literal result = EvaluateDot(dot, lhs, rhs);
    benchmark::DoNotOptimize(result.raw());
  }
  SetFlops(state, 2.0 * b * m * n * k);
}

void BM_EvaluateDot(benchmark::State& state) { RunEvaluateDot(state, false); }
void BM_EvaluateDotTransposedRhs(benchmark::State& state) { RunEvaluateDot(state, true); }

}  // namespace gspmd

// Sizes {batch, M, N, K}; for each, the baseline and the interpreter run back to back so
// that both see the same machine load.
int main(int argc, char** argv) {
  const std::vector<std::vector<int64_t>> sizes = {
      {1, 1024, 1024, 1024}, {1, 2048, 2048, 2048}, {8, 512, 512, 512}, {16, 256, 256, 256}};
  for (const std::vector<int64_t>& size : sizes) {
    for (auto [name, function] : {std::pair{"DnnlMatmul", &gspmd::BM_DnnlMatmul},
                                  std::pair{"EvaluateDot", &gspmd::BM_EvaluateDot},
                                  std::pair{"EvaluateDotTransposedRhs", &gspmd::BM_EvaluateDotTransposedRhs}}) {
      benchmark::RegisterBenchmark(name, function)
          ->Args(size)
          ->ArgNames({"b", "m", "n", "k"})
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->MinTime(1.0);
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
