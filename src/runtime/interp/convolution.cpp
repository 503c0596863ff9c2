// The convolution kernel: any dim_labels, windows (stride, padding incl. negative, lhs and rhs
// dilation, reversal), feature and batch group counts. f32 runs on oneDNN after normalizing
// to NCHW/OIHW (lhs dilation and negative padding materialized, reversal applied to the
// kernel, batch groups split into one convolution each); f64, integers, what oneDNN rejects
// and windows that would multiply an infinity by a padding or dilation zero run on a direct loop.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "runtime/interp/kernel_dnnl.h"
#include "runtime/interp/kernel_util.h"
#include "runtime/interp/kernels.h"

namespace gspmd {
using namespace kernel;
namespace {

// The convolution in normalized layouts: input [N, C, S...], kernel [O, I, K...], output
// [N / batch_group_count, O, S'...].
struct ConvGeometry {
  int64_t batch = 0, in_features = 0, kernel_in_features = 0, out_features = 0;
  int64_t feature_groups = 1, batch_groups = 1;
  std::vector<int64_t> in_spatial, kernel_spatial, out_spatial;
  Window window;
  std::vector<int64_t> lhs_perm, rhs_perm, out_perm;  // operand/result dim -> normalized
};

int64_t OutputSize(int64_t in, const WindowDim& w) {
  int64_t dilated = in == 0 ? 0 : (in - 1) * w.base_dilation + 1;
  int64_t padded = dilated + w.padding_low + w.padding_high;
  int64_t extent = (w.size - 1) * w.window_dilation + 1;
  if (padded < extent) return 0;
  return (padded - extent) / w.stride + 1;
}

void CheckLabels(const Instruction& conv, const std::vector<int64_t>& dims, int64_t rank, const char* what) {
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  if (static_cast<int64_t>(dims.size()) != rank)
    KernelError(conv, StrCat(what, " dim_labels name ", dims.size(), " dims but the shape has rank ", rank));
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d]) KernelError(conv, StrCat(what, " dim_labels are not a permutation of 0..", rank - 1));
    seen[d] = true;
  }
}

ConvGeometry MakeGeometry(const Instruction& conv, const Shape& lhs, const Shape& rhs) {
  const ConvDimensionNumbers& dn = conv.conv_dims();
  const int64_t spatial = static_cast<int64_t>(dn.input_spatial_dims.size());
  ConvGeometry g;
  g.lhs_perm = {dn.input_batch_dim, dn.input_feature_dim};
  g.lhs_perm.insert(g.lhs_perm.end(), dn.input_spatial_dims.begin(), dn.input_spatial_dims.end());
  g.rhs_perm = {dn.kernel_output_feature_dim, dn.kernel_input_feature_dim};
  g.rhs_perm.insert(g.rhs_perm.end(), dn.kernel_spatial_dims.begin(), dn.kernel_spatial_dims.end());
  std::vector<int64_t> out_labels = {dn.output_batch_dim, dn.output_feature_dim};
  out_labels.insert(out_labels.end(), dn.output_spatial_dims.begin(), dn.output_spatial_dims.end());
  const Shape& out = conv.shape();
  if (!out.IsArray()) KernelError(conv, "the result must be an array");
  CheckLabels(conv, g.lhs_perm, lhs.rank(), "input");
  CheckLabels(conv, g.rhs_perm, rhs.rank(), "kernel");
  CheckLabels(conv, out_labels, out.rank(), "output");
  if (static_cast<int64_t>(conv.window().size()) != spatial)
    KernelError(conv, StrCat("window has ", conv.window().size(), " dims; expected ", spatial));
  g.out_perm.assign(static_cast<size_t>(out.rank()), 0);
  for (size_t i = 0; i < out_labels.size(); ++i) g.out_perm[out_labels[i]] = static_cast<int64_t>(i);
  g.batch = lhs.dim(dn.input_batch_dim);
  g.in_features = lhs.dim(dn.input_feature_dim);
  g.kernel_in_features = rhs.dim(dn.kernel_input_feature_dim);
  g.out_features = rhs.dim(dn.kernel_output_feature_dim);
  g.feature_groups = conv.feature_group_count;
  g.batch_groups = conv.batch_group_count;
  g.window = conv.window();
  if (g.feature_groups < 1 || g.batch_groups < 1) KernelError(conv, "group counts must be positive");
  if (g.in_features != g.kernel_in_features * g.feature_groups)
    KernelError(conv, StrCat("input features (", g.in_features, ") must equal kernel input features (",
                             g.kernel_in_features, ") times feature_group_count (", g.feature_groups, ")"));
  if (g.out_features % g.feature_groups != 0 || g.out_features % g.batch_groups != 0)
    KernelError(conv, StrCat("kernel output features (", g.out_features, ") must be divisible by the group counts"));
  if (g.batch % g.batch_groups != 0)
    KernelError(conv, StrCat("input batch (", g.batch, ") must be divisible by batch_group_count (", g.batch_groups, ")"));
  std::vector<int64_t> expected(static_cast<size_t>(out.rank()));
  expected[dn.output_batch_dim] = g.batch / g.batch_groups;
  expected[dn.output_feature_dim] = g.out_features;
  for (int64_t i = 0; i < spatial; ++i) {
    const WindowDim& w = g.window[i];
    if (w.size < 0 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1)
      KernelError(conv, StrCat("window dim ", i, " has a non-positive stride or dilation"));
    g.in_spatial.push_back(lhs.dim(dn.input_spatial_dims[i]));
    g.kernel_spatial.push_back(rhs.dim(dn.kernel_spatial_dims[i]));
    if (g.kernel_spatial.back() != w.size)
      KernelError(conv, StrCat("window size ", w.size, " differs from kernel spatial dim ", g.kernel_spatial.back()));
    g.out_spatial.push_back(OutputSize(g.in_spatial.back(), w));
    expected[dn.output_spatial_dims[i]] = g.out_spatial.back();
  }
  if (out.dims() != expected)
    KernelError(conv, StrCat("result shape ", out.ToString(false), " does not match the operands (expected dims ",
                             Shape(out.element_type(), expected).ToString(false), ")"));
  return g;
}

// ---- direct loop ----

// For one spatial dim: for output coordinate o and window position k, the input coordinate
// read (or -1 for padding and lhs-dilation holes).
std::vector<int64_t> SpatialTable(int64_t in, int64_t out, const WindowDim& w) {
  std::vector<int64_t> table(static_cast<size_t>(out * w.size), -1);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t k = 0; k < w.size; ++k) {
      int64_t position = o * w.stride + k * w.window_dilation - w.padding_low;
      if (position < 0 || position % w.base_dilation != 0) continue;
      int64_t index = position / w.base_dilation;
      if (index < in) table[o * w.size + k] = index;
    }
  }
  return table;
}

// Y = conv(X, W) in normalized layouts, accumulating in C (uint64 for integers: wraps).
template <typename C>
void DirectConvolution(const ConvGeometry& g, const C* x, const C* w, C* y) {
  const int64_t spatial = static_cast<int64_t>(g.in_spatial.size());
  std::vector<std::vector<int64_t>> tables;
  for (int64_t i = 0; i < spatial; ++i) tables.push_back(SpatialTable(g.in_spatial[i], g.out_spatial[i], g.window[i]));
  std::vector<int64_t> in_strides = RowMajorStrides(g.in_spatial);
  std::vector<int64_t> kernel_strides = RowMajorStrides(g.kernel_spatial);
  const int64_t in_count = Product(g.in_spatial), kernel_count = Product(g.kernel_spatial);
  const int64_t out_count = Product(g.out_spatial);
  const int64_t out_batch = g.batch / g.batch_groups;
  const int64_t per_feature_group = g.out_features / g.feature_groups;
  const int64_t per_batch_group = g.out_features / g.batch_groups;
  const int64_t in_channels = g.kernel_in_features;
  // Valid (kernel offset, input offset) pairs of the current output position.
  std::vector<std::pair<int64_t, int64_t>> taps;
  IndexCounter out_position(g.out_spatial);
  for (int64_t os = 0; os < out_count; ++os, out_position.Next()) {
    taps.clear();
    IndexCounter kernel_position(g.kernel_spatial);
    for (int64_t ks = 0; ks < kernel_count; ++ks, kernel_position.Next()) {
      int64_t in_offset = 0, kernel_offset = 0;
      bool valid = true;
      for (int64_t i = 0; i < spatial && valid; ++i) {
        int64_t k = kernel_position[i];
        int64_t index = tables[i][out_position[i] * g.window[i].size + k];
        valid = index >= 0;
        in_offset += index * in_strides[i];
        kernel_offset += (g.window[i].reversal ? g.kernel_spatial[i] - 1 - k : k) * kernel_strides[i];
      }
      if (valid) taps.emplace_back(kernel_offset, in_offset);
    }
    for (int64_t n = 0; n < out_batch; ++n) {
      for (int64_t o = 0; o < g.out_features; ++o) {
        int64_t feature_group = o / per_feature_group;
        int64_t batch_index = (o / per_batch_group) * out_batch + n;
        const C* x_base = x + (batch_index * g.in_features + feature_group * in_channels) * in_count;
        const C* w_base = w + o * in_channels * kernel_count;
        C acc = C(0);
        for (int64_t c = 0; c < in_channels; ++c) {
          const C* xc = x_base + c * in_count;
          const C* wc = w_base + c * kernel_count;
          for (const auto& [kernel_offset, in_offset] : taps) acc += xc[in_offset] * wc[kernel_offset];
        }
        y[(n * g.out_features + o) * out_count + os] = acc;
      }
    }
  }
}

// ---- oneDNN path ----

// Whether the geometry (batch_group_count 1) maps onto oneDNN after normalization.
bool FitsDnnl(const ConvGeometry& g) {
  int64_t spatial = static_cast<int64_t>(g.in_spatial.size());
  if (g.batch_groups != 1 || spatial > 3) return false;
  for (int64_t i = 0; i < spatial; ++i) {
    const WindowDim& w = g.window[i];
    // Negative padding must leave some of the (dilated) input to expand.
    int64_t dilated = (g.in_spatial[i] - 1) * w.base_dilation + 1;
    if (dilated + std::min<int64_t>(0, w.padding_low) + std::min<int64_t>(0, w.padding_high) < 1) return false;
  }
  return true;
}

// Materializes lhs dilation and negative padding of X (normalized, f32): returns the new
// input and updates geometry so that only non-negative padding and no base dilation remain.
std::vector<float> ExpandInput(const float* x, ConvGeometry& g) {
  const int64_t spatial = static_cast<int64_t>(g.in_spatial.size());
  std::vector<int64_t> new_spatial, crop_low;
  for (int64_t i = 0; i < spatial; ++i) {
    WindowDim& w = g.window[i];
    int64_t dilated = (g.in_spatial[i] - 1) * w.base_dilation + 1;
    int64_t low = std::max<int64_t>(0, -w.padding_low), high = std::max<int64_t>(0, -w.padding_high);
    new_spatial.push_back(dilated - low - high);
    crop_low.push_back(low);
  }
  const int64_t planes = g.batch * g.in_features;
  const int64_t old_count = Product(g.in_spatial), new_count = Product(new_spatial);
  std::vector<int64_t> old_strides = RowMajorStrides(g.in_spatial);
  // For each new position: the old offset, or -1 for a dilation hole.
  std::vector<int64_t> source(static_cast<size_t>(new_count), 0);
  IndexCounter position(new_spatial);
  for (int64_t p = 0; p < new_count; ++p, position.Next()) {
    int64_t offset = 0;
    for (int64_t i = 0; i < spatial && offset >= 0; ++i) {
      int64_t dilated_index = position[i] + crop_low[i];
      if (dilated_index % g.window[i].base_dilation != 0) offset = -1;
      else offset += dilated_index / g.window[i].base_dilation * old_strides[i];
    }
    source[p] = offset;
  }
  std::vector<float> out(static_cast<size_t>(planes * new_count), 0.0f);
  for (int64_t plane = 0; plane < planes; ++plane) {
    const float* in = x + plane * old_count;
    float* dst = out.data() + plane * new_count;
    for (int64_t p = 0; p < new_count; ++p)
      if (source[p] >= 0) dst[p] = in[source[p]];
  }
  for (int64_t i = 0; i < spatial; ++i) {
    WindowDim& w = g.window[i];
    w.base_dilation = 1;
    w.padding_low = std::max<int64_t>(0, w.padding_low);
    w.padding_high = std::max<int64_t>(0, w.padding_high);
  }
  g.in_spatial = new_spatial;
  return out;
}

// Reverses the kernel's spatial dims where the window says so (W normalized, in place).
void ApplyReversal(std::vector<float>& w, ConvGeometry& g) {
  const int64_t spatial = static_cast<int64_t>(g.kernel_spatial.size());
  bool any = false;
  for (const WindowDim& dim : g.window) any = any || dim.reversal;
  if (!any) return;
  const int64_t count = Product(g.kernel_spatial);
  std::vector<int64_t> strides = RowMajorStrides(g.kernel_spatial);
  std::vector<float> plane(static_cast<size_t>(count));
  for (size_t base = 0; base < w.size(); base += static_cast<size_t>(count)) {
    IndexCounter position(g.kernel_spatial);
    for (int64_t p = 0; p < count; ++p, position.Next()) {
      int64_t source = 0;
      for (int64_t i = 0; i < spatial; ++i) {
        int64_t k = g.window[i].reversal ? g.kernel_spatial[i] - 1 - position[i] : position[i];
        source += k * strides[i];
      }
      plane[p] = w[base + source];
    }
    std::copy(plane.begin(), plane.end(), w.begin() + static_cast<int64_t>(base));
  }
  for (WindowDim& dim : g.window) dim.reversal = false;
}

// Runs the f32 convolution (batch_group_count 1) on oneDNN; false when it has no
// implementation.
bool DnnlPath(ConvGeometry g, const float* x, const float* kernel, float* y) {
  std::vector<float> expanded;
  bool needs_expansion = false;
  for (const WindowDim& dim : g.window)
    needs_expansion = needs_expansion || dim.base_dilation > 1 || dim.padding_low < 0 || dim.padding_high < 0;
  if (needs_expansion) {
    expanded = ExpandInput(x, g);
    x = expanded.data();
  }
  std::vector<float> reversed;
  bool any_reversal = false;
  for (const WindowDim& dim : g.window) any_reversal = any_reversal || dim.reversal;
  if (any_reversal) {
    reversed.assign(kernel, kernel + g.out_features * g.kernel_in_features * Product(g.kernel_spatial));
    ApplyReversal(reversed, g);
    kernel = reversed.data();
  }
  ConvProblem p;
  p.batch = g.batch;
  p.in_features = g.in_features;
  p.out_features = g.out_features;
  p.groups = g.feature_groups;
  p.in_spatial = g.in_spatial;
  p.kernel_spatial = g.kernel_spatial;
  p.out_spatial = g.out_spatial;
  if (p.in_spatial.empty()) {  // a 1x1 convolution over no spatial dims
    p.in_spatial = p.kernel_spatial = p.out_spatial = {1};
    g.window = {WindowDim{}};
  }
  for (const WindowDim& dim : g.window) {
    p.strides.push_back(dim.stride);
    p.dilation.push_back(dim.window_dilation - 1);
    p.padding_low.push_back(dim.padding_low);
    p.padding_high.push_back(dim.padding_high);
  }
  return DnnlConvolution(p, x, kernel, y);
}

// batch_group_count G > 1 (with feature_group_count 1) as G oneDNN convolutions: batch chunk
// i of X (contiguous in [N, C, S...]) with output-feature chunk i of W, written into feature
// chunk i of Y.
bool DnnlBatchGroups(const ConvGeometry& g, const float* x, const float* w, float* y) {
  if (g.feature_groups != 1) return false;
  ConvGeometry part = g;
  const int64_t groups = g.batch_groups;
  part.batch = g.batch / groups;
  part.out_features = g.out_features / groups;
  part.batch_groups = 1;
  if (!FitsDnnl(part)) return false;
  const int64_t x_chunk = part.batch * g.in_features * Product(g.in_spatial);
  const int64_t w_chunk = part.out_features * g.kernel_in_features * Product(g.kernel_spatial);
  const int64_t plane = Product(g.out_spatial);
  const int64_t run = part.out_features * plane;
  std::vector<float> y_part(static_cast<size_t>(part.batch * run));
  for (int64_t i = 0; i < groups; ++i) {
    if (!DnnlPath(part, x + i * x_chunk, w + i * w_chunk, y_part.data())) return false;
    for (int64_t n = 0; n < part.batch; ++n)
      std::copy(y_part.begin() + n * run, y_part.begin() + (n + 1) * run, y + (n * g.out_features + i * part.out_features) * plane);
  }
  return true;
}

// Whether a window would multiply a kernel or input infinity or NaN by a padding or lhs-dilation
// zero. XLA skips those positions (they add nothing, not 0 x inf = NaN); oneDNN may multiply
// them (lhs dilation is materialized, and a GEMM-based convolution pads its columns), so such a
// convolution runs on the direct loop, which skips them as XLA does.
bool ReadsHolesOfInfinity(const ConvGeometry& g, const std::vector<float>& x, const std::vector<float>& w) {
  bool holes = false;
  for (const WindowDim& dim : g.window) holes = holes || dim.base_dilation > 1 || dim.padding_low > 0 || dim.padding_high > 0;
  auto finite = [](const std::vector<float>& v) {
    return std::all_of(v.begin(), v.end(), [](float e) { return std::isfinite(e); });
  };
  return holes && !(finite(w) && finite(x));
}

bool IsF32Computable(ElementType type) {
  return type == ElementType::kF32 || type == ElementType::kBF16 || type == ElementType::kF16;
}

// Converts and transposes an operand into the compute type's normalized layout.
template <typename C>
std::vector<C> Normalize(const Literal& operand, const std::vector<int64_t>& perm, ElementType compute) {
  std::vector<C> converted(static_cast<size_t>(operand.element_count()));
  ConvertElements(operand.element_type(), operand.raw(), compute, converted.data(), operand.element_count());
  std::vector<C> normalized(converted.size());
  TransposeBytes(converted.data(), operand.shape().dims(), perm, sizeof(C), normalized.data());
  return normalized;
}

template <typename C>
void RunConvolution(const ConvGeometry& g, const Literal& lhs, const Literal& rhs, Literal& result,
                    ElementType compute) {
  std::vector<C> x = Normalize<C>(lhs, g.lhs_perm, compute);
  std::vector<C> w = Normalize<C>(rhs, g.rhs_perm, compute);
  std::vector<int64_t> y_dims = {g.batch / g.batch_groups, g.out_features};
  y_dims.insert(y_dims.end(), g.out_spatial.begin(), g.out_spatial.end());
  std::vector<C> y(static_cast<size_t>(result.element_count()));
  bool done = false;
  if constexpr (std::is_same_v<C, float>) {
    if (ReadsHolesOfInfinity(g, x, w)) {
      // the direct loop below skips them
    } else if (g.batch_groups > 1) done = DnnlBatchGroups(g, x.data(), w.data(), y.data());
    else if (FitsDnnl(g)) done = DnnlPath(g, x.data(), w.data(), y.data());
  }
  if (!done) {
    if constexpr (std::is_same_v<C, int64_t>) {
      DirectConvolution(g, reinterpret_cast<const uint64_t*>(x.data()), reinterpret_cast<const uint64_t*>(w.data()),
                        reinterpret_cast<uint64_t*>(y.data()));
    } else {
      DirectConvolution(g, x.data(), w.data(), y.data());
    }
  }
  // y is [N', O, S'...]; result dim d is normalized dim out_perm[d].
  std::vector<C> arranged(y.size());
  TransposeBytes(y.data(), y_dims, g.out_perm, sizeof(C), arranged.data());
  ConvertElements(compute, arranged.data(), result.element_type(), result.raw(), result.element_count());
}

}  // namespace

Literal EvaluateConvolution(const Instruction& instruction, const Literal& lhs, const Literal& rhs) {
  if (!lhs.shape().IsArray() || !rhs.shape().IsArray()) KernelError(instruction, "operands must be arrays");
  ConvGeometry g = MakeGeometry(instruction, lhs.shape(), rhs.shape());
  Literal result(instruction.shape());
  if (result.element_count() == 0 || lhs.element_count() == 0 || rhs.element_count() == 0) return result;
  ElementType lt = lhs.element_type(), rt = rhs.element_type(), ot = result.element_type();
  bool any_f64 = lt == ElementType::kF64 || rt == ElementType::kF64 || ot == ElementType::kF64;
  bool any_float = IsFloatingPoint(lt) || IsFloatingPoint(rt) || IsFloatingPoint(ot);
  if (any_f64) {
    RunConvolution<double>(g, lhs, rhs, result, ElementType::kF64);
  } else if (any_float) {
    GSPMD_CHECK(IsF32Computable(lt) || !IsFloatingPoint(lt), "convolution operand type");
    RunConvolution<float>(g, lhs, rhs, result, ElementType::kF32);
  } else {
    RunConvolution<int64_t>(g, lhs, rhs, result, ElementType::kS64);
  }
  return result;
}

}  // namespace gspmd
