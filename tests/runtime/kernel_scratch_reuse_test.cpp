// Kernels that keep per-thread scratch between calls (the dot's plan, oneDNN memory objects,
// strided-copy counters) give each call its own answer: errors after successes, shapes that
// alternate on one thread, ranks past the inline counters.
#include <algorithm>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "interp/kernel_test_util.h"
#include "ir/computation.h"

namespace gspmd::kernel_test {
namespace {

std::string DotModule(const std::string& lhs, const std::string& rhs, const std::string& out,
                      const std::string& attributes) {
  return "HloModule m\nENTRY e {\n  a = " + lhs + " parameter(0)\n  b = " + rhs + " parameter(1)\n  ROOT d = " + out +
         " dot(a, b), " + attributes + "\n}\n";
}

// The kernel's message for a dot the parser would refuse: the module is parsed valid, then its
// root is changed by `edit`.
template <typename Edit>
std::string KernelErrorOf(const std::string& text, Edit&& edit, std::vector<Literal> arguments) {
  std::unique_ptr<Module> module = ParseModule(text);
  edit(*module->entry()->root());
  try {
    EvaluateModule(*module, arguments);
  } catch (const UserError& error) {
    return error.what();
  }
  return "";
}

// The naive [B, M, K] x [B, K, N] product of row-major arrays.
std::vector<double> NaiveBatchedProduct(const Literal& a, const Literal& b, int64_t batch, int64_t m, int64_t n,
                                        int64_t k) {
  std::vector<double> out(static_cast<size_t>(batch * m * n), 0.0);
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t kk = 0; kk < k; ++kk)
          out[(bi * m + i) * n + j] += a.GetAsDouble((bi * m + i) * k + kk) * b.GetAsDouble((bi * k + kk) * n + j);
  return out;
}

TEST(KernelScratchReuseTest, DotErrorsStayExactAfterSuccessfulDots) {
  const std::string good = DotModule("f32[2,3]", "f32[3,2]", "f32[2,2]", "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  const auto good_inputs = [] {
    std::vector<Literal> inputs;
    inputs.push_back(Array(ElementType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6}));
    inputs.push_back(Array(ElementType::kF32, {3, 2}, {7, 8, 9, 10, 11, 12}));
    return inputs;
  };
  ExpectValues(RunHlo(good, good_inputs()), {58, 64, 139, 154});
  const auto zeros = [] {
    std::vector<Literal> inputs;
    inputs.push_back(Literal(Shape(ElementType::kF32, {2, 3})));
    inputs.push_back(Literal(Shape(ElementType::kF32, {3, 2})));
    return inputs;
  };
  // Dim 1 both batch and contracting: named as listed twice, after a dot that used the plan.
  EXPECT_NE(KernelErrorOf(good, [](Instruction& dot) { dot.mutable_dot_dims().lhs_batch_dims = {1}; dot.mutable_dot_dims().rhs_batch_dims = {1}; }, zeros())
                .find("lhs batch/contracting dimension 1 is listed twice"),
            std::string::npos);
  EXPECT_NE(KernelErrorOf(good, [](Instruction& dot) { dot.set_shape(Shape(ElementType::kF32, {2, 5})); }, zeros())
                .find("result shape f32[2,5] does not match the operands (expected dims f32[2,2])"),
            std::string::npos);
  EXPECT_NE(KernelErrorOf(good, [](Instruction& dot) { dot.mutable_dot_dims().lhs_contracting_dims = {2}; }, zeros())
                .find("lhs batch/contracting dimension 2 is out of range for rank 2"),
            std::string::npos);
  EXPECT_NE(KernelErrorOf(good, [](Instruction& dot) { dot.mutable_dot_dims().rhs_contracting_dims = {1}; }, zeros())
                .find("contracting dimension sizes differ: lhs 3 vs rhs 2"),
            std::string::npos);
  ExpectValues(RunHlo(good, good_inputs()), {58, 64, 139, 154});
}

// Shapes alternating on one thread (each its own cached primitive and memory objects), on
// several threads at once: every result is the naive product.
TEST(KernelScratchReuseTest, AlternatingDotShapesOnSeveralThreads) {
  struct Case {
    int64_t batch, m, n, k;
  };
  const std::vector<Case> cases = {{1, 3, 5, 7}, {2, 4, 3, 6}, {1, 16, 8, 32}, {3, 2, 2, 2}};
  auto run = [&](int seed, int* failures) {
    std::mt19937 rng(seed);
    for (int round = 0; round < 6; ++round) {
      for (const Case& c : cases) {
        const std::string dims = c.batch == 1 ? "" : "lhs_batch_dims={0}, rhs_batch_dims={0}, ";
        const int64_t contract_lhs = c.batch == 1 ? 1 : 2, contract_rhs = c.batch == 1 ? 0 : 1;
        const Shape lhs = c.batch == 1 ? Shape(ElementType::kF32, {c.m, c.k}) : Shape(ElementType::kF32, {c.batch, c.m, c.k});
        const Shape rhs = c.batch == 1 ? Shape(ElementType::kF32, {c.k, c.n}) : Shape(ElementType::kF32, {c.batch, c.k, c.n});
        const Shape out = c.batch == 1 ? Shape(ElementType::kF32, {c.m, c.n}) : Shape(ElementType::kF32, {c.batch, c.m, c.n});
        const std::string text =
            DotModule(lhs.ToString(false), rhs.ToString(false), out.ToString(false),
                      dims + "lhs_contracting_dims={" + std::to_string(contract_lhs) + "}, rhs_contracting_dims={" +
                          std::to_string(contract_rhs) + "}");
        Literal a = RandomLiteral(lhs, rng), b = RandomLiteral(rhs, rng);
        const std::vector<double> expected = NaiveBatchedProduct(a, b, c.batch, c.m, c.n, c.k);
        std::vector<Literal> inputs;
        inputs.push_back(std::move(a));
        inputs.push_back(std::move(b));
        if (Doubles(RunHlo(text, std::move(inputs))) != expected) ++*failures;
      }
    }
  };
  std::vector<int> failures(3, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) threads.emplace_back(run, t, &failures[t]);
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 3; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

// A transpose of rank 18 (past the strided copy's 16 inline counters) and one with unit dims
// between the moved ones (dropped and merged before copying).
TEST(KernelScratchReuseTest, TransposesOfHighRankAndUnitDims) {
  std::vector<int64_t> dims(18, 1);
  dims[0] = 2;
  dims[5] = 3;
  dims[17] = 2;
  std::vector<int64_t> permutation(18);
  for (int64_t i = 0; i < 18; ++i) permutation[i] = 17 - i;
  std::vector<int64_t> out_dims(18);
  for (int64_t i = 0; i < 18; ++i) out_dims[i] = dims[permutation[i]];
  const Shape in(ElementType::kF32, dims), out(ElementType::kF32, out_dims);
  std::string list;
  for (int64_t p : permutation) list += (list.empty() ? "" : ",") + std::to_string(p);
  const std::string text = "HloModule m\nENTRY e {\n  a = " + in.ToString(false) + " parameter(0)\n  ROOT t = " +
                           out.ToString(false) + " transpose(a), dimensions={" + list + "}\n}\n";
  std::vector<double> values(12);
  for (int i = 0; i < 12; ++i) values[i] = i;
  // in[x, .., y, .., z] (x of 2, y of 3, z of 2) lands at out[z, .., y, .., x].
  std::vector<double> expected(12);
  for (int x = 0; x < 2; ++x)
    for (int y = 0; y < 3; ++y)
      for (int z = 0; z < 2; ++z) expected[(z * 3 + y) * 2 + x] = values[(x * 3 + y) * 2 + z];
  std::vector<Literal> inputs;
  inputs.push_back(Literal::FromDoubles(in, values));
  ExpectValues(RunHlo(text, std::move(inputs)), expected);

  const std::string unit = "HloModule m\nENTRY e {\n  a = f32[2,1,3,1,2] parameter(0)\n"
                           "  ROOT t = f32[2,1,1,3,2] transpose(a), dimensions={4,3,1,2,0}\n}\n";
  std::vector<Literal> unit_inputs;
  unit_inputs.push_back(Literal::FromDoubles(Shape(ElementType::kF32, {2, 1, 3, 1, 2}), values));
  ExpectValues(RunHlo(unit, std::move(unit_inputs)), expected);
}

std::string ReduceModule(const Shape& in, const Shape& out, const std::string& dims) {
  return "HloModule m\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
         "ENTRY e {\n  a = " + in.ToString(false) + " parameter(0)\n  z = f32[] constant(0)\n  ROOT r = " +
         out.ToString(false) + " reduce(a, z), dimensions={" + dims + "}, to_apply=add\n}\n";
}

// Sums of alternating shapes on one thread (the fast path's plan and accumulators are reused),
// one of rank 18 with every other dim reduced (17 outer groups, past the inline counter).
TEST(KernelScratchReuseTest, ReducesOfAlternatingShapesAndManyGroups) {
  std::mt19937 rng(7);
  std::vector<int64_t> high(18, 2), kept_dims;
  std::string high_dims;
  for (int64_t d = 0; d < 18; ++d) {
    if (d % 2 == 0) {
      high_dims += (high_dims.empty() ? "" : ",") + std::to_string(d);
    } else {
      kept_dims.push_back(2);
    }
  }
  struct Case {
    Shape in, out;
    std::string dims;
  };
  const std::vector<Case> cases = {{Shape(ElementType::kF32, {4, 6}), Shape(ElementType::kF32, {4}), "1"},
                                   {Shape(ElementType::kF32, high), Shape(ElementType::kF32, kept_dims), high_dims},
                                   {Shape(ElementType::kF32, {3, 5, 2}), Shape(ElementType::kF32, {5}), "0,2"}};
  for (int round = 0; round < 3; ++round) {
    for (const Case& c : cases) {
      Literal input = RandomLiteral(c.in, rng);
      // The naive sum: every input element added to the output element of its kept dims.
      std::vector<int64_t> reduced;
      for (size_t i = 0, start = 0; i <= c.dims.size(); ++i)
        if (i == c.dims.size() || c.dims[i] == ',') {
          reduced.push_back(std::stoll(c.dims.substr(start, i - start)));
          start = i + 1;
        }
      std::vector<double> expected(static_cast<size_t>(c.out.element_count()), 0.0);
      std::vector<int64_t> index(c.in.dims().size(), 0);
      for (int64_t e = 0; e < c.in.element_count(); ++e) {
        int64_t out = 0;
        for (size_t d = 0; d < index.size(); ++d)
          if (std::find(reduced.begin(), reduced.end(), static_cast<int64_t>(d)) == reduced.end())
            out = out * c.in.dim(static_cast<int64_t>(d)) + index[d];
        expected[static_cast<size_t>(out)] += input.GetAsDouble(e);
        for (int64_t d = static_cast<int64_t>(index.size()) - 1; d >= 0 && ++index[d] == c.in.dim(d); --d) index[d] = 0;
      }
      std::vector<Literal> inputs;
      inputs.push_back(std::move(input));
      ExpectValues(RunHlo(ReduceModule(c.in, c.out, c.dims), std::move(inputs)), expected);
    }
  }
}

TEST(KernelScratchReuseTest, ReduceResultShapeErrorNamesTheKeptDims) {
  const std::string text = ReduceModule(Shape(ElementType::kF32, {2, 3}), Shape(ElementType::kF32, {2}), "1");
  std::vector<Literal> inputs;
  inputs.push_back(Literal(Shape(ElementType::kF32, {2, 3})));
  inputs.push_back(Literal(Shape(ElementType::kF32, {})));
  EXPECT_NE(KernelErrorOf(text, [](Instruction& reduce) { reduce.set_shape(Shape(ElementType::kF32, {3})); },
                          {Literal(Shape(ElementType::kF32, {2, 3}))})
                .find("result shape f32[3] does not match 1 input(s) reduced to dims f32[2]"),
            std::string::npos);
}

}  // namespace
}  // namespace gspmd::kernel_test
