// `remat=layer` (builder/remat.h): the backward pass recomputes each layer's inner values from
// the layer's input. Checked: the structure (one barrier per layer, no backward use of a
// layer's inner forward values), bit-identical training on devices, and what the simulator
// makes of it at full size (less memory, recomputed FLOPs in HFU but not MFU).
#include <cmath>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "api/gspmd.h"
#include "builder/remat.h"
#include "ir/computation.h"
#include "models/model_catalog.h"
#include "train_test_util.h"

namespace gspmd {
namespace {

using train_test::Build;
using train_test::Chain;
using train_test::Compile;

std::string OpName(const Instruction& instruction) {
  const std::string key = "op_name=\"";
  const size_t at = instruction.metadata.find(key);
  if (at == std::string::npos) return "";
  const size_t begin = at + key.size();
  return instruction.metadata.substr(begin, instruction.metadata.find('"', begin) - begin);
}

TEST(RematTest, LayerRegionIsTheOpNamesFirstComponent) {
  Instruction a(Opcode::kAdd, Shape(ElementType::kF32, {}), "a");
  a.metadata = "op_name=\"layer_12/mlp\"";
  EXPECT_EQ(LayerRegionOf(a), "layer_12");
  a.metadata = "op_name=\"transpose(layer_1/mlp)\"";
  EXPECT_EQ(LayerRegionOf(a), "");
  a.metadata = "op_name=\"layer_/x\"";
  EXPECT_EQ(LayerRegionOf(a), "");
  a.metadata = "";
  EXPECT_EQ(LayerRegionOf(a), "");
}

TEST(RematTest, BackwardReadsOnlyLayerBoundariesAndRecomputations) {
  for (const std::string model : {"dense_lm", "gshard_moe"}) {
    SCOPED_TRACE(model);
    std::unique_ptr<Module> plain = Build(model, {"layers=3"});
    std::unique_ptr<Module> layered = Build(model, {"layers=3", "remat=layer"});
    const Computation& entry = *layered->entry();
    int barriers = 0, recomputed = 0;
    std::set<std::string> barrier_regions;
    for (const auto& instruction : entry.instructions()) {
      const std::string op_name = OpName(*instruction);
      if (instruction->opcode() == Opcode::kOptimizationBarrier) {
        ++barriers;
        barrier_regions.insert(op_name);
      }
      if (op_name.rfind("remat(", 0) == 0) ++recomputed;
      // A gradient instruction of a layer reads a forward value of that layer only when the
      // value leaves the layer (its output) or is a parameter.
      if (op_name.rfind("transpose(layer_", 0) != 0) continue;
      for (const Instruction* operand : instruction->operands()) {
        const std::string region = LayerRegionOf(*operand);
        if (region.empty() || operand->opcode() == Opcode::kParameter) continue;
        bool leaves_layer = false;
        for (const Instruction* user : operand->users()) {
          const std::string user_op = OpName(*user);
          leaves_layer = leaves_layer || (user_op.rfind("layer_", 0) == 0 && LayerRegionOf(*user) != region);
        }
        EXPECT_TRUE(leaves_layer) << "%" << instruction->name() << " reads %" << operand->name()
                                  << ", an inner value of " << region;
      }
    }
    EXPECT_EQ(barriers, 3);
    EXPECT_EQ(barrier_regions, (std::set<std::string>{"remat(layer_0)", "remat(layer_1)", "remat(layer_2)"}));
    EXPECT_GT(recomputed, 30);
    // Every recomputation comes after the loss's forward pass, just before the gradient that uses it.
    for (const auto& instruction : entry.instructions()) {
      if (OpName(*instruction).rfind("remat(", 0) != 0 || instruction->users().empty()) continue;
      for (const Instruction* user : instruction->users())
        EXPECT_EQ(OpName(*user).rfind("layer_", 0), std::string::npos) << "%" << user->name();
    }
    EXPECT_EQ(plain->entry()->num_parameters(), layered->entry()->num_parameters());
  }
}

TEST(RematTest, TrainingOnDevicesIsBitIdenticalToKeepingActivations) {
  for (const auto& [model, mesh] : std::vector<std::pair<std::string, std::string>>{
           {"dense_lm", "x=2,y=4"}, {"dense_lm", "x=4,y=2"}, {"gshard_moe", "data=2,expert=4"}}) {
    SCOPED_TRACE(model + " " + mesh);
    std::unique_ptr<Module> plain = Build(model, {}, mesh);
    std::unique_ptr<Module> layered = Build(model, {"remat=layer"}, mesh);
    train_test::CompiledStep a = Compile(*plain);
    train_test::CompiledStep b = Compile(*layered);
    constexpr int kSteps = 3;
    auto kept = Chain(*plain, ThreadsRunner(*a.per_device, a.options), kSteps);
    auto recomputed = Chain(*layered, ThreadsRunner(*b.per_device, b.options), kSteps);
    auto one_device = Chain(*layered, InterpreterRunner(*layered), kSteps);
    for (int step = 0; step < kSteps; ++step) {
      ASSERT_EQ(kept[step].size(), recomputed[step].size());
      for (size_t i = 0; i < kept[step].size(); ++i) {
        EXPECT_TRUE(kept[step][i].BitwiseEquals(recomputed[step][i])) << "step " << step << " output " << i;
        EXPECT_TRUE(CompareLiterals(recomputed[step][i], one_device[step][i], 1e-5).matches)
            << "step " << step << " output " << i;
      }
    }
  }
}

TEST(RematTest, SimulatorCountsTheRecomputationAndTheMemoryItSaves) {
  // The dense-1t shape on 128 cores (docs/simulate.md section 7), 8 layers.
  auto step = [](const std::string& remat) {
    api::ModelOptions options{"", "dense-1t", {"layers=8", "batch=64", "remat=" + remat}, "x=8,y=16"};
    return api::Simulate(api::Model(options), {});
  };
  const simulate::SimulationReport kept = step("none");
  const simulate::SimulationReport layered = step("layer");
  // Recomputing each layer needs far less memory before XLA's own rematerialization ...
  EXPECT_LT(layered.memory.peak_without_remat_bytes, kept.memory.peak_without_remat_bytes / 2);
  EXPECT_TRUE(layered.memory.fits);
  // ... and the recomputed dots count in HFU, not in MFU: the same model FLOPs.
  EXPECT_NEAR(layered.model_flops, kept.model_flops, 1e-9 * kept.model_flops);
  EXPECT_GT(layered.hfu, layered.mfu * 1.1);
  EXPECT_NEAR(layered.mfu * layered.step_time_s, kept.mfu * kept.step_time_s, 1e-6 * kept.mfu * kept.step_time_s);
}

}  // namespace
}  // namespace gspmd
