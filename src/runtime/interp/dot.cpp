// The dot kernel: general dimension numbers, f32 (and 16-bit floats) on oneDNN matmul,
// f64 and integer dots on a blocked loop.
#include <algorithm>
#include <cstring>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "runtime/interp/kernel_dnnl.h"
#include "runtime/interp/kernel_util.h"
#include "runtime/interp/kernels.h"

namespace gspmd {
using namespace kernel;
namespace {

// The dot's dimension bookkeeping: result dims are batch, lhs free, rhs free; the operands are
// viewed as [B, M, K] x [B, K, N]. One plan per thread is reused (its vectors keep their
// capacity), so a dot allocates nothing for its bookkeeping after the first.
struct DotPlan {
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
  std::vector<int64_t> lhs_free, rhs_free;
  int64_t batch = 1, m = 1, n = 1, k = 1;
};

void FreeDims(int64_t rank, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting,
              std::vector<int64_t>& free) {
  free.clear();
  for (int64_t d = 0; d < rank; ++d)
    if (!Contains(batch, d) && !Contains(contracting, d)) free.push_back(d);
}

// Each of `first` then `second` is a dimension in [0, rank), none listed twice.
void CheckDimList(const Instruction& dot, const std::vector<int64_t>& first, const std::vector<int64_t>& second,
                  int64_t rank, const char* what) {
  for (const std::vector<int64_t>* list : {&first, &second}) {
    for (size_t i = 0; i < list->size(); ++i) {
      const int64_t d = (*list)[i];
      if (d < 0 || d >= rank) KernelError(dot, StrCat(what, " dimension ", d, " is out of range for rank ", rank));
      const bool repeated = std::find(list->begin(), list->begin() + static_cast<std::ptrdiff_t>(i), d) !=
                                list->begin() + static_cast<std::ptrdiff_t>(i) ||
                            (list == &second && Contains(first, d));
      if (repeated) KernelError(dot, StrCat(what, " dimension ", d, " is listed twice"));
    }
  }
}

// Whether the result's dims are the lhs batch dims, the lhs free dims and the rhs free dims.
bool ResultDimsMatch(const DotPlan& plan, const Shape& lhs, const Shape& rhs, const Shape& result) {
  if (!result.IsArray()) return false;
  const std::vector<int64_t>& dims = result.dims();
  if (dims.size() != plan.lhs_batch.size() + plan.lhs_free.size() + plan.rhs_free.size()) return false;
  size_t i = 0;
  for (int64_t d : plan.lhs_batch)
    if (dims[i++] != lhs.dim(d)) return false;
  for (int64_t d : plan.lhs_free)
    if (dims[i++] != lhs.dim(d)) return false;
  for (int64_t d : plan.rhs_free)
    if (dims[i++] != rhs.dim(d)) return false;
  return true;
}

DotPlan& MakeDotPlan(const Instruction& dot, const Shape& lhs, const Shape& rhs) {
  const DotDimensionNumbers& dn = dot.dot_dims();
  thread_local DotPlan plan;
  plan.lhs_batch.assign(dn.lhs_batch_dims.begin(), dn.lhs_batch_dims.end());
  plan.rhs_batch.assign(dn.rhs_batch_dims.begin(), dn.rhs_batch_dims.end());
  plan.lhs_contracting.assign(dn.lhs_contracting_dims.begin(), dn.lhs_contracting_dims.end());
  plan.rhs_contracting.assign(dn.rhs_contracting_dims.begin(), dn.rhs_contracting_dims.end());
  plan.batch = plan.m = plan.n = plan.k = 1;
  if (plan.lhs_batch.size() != plan.rhs_batch.size())
    KernelError(dot, "lhs and rhs have different numbers of batch dimensions");
  if (plan.lhs_contracting.size() != plan.rhs_contracting.size())
    KernelError(dot, "lhs and rhs have different numbers of contracting dimensions");
  CheckDimList(dot, plan.lhs_batch, plan.lhs_contracting, lhs.rank(), "lhs batch/contracting");
  CheckDimList(dot, plan.rhs_batch, plan.rhs_contracting, rhs.rank(), "rhs batch/contracting");
  for (size_t i = 0; i < plan.lhs_batch.size(); ++i) {
    int64_t size = lhs.dim(plan.lhs_batch[i]);
    if (size != rhs.dim(plan.rhs_batch[i]))
      KernelError(dot, StrCat("batch dimension sizes differ: lhs ", size, " vs rhs ", rhs.dim(plan.rhs_batch[i])));
    plan.batch *= size;
  }
  for (size_t i = 0; i < plan.lhs_contracting.size(); ++i) {
    int64_t size = lhs.dim(plan.lhs_contracting[i]);
    if (size != rhs.dim(plan.rhs_contracting[i]))
      KernelError(dot, StrCat("contracting dimension sizes differ: lhs ", size, " vs rhs ",
                              rhs.dim(plan.rhs_contracting[i])));
    plan.k *= size;
  }
  FreeDims(lhs.rank(), plan.lhs_batch, plan.lhs_contracting, plan.lhs_free);
  FreeDims(rhs.rank(), plan.rhs_batch, plan.rhs_contracting, plan.rhs_free);
  for (int64_t d : plan.lhs_free) plan.m *= lhs.dim(d);
  for (int64_t d : plan.rhs_free) plan.n *= rhs.dim(d);
  if (!ResultDimsMatch(plan, lhs, rhs, dot.shape())) {
    std::vector<int64_t> expected;
    for (int64_t d : plan.lhs_batch) expected.push_back(lhs.dim(d));
    for (int64_t d : plan.lhs_free) expected.push_back(lhs.dim(d));
    for (int64_t d : plan.rhs_free) expected.push_back(rhs.dim(d));
    KernelError(dot, StrCat("result shape ", dot.shape().ToString(false), " does not match the operands (expected dims ",
                            Shape(ElementType::kF32, expected).ToString(false), ")"));
  }
  return plan;
}

std::vector<int64_t> Concat(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                            const std::vector<int64_t>& c) {
  std::vector<int64_t> out = a;
  out.insert(out.end(), b.begin(), b.end());
  out.insert(out.end(), c.begin(), c.end());
  return out;
}

// Whether a, b, c concatenated are 0, 1, 2, ... (checked without building the list).
bool IsIdentityOrder(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const std::vector<int64_t>& c) {
  int64_t next = 0;
  for (const std::vector<int64_t>* part : {&a, &b, &c})
    for (int64_t d : *part)
      if (d != next++) return false;
  return true;
}

// An operand as a [B, rows, cols] matrix stack: either its own data (possibly read transposed)
// or a transposed copy.
template <typename T>
struct MatrixOperand {
  const T* data = nullptr;
  bool transposed = false;  // stored as [B, cols, rows]
  std::vector<T> copy;
};

// Views `values` (operand layout, dims) as [B, rows, cols] where rows/cols are the dim lists;
// allow_transposed accepts a [B, cols, rows] layout without copying.
template <typename T>
MatrixOperand<T> ArrangeOperand(const T* values, const std::vector<int64_t>& dims,
                                const std::vector<int64_t>& batch, const std::vector<int64_t>& rows,
                                const std::vector<int64_t>& cols, bool allow_transposed) {
  MatrixOperand<T> result;
  if (IsIdentityOrder(batch, rows, cols)) {
    result.data = values;
    return result;
  }
  if (allow_transposed && IsIdentityOrder(batch, cols, rows)) {
    result.data = values;
    result.transposed = true;
    return result;
  }
  const std::vector<int64_t> order = Concat(batch, rows, cols);
  result.copy.resize(static_cast<size_t>(Product(dims)));
  TransposeBytes(values, dims, order, sizeof(T), result.copy.data());
  result.data = result.copy.data();
  return result;
}

// C += A x B for dense row-major stacks (C zero-initialized), blocked over k and n.
template <typename T>
void MatmulLoop(const T* a, const T* b, T* c, int64_t batch, int64_t m, int64_t n, int64_t k) {
  constexpr int64_t kBlockK = 128, kBlockN = 512;
  for (int64_t bi = 0; bi < batch; ++bi) {
    const T* ab = a + bi * m * k;
    const T* bb = b + bi * k * n;
    T* cb = c + bi * m * n;
    for (int64_t k0 = 0; k0 < k; k0 += kBlockK) {
      int64_t k1 = std::min(k, k0 + kBlockK);
      for (int64_t n0 = 0; n0 < n; n0 += kBlockN) {
        int64_t n1 = std::min(n, n0 + kBlockN);
        for (int64_t i = 0; i < m; ++i) {
          T* row = cb + i * n;
          for (int64_t kk = k0; kk < k1; ++kk) {
            T av = ab[i * k + kk];
            const T* brow = bb + kk * n;
            for (int64_t j = n0; j < n1; ++j) row[j] += av * brow[j];
          }
        }
      }
    }
  }
}

void DotF32(const DotPlan& plan, const Literal& lhs, const Literal& rhs, Literal& result) {
  std::vector<float> lhs_f32, rhs_f32, result_f32;
  const float* lhs_data = lhs.data<float>();
  const float* rhs_data = rhs.data<float>();
  if (lhs.element_type() != ElementType::kF32) {
    lhs_f32 = ToFloatBuffer(lhs);
    lhs_data = lhs_f32.data();
  }
  if (rhs.element_type() != ElementType::kF32) {
    rhs_f32 = ToFloatBuffer(rhs);
    rhs_data = rhs_f32.data();
  }
  MatrixOperand<float> a = ArrangeOperand(lhs_data, lhs.shape().dims(), plan.lhs_batch, plan.lhs_free,
                                          plan.lhs_contracting, /*allow_transposed=*/true);
  MatrixOperand<float> b = ArrangeOperand(rhs_data, rhs.shape().dims(), plan.rhs_batch,
                                          plan.rhs_contracting, plan.rhs_free, /*allow_transposed=*/true);
  float* out = result.data<float>();
  if (result.element_type() != ElementType::kF32) {
    result_f32.resize(static_cast<size_t>(result.element_count()));
    out = result_f32.data();
  }
  MatmulProblem problem{plan.batch, plan.m, plan.n, plan.k, a.transposed, b.transposed};
  auto loop = [&] {
    // The loop on canonical copies, summing onto -0.0, the exact identity of a sum: a single
    // product keeps its sign (0 x -1.25 is -0.0, as XLA's multiply of a dot over one element
    // gives it; a top-k in total order tells the two zeros apart: oracle seed 108353).
    if (a.transposed) a = ArrangeOperand(a.data, {plan.batch, plan.k, plan.m}, {0}, {2}, {1}, false);
    if (b.transposed) b = ArrangeOperand(b.data, {plan.batch, plan.n, plan.k}, {0}, {2}, {1}, false);
    std::fill(out, out + result.element_count(), -0.0f);
    MatmulLoop(a.data, b.data, out, plan.batch, plan.m, plan.n, plan.k);
  };
  if (plan.k == 1) {
    loop();  // an outer product: one multiply per element
  } else {
    try {
      DnnlMatmul(problem, a.data, b.data, out);
    } catch (const dnnl::error&) {
      loop();  // no oneDNN implementation for this shape
    }
  }
  if (result.element_type() != ElementType::kF32)
    ConvertElements(ElementType::kF32, out, result.element_type(), result.raw(), result.element_count());
}

// f64 or integer dot: operands converted to the compute type C (double or int64, whose
// wrap-around matches narrower integer types after truncation), then the blocked loop.
template <typename C>
void DotLoop(const DotPlan& plan, const Literal& lhs, const Literal& rhs, Literal& result) {
  constexpr ElementType kCompute = std::is_same_v<C, double> ? ElementType::kF64 : ElementType::kS64;
  Literal lhs_c = lhs.element_type() == kCompute ? Literal() : lhs.Convert(kCompute);
  Literal rhs_c = rhs.element_type() == kCompute ? Literal() : rhs.Convert(kCompute);
  const C* lhs_data = lhs.element_type() == kCompute ? lhs.data<C>() : lhs_c.data<C>();
  const C* rhs_data = rhs.element_type() == kCompute ? rhs.data<C>() : rhs_c.data<C>();
  MatrixOperand<C> a = ArrangeOperand(lhs_data, lhs.shape().dims(), plan.lhs_batch, plan.lhs_free,
                                      plan.lhs_contracting, false);
  MatrixOperand<C> b = ArrangeOperand(rhs_data, rhs.shape().dims(), plan.rhs_batch,
                                      plan.rhs_contracting, plan.rhs_free, false);
  // -0.0 for floats: the exact identity of a sum (see DotF32).
  std::vector<C> out(static_cast<size_t>(result.element_count()), std::is_same_v<C, double> ? C(-0.0) : C(0));
  if constexpr (std::is_same_v<C, int64_t>) {
    // Signed overflow is undefined in C++: multiply and add as uint64 (same bits).
    MatmulLoop(reinterpret_cast<const uint64_t*>(a.data), reinterpret_cast<const uint64_t*>(b.data),
               reinterpret_cast<uint64_t*>(out.data()), plan.batch, plan.m, plan.n, plan.k);
  } else {
    MatmulLoop(a.data, b.data, out.data(), plan.batch, plan.m, plan.n, plan.k);
  }
  ConvertElements(kCompute, out.data(), result.element_type(), result.raw(), result.element_count());
}

bool IsF32Computable(ElementType type) {
  return type == ElementType::kF32 || type == ElementType::kBF16 || type == ElementType::kF16;
}

}  // namespace

Literal EvaluateDot(const Instruction& instruction, const Literal& lhs, const Literal& rhs) {
  if (!lhs.shape().IsArray() || !rhs.shape().IsArray()) KernelError(instruction, "operands must be arrays");
  const DotPlan& plan = MakeDotPlan(instruction, lhs.shape(), rhs.shape());
  Literal result(instruction.shape());
  if (result.element_count() == 0 || plan.k == 0) return result;  // empty, or all zeros
  ElementType lt = lhs.element_type(), rt = rhs.element_type(), ot = result.element_type();
  bool any_f64 = lt == ElementType::kF64 || rt == ElementType::kF64 || ot == ElementType::kF64;
  bool any_float = IsFloatingPoint(lt) || IsFloatingPoint(rt) || IsFloatingPoint(ot);
  if (any_f64) {
    DotLoop<double>(plan, lhs, rhs, result);
  } else if (any_float) {
    GSPMD_CHECK(IsF32Computable(lt) || IsInteger(lt) || lt == ElementType::kPred, "dot operand type");
    DotF32(plan, lhs, rhs, result);
  } else {
    DotLoop<int64_t>(plan, lhs, rhs, result);
  }
  return result;
}

}  // namespace gspmd
