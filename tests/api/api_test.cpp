// The library API (src/api/gspmd.h): programs from text and files, error kinds by stage, the
// compile, run against eval, copies that stay unchanged, and the checks on inputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "analysis/literal_compare.h"
#include "api/api_test_util.h"
#include "api/gspmd.h"
#include "io/npy.h"

namespace gspmd::api {
namespace {

namespace fs = std::filesystem;
using test_util::KindOf;
using test_util::MessageOf;

const char kDot[] = R"(HloModule dot, num_partitions=4

ENTRY %main (x: f32[8,16], w: f32[16,4]) -> f32[8,4] {
  %x = f32[8,16]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  %w = f32[16,4]{1,0} parameter(1), sharding={replicated}
  ROOT %dot = f32[8,4]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

Literal Iota(const Shape& shape) {
  Literal literal(shape);
  float* data = literal.data<float>();
  for (int64_t i = 0; i < shape.element_count(); ++i) data[i] = static_cast<float>(i % 7) - 3.0f;
  return literal;
}

TEST(ApiProgramTest, FromTextKeepsTheNameForErrorsAndPrintsXlaText) {
  const Program program = Program::FromText(kDot, "dot.hlo");
  EXPECT_EQ(program.name(), "dot.hlo");
  EXPECT_FALSE(program.IsPerDevice());
  EXPECT_TRUE(program.NeedsPropagation());
  EXPECT_NE(program.Text().find("ROOT %dot = f32[8,4]{1,0} dot(%x, %w)"), std::string::npos);
}

TEST(ApiProgramTest, MalformedTextIsAParseErrorAtItsLine) {
  const std::string text = "HloModule m\n\nENTRY %e () -> f32[] {\n  ROOT %c = f32[] constant(1\n}\n";
  EXPECT_EQ(KindOf([&] { Program::FromText(text, "bad.hlo"); }), UserErrorKind::kParse);
  EXPECT_EQ(MessageOf([&] { Program::FromText(text, "bad.hlo"); }).rfind("bad.hlo:5:1: error: expected", 0), 0u);
  EXPECT_EQ(KindOf([&] { Program::FromText("module {", "bad.mlir"); }), UserErrorKind::kParse);
}

TEST(ApiProgramTest, MissingFilesAndDirectoriesAreInputErrorsNamingThePath) {
  EXPECT_EQ(KindOf([] { Program::Load("/nonexistent/x.hlo"); }), UserErrorKind::kInput);
  const std::string message = MessageOf([] { Program::Load(fs::temp_directory_path().string()); });
  EXPECT_NE(message.find("is a directory (expected a readable HLO text file)"), std::string::npos) << message;
}

TEST(ApiCompileTest, PartitionLeavesTheSharedProgramUnchanged) {
  const Program program = Program::FromText(kDot, "dot.hlo");
  const std::string before = program.Text();
  const Partitioned partitioned = Partition(program);
  EXPECT_EQ(program.Text(), before);
  EXPECT_EQ(partitioned.num_devices, 4);
  EXPECT_TRUE(partitioned.per_device.IsPerDevice());
  EXPECT_FALSE(partitioned.global.NeedsPropagation());
  EXPECT_NE(partitioned.per_device.Text().find("f32[2,16]"), std::string::npos);
}

TEST(ApiCompileTest, PartitioningAPerDeviceProgramIsRefused) {
  const Partitioned partitioned = Partition(Program::FromText(kDot, "dot.hlo"));
  const std::string message = MessageOf([&] { Partition(partitioned.per_device); });
  EXPECT_NE(message.find("needs a global program; this one is per-device already"), std::string::npos) << message;
}

TEST(ApiCompileTest, ShardingsThatDoNotFitTheDevicesAreShardingErrors) {
  std::string text = kDot;
  text.replace(text.find("devices=[4,1]<=[4]"), 18, "devices=[2,1]<=[2]");
  EXPECT_EQ(KindOf([&] { Partition(Program::FromText(text, "dot.hlo")); }), UserErrorKind::kSharding);
  EXPECT_EQ(KindOf([&] { Partition(Program::FromText(kDot, "dot.hlo"), PartitionOptions{8, {}}); }),
            UserErrorKind::kSharding);
}

TEST(ApiCompileTest, PropagateExplainsWhereShardingsCameFrom) {
  const Propagated propagated = Propagate(Program::FromText(kDot, "dot.hlo"), PropagateOptions{0, true, {}});
  EXPECT_FALSE(propagated.program.NeedsPropagation());
  EXPECT_NE(propagated.Text(true).find("/* from %x"), std::string::npos) << propagated.Text(true);
  EXPECT_EQ(propagated.Text(false).find("/* from"), std::string::npos);
}

// Propagate prepares the module as partitioning does (JAX's pure helper calls inlined), so
// that --propagate-only --explain shows the shardings partitioning uses.
TEST(ApiCompileTest, PropagateSeesTheModulePartitioningSees) {
  const char helper[] = R"(HloModule helper, num_partitions=2

%twice (a: f32[8]) -> f32[8] {
  %a = f32[8]{0} parameter(0)
  ROOT %sum = f32[8]{0} add(%a, %a)
}

ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0), sharding={devices=[2]<=[2]}
  ROOT %call = f32[8]{0} call(%x), to_apply=%twice
}
)";
  const Propagated propagated = Propagate(Program::FromText(helper, "helper.hlo"), PropagateOptions{0, true, {}});
  const std::string text = propagated.Text(true);
  EXPECT_EQ(text.find("call("), std::string::npos) << text;
  EXPECT_NE(text.find("add(%x, %x), sharding={devices=[2]<=[2]}"), std::string::npos) << text;
}

// --propagate-to-outputs true frees an annotated result even when every value has a sharding
// and nothing else needs propagating (a StableHLO result JAX left free reads as replicated;
// oracle seed 112186: a constrained input gathered back for the result, 12 B against XLA's 0).
TEST(ApiCompileTest, OutputsFreedByTheFlagArePropagatedInAnAnnotatedModule) {
  const char annotated[] = R"(HloModule annotated, num_partitions=2

ENTRY %main (x: f32[2,12]) -> f32[2,12] {
  %x = f32[2,12]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}
  %c = f32[2,12]{1,0} custom-call(%x), custom_call_target="Sharding", sharding={devices=[1,2]<=[2]}
  ROOT %n = f32[2,12]{1,0} negate(%c), sharding={replicated}
}
)";
  const Program program = Program::FromText(annotated, "annotated.hlo");
  const std::string kept = Partition(program).per_device.Text();
  EXPECT_NE(kept.find("all-gather("), std::string::npos) << kept;
  PartitionOptions freed;
  freed.boundary.to_outputs = "true";
  const std::string text = Partition(program, freed).per_device.Text();
  EXPECT_EQ(text.find("all-gather("), std::string::npos) << text;
  EXPECT_NE(text.find("negate("), std::string::npos) << text;
}

// A module annotated everywhere but an inner tuple (the StableHLO reader's result tuple, read
// back by a get-tuple-element root) is propagated: as it stood the tuple was replicated and its
// element gathered (oracle seed 112828: 8 B where XLA sends nothing).
TEST(ApiCompileTest, AnUnannotatedInnerTupleIsPropagatedNotReplicated) {
  const char annotated[] = R"(HloModule tuple, num_partitions=4

ENTRY %main (x: f32[8]) -> f32[8] {
  %x = f32[8]{0} parameter(0), sharding={devices=[4]<=[4]}
  %n = f32[8]{0} negate(%x), sharding={devices=[4]<=[4]}
  %t = (f32[8]{0}) tuple(%n)
  ROOT %g = f32[8]{0} get-tuple-element(%t), index=0, sharding={devices=[4]<=[4]}
}
)";
  const std::string text = Partition(Program::FromText(annotated, "tuple.hlo")).per_device.Text();
  EXPECT_EQ(text.find("all-gather("), std::string::npos) << text;
}

TEST(ApiRunTest, RunOnDevicesEqualsEval) {
  const Program program = Program::FromText(kDot, "dot.hlo");
  const std::vector<Literal> inputs = {Iota(Shape(ElementType::kF32, {8, 16})), Iota(Shape(ElementType::kF32, {16, 4}))};
  const std::vector<Literal> one = Eval(program, inputs);
  const std::vector<Literal> four = api::Run(program, inputs);
  ASSERT_EQ(one.size(), 1u);
  ASSERT_EQ(four.size(), 1u);
  EXPECT_TRUE(CompareLiterals(four[0], one[0], 1e-6).matches);
  // The per-device program runs as it is, given the global program's shardings.
  const Partitioned partitioned = Partition(program);
  RunOptions options;
  options.like = &partitioned.global;
  EXPECT_TRUE(CompareLiterals(api::Run(partitioned.per_device, inputs, options)[0], one[0], 1e-6).matches);
}

TEST(ApiRunTest, InputsOfTheWrongShapeOrCountNameTheParameter) {
  const Program program = Program::FromText(kDot, "dot.hlo");
  const std::string count = MessageOf([&] { Eval(program, {Iota(Shape(ElementType::kF32, {8, 16}))}); });
  EXPECT_NE(count.find("takes 2 parameter(s) but 1 input(s) were given"), std::string::npos) << count;
  const std::string shape = MessageOf([&] {
    CheckInputs(program, {Iota(Shape(ElementType::kF32, {8, 16})), Iota(Shape(ElementType::kF32, {4, 4}))},
                {"x.npy", "w.npy"});
  });
  EXPECT_NE(shape.find("w.npy: error: input holds f32[4,4] but parameter 1 (%w)"), std::string::npos) << shape;
}

TEST(ApiInspectTest, ReportShowLintAndSimulateReadTheCompiledProgram) {
  const Program program = Program::FromText(kDot, "dot.hlo");
  const CommReport report = Report(Partition(program).per_device);
  EXPECT_EQ(report.comm_bytes_per_device, 0);  // a batch-split dot with a replicated weight
  const std::string shown = Show(program);
  EXPECT_EQ(shown.rfind("mesh: 4 devices\n", 0), 0u) << shown;
  EXPECT_NO_THROW(Lint(program));
  SimulateOptions simulate;
  simulate.chip = "a100";
  EXPECT_GT(Simulate(program, simulate).step_time_s, 0);
  simulate.chip = "no-such-chip";
  EXPECT_EQ(KindOf([&] { Simulate(program, simulate); }), UserErrorKind::kInput);
}

TEST(ApiCorpusTest, EveryCorpusCaseRunsThroughTheApiInBothExports) {
  const fs::path corpus = fs::path(GSPMD_TEST_DATA_DIR) / "corpus" / "gspmd";
  int cases = 0;
  for (const char* name : {"dp_matmul", "megatron_mlp", "while_loops", "uneven_internal_10_over_4"}) {
    const fs::path dir = corpus / name;
    std::vector<Literal> inputs;
    for (int i = 0; fs::exists(dir / ("in" + std::to_string(i) + ".npy")); ++i)
      inputs.push_back(ReadNpy((dir / ("in" + std::to_string(i) + ".npy")).string()));
    const Literal expected = ReadNpy((dir / "out0.npy").string());
    for (const char* file : {"pre.hlo", "stablehlo.mlir"}) {
      const std::vector<Literal> outputs = api::Run(Program::Load((dir / file).string()), inputs);
      EXPECT_TRUE(CompareLiterals(outputs[0], expected, 1e-4).matches) << name << "/" << file;
      ++cases;
    }
  }
  EXPECT_EQ(cases, 8);
}

}  // namespace
}  // namespace gspmd::api
