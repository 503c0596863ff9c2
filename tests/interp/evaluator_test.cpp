// Tests of the interpreter driver (control flow, pass-through ops, argument checks, speed) and
// of whole reference programs from the corpus against JAX/XLA's outputs.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "io/npy.h"
#include "ir/literal.h"
#include "runtime/interp/evaluator.h"
#include "runtime/interp/kernels.h"
#include "support/diagnostic.h"
#include "text/parser.h"

namespace gspmd {
namespace {

namespace fs = std::filesystem;

Literal Ints(ElementType type, std::vector<int64_t> dims, std::vector<int64_t> values) {
  return Literal::FromInts(Shape(type, std::move(dims)), values);
}

Literal Floats(std::vector<int64_t> dims, std::vector<double> values) {
  return Literal::FromDoubles(Shape(ElementType::kF32, std::move(dims)), values);
}

Literal RunHlo(const std::string& text, std::vector<Literal> arguments) {
  std::unique_ptr<Module> module = ParseModule(text);
  return EvaluateModule(*module, arguments);
}

std::vector<int64_t> Int64s(const Literal& literal) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < literal.element_count(); ++i) out.push_back(literal.GetAsInt64(i));
  return out;
}

// Runs the text and returns the UserError's message ("" when nothing was thrown).
std::string ErrorOf(const std::string& text, std::vector<Literal> arguments) {
  try {
    RunHlo(text, std::move(arguments));
  } catch (const UserError& error) {
    return error.what();
  }
  return "";
}

TEST(EvaluatorTest, ChecksArgumentCountAndShapes) {
  std::string text = R"(HloModule m
ENTRY e {
  weights = f32[2,3] parameter(0)
  ROOT r = f32[2,3] negate(weights)
})";
  EXPECT_NE(ErrorOf(text, {}).find("takes 1 arguments"), std::string::npos);
  std::string message = ErrorOf(text, {Floats({3, 2}, {1, 2, 3, 4, 5, 6})});
  EXPECT_NE(message.find("weights"), std::string::npos) << message;
  EXPECT_NE(message.find("f32[3,2]"), std::string::npos) << message;
  EXPECT_NE(message.find("f32[2,3]"), std::string::npos) << message;
  std::string type_message = ErrorOf(text, {Ints(ElementType::kS32, {2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_NE(type_message.find("s32[2,3]"), std::string::npos) << type_message;
}

TEST(EvaluatorTest, WhileLoopRunsUntilConditionIsFalse) {
  std::string text = R"(HloModule m
body {
  t = (s32[], s32[3]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  v = s32[3] get-tuple-element(t), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  b = s32[3] broadcast(i), dimensions={}
  acc = s32[3] add(v, b)
  ROOT out = (s32[], s32[3]) tuple(next, acc)
}
cond {
  t = (s32[], s32[3]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  limit = s32[] constant(10)
  ROOT lt = pred[] compare(i, limit), direction=LT
}
ENTRY e {
  v = s32[3] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], s32[3]) tuple(zero, v)
  loop = (s32[], s32[3]) while(init), condition=cond, body=body
  ROOT r = s32[3] get-tuple-element(loop), index=1
})";
  EXPECT_EQ(Int64s(RunHlo(text, {Ints(ElementType::kS32, {3}, {0, 100, -45})})), (std::vector<int64_t>{45, 145, 0}));
}

TEST(EvaluatorTest, WhileLoopPassesStateThroughUnchanged) {
  std::string text = R"(HloModule m
body {
  t = (s32[], f32[3], f32[3]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  w = f32[3] get-tuple-element(t), index=1
  v = f32[3] get-tuple-element(t), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  acc = f32[3] add(v, w)
  ROOT out = (s32[], f32[3], f32[3]) tuple(next, w, acc)
}
cond {
  t = (s32[], f32[3], f32[3]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  limit = s32[] constant(4)
  ROOT lt = pred[] compare(i, limit), direction=LT
}
ENTRY e {
  w = f32[3] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[3], f32[3]) tuple(zero, w, w)
  loop = (s32[], f32[3], f32[3]) while(init), condition=cond, body=body
  again = (s32[], f32[3], f32[3]) while(loop), condition=cond, body=body
  ROOT r = ((s32[], f32[3], f32[3]), (s32[], f32[3], f32[3])) tuple(loop, again)
})";
  std::vector<Literal> leaves = FlattenTuple(RunHlo(text, {Floats({3}, {1, 2, 3})}));
  ASSERT_EQ(leaves.size(), 6u);
  EXPECT_EQ(Int64s(leaves[0]), (std::vector<int64_t>{4}));
  EXPECT_EQ(Int64s(leaves[1]), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(Int64s(leaves[2]), (std::vector<int64_t>{5, 10, 15}));
  EXPECT_EQ(Int64s(leaves[3]), (std::vector<int64_t>{4}));  // the second loop's condition fails at once
  EXPECT_EQ(Int64s(leaves[5]), (std::vector<int64_t>{5, 10, 15}));
}

TEST(EvaluatorTest, MapAndDimensionSize) {
  std::string text = R"(HloModule m
fn {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  ROOT m = f32[] multiply(s, a)
}
ENTRY e {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  m = f32[3] map(x, y), dimensions={0}, to_apply=fn
  d = s32[] get-dimension-size(m), dimensions={0}
  ROOT t = (f32[3], s32[]) tuple(m, d)
})";
  std::vector<Literal> leaves = FlattenTuple(RunHlo(text, {Floats({3}, {1, 2, 3}), Floats({3}, {1, 1, -3})}));
  ASSERT_EQ(leaves.size(), 2u);
  EXPECT_EQ(Int64s(leaves[0]), (std::vector<int64_t>{2, 6, 0}));
  EXPECT_EQ(Int64s(leaves[1]), (std::vector<int64_t>{3}));
}

TEST(EvaluatorTest, ConditionalWithPredicate) {
  std::string text = R"(HloModule m
on_true {
  x = f32[2] parameter(0)
  ROOT n = f32[2] negate(x)
}
on_false {
  y = f32[2] parameter(0)
  ROOT c = f32[2] copy(y)
}
ENTRY e {
  p = pred[] parameter(0)
  a = f32[2] parameter(1)
  b = f32[2] parameter(2)
  ROOT r = f32[2] conditional(p, a, b), true_computation=on_true, false_computation=on_false
})";
  Literal a = Floats({2}, {1, 2});
  Literal b = Floats({2}, {3, 4});
  EXPECT_EQ(Int64s(RunHlo(text, {Ints(ElementType::kPred, {}, {1}), a, b})), (std::vector<int64_t>{-1, -2}));
  EXPECT_EQ(Int64s(RunHlo(text, {Ints(ElementType::kPred, {}, {0}), a, b})), (std::vector<int64_t>{3, 4}));
}

TEST(EvaluatorTest, ConditionalWithIndexClampsToLastBranch) {
  std::string text = R"(HloModule m
b0 {
  x = s32[] parameter(0)
  ROOT r = s32[] add(x, x)
}
b1 {
  x = s32[] parameter(0)
  ROOT r = s32[] multiply(x, x)
}
b2 {
  x = s32[] parameter(0)
  ROOT r = s32[] negate(x)
}
ENTRY e {
  i = s32[] parameter(0)
  v = s32[] parameter(1)
  ROOT r = s32[] conditional(i, v, v, v), branch_computations={b0, b1, b2}
})";
  Literal v = Ints(ElementType::kS32, {}, {5});
  auto run = [&](int64_t index) { return Int64s(RunHlo(text, {Ints(ElementType::kS32, {}, {index}), v}))[0]; };
  EXPECT_EQ(run(0), 10);
  EXPECT_EQ(run(1), 25);
  EXPECT_EQ(run(2), -5);
  EXPECT_EQ(run(7), -5);
  EXPECT_EQ(run(-1), -5);
}

TEST(EvaluatorTest, CallTupleAndGetTupleElement) {
  std::string text = R"(HloModule m
pair {
  x = s32[2] parameter(0)
  y = s32[2] parameter(1)
  s = s32[2] add(x, y)
  xy = (s32[2], s32[2]) tuple(x, y)
  ROOT t = (s32[2], (s32[2], s32[2])) tuple(s, xy)
}
ENTRY e {
  a = s32[2] parameter(0)
  b = s32[2] parameter(1)
  c = (s32[2], (s32[2], s32[2])) call(a, b), to_apply=pair
  inner = (s32[2], s32[2]) get-tuple-element(c), index=1
  second = s32[2] get-tuple-element(inner), index=1
  first = s32[2] get-tuple-element(c), index=0
  ROOT r = (s32[2], s32[2], (s32[2], (s32[2], s32[2]))) tuple(first, second, c)
})";
  Literal result = RunHlo(text, {Ints(ElementType::kS32, {2}, {1, 2}), Ints(ElementType::kS32, {2}, {10, 20})});
  ASSERT_TRUE(result.shape().IsTuple());
  std::vector<Literal> leaves = FlattenTuple(std::move(result));
  ASSERT_EQ(leaves.size(), 5u);
  EXPECT_EQ(Int64s(leaves[0]), (std::vector<int64_t>{11, 22}));
  EXPECT_EQ(Int64s(leaves[1]), (std::vector<int64_t>{10, 20}));
  EXPECT_EQ(Int64s(leaves[2]), (std::vector<int64_t>{11, 22}));
  EXPECT_EQ(Int64s(leaves[3]), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Int64s(leaves[4]), (std::vector<int64_t>{10, 20}));
}

TEST(EvaluatorTest, RootMayBeAParameterOrConstant) {
  std::string param = "HloModule m\nENTRY e {\n  ROOT p = s32[2] parameter(0)\n}\n";
  EXPECT_EQ(Int64s(RunHlo(param, {Ints(ElementType::kS32, {2}, {4, 5})})), (std::vector<int64_t>{4, 5}));
  std::string constant = "HloModule m\nENTRY e {\n  ROOT c = s32[3] constant({7, 8, 9})\n}\n";
  EXPECT_EQ(Int64s(RunHlo(constant, {})), (std::vector<int64_t>{7, 8, 9}));
}

TEST(EvaluatorTest, PartitionAndReplicaIdComeFromTheContext) {
  std::string text = R"(HloModule m
ENTRY e {
  p = u32[] partition-id()
  r = u32[] replica-id()
  ROOT t = (u32[], u32[]) tuple(p, r)
})";
  std::unique_ptr<Module> module = ParseModule(text);
  DeviceContext context;
  context.partition_id = 3;
  context.replica_id = 1;
  context.num_partitions = 4;
  Evaluator evaluator(*module, context);
  std::vector<Literal> leaves = FlattenTuple(evaluator.Run({}));
  ASSERT_EQ(leaves.size(), 2u);
  EXPECT_EQ(leaves[0].element_type(), ElementType::kU32);
  EXPECT_EQ(leaves[0].GetAsInt64(0), 3);
  EXPECT_EQ(leaves[1].GetAsInt64(0), 1);
}

TEST(EvaluatorTest, AnnotationsAndBarriersAreIdentity) {
  std::string text = R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0), sharding={devices=[2]<=[2]}
  s = f32[4] custom-call(x), custom_call_target="Sharding", sharding={devices=[2]<=[2]}
  c = f32[4] custom-call(s), custom_call_target="xla.sdy.ShardingConstraint"
  f = f32[4] custom-call(c), custom_call_target="SPMDFullToShardShape", sharding={manual}
  g = f32[4] custom-call(f), custom_call_target="SPMDShardToFullShape", sharding={replicated}
  t = (f32[4]) tuple(g)
  b = (f32[4]) opt-barrier(t)
  h = f32[4] get-tuple-element(b), index=0
  tok = token[] after-all()
  d = f32[4] add-dependency(h, tok)
  ROOT r = f32[4] copy(d)
})";
  EXPECT_EQ(Int64s(RunHlo(text, {Floats({4}, {1, 2, 3, 4})})), (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(EvaluatorTest, ShapeChangingManualRegionIsRefused) {
  std::string text = R"(HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  s = f32[8] custom-call(x), custom_call_target="Sharding", sharding={devices=[4]<=[4]}
  ROOT f = f32[2] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
})";
  std::string message = ErrorOf(text, {Floats({8}, {0, 1, 2, 3, 4, 5, 6, 7})});
  EXPECT_NE(message.find("manual (shard_map)"), std::string::npos) << message;
  EXPECT_NE(message.find("%f:"), std::string::npos) << message;
}

TEST(EvaluatorTest, UnknownCustomCallNamesTheInstruction) {
  std::string text = R"(HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  ROOT mystery.7 = f32[2] custom-call(x), custom_call_target="SomethingElse"
})";
  std::string message = ErrorOf(text, {Floats({2}, {1, 2})});
  EXPECT_NE(message.find("mystery.7"), std::string::npos) << message;
  EXPECT_NE(message.find("SomethingElse"), std::string::npos) << message;
}

TEST(EvaluatorTest, EvaluatorCanRunRepeatedly) {
  std::string text = R"(HloModule m
ENTRY e {
  x = s32[2] parameter(0)
  y = s32[2] multiply(x, x)
  ROOT r = (s32[2], s32[2]) tuple(y, x)
})";
  std::unique_ptr<Module> module = ParseModule(text);
  Evaluator evaluator(*module);
  for (int64_t k = 1; k <= 3; ++k) {
    std::vector<Literal> arguments;
    arguments.push_back(Ints(ElementType::kS32, {2}, {k, -k}));
    std::vector<Literal> leaves = FlattenTuple(evaluator.Run(arguments));
    EXPECT_EQ(Int64s(leaves[0]), (std::vector<int64_t>{k * k, k * k}));
    EXPECT_EQ(Int64s(leaves[1]), (std::vector<int64_t>{k, -k}));
    EXPECT_EQ(Int64s(arguments[0]), (std::vector<int64_t>{k, -k}));  // arguments untouched
  }
}

TEST(EvaluatorTest, RecognizesPlainBinaryReducers) {
  std::string text = R"(HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max_swapped {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(b, a)
}
twice {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, a)
}
scaled {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  ROOT m = f32[] multiply(s, s)
}
either {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT o = pred[] or(a, b)
}
ENTRY e {
  ROOT c = f32[] constant(0)
})";
  std::unique_ptr<Module> module = ParseModule(text);
  EXPECT_EQ(RecognizeReducer(*module->FindComputation("sum")), BinaryReducer::kAdd);
  EXPECT_EQ(RecognizeReducer(*module->FindComputation("max_swapped")), BinaryReducer::kMaximum);
  EXPECT_EQ(RecognizeReducer(*module->FindComputation("twice")), BinaryReducer::kUnknown);
  EXPECT_EQ(RecognizeReducer(*module->FindComputation("scaled")), BinaryReducer::kUnknown);
  EXPECT_EQ(RecognizeReducer(*module->FindComputation("either")), BinaryReducer::kOr);
}

TEST(EvaluatorTest, FlattenTupleOfArrayIsItself) {
  std::vector<Literal> leaves = FlattenTuple(Ints(ElementType::kS32, {1}, {4}));
  ASSERT_EQ(leaves.size(), 1u);
  EXPECT_EQ(leaves[0].GetAsInt64(0), 4);
}

// A long chain of small elementwise and shape ops with tuples: the driver's own overhead.
TEST(EvaluatorTest, ManyInstructionsRunFast) {
  std::string text = "HloModule m\nENTRY e {\n  x0 = f32[64,64] parameter(0)\n  one = f32[] constant(1)\n";
  const int steps = 500;
  for (int i = 0; i < steps; ++i) {
    std::string x = "x" + std::to_string(i);
    std::string n = std::to_string(i);
    text += "  b" + n + " = f32[64,64] broadcast(one), dimensions={}\n";
    text += "  a" + n + " = f32[64,64] add(" + x + ", b" + n + ")\n";
    text += "  x" + std::to_string(i + 1) + " = f32[64,64] multiply(a" + n + ", " + x + ")\n";
  }
  text += "  ROOT r = f32[64,64] negate(x" + std::to_string(steps) + ")\n}\n";
  std::unique_ptr<Module> module = ParseModule(text);
  Literal input = Literal(Shape(ElementType::kF32, {64, 64}));
  auto start = std::chrono::steady_clock::now();
  Literal result = EvaluateModule(*module, std::vector<Literal>{input});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(result.GetAsDouble(0), -0.0);
  EXPECT_LT(seconds, 1.0) << "1,500 instructions took " << seconds << " s";
}

// ---- The reference corpus ----

struct CorpusCase {
  std::string name;  // "gspmd/while_loops"
  fs::path directory;
};

std::vector<CorpusCase> FindCorpusCases() {
  std::vector<CorpusCase> cases;
  fs::path root = fs::path(GSPMD_TEST_DATA_DIR) / "corpus";
  for (const char* flavour : {"gspmd", "shardy"}) {
    fs::path folder = root / flavour;
    if (!fs::is_directory(folder)) continue;
    for (const fs::directory_entry& entry : fs::directory_iterator(folder))
      if (fs::exists(entry.path() / "pre.hlo") && fs::exists(entry.path() / "out0.npy"))
        cases.push_back({std::string(flavour) + "/" + entry.path().filename().string(), entry.path()});
  }
  std::sort(cases.begin(), cases.end(), [](const CorpusCase& a, const CorpusCase& b) { return a.name < b.name; });
  return cases;
}

// Why `actual` does not match the reference ("" when it does).
std::string Mismatch(const Literal& actual, const Literal& expected) {
  if (actual.shape().dims() != expected.shape().dims())
    return "shape " + actual.shape().ToString(false) + " vs reference " + expected.shape().ToString(false);
  bool floating = IsFloatingPoint(expected.element_type()) || IsFloatingPoint(actual.element_type());
  if (!floating) {
    for (int64_t i = 0; i < expected.element_count(); ++i)
      if (actual.GetAsInt64(i) != expected.GetAsInt64(i))
        return StrCat("element ", i, " is ", actual.GetAsInt64(i), ", reference ", expected.GetAsInt64(i));
    return "";
  }
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    double a = actual.GetAsDouble(i), e = expected.GetAsDouble(i);
    if (std::isnan(a) != std::isnan(e)) return StrCat("NaN mismatch at element ", i);
    if (std::isnan(e)) continue;
    diff += (a - e) * (a - e);
    norm += e * e;
  }
  double error = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
  if (error <= 1e-4) return "";
  return StrCat("relative error ", error);
}

void PrintTo(const CorpusCase& c, std::ostream* out) { *out << c.name; }

class CorpusTest : public ::testing::TestWithParam<CorpusCase> {};

// Cases whose program has a manual (shard_map) region: a single-device run must refuse them.
bool HasManualRegion(const CorpusCase& c) { return c.name.find("shard_map") != std::string::npos; }

TEST_P(CorpusTest, PreProgramMatchesReference) {
  const CorpusCase& c = GetParam();
  std::unique_ptr<Module> module = ParseModuleFile((c.directory / "pre.hlo").string());
  std::vector<Literal> arguments;
  for (int i = 0; fs::exists(c.directory / ("in" + std::to_string(i) + ".npy")); ++i)
    arguments.push_back(ReadNpy((c.directory / ("in" + std::to_string(i) + ".npy")).string()));
  if (HasManualRegion(c)) {
    try {
      EvaluateModule(*module, arguments);
      ADD_FAILURE() << c.name << ": expected the manual region to be refused";
    } catch (const UserError& error) {
      EXPECT_NE(std::string(error.what()).find("manual (shard_map)"), std::string::npos) << error.what();
    }
    return;
  }
  auto start = std::chrono::steady_clock::now();
  std::vector<Literal> outputs;
  try {
    outputs = FlattenTuple(EvaluateModule(*module, arguments));
  } catch (const UserError& error) {
    FAIL() << c.name << ": evaluation failed: " << error.what();
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ corpus   ] " << c.name << " evaluated in " << seconds * 1000 << " ms\n";
  for (size_t i = 0; i < outputs.size() || fs::exists(c.directory / ("out" + std::to_string(i) + ".npy")); ++i) {
    fs::path reference = c.directory / ("out" + std::to_string(i) + ".npy");
    ASSERT_TRUE(fs::exists(reference)) << c.name << ": the program has more outputs than the reference";
    ASSERT_LT(i, outputs.size()) << c.name << ": the program has fewer outputs than the reference";
    std::string problem = Mismatch(outputs[i], ReadNpy(reference.string()));
    EXPECT_EQ(problem, "") << c.name << " output " << i;
  }
}

std::string CaseTestName(const ::testing::TestParamInfo<CorpusCase>& info) {
  std::string name = info.param.name;
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusTest, ::testing::ValuesIn(FindCorpusCases()), CaseTestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CorpusTest);

}  // namespace
}  // namespace gspmd
