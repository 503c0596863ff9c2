// Tests of the interpreter's convolution kernel: a hand-computed case, and random
// configurations covering every window feature, group counts and dim_labels against a naive
// loop written from XLA's semantics on the original layouts.
#include <algorithm>
#include <limits>
#include <numeric>

#include "kernel_test_util.h"

namespace gspmd::kernel_test {
namespace {

TEST(ConvolutionTest, OneDimensionalValidWindow) {
  std::string text = R"(HloModule m
ENTRY e {
  x = f32[1,5,1] parameter(0)
  k = f32[3,1,1] parameter(1)
  ROOT c = f32[1,3,1] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f
}
)";
  Literal result = RunHlo(text, {Array(ElementType::kF32, {1, 5, 1}, {1, 2, 3, 4, 5}),
                                 Array(ElementType::kF32, {3, 1, 1}, {1, 0, -1})});
  ExpectValues(result, {-2, -2, -2});
}

TEST(ConvolutionTest, SamePaddingTwoDimensional) {
  std::string text = R"(HloModule m
ENTRY e {
  x = f32[1,3,3,1] parameter(0)
  k = f32[3,3,1,1] parameter(1)
  ROOT c = f32[1,3,3,1] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
)";
  Literal ones = Array(ElementType::kF32, {3, 3, 1, 1}, std::vector<double>(9, 1.0));
  Literal result = RunHlo(text, {Array(ElementType::kF32, {1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), ones});
  ExpectValues(result, {12, 21, 16, 27, 45, 33, 24, 39, 28});
}

// Negative low and positive high padding on the same dim, two input features. The oracle soak
// (seed 13280, the gradient of a convolution) found XLA:CPU (jax 0.10.2) giving other values in
// the last output column at a larger size (input 1x2x9x9, 2x2 kernel, pad 0_0x-1_1); JAX's own
// explicit pad + VALID convolution gives ours there. This small case pins the semantics: crop
// the first input column, append one zero column.
TEST(ConvolutionTest, NegativeLowAndPositiveHighPaddingOnOneDim) {
  std::string text = R"(HloModule m
ENTRY e {
  x = f32[1,2,1,3] parameter(0)
  k = f32[2,1,1,2] parameter(1)
  ROOT c = f32[1,1,1,2] convolution(x, k), window={size=1x2 pad=0_0x-1_1}, dim_labels=bf01_io01->bf01
}
)";
  // Feature 0: 1 2 3, feature 1: 4 5 6; kernel [1, 10] for feature 0 and [100, 1000] for feature 1.
  // Cropped and padded: feature 0 reads 2 3 0, feature 1 reads 5 6 0.
  Literal result = RunHlo(text, {Array(ElementType::kF32, {1, 2, 1, 3}, {1, 2, 3, 4, 5, 6}),
                                 Array(ElementType::kF32, {2, 1, 1, 2}, {1, 10, 100, 1000})});
  ExpectValues(result, {2 + 30 + 500 + 6000, 3 + 0 + 600 + 0});
}

// A kernel infinity over padding and lhs-dilation holes: XLA skips those positions, so they add
// nothing (not 0 x inf = NaN). The oracle soak (seed 112373, the gradient of sqrt at 0 fed to a
// dilated convolution's kernel gradient) found oneDNN, which materializes the holes, giving NaN.
// Input 1 2 dilated by 2 and padded 1_1: 0 1 0 2 0; kernel [inf, 1]: windows (0,1) (1,0) (0,2) (2,0).
TEST(ConvolutionTest, InfiniteKernelOverHolesAndPaddingAddsNothing) {
  std::string text = R"(HloModule m
ENTRY e {
  x = f32[1,2,1] parameter(0)
  k = f32[2,1,1] parameter(1)
  ROOT c = f32[1,4,1] convolution(x, k), window={size=2 pad=1_1 lhs_dilate=2}, dim_labels=b0f_0io->b0f
}
)";
  const double inf = std::numeric_limits<double>::infinity();
  Literal result = RunHlo(text, {Array(ElementType::kF32, {1, 2, 1}, {1, 2}), Array(ElementType::kF32, {2, 1, 1}, {inf, 1})});
  ExpectValues(result, {1, inf, 2, inf});
  // The same with the infinity in the input: padding and holes still add nothing.
  Literal flipped = RunHlo(text, {Array(ElementType::kF32, {1, 2, 1}, {inf, 2}), Array(ElementType::kF32, {2, 1, 1}, {1, 1})});
  ExpectValues(flipped, {inf, inf, 2, 2});
}

TEST(ConvolutionTest, FeatureCountMismatchIsUserError) {
  std::string text = R"(HloModule m
ENTRY e {
  x = f32[1,5,2] parameter(0)
  k = f32[3,3,1] parameter(1)
  ROOT c = f32[1,3,1] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f
}
)";
  EXPECT_THROW(RunHlo(text, {Literal(Shape(ElementType::kF32, {1, 5, 2})), Literal(Shape(ElementType::kF32, {3, 3, 1}))}),
               UserError);
}

// A random convolution configuration in terms of XLA's attributes.
struct RandomConv {
  int64_t spatial = 0;
  int64_t batch = 1, in_features = 1, out_features = 1, feature_groups = 1, batch_groups = 1;
  std::vector<int64_t> in_size, kernel_size, out_size;
  Window window;
  std::vector<int64_t> lhs_labels, rhs_labels, out_labels;  // role r -> dim; roles: b/o, f/i, spatial...
  std::vector<int64_t> lhs_dims, rhs_dims, out_dims;
};

int64_t ConvOutputSize(int64_t in, const WindowDim& w) {
  int64_t dilated = in == 0 ? 0 : (in - 1) * w.base_dilation + 1;
  int64_t padded = dilated + w.padding_low + w.padding_high;
  int64_t extent = (w.size - 1) * w.window_dilation + 1;
  return padded < extent ? 0 : (padded - extent) / w.stride + 1;
}

std::vector<int64_t> RandomPermutation(int64_t n, std::mt19937& rng) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  std::shuffle(p.begin(), p.end(), rng);
  return p;
}

RandomConv MakeRandomConv(std::mt19937& rng, bool plain) {
  auto pick = [&](int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng); };
  RandomConv c;
  c.spatial = pick(0, 3);
  int groups = pick(1, 2);
  if (!plain && pick(0, 1)) c.batch_groups = groups;
  else c.feature_groups = groups;
  c.batch = pick(1, 2) * c.batch_groups;
  c.in_features = pick(1, 3) * c.feature_groups;
  c.out_features = pick(1, 2) * groups;
  for (int64_t i = 0; i < c.spatial; ++i) {
    WindowDim w;
    w.size = pick(1, 3);
    w.stride = pick(1, 3);
    w.padding_low = pick(plain ? 0 : -1, 2);
    w.padding_high = pick(plain ? 0 : -1, 2);
    w.base_dilation = plain ? 1 : pick(1, 2);
    w.window_dilation = pick(1, 2);
    w.reversal = plain ? false : pick(0, 1) == 1;
    int64_t in = pick(1, 6);
    if (ConvOutputSize(in, w) < 1) {  // keep the output non-empty
      w.padding_low = std::max<int64_t>(w.padding_low, 0);
      w.padding_high = std::max<int64_t>(w.padding_high, 0);
      in = std::max<int64_t>(in, (w.size - 1) * w.window_dilation + 1);
    }
    c.window.push_back(w);
    c.in_size.push_back(in);
    c.kernel_size.push_back(w.size);
    c.out_size.push_back(ConvOutputSize(in, w));
  }
  c.lhs_labels = RandomPermutation(c.spatial + 2, rng);
  c.rhs_labels = RandomPermutation(c.spatial + 2, rng);
  c.out_labels = RandomPermutation(c.spatial + 2, rng);
  c.lhs_dims.assign(c.spatial + 2, 0);
  c.rhs_dims.assign(c.spatial + 2, 0);
  c.out_dims.assign(c.spatial + 2, 0);
  c.lhs_dims[c.lhs_labels[0]] = c.batch;
  c.lhs_dims[c.lhs_labels[1]] = c.in_features;
  c.rhs_dims[c.rhs_labels[0]] = c.out_features;
  c.rhs_dims[c.rhs_labels[1]] = c.in_features / c.feature_groups;
  c.out_dims[c.out_labels[0]] = c.batch / c.batch_groups;
  c.out_dims[c.out_labels[1]] = c.out_features;
  for (int64_t i = 0; i < c.spatial; ++i) {
    c.lhs_dims[c.lhs_labels[2 + i]] = c.in_size[i];
    c.rhs_dims[c.rhs_labels[2 + i]] = c.kernel_size[i];
    c.out_dims[c.out_labels[2 + i]] = c.out_size[i];
  }
  return c;
}

// "b01f"-style label from role -> dim positions.
std::string Label(const std::vector<int64_t>& roles, char first, char second) {
  std::string label(roles.size(), '?');
  label[roles[0]] = first;
  label[roles[1]] = second;
  for (size_t i = 2; i < roles.size(); ++i) label[roles[i]] = static_cast<char>('0' + (i - 2));
  return label;
}

std::string WindowText(const RandomConv& c) {
  auto field = [&](auto get) {
    std::vector<std::string> parts;
    std::string out;
    for (size_t i = 0; i < c.window.size(); ++i) out += (i ? "x" : "") + get(c.window[i]);
    return out;
  };
  return "window={size=" + field([](const WindowDim& w) { return std::to_string(w.size); }) +
         " stride=" + field([](const WindowDim& w) { return std::to_string(w.stride); }) +
         " pad=" + field([](const WindowDim& w) { return std::to_string(w.padding_low) + "_" + std::to_string(w.padding_high); }) +
         " lhs_dilate=" + field([](const WindowDim& w) { return std::to_string(w.base_dilation); }) +
         " rhs_dilate=" + field([](const WindowDim& w) { return std::to_string(w.window_dilation); }) +
         " rhs_reversal=" + field([](const WindowDim& w) { return std::string(w.reversal ? "1" : "0"); }) + "}, ";
}

std::string ConvText(const RandomConv& c, ElementType type) {
  std::string attributes = c.spatial > 0 ? WindowText(c) : "";
  attributes += "dim_labels=" + Label(c.lhs_labels, 'b', 'f') + "_" + Label(c.rhs_labels, 'o', 'i') + "->" +
                Label(c.out_labels, 'b', 'f');
  if (c.feature_groups > 1) attributes += ", feature_group_count=" + std::to_string(c.feature_groups);
  if (c.batch_groups > 1) attributes += ", batch_group_count=" + std::to_string(c.batch_groups);
  return "HloModule m\nENTRY e {\n  x = " + ShapeText(type, c.lhs_dims) + " parameter(0)\n  k = " +
         ShapeText(type, c.rhs_dims) + " parameter(1)\n  ROOT c = " + ShapeText(type, c.out_dims) +
         " convolution(x, k), " + attributes + "\n}\n";
}

// XLA's convolution, one output element at a time, on the original layouts.
std::vector<double> NaiveConvolution(const RandomConv& c, const Literal& lhs, const Literal& rhs) {
  std::vector<double> out;
  const int64_t kernel_in = c.in_features / c.feature_groups;
  const int64_t out_batch = c.batch / c.batch_groups;
  int64_t count = 1;
  for (int64_t d : c.out_dims) count *= d;
  int64_t kernel_count = 1;
  for (int64_t d : c.kernel_size) kernel_count *= d;
  for (int64_t linear = 0; linear < count; ++linear) {
    std::vector<int64_t> index = Unflatten(linear, c.out_dims);
    int64_t n = index[c.out_labels[0]], o = index[c.out_labels[1]];
    int64_t feature_group = o / (c.out_features / c.feature_groups);
    int64_t batch_group = o / (c.out_features / c.batch_groups);
    double sum = 0;
    for (int64_t ci = 0; ci < kernel_in; ++ci) {
      for (int64_t k = 0; k < kernel_count; ++k) {
        std::vector<int64_t> window_index = Unflatten(k, c.kernel_size);
        std::vector<int64_t> li(c.lhs_dims.size()), ri(c.rhs_dims.size());
        li[c.lhs_labels[0]] = batch_group * out_batch + n;
        li[c.lhs_labels[1]] = feature_group * kernel_in + ci;
        ri[c.rhs_labels[0]] = o;
        ri[c.rhs_labels[1]] = ci;
        bool inside = true;
        for (int64_t i = 0; i < c.spatial; ++i) {
          const WindowDim& w = c.window[i];
          int64_t position = index[c.out_labels[2 + i]] * w.stride + window_index[i] * w.window_dilation - w.padding_low;
          if (position < 0 || position % w.base_dilation != 0 || position / w.base_dilation >= c.in_size[i]) inside = false;
          li[c.lhs_labels[2 + i]] = position / w.base_dilation;
          ri[c.rhs_labels[2 + i]] = w.reversal ? w.size - 1 - window_index[i] : window_index[i];
        }
        if (!inside) continue;
        sum += lhs.GetAsDouble(Flatten(li, c.lhs_dims)) * rhs.GetAsDouble(Flatten(ri, c.rhs_dims));
      }
    }
    out.push_back(sum);
  }
  return out;
}

void CheckRandomConvolutions(ElementType type, bool plain, int trials, uint32_t seed) {
  std::mt19937 rng(seed);
  for (int trial = 0; trial < trials; ++trial) {
    RandomConv c = MakeRandomConv(rng, plain);
    std::string text = ConvText(c, type);
    SCOPED_TRACE(text);
    Literal lhs = RandomLiteral(Shape(type, c.lhs_dims), rng, -3, 3);
    Literal rhs = RandomLiteral(Shape(type, c.rhs_dims), rng, -3, 3);
    std::vector<double> expected = NaiveConvolution(c, lhs, rhs);
    expected = Doubles(Literal::FromDoubles(Shape(type, c.out_dims), expected));
    ExpectValues(RunHlo(text, {lhs, rhs}), expected);
  }
}

// Configurations oneDNN runs directly (no lhs dilation, negative padding, reversal or batch groups).
TEST(ConvolutionTest, RandomPlainF32MatchesNaiveLoop) { CheckRandomConvolutions(ElementType::kF32, true, 40, 21); }

// Every feature, f32 (transformed for oneDNN, or the direct loop for batch groups).
TEST(ConvolutionTest, RandomF32MatchesNaiveLoop) { CheckRandomConvolutions(ElementType::kF32, false, 80, 22); }

TEST(ConvolutionTest, RandomBf16MatchesNaiveLoop) { CheckRandomConvolutions(ElementType::kBF16, false, 30, 23); }

TEST(ConvolutionTest, RandomF64MatchesNaiveLoop) { CheckRandomConvolutions(ElementType::kF64, false, 40, 24); }

TEST(ConvolutionTest, RandomS32MatchesNaiveLoop) { CheckRandomConvolutions(ElementType::kS32, false, 40, 25); }

}  // namespace
}  // namespace gspmd::kernel_test
