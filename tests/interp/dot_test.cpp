// Tests of the interpreter's dot kernel: hand-computed cases, random dimension numbers against
// a naive loop, mixed element types, errors, and concurrent use.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>

#include "kernel_test_util.h"

namespace gspmd::kernel_test {
namespace {

std::string DotModule(const std::string& lhs, const std::string& rhs, const std::string& out,
                      const std::string& attributes) {
  return "HloModule m\nENTRY e {\n  a = " + lhs + " parameter(0)\n  b = " + rhs +
         " parameter(1)\n  ROOT d = " + out + " dot(a, b), " + attributes + "\n}\n";
}

TEST(DotTest, MatrixTimesMatrix) {
  std::string text = DotModule("f32[2,3]", "f32[3,2]", "f32[2,2]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  Literal result = RunHlo(text, {Array(ElementType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                              Array(ElementType::kF32, {3, 2}, {7, 8, 9, 10, 11, 12})});
  ExpectValues(result, {58, 64, 139, 154});
}

TEST(DotTest, MatrixTimesVectorTransposedRhs) {
  // rhs [N, K] contracted on dim 1: read transposed without a copy.
  std::string text = DotModule("f32[2,3]", "f32[2,3]", "f32[2,2]", "lhs_contracting_dims={1}, rhs_contracting_dims={1}");
  Literal result = RunHlo(text, {Array(ElementType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                              Array(ElementType::kF32, {2, 3}, {1, 0, 1, 0, 1, 0})});
  ExpectValues(result, {4, 2, 10, 5});
}

TEST(DotTest, OuterProductWithoutContraction) {
  std::string text = DotModule("s32[2]", "s32[3]", "s32[2,3]", "lhs_contracting_dims={}, rhs_contracting_dims={}");
  Literal result = RunHlo(text, {Ints(ElementType::kS32, {2}, {2, -1}), Ints(ElementType::kS32, {3}, {1, 2, 3})});
  ExpectValues(result, {2, 4, 6, -1, -2, -3});
}

TEST(DotTest, Bf16OperandsF32Result) {
  std::string text = DotModule("bf16[1,3]", "bf16[3,1]", "f32[1,1]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  Literal result = RunHlo(text, {Array(ElementType::kBF16, {1, 3}, {0.5, 0.25, 2}),
                              Array(ElementType::kBF16, {3, 1}, {2, 4, 0.125})});
  ExpectValues(result, {2.25});
}

TEST(DotTest, S8OperandsS32ResultWrapsLikeXla) {
  std::string text = DotModule("s8[1,2]", "s8[2,1]", "s32[1,1]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  Literal result = RunHlo(text, {Ints(ElementType::kS8, {1, 2}, {-128, 127}), Ints(ElementType::kS8, {2, 1}, {127, 127})});
  ExpectValues(result, {-128 * 127 + 127 * 127});
}

// A dot over one element is a multiply per element: 0 x -1.25 is -0.0, as XLA (which rewrites
// such a dot to a multiply) gives it; a top-k in total order then puts it after +0.0 (oracle
// seed 108353). The f64 loop sums onto -0.0 likewise.
TEST(DotTest, ContractionOverOneElementKeepsTheSignOfZero) {
  for (const char* type : {"f32", "f64", "bf16"}) {
    const std::string t = type;
    std::string text = DotModule(t + "[2,1]", t + "[1,3]", t + "[2,3]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
    const ElementType element = t == "f32" ? ElementType::kF32 : t == "f64" ? ElementType::kF64 : ElementType::kBF16;
    Literal result = RunHlo(text, {Array(element, {2, 1}, {0, -0.0}), Array(element, {1, 3}, {-1.25, 2, -0.0})});
    ExpectValues(result, {-0.0, 0, -0.0, 0, -0.0, 0});
    const bool negative[] = {true, false, true, false, true, false};
    for (int64_t e = 0; e < 6; ++e) EXPECT_EQ(std::signbit(result.GetAsDouble(e)), negative[e]) << type << " element " << e;
  }
}

TEST(DotTest, EmptyContractionGivesZeros) {
  std::string text = DotModule("f32[2,0]", "f32[0,3]", "f32[2,3]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  Literal result = RunHlo(text, {Literal(Shape(ElementType::kF32, {2, 0})), Literal(Shape(ElementType::kF32, {0, 3}))});
  ExpectValues(result, {0, 0, 0, 0, 0, 0});
}

TEST(DotTest, MismatchedContractingSizesIsUserError) {
  std::string text = DotModule("f32[2,3]", "f32[4,2]", "f32[2,2]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  EXPECT_THROW(RunHlo(text, {Literal(Shape(ElementType::kF32, {2, 3})), Literal(Shape(ElementType::kF32, {4, 2}))}),
               UserError);
}

TEST(DotTest, WrongResultShapeIsUserError) {
  std::string text = DotModule("f32[2,3]", "f32[3,4]", "f32[2,5]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  EXPECT_THROW(RunHlo(text, {Literal(Shape(ElementType::kF32, {2, 3})), Literal(Shape(ElementType::kF32, {3, 4}))}),
               UserError);
}

// A random dot: dims of each role (batch, free, contracting) shuffled into each operand.
struct RandomDot {
  std::vector<int64_t> lhs_dims, rhs_dims, out_dims;
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
};

RandomDot MakeRandomDot(std::mt19937& rng) {
  std::uniform_int_distribution<int> count(0, 2), size(1, 5);
  int nb = count(rng), nm = count(rng), nn = count(rng), nk = count(rng);
  std::vector<int64_t> b(nb), m(nm), n(nn), k(nk);
  for (auto* v : {&b, &m, &n, &k})
    for (int64_t& s : *v) s = size(rng);
  RandomDot dot;
  // Role slots: lhs holds b, m, k; rhs holds b, k, n; each in a random dim order.
  std::vector<int64_t> lhs_perm(nb + nm + nk), rhs_perm(nb + nk + nn);
  std::iota(lhs_perm.begin(), lhs_perm.end(), 0);
  std::iota(rhs_perm.begin(), rhs_perm.end(), 0);
  std::shuffle(lhs_perm.begin(), lhs_perm.end(), rng);
  std::shuffle(rhs_perm.begin(), rhs_perm.end(), rng);
  dot.lhs_dims.assign(lhs_perm.size(), 0);
  dot.rhs_dims.assign(rhs_perm.size(), 0);
  int slot = 0;
  for (int i = 0; i < nb; ++i, ++slot) {
    dot.lhs_batch.push_back(lhs_perm[slot]);
    dot.lhs_dims[lhs_perm[slot]] = b[i];
  }
  std::vector<int64_t> lhs_free_sizes;
  for (int i = 0; i < nm; ++i, ++slot) dot.lhs_dims[lhs_perm[slot]] = m[i];
  for (int i = 0; i < nk; ++i, ++slot) {
    dot.lhs_contracting.push_back(lhs_perm[slot]);
    dot.lhs_dims[lhs_perm[slot]] = k[i];
  }
  slot = 0;
  for (int i = 0; i < nb; ++i, ++slot) {
    dot.rhs_batch.push_back(rhs_perm[slot]);
    dot.rhs_dims[rhs_perm[slot]] = b[i];
  }
  for (int i = 0; i < nk; ++i, ++slot) {
    dot.rhs_contracting.push_back(rhs_perm[slot]);
    dot.rhs_dims[rhs_perm[slot]] = k[i];
  }
  for (int i = 0; i < nn; ++i, ++slot) dot.rhs_dims[rhs_perm[slot]] = n[i];
  dot.out_dims = b;
  for (int64_t d = 0; d < static_cast<int64_t>(dot.lhs_dims.size()); ++d)
    if (std::count(dot.lhs_batch.begin(), dot.lhs_batch.end(), d) + std::count(dot.lhs_contracting.begin(), dot.lhs_contracting.end(), d) == 0)
      dot.out_dims.push_back(dot.lhs_dims[d]);
  for (int64_t d = 0; d < static_cast<int64_t>(dot.rhs_dims.size()); ++d)
    if (std::count(dot.rhs_batch.begin(), dot.rhs_batch.end(), d) + std::count(dot.rhs_contracting.begin(), dot.rhs_contracting.end(), d) == 0)
      dot.out_dims.push_back(dot.rhs_dims[d]);
  return dot;
}

// The dot computed one output element at a time.
std::vector<double> NaiveDot(const RandomDot& dot, const Literal& lhs, const Literal& rhs) {
  std::vector<int64_t> lhs_free, rhs_free, k_dims;
  for (int64_t d = 0; d < static_cast<int64_t>(dot.lhs_dims.size()); ++d)
    if (!std::count(dot.lhs_batch.begin(), dot.lhs_batch.end(), d) && !std::count(dot.lhs_contracting.begin(), dot.lhs_contracting.end(), d))
      lhs_free.push_back(d);
  for (int64_t d = 0; d < static_cast<int64_t>(dot.rhs_dims.size()); ++d)
    if (!std::count(dot.rhs_batch.begin(), dot.rhs_batch.end(), d) && !std::count(dot.rhs_contracting.begin(), dot.rhs_contracting.end(), d))
      rhs_free.push_back(d);
  for (int64_t d : dot.lhs_contracting) k_dims.push_back(dot.lhs_dims[d]);
  int64_t out_count = 1, k_count = 1;
  for (int64_t d : dot.out_dims) out_count *= d;
  for (int64_t d : k_dims) k_count *= d;
  std::vector<double> out;
  for (int64_t o = 0; o < out_count; ++o) {
    std::vector<int64_t> oi = Unflatten(o, dot.out_dims);
    std::vector<int64_t> li(dot.lhs_dims.size()), ri(dot.rhs_dims.size());
    size_t p = 0;
    for (size_t i = 0; i < dot.lhs_batch.size(); ++i, ++p) {
      li[dot.lhs_batch[i]] = oi[p];
      ri[dot.rhs_batch[i]] = oi[p];
    }
    for (int64_t d : lhs_free) li[d] = oi[p++];
    for (int64_t d : rhs_free) ri[d] = oi[p++];
    double sum = 0;
    for (int64_t kk = 0; kk < k_count; ++kk) {
      std::vector<int64_t> ki = Unflatten(kk, k_dims);
      for (size_t i = 0; i < ki.size(); ++i) {
        li[dot.lhs_contracting[i]] = ki[i];
        ri[dot.rhs_contracting[i]] = ki[i];
      }
      sum += lhs.GetAsDouble(Flatten(li, dot.lhs_dims)) * rhs.GetAsDouble(Flatten(ri, dot.rhs_dims));
    }
    out.push_back(sum);
  }
  return out;
}

class RandomDotTest : public ::testing::TestWithParam<ElementType> {};

TEST_P(RandomDotTest, MatchesNaiveLoop) {
  ElementType type = GetParam();
  std::mt19937 rng(1234 + static_cast<int>(type));
  for (int trial = 0; trial < 60; ++trial) {
    RandomDot dot = MakeRandomDot(rng);
    std::string attributes = "lhs_batch_dims={" + Join(dot.lhs_batch) + "}, rhs_batch_dims={" + Join(dot.rhs_batch) +
                             "}, lhs_contracting_dims={" + Join(dot.lhs_contracting) + "}, rhs_contracting_dims={" +
                             Join(dot.rhs_contracting) + "}";
    std::string text = DotModule(ShapeText(type, dot.lhs_dims), ShapeText(type, dot.rhs_dims),
                                 ShapeText(type, dot.out_dims), attributes);
    int low = IsUnsignedInteger(type) ? 0 : -4, high = IsUnsignedInteger(type) ? 3 : 4;
    Literal lhs = RandomLiteral(Shape(type, dot.lhs_dims), rng, low, high);
    Literal rhs = RandomLiteral(Shape(type, dot.rhs_dims), rng, low, high);
    SCOPED_TRACE(text);
    // The exact sum, rounded once to the result type (16-bit floats round large sums).
    std::vector<double> expected = NaiveDot(dot, lhs, rhs);
    expected = Doubles(Literal::FromDoubles(Shape(type, dot.out_dims), expected));
    ExpectValues(RunHlo(text, {lhs, rhs}), expected);
  }
}

INSTANTIATE_TEST_SUITE_P(Types, RandomDotTest,
                         ::testing::Values(ElementType::kF32, ElementType::kBF16, ElementType::kF16,
                                           ElementType::kF64, ElementType::kS32, ElementType::kS64,
                                           ElementType::kU8));

TEST(DotTest, LargerF32MatchesNaiveLoopWithinTolerance) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  Literal lhs(Shape(ElementType::kF32, {3, 67, 129})), rhs(Shape(ElementType::kF32, {3, 129, 45}));
  for (int64_t i = 0; i < lhs.element_count(); ++i) lhs.data<float>()[i] = dist(rng);
  for (int64_t i = 0; i < rhs.element_count(); ++i) rhs.data<float>()[i] = dist(rng);
  RandomDot dot{{3, 67, 129}, {3, 129, 45}, {3, 67, 45}, {0}, {0}, {2}, {1}};
  std::string text = DotModule("f32[3,67,129]", "f32[3,129,45]", "f32[3,67,45]",
                               "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}");
  ExpectValues(RunHlo(text, {lhs, rhs}), NaiveDot(dot, lhs, rhs), 1e-4);
}

TEST(DotTest, ConcurrentDotsFromSeveralThreads) {
  std::string text = DotModule("f32[33,65]", "f32[65,17]", "f32[33,17]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  std::unique_ptr<Module> module = ParseModule(text);
  std::mt19937 rng(11);
  Literal lhs = RandomLiteral(Shape(ElementType::kF32, {33, 65}), rng);
  Literal rhs = RandomLiteral(Shape(ElementType::kF32, {65, 17}), rng);
  Literal expected = EvaluateModule(*module, std::vector<Literal>{lhs, rhs});
  std::vector<int> ok(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      int good = 0;
      for (int i = 0; i < 20; ++i)
        good += EvaluateModule(*module, std::vector<Literal>{lhs, rhs}).BitwiseEquals(expected);
      ok[t] = good;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(ok[t], 20);
}

}  // namespace
}  // namespace gspmd::kernel_test
