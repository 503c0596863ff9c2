// `--windowed-einsum auto` with a chip (api::Simulate): loops kept only where the simulated step
// gets faster and still fits; never slower than off on the corpus, the models and the presets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "api/gspmd.h"
#include "models/model_catalog.h"

namespace gspmd::api {
namespace {

namespace fs = std::filesystem;

simulate::SimulationReport SimulateWith(const Program& program, const std::string& mode,
                                        const std::string& mixed_precision = "") {
  SimulateOptions options;
  options.chip = "tpu-v3";
  options.windowed_einsum = mode;
  options.mixed_precision = mixed_precision;
  return Simulate(program, options);
}

// auto against off: never slower, never past the memory off fits in (within 5%).
void ExpectAutoNoWorse(const Program& program, const std::string& mixed_precision = "") {
  const simulate::SimulationReport off = SimulateWith(program, "off", mixed_precision);
  const simulate::SimulationReport automatic = SimulateWith(program, "auto", mixed_precision);
  EXPECT_LE(automatic.step_time_s, off.step_time_s) << automatic.windowed_einsum;
  if (off.memory.fits) EXPECT_TRUE(automatic.memory.fits) << automatic.windowed_einsum;
  EXPECT_LE(static_cast<double>(automatic.memory.peak_bytes), 1.05 * static_cast<double>(off.memory.peak_bytes))
      << automatic.windowed_einsum;
}

// The dense LM of docs/simulate.md section 7 at 128 cores: the chip's model windows the
// weight gradients' reduce-scatters, the step gets faster and still fits, and the report says
// what it tried.
TEST(WindowedAuto, DenseLmAt128CoresKeepsTheLoopsThatPay) {
  const Program program = Model({"", "dense-1t", {"layers=8", "batch=64"}, "x=8,y=16"});
  const simulate::SimulationReport off = SimulateWith(program, "off");
  const simulate::SimulationReport automatic = SimulateWith(program, "auto");
  EXPECT_LT(automatic.step_time_s, 0.99 * off.step_time_s);
  EXPECT_TRUE(automatic.memory.fits);
  EXPECT_LE(static_cast<double>(automatic.memory.peak_bytes), 1.05 * static_cast<double>(off.memory.peak_bytes));
  EXPECT_GT(automatic.comm_by_kind.count("collective-permute"), 0u);
  EXPECT_EQ(automatic.windowed_einsum.rfind("auto (tpu-v3): kept ", 0), 0u) << automatic.windowed_einsum;
  EXPECT_NE(automatic.windowed_einsum.find("without loops"), std::string::npos) << automatic.windowed_einsum;
  // `always` windows every candidate and is slower here or does not fit: the gate matters.
  const simulate::SimulationReport always = SimulateWith(program, "always");
  EXPECT_TRUE(always.step_time_s > automatic.step_time_s || !always.memory.fits);
  // Mixed precision: the dots are twice as fast, so fewer loops pay; still never slower.
  const simulate::SimulationReport mixed_off = SimulateWith(program, "off", "bf16");
  const simulate::SimulationReport mixed = SimulateWith(program, "auto", "bf16");
  EXPECT_LE(mixed.step_time_s, mixed_off.step_time_s) << mixed.windowed_einsum;
  EXPECT_TRUE(mixed.memory.fits) << mixed.windowed_einsum;
  // `gspmd partition --chip` writes the program simulate chose: simulated as it is, its step
  // is the one auto reported.
  PartitionOptions partition;
  partition.chip = "tpu-v3";
  const Partitioned chosen = Partition(program, partition);
  EXPECT_EQ(chosen.windowed_einsum, automatic.windowed_einsum);
  int64_t loops = 0;
  for (const auto& computation : chosen.per_device.module().computations())
    loops += computation->name().find(".windowed_body") != std::string::npos;
  EXPECT_GT(loops, 0);
  SimulateOptions as_is;
  as_is.per_device = true;
  EXPECT_DOUBLE_EQ(Simulate(chosen.per_device, as_is).step_time_s, automatic.step_time_s);
  // Without the search (as autoshard simulates every plan) auto is never slower either.
  SimulateOptions quick;
  quick.windowed_search_steps = 0;
  const simulate::SimulationReport priced = Simulate(program, quick);
  EXPECT_LE(priced.step_time_s, off.step_time_s) << priced.windowed_einsum;
  EXPECT_GE(priced.step_time_s, automatic.step_time_s) << priced.windowed_einsum;
}

// At 2048 cores (x=32, y=64) each layer's normalized activation is all-gathered over the 64
// devices of y once and read by two dots: the QKV projection and, in the backward pass, its
// weight gradient. A loop for either dot alone keeps the gather for the other and only adds
// its permutes, so neither pays alone; the two loops together leave nothing to gather, and
// the search takes them as one move.
TEST(WindowedAuto, DotsSharingAGatherAreWindowedTogether) {
  const Program program = Model({"", "dense-1t", {"layers=2", "batch=256"}, "x=32,y=64"});
  const simulate::SimulationReport off = SimulateWith(program, "off");
  const simulate::SimulationReport automatic = SimulateWith(program, "auto");
  EXPECT_LT(automatic.step_time_s, off.step_time_s) << automatic.windowed_einsum;
  EXPECT_TRUE(automatic.memory.fits);
  EXPECT_LE(static_cast<double>(automatic.memory.peak_bytes), 1.05 * static_cast<double>(off.memory.peak_bytes));
  EXPECT_NE(automatic.windowed_einsum.find("kept 4 loops of 2 kinds"), std::string::npos) << automatic.windowed_einsum;
  // The shared gathers are gone: per layer, 512 MiB gathered from 64 shards (504 MiB sent)
  // becomes the loop's gather among pairs before it (8 MiB sent) and its permutes.
  ASSERT_TRUE(automatic.comm_by_kind.count("all-gather"));
  const double mib = 1 << 20;
  EXPECT_NEAR(off.comm_by_kind.at("all-gather").bytes - automatic.comm_by_kind.at("all-gather").bytes,
              2 * (504 - 8) * mib, 1 * mib);
  EXPECT_GT(automatic.comm_by_kind.count("collective-permute"), 0u);
  // Without the search (each loop priced alone) nothing is kept.
  SimulateOptions quick;
  quick.chip = "tpu-v3";
  quick.windowed_search_steps = 0;
  const simulate::SimulationReport priced = Simulate(program, quick);
  EXPECT_GE(priced.step_time_s, automatic.step_time_s) << priced.windowed_einsum;
}

TEST(WindowedAuto, NeverSlowerOnTheCorpus) {
  const fs::path corpus = fs::path(GSPMD_TEST_DATA_DIR) / "corpus" / "gspmd";
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(corpus))
    if (fs::exists(entry.path() / "pre.hlo")) cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());
  ASSERT_GE(cases.size(), 10u);
  for (const fs::path& dir : cases) {
    SCOPED_TRACE(dir.filename().string());
    ExpectAutoNoWorse(Program::Load((dir / "pre.hlo").string()));
  }
}

// The models at their defaults, and the presets (every full-size one, a few seconds each, under
// GSPMD_SIMULATE_SOAK=1; in CI the first preset of each model, the dense LM's and one MoE's,
// at reduced depth: at two layers the MoE presets of 12 and 36 layers are one program).
TEST(WindowedAuto, NeverSlowerOnModelsAndPresets) {
  for (const char* name : {"dense_lm", "gshard_moe", "pipelined_lm"}) {
    SCOPED_TRACE(name);
    ExpectAutoNoWorse(Model({name, "", {}, ""}));
  }
  const bool soak = std::getenv("GSPMD_SIMULATE_SOAK") != nullptr;
  std::set<std::string> models;
  for (const ModelPreset& preset : ModelPresets()) {
    if (!soak && !models.insert(preset.model).second) continue;
    SCOPED_TRACE(preset.name);
    std::vector<std::string> settings;
    if (!soak) settings = {"layers=2"};
    const Program program = Model({"", preset.name, settings, ""});
    ExpectAutoNoWorse(program);
    if (soak) ExpectAutoNoWorse(program, "bf16");
  }
}

}  // namespace
}  // namespace gspmd::api
