// api::Autoshard on programs: Megatron's split recovered on an unannotated MLP, plans that run
// equal to one device (models trained with --check, corpus programs stripped of their
// annotations), the prediction equal to simulating the written program, and refused input.
#include <gtest/gtest.h>

#include <filesystem>

#include "analysis/literal_compare.h"
#include "api/api_test_util.h"
#include "api/gspmd.h"
#include "io/npy.h"

namespace gspmd::api {
namespace {

namespace fs = std::filesystem;
using test_util::MessageOf;

// Two MLP layers on 2047 tokens (no 8-way data parallelism), wide enough to be compute-bound;
// the user wants the result whole (its annotation is kept).
const char kMlp[] = R"(HloModule mlp

ENTRY %main (x: f32[2047,1024], l0.w1: f32[1024,16384], l0.w2: f32[16384,1024], l1.w1: f32[1024,16384], l1.w2: f32[16384,1024]) -> f32[2047,1024] {
  %x = f32[2047,1024]{1,0} parameter(0)
  %l0.w1 = f32[1024,16384]{1,0} parameter(1)
  %l0.w2 = f32[16384,1024]{1,0} parameter(2)
  %l1.w1 = f32[1024,16384]{1,0} parameter(3)
  %l1.w2 = f32[16384,1024]{1,0} parameter(4)
  %h0 = f32[2047,16384]{1,0} dot(%x, %l0.w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %zero = f32[] constant(0)
  %zeros = f32[2047,16384]{1,0} broadcast(%zero), dimensions={}
  %r0 = f32[2047,16384]{1,0} maximum(%h0, %zeros)
  %y0 = f32[2047,1024]{1,0} dot(%r0, %l0.w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %h1 = f32[2047,16384]{1,0} dot(%y0, %l1.w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %r1 = f32[2047,16384]{1,0} maximum(%h1, %zeros)
  ROOT %y1 = f32[2047,1024]{1,0} dot(%r1, %l1.w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
}
)";

std::string ShardingOf(const Program& global, const std::string& name) {
  const Propagated propagated = Propagate(global);
  const Instruction* value = propagated.program.module().entry()->FindInstruction(name);
  return value && value->sharding() ? value->sharding()->ToString() : "(none)";
}

TEST(Autoshard, RecoversMegatronsColumnThenRowSplitOnAnUnannotatedMlp) {
  const Program mlp = Program::FromText(kMlp, "mlp.hlo");
  AutoshardOptions options;
  options.mesh = "x=8";
  const AutoshardResult result = Autoshard(mlp, options);
  EXPECT_EQ(result.mesh, "x=8");
  // Both layers share one decision: w1 split by columns, w2 by rows.
  EXPECT_EQ(ShardingOf(result.program, "l0.w1"), "{devices=[1,8]<=[8]}");
  EXPECT_EQ(ShardingOf(result.program, "l1.w1"), "{devices=[1,8]<=[8]}");
  EXPECT_EQ(ShardingOf(result.program, "l0.w2"), "{devices=[8,1]<=[8]}");
  EXPECT_EQ(ShardingOf(result.program, "l1.w2"), "{devices=[8,1]<=[8]}");
  // One all-reduce of the [2047,1024] f32 output per layer (ring: 2 (n-1)/n of the array).
  const double per_layer = 2.0 * 7.0 / 8.0 * 2047 * 1024 * 4;
  EXPECT_NEAR(result.cost.comm_bytes, 2 * per_layer, 0.01 * per_layer);
  const CommReport report = Report(Partition(result.program).per_device);
  ASSERT_EQ(report.by_kind.count("all-reduce"), 1u);
  EXPECT_EQ(report.by_kind.size(), 1u);
  EXPECT_TRUE(result.cost.fits);
  ASSERT_TRUE(result.lower_bound_s.has_value());
  EXPECT_LE(*result.lower_bound_s, result.cost.step_time_s);
  // The prediction is what `gspmd simulate` says of the written program.
  const simulate::SimulationReport simulated = Simulate(result.program, {});
  EXPECT_NEAR(simulated.step_time_s, result.cost.step_time_s, 1e-9 * simulated.step_time_s);
  // Every decision lists what it beat.
  ASSERT_FALSE(result.decisions.empty());
  for (const AutoshardDecision& decision : result.decisions) EXPECT_GE(decision.alternatives.size(), 2u);
}

// An unannotated MoE step, with nothing saying it is one (no recipe to start from): the search
// splits its experts over the devices, and the partitioner dispatches and combines with
// all-to-alls.
TEST(Autoshard, SplitsTheExpertsOfAnUnannotatedMoeWithAllToAlls) {
  const std::vector<std::string> settings = {"sharding=none", "layers=2",          "d_model=512", "heads=8",
                                             "head_dim=64",   "d_ff=2048",         "experts=8",   "expert_hidden=4096",
                                             "vocab=1024",    "batch=64",          "seq=128",     "groups=64"};
  std::string text = Model(ModelOptions{"gshard_moe", "", settings, "data=1,expert=8"}).Text();
  const std::string model_attribute = "gspmd.model=\"gshard_moe\",";
  ASSERT_NE(text.find(model_attribute), std::string::npos);
  text.erase(text.find(model_attribute), model_attribute.size());
  AutoshardOptions options;
  options.mesh = "x=8";
  const AutoshardResult result = Autoshard(Program::FromText(text, "moe.hlo"), options);
  EXPECT_TRUE(result.recipes.empty());
  EXPECT_EQ(ShardingOf(result.program, "l1.wi"), "{devices=[8,1,1]<=[8]}");
  EXPECT_EQ(ShardingOf(result.program, "l1.wo_expert"), "{devices=[8,1,1]<=[8]}");
  const CommReport report = Report(Partition(result.program).per_device);
  ASSERT_EQ(report.by_kind.count("all-to-all"), 1u);
  EXPECT_GE(report.by_kind.at("all-to-all").count, 4);  // dispatch and combine, forward and backward
}

TEST(Autoshard, DeterministicPlanAndText) {
  const Program mlp = Program::FromText(kMlp, "mlp.hlo");
  AutoshardOptions options;
  options.mesh = "x=2,y=4";
  const AutoshardResult a = Autoshard(mlp, options);
  const AutoshardResult b = Autoshard(mlp, options);
  EXPECT_EQ(a.program.Text(), b.program.Text());
  EXPECT_EQ(a.evaluations, b.evaluations);
}

// A model's step with no annotations, autosharded on 8 devices under a memory budget of 70%
// of its unsharded peak (so that the plan must split something), trained three steps with
// every step checked against one device.
void AutoshardAndTrain(const std::string& model, const std::string& mesh) {
  const Program step = Model(ModelOptions{model, "", {"sharding=none"}, ""});
  EXPECT_EQ(step.Text().find("sharding={"), std::string::npos) << model;
  EXPECT_EQ(step.Text().find("\"Sharding\""), std::string::npos) << model;
  AutoshardOptions options;
  options.devices = 8;
  options.mesh = mesh;
  SimulateOptions unsharded;  // nothing annotated: everything replicated
  unsharded.devices = 8;
  const int64_t unsharded_peak = Simulate(step, unsharded).memory.peak_bytes;
  options.max_evaluations = 60;
  options.memory_budget_bytes = unsharded_peak * 7 / 10;
  const AutoshardResult result = Autoshard(step, options);
  EXPECT_TRUE(result.cost.fits);
  EXPECT_LE(result.cost.peak_bytes, options.memory_budget_bytes);
  EXPECT_FALSE(result.recipes.empty()) << model;  // the model's own recipes were priced too
  EXPECT_NE(result.program.Text().find("sharding={"), std::string::npos) << model;
  TrainOptions train;
  train.check = true;
  train.rtol = 1e-5;
  train.atol = 1e-6;
  int steps = 0;
  Train(result.program, 3, train, 8, [&](const TrainedStep&) { ++steps; });
  EXPECT_EQ(steps, 3);
}

TEST(Autoshard, DenseLmPlanTrainsEqualToOneDevice) { AutoshardAndTrain("dense_lm", "x=2,y=4"); }
TEST(Autoshard, GShardMoePlanTrainsEqualToOneDevice) { AutoshardAndTrain("gshard_moe", "data=2,expert=4"); }
TEST(Autoshard, PipelinedLmPlanTrainsEqualToOneDevice) { AutoshardAndTrain("pipelined_lm", "stage=4,data=2"); }

// A step of more than two layers is screened on its two-layer copy: fewer plans are compiled
// in full, and the plan still fits and trains.
TEST(Autoshard, DeeperStepsAreScreenedOnATwoLayerCopy) {
  const Program step = Model(ModelOptions{"dense_lm", "", {"sharding=none", "layers=4"}, ""});
  AutoshardOptions options;
  options.mesh = "x=2,y=4";
  options.max_evaluations = 12;
  const AutoshardResult screened = Autoshard(step, options);
  EXPECT_TRUE(screened.cost.fits);
  ASSERT_FALSE(screened.decisions.empty());
  // Each group weighs at most the 3 best of its copy plus its current candidate.
  for (const AutoshardDecision& decision : screened.decisions) EXPECT_LE(decision.alternatives.size(), 4u);
  TrainOptions train;
  train.check = true;
  Train(screened.program, 2, train, 8);
}

// Recomputation is part of the plan: a model step's plan is priced with every layer recomputed
// (remat=layer) too, and the written step recomputes when that is cheaper, here because
// keeping the activations only fits the budget with XLA's costlier rematerialization.
TEST(Autoshard, RecomputationIsPartOfThePlan) {
  const Program step = Model(ModelOptions{"dense_lm", "",
                                          {"sharding=none", "batch=64", "seq=128", "d_model=256", "d_ff=1024",
                                           "heads=8", "head_dim=32", "layers=4"},
                                          ""});
  AutoshardOptions options;
  options.mesh = "x=2,y=4";
  options.max_evaluations = 1;
  const AutoshardResult roomy = Autoshard(step, options);  // 16 GiB: nothing to recompute
  EXPECT_EQ(roomy.remat, "none");
  EXPECT_EQ(roomy.program.Text().find("remat("), std::string::npos);
  options.memory_budget_bytes = 85 << 20;
  const AutoshardResult tight = Autoshard(step, options);
  EXPECT_EQ(tight.remat, "layer");
  EXPECT_NE(tight.origin.find("remat=layer"), std::string::npos) << tight.origin;
  EXPECT_TRUE(tight.cost.fits);
  ASSERT_FALSE(tight.decisions.empty());
  const AutoshardDecision& decision = tight.decisions.back();
  EXPECT_EQ(decision.group.rfind("recomputation", 0), 0u);
  ASSERT_EQ(decision.alternatives.size(), 2u);
  EXPECT_EQ(decision.chosen, "remat=layer");
  EXPECT_LT(decision.alternatives[1].second.step_time_s, decision.alternatives[0].second.step_time_s);
  // The written step recomputes, and simulating it gives the prediction.
  const std::string text = tight.program.Text();
  EXPECT_NE(text.find("op_name=\"remat(layer_0/"), std::string::npos);
  EXPECT_NE(text.find("opt-barrier("), std::string::npos);
  SimulateOptions simulate;
  simulate.memory_capacity_bytes = options.memory_budget_bytes;
  EXPECT_NEAR(Simulate(tight.program, simulate).step_time_s, tight.cost.step_time_s, 1e-9 * tight.cost.step_time_s);
  // (Training a step written with remat=layer equals one device: tests/models/remat_test.)

  // Tighter still, no recipe fits as written: the recipes are priced with every layer
  // recomputed, and the plan refines one of those.
  options.memory_budget_bytes = 60 << 20;
  const AutoshardResult tighter = Autoshard(step, options);
  EXPECT_EQ(tighter.remat, "layer");
  EXPECT_TRUE(tighter.cost.fits);
  EXPECT_NE(tighter.origin.find(" remat=layer"), std::string::npos) << tighter.origin;
  int layered_recipes = 0;
  for (const AutoshardRecipe& recipe : tighter.recipes) layered_recipes += recipe.name.ends_with(" remat=layer");
  EXPECT_GT(layered_recipes, 0);
  simulate.memory_capacity_bytes = options.memory_budget_bytes;
  EXPECT_NEAR(Simulate(tighter.program, simulate).step_time_s, tighter.cost.step_time_s,
              1e-9 * tighter.cost.step_time_s);
}

// Every corpus program with its annotations removed runs, as autosharded, equal to XLA's output.
TEST(Autoshard, CorpusProgramsWithoutTheirAnnotationsRunEqualToXla) {
  const fs::path corpus = fs::path(GSPMD_TEST_DATA_DIR) / "corpus" / "gspmd";
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(corpus))
    if (fs::exists(entry.path() / "pre.hlo") && fs::exists(entry.path() / "out0.npy")) cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());
  ASSERT_GE(cases.size(), 10u);
  for (const fs::path& dir : cases) {
    SCOPED_TRACE(dir.filename().string());
    const Program program = Program::Load((dir / "pre.hlo").string());
    std::vector<Literal> inputs;
    for (int i = 0; fs::exists(dir / ("in" + std::to_string(i) + ".npy")); ++i)
      inputs.push_back(ReadNpy((dir / ("in" + std::to_string(i) + ".npy")).string()));
    std::vector<Literal> expected;
    for (int i = 0; fs::exists(dir / ("out" + std::to_string(i) + ".npy")); ++i)
      expected.push_back(ReadNpy((dir / ("out" + std::to_string(i) + ".npy")).string()));
    AutoshardOptions options;
    options.devices = 8;
    options.keep = "none";
    options.mesh = "x=2,y=4";
    options.max_evaluations = 25;
    const AutoshardResult result = Autoshard(program, options);
    const std::vector<Literal> outputs = api::Run(result.program, inputs, {.devices = 8});
    ASSERT_EQ(outputs.size(), expected.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      const LiteralComparison comparison = CompareLiterals(outputs[i], expected[i], 1e-5);
      EXPECT_TRUE(comparison.matches) << "output " << i << ": " << comparison.message;
    }
  }
}

TEST(Autoshard, RefusesWhatItCannotDo) {
  const Program mlp = Program::FromText(kMlp, "mlp.hlo");
  EXPECT_NE(MessageOf([&] { Autoshard(mlp, {.chip = "tpu-v99", .devices = 8}); }).find("tpu-v99"), std::string::npos);
  const std::string budget = MessageOf([&] { Autoshard(mlp, {.devices = 8, .mesh = "x=8", .memory_budget_bytes = 4096}); });
  EXPECT_NE(budget.find("no plan found fits the memory budget of 4096 bytes per device; the smallest peak found is"),
            std::string::npos)
      << budget;
  const std::string seven = MessageOf([&] { Autoshard(mlp, {.devices = 7}); });
  EXPECT_NE(seven.find("autoshard cannot use 7 devices here"), std::string::npos) << seven;
  EXPECT_NE(MessageOf([&] { Autoshard(mlp, {.devices = 8, .mesh = "x=8,y"}); }).find("expected AXIS=N"), std::string::npos);
  EXPECT_NE(MessageOf([&] { Autoshard(mlp, {.devices = 8, .mesh = "x=2,y=2"}); }).find("has 4 devices but --devices is 8"),
            std::string::npos);
  EXPECT_NE(MessageOf([&] { Autoshard(mlp, {.devices = 8, .keep = "some"}); }).find("expected all, boundary or none"),
            std::string::npos);
  EXPECT_NE(MessageOf([&] { Autoshard(mlp, {}); }).find("expected the number of devices"), std::string::npos);
}

}  // namespace
}  // namespace gspmd::api
