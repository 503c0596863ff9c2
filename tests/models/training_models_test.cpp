// Every training-step model on every mesh shape: five steps on the devices give the same
// loss (and MoE dropped-token counts) at every step as five steps on one device; the
// pipelined step equals its sequential reference; the modules describe themselves.
#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "models/gshard_moe.h"
#include "models/step_attributes.h"
#include "support/diagnostic.h"
#include "train_test_util.h"

namespace gspmd {
namespace {

using train_test::Build;
using train_test::Chain;
using train_test::Compile;

struct MeshCase {
  std::string model;
  std::vector<std::string> settings;
  std::string mesh;
};

std::string CaseName(const ::testing::TestParamInfo<MeshCase>& info) {
  std::string name = info.param.model + "_" + info.param.mesh;
  for (const std::string& s : info.param.settings) name += "_" + s;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

std::vector<MeshCase> Cases() {
  std::vector<MeshCase> cases;
  const std::vector<std::pair<int, int>> shapes = {{1, 8}, {2, 4}, {4, 2}, {8, 1}};
  for (const char* recipe : {"2d", "megatron", "data", "fsdp"})
    for (auto [a, b] : shapes)
      cases.push_back({"dense_lm", {std::string("sharding=") + recipe}, "x=" + std::to_string(a) + ",y=" + std::to_string(b)});
  for (auto [a, b] : shapes)
    cases.push_back({"gshard_moe", {}, "data=" + std::to_string(a) + ",expert=" + std::to_string(b)});
  for (auto [a, b] : shapes)
    cases.push_back({"pipelined_lm", {}, "stage=" + std::to_string(a) + ",data=" + std::to_string(b)});
  cases.push_back({"pipelined_lm", {}, "stage=2,data=2,model=2"});
  // The optimizer variants on the default meshes.
  cases.push_back({"dense_lm", {"optimizer=sgd"}, "x=2,y=4"});
  cases.push_back({"dense_lm", {"opt_state_sharding=data"}, "x=2,y=4"});
  cases.push_back({"gshard_moe", {"optimizer=sgd"}, "data=2,expert=4"});
  cases.push_back({"gshard_moe", {"opt_state_sharding=data"}, "data=2,expert=4"});
  return cases;
}

class EveryMeshTest : public ::testing::TestWithParam<MeshCase> {};

TEST_P(EveryMeshTest, FiveStepsMatchOneDevice) {
  const MeshCase& c = GetParam();
  std::unique_ptr<Module> global = Build(c.model, c.settings, c.mesh);
  train_test::CompiledStep compiled = Compile(*global);
  constexpr int kSteps = 5;
  auto sharded = Chain(*global, ThreadsRunner(*compiled.per_device, compiled.options), kSteps);
  auto single = Chain(*global, InterpreterRunner(*global), kSteps);
  const int dropped = train_test::MetricIndex(*global, "dropped_tokens");
  for (int step = 0; step < kSteps; ++step) {
    const double a = sharded[step][0].GetAsDouble(0), b = single[step][0].GetAsDouble(0);
    EXPECT_LE(std::abs(a - b), 1e-4 * std::abs(b)) << "step " << step << ": loss " << a << " on "
                                                   << global->num_partitions() << " devices, " << b << " on one";
    if (dropped >= 0)
      EXPECT_EQ(sharded[step][dropped].GetAsDouble(0), single[step][dropped].GetAsDouble(0)) << "step " << step;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, EveryMeshTest, ::testing::ValuesIn(Cases()), CaseName);

TEST(TrainingModelsTest, PipelinedStepHasTheSequentialLossAndGradients) {
  // SGD: the new weights are w - lr * gradient, so equal outputs mean equal gradients.
  for (const std::string mesh : {"stage=4,data=2", "stage=2,data=2,model=2"}) {
    SCOPED_TRACE(mesh);
    std::unique_ptr<Module> pipelined = Build("pipelined_lm", {"optimizer=sgd", "learning_rate=1"}, mesh);
    std::unique_ptr<Module> sequential =
        Build("pipelined_lm", {"optimizer=sgd", "learning_rate=1", "schedule=sequential"}, mesh);
    auto a = Chain(*pipelined, InterpreterRunner(*pipelined), 1)[0];
    auto b = Chain(*sequential, InterpreterRunner(*sequential), 1)[0];
    ASSERT_EQ(a.size(), b.size());
    Trainer probe(*pipelined, InterpreterRunner(*pipelined), {});
    const std::vector<Literal> before = probe.inputs();
    for (size_t i = 0; i < a.size(); ++i) {
      LiteralComparison comparison = CompareLiterals(a[i], b[i], 1e-5);
      EXPECT_TRUE(comparison.matches) << "output " << i << ": " << comparison.message;
    }
    // The stage weights moved: their gradients are not zero.
    const StepSignature s = ReadStepSignature(*pipelined, "");
    int moved = 0;
    for (const CarryPair& pair : s.carry)
      if (s.inputs[pair.input].role == step_attributes::kRoleParam &&
          !CompareLiterals(a[pair.output], before[pair.input], 1e-6).matches)
        ++moved;
    EXPECT_EQ(moved, 10);  // embedding, positions, the 6 stacked weights, final_ln, softmax
  }
}

TEST(TrainingModelsTest, ModulesRecordRolesInitsAndCarry) {
  for (const ModelEntry& model : TrainingModels()) {
    SCOPED_TRACE(model.name);
    std::unique_ptr<Module> module = Build(model.name);
    const StepSignature s = ReadStepSignature(*module, "");
    EXPECT_EQ(s.carry_source, StepSignature::CarrySource::kModule);
    EXPECT_TRUE(s.SelfInitializing());
    EXPECT_EQ(s.task, "copy");
    EXPECT_EQ(s.vocab, 16);
    ASSERT_FALSE(s.metrics.empty());
    EXPECT_EQ(s.metrics[0], "loss");
    // Inputs are params, then optimizer state, then the batch; every param and state input
    // is carried, by the output at the same offset past the metrics.
    std::vector<std::string> order;
    for (const StepInput& input : s.inputs)
      if (order.empty() || order.back() != input.role) order.push_back(input.role);
    EXPECT_EQ(order, (std::vector<std::string>{"param", "opt_state", "batch"}));
    std::set<int64_t> carried;
    for (const CarryPair& pair : s.carry) {
      carried.insert(pair.input);
      EXPECT_EQ(pair.output, pair.input + static_cast<int64_t>(s.metrics.size()));
    }
    for (size_t i = 0; i < s.inputs.size(); ++i)
      EXPECT_EQ(carried.count(static_cast<int64_t>(i)) == 1, s.inputs[i].role != "batch") << s.inputs[i].name;
    EXPECT_EQ(s.outputs.size(), s.metrics.size() + s.carry.size());
  }
}

TEST(TrainingModelsTest, PresetsAreWrittenWithoutData) {
  // Full-size programs: only scalar constants, so writing one allocates nothing of its size.
  for (const char* name : {"gshard-2048e-36l", "dense-1t"}) {
    SCOPED_TRACE(name);
    const ModelPreset& preset = FindModelPreset(name);
    std::unique_ptr<Module> module = FindTrainingModel(preset.model).build(PresetConfig(preset));
    EXPECT_EQ(module->num_partitions(), 2048);
    int64_t parameters = 0;
    for (const Instruction* p : module->entry()->parameters())
      if (p->FrontendAttribute(step_attributes::kRole) == step_attributes::kRoleParam)
        parameters += p->shape().element_count();
    if (std::string(name) == "dense-1t") EXPECT_NEAR(static_cast<double>(parameters), 1.1e12, 0.05e12);
    if (std::string(name) == "gshard-2048e-36l") EXPECT_NEAR(static_cast<double>(parameters), 6.0e11, 0.4e11);
    for (const auto& computation : module->computations())
      for (const auto& instruction : computation->instructions())
        if (instruction->opcode() == Opcode::kConstant) EXPECT_EQ(instruction->shape().element_count(), 1);
  }
}

TEST(TrainingModelsTest, GShardCapacityFollowsThePaper) {
  // capacity = capacity_factor * 2N / (G * E), rounded up.
  EXPECT_EQ(ExpertCapacity(train_test::Config("gshard_moe")), 8);  // 2 * 2 * 128 / 64
  EXPECT_EQ(ExpertCapacity(train_test::Config("gshard_moe", {"capacity_factor=0.3"})), 2);  // 1.2, rounded up
  // The Table 3 presets (GShard's per-step work: batch x 256 tokens in groups).
  EXPECT_EQ(ExpertCapacity(PresetConfig(FindModelPreset("gshard-2048e-36l"))), 1);  // 2 * 8192*256 / (2048 * 2048)
  EXPECT_EQ(ExpertCapacity(PresetConfig(FindModelPreset("gshard-128e-12l"))), 16);  // 2 * 2048*256 / (512 * 128)
}

std::string ErrorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const UserError& error) {
    return error.what();
  }
  return "";
}

TEST(TrainingModelsTest, BadNamesKeysAndMeshesAreUserErrors) {
  EXPECT_NE(ErrorOf([] { FindTrainingModel("resnet"); }).find("unknown model 'resnet' (known: dense_lm, gshard_moe"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { FindModelPreset("gshard-64e"); }).find("unknown preset 'gshard-64e'"), std::string::npos);
  EXPECT_NE(ErrorOf([] { train_test::Config("dense_lm", {"depth=3"}); }).find("has no key 'depth' (known: layers"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { train_test::Config("dense_lm", {"layers=0"}); }).find("layers=0: expected an integer >= 1"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { train_test::Config("dense_lm", {"sharding=3d"}); })
                .find("expected one of 2d, megatron, data, fsdp"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { train_test::Config("dense_lm", {"layers"}); }).find("expected KEY=VALUE"), std::string::npos);
  EXPECT_NE(ErrorOf([] { train_test::Config("dense_lm", {}, "data=8"); }).find("has the axes x, y"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { train_test::Config("dense_lm", {}, "x=0"); }).find("expected a positive axis size"),
            std::string::npos);
  // Dims the mesh cannot split, named by key.
  EXPECT_NE(ErrorOf([] { Build("dense_lm", {"heads=4"}, "x=1,y=8"); })
                .find("heads=4 cannot be split 8 ways over mesh axes y"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { Build("gshard_moe", {"experts=6"}); }).find("experts=6 cannot be split 4 ways"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { Build("pipelined_lm", {"layers=6"}); }).find("layers=6 cannot be split 4 ways"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { Build("gshard_moe", {"groups=7"}); }).find("groups=7 cannot be split 8 ways"),
            std::string::npos);
}

}  // namespace
}  // namespace gspmd
