// The library API's additions for the Python package: Annotate (JAX's mesh and specs to HLO
// shardings), Model, Train (with a per-step callback) and WriteTextFile's errors.
#include <gtest/gtest.h>

#include <filesystem>

#include "api/api_test_util.h"
#include "api/gspmd.h"
#include "text/printer.h"

namespace gspmd::api {
namespace {

using test_util::KindOf;

const char kUnannotated[] = R"(HloModule mlp

ENTRY %main (x: f32[16,32], w: f32[32,64], b: f32[64]) -> f32[16,64] {
  %x = f32[16,32]{1,0} parameter(0)
  %w = f32[32,64]{1,0} parameter(1)
  %b = f32[64]{0} parameter(2)
  %d = f32[16,64]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bb = f32[16,64]{1,0} broadcast(%b), dimensions={1}
  ROOT %a = f32[16,64]{1,0} add(%d, %bb)
}
)";

Mesh DataModel() { return Mesh{{{"data", 2}, {"model", 4}}, {}}; }

std::string ShardingOf(const Program& program, int64_t parameter) {
  const auto& sharding = program.module().entry()->parameter(parameter)->sharding();
  return sharding ? sharding->ToString() : "(none)";
}

TEST(ApiAnnotateTest, SpecsBecomeTiledAndPartiallyReplicatedShardings) {
  const Program program = Program::FromText(kUnannotated);
  const Program annotated = Annotate(program,
                                     {{std::nullopt, "x", {{"data"}, {}}},
                                      {1, "", {{}, {"model"}}},
                                      {std::nullopt, "%b", {{"model", "data"}}}},
                                     DataModel());
  // Axes a spec leaves out replicate the value (JAX): x over data, replicated over model.
  EXPECT_EQ(ShardingOf(annotated, 0), "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(ShardingOf(annotated, 1), "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(ShardingOf(annotated, 2), "{devices=[8]<=[2,4]T(1,0)}");
  EXPECT_EQ(annotated.module().num_partitions(), 8);
  EXPECT_EQ(ShardingOf(program, 0), "(none)");  // the original is unchanged

  const Program replicated = Annotate(program, {{0, "", {}}}, DataModel());
  EXPECT_EQ(ShardingOf(replicated, 0), "{replicated}");
}

TEST(ApiAnnotateTest, PartitionsAsHandWrittenShardingsDo) {
  const Program annotated =
      Annotate(Program::FromText(kUnannotated), {{0, "", {{"data"}}}, {1, "", {{}, {"model"}}}}, DataModel());
  std::string written = kUnannotated;
  written.replace(written.find("HloModule mlp"), 13, "HloModule mlp, num_partitions=8");
  written.replace(written.find("parameter(0)"), 12,
                  "parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  written.replace(written.find("parameter(1)"), 12,
                  "parameter(1), sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(Partition(annotated).per_device.Text(), Partition(Program::FromText(written)).per_device.Text());
}

TEST(ApiAnnotateTest, BadSpecsAreShardingErrorsNamingTheParameter) {
  const Program program = Program::FromText(kUnannotated);
  try {
    Annotate(program, {{std::nullopt, "x", {{"nope"}}}}, DataModel());
    FAIL() << "no error";
  } catch (const UserError& error) {
    EXPECT_EQ(error.kind(), UserErrorKind::kSharding);
    EXPECT_NE(std::string(error.what()).find("parameter 0 (%x) names mesh axis 'nope'"), std::string::npos)
        << error.what();
  }
  EXPECT_EQ(KindOf([&] { Annotate(program, {{std::nullopt, "y", {}}}, DataModel()); }), UserErrorKind::kSharding);
  EXPECT_EQ(KindOf([&] { Annotate(program, {{5, "", {}}}, DataModel()); }), UserErrorKind::kSharding);
  EXPECT_EQ(KindOf([&] { Annotate(program, {{2, "", {{"data"}, {"model"}}}}, DataModel()); }),
            UserErrorKind::kSharding);
  EXPECT_EQ(KindOf([&] { Annotate(program, {{0, "", {{"data"}, {"data"}}}}, DataModel()); }),
            UserErrorKind::kSharding);
  EXPECT_EQ(KindOf([&] { Annotate(program, {}, Mesh{{{"data", 0}}, {}}); }), UserErrorKind::kSharding);
}

TEST(ApiModelTest, ModelByNameAndPreset) {
  const Program step = Model({"dense_lm", "", {"layers=1"}, "x=2,y=4"});
  EXPECT_EQ(step.name(), "<model dense_lm>");
  EXPECT_EQ(step.module().num_partitions(), 8);
  EXPECT_EQ(ModelConfigFor({"", "gshard-128e-12l", {}, ""}).Int("experts"), 128);
  EXPECT_THROW(Model({"nosuch", "", {}, ""}), UserError);
  EXPECT_THROW(Model({"dense_lm", "", {"bogus=1"}, ""}), UserError);
  EXPECT_THROW(Model({"", "", {}, ""}), UserError);
}

TEST(ApiTrainTest, CheckedStepsCallBackWithTheLoss) {
  const Program step = Model({"dense_lm", "", {"layers=1"}, ""});
  TrainOptions options;
  options.check = true;
  std::vector<TrainedStep> seen;
  const std::vector<Literal> outputs =
      Train(step, 2, std::move(options), 0, [&](const TrainedStep& s) { seen.push_back(s); });
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].step, 1);
  ASSERT_FALSE(seen[1].metric_names.empty());
  EXPECT_EQ(seen[1].metric_names[0], "loss");
  EXPECT_EQ(seen[1].metrics.size(), seen[1].metric_names.size());
  EXPECT_DOUBLE_EQ(outputs[0].GetAsDouble(0), seen[1].metrics[0]);
  EXPECT_THROW(Train(step, 0, {}), UserError);
}

TEST(ApiWriteTextFileTest, UnwritablePathsAreResourceErrors) {
  const std::string directory = ::testing::TempDir();
  EXPECT_EQ(KindOf([&] { WriteTextFile(directory + "/no/such/dir/out.hlo", "x"); }), UserErrorKind::kResource);
  EXPECT_EQ(KindOf([&] { WriteTextFile(directory, "x"); }), UserErrorKind::kResource);
  const std::string path = directory + "/api_write_text_file_test.hlo";
  WriteTextFile(path, "text");
  EXPECT_EQ(std::filesystem::file_size(path), 4u);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace gspmd::api
