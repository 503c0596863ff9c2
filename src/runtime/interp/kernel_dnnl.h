// oneDNN plumbing for the interpreter's kernels: one CPU engine, a stream per thread, and
// f32 matmul / convolution primitives cached by shape. Safe to call from several threads.
#pragma once

#include <cstdint>
#include <vector>

namespace gspmd::kernel {

// C[b] = A[b] x B[b] in f32, for b in [0, batch). A is M x K, B is K x N, C is M x N row-major
// and dense. a_transposed: A is stored as K x M (row-major) instead; likewise b_transposed.
struct MatmulProblem {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool a_transposed = false;
  bool b_transposed = false;
};
void DnnlMatmul(const MatmulProblem& problem, const float* a, const float* b, float* c);

// A direct f32 convolution in plain layouts: src [N, C, spatial...], weights
// [G, O/G, C/G, spatial...] (G = groups), dst [N, O, spatial...], 1 to 3 spatial dims.
// dilation is oneDNN's (XLA's rhs dilation minus 1); padding is non-negative.
// Returns false when oneDNN has no implementation for the configuration.
struct ConvProblem {
  int64_t batch = 0, in_features = 0, out_features = 0, groups = 1;
  std::vector<int64_t> in_spatial, kernel_spatial, out_spatial;
  std::vector<int64_t> strides, dilation, padding_low, padding_high;
};
bool DnnlConvolution(const ConvProblem& problem, const float* src, const float* weights, float* dst);

// The largest OpenMP team one kernel call may use (<= 0: OpenMP's default, every core).
// Processes sharing a machine, such as the ranks of an MPI job, set their share of the cores.
void SetKernelThreadLimit(int threads);

}  // namespace gspmd::kernel
