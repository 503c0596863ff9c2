// `gspmd train --check --windowed-einsum always` (issue 26) on the threads backend: the dense LM
// and the MoE, their dots run as windowed loops with asynchronous permutes, match one device on
// every step; the loops are checked to be in the program that trains, so the check is not vacuous.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "train/windowed_train_util.h"

namespace gspmd {
namespace {

using namespace cli_test;        // NOLINT: test helpers
using namespace windowed_train;  // NOLINT: test helpers

class TrainWindowedCliTest : public CliTest {
 protected:
  // `gspmd partition HLO --windowed-einsum MODE`: the per-device program's text, and its
  // "N KiB" of "N KiB per device communicated" (what `gspmd train` prints in its header).
  struct Partitioned {
    std::string text;
    std::string communicated;
  };
  Partitioned Partition(const std::string& hlo, const std::string& mode) {
    const std::string out = Path("part_" + mode + ".hlo");
    CommandResult r = Gspmd({"partition", hlo, "--windowed-einsum", mode, "-o", out});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Partitioned p{ReadText(out), CommunicatedPerDevice(r.err)};
    EXPECT_FALSE(p.communicated.empty()) << r.err;
    return p;
  }

  // Writes the model, checks that `always` makes windowed loops of its dots (and the default
  // none, at this size), and trains it for three steps with --check.
  void ExpectTrainsLikeOneDevice(const WindowedModel& model) {
    SCOPED_TRACE(model.name);
    const std::string hlo = Path(model.name + ".hlo");
    std::vector<std::string> args = {"model"};
    args.insert(args.end(), model.args.begin(), model.args.end());
    args.insert(args.end(), {"-o", hlo});
    CommandResult written = Gspmd(args);
    ASSERT_EQ(written.exit_code, 0) << written.err;

    const Partitioned windowed = Partition(hlo, "always");
    EXPECT_GT(CountWindowedLoops(windowed.text), 0) << windowed.text;
    EXPECT_GT(Occurrences(windowed.text, "collective-permute-start("), 0);
    EXPECT_EQ(CountWindowedLoops(Partition(hlo, "auto").text), 0);

    CommandResult r = Gspmd({"train", hlo, "--steps", "3", "--check", "--windowed-einsum", "always", "--progress",
                             "lines"});
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    // The header's communication is the windowed program's (train partitions as `partition` does).
    EXPECT_NE(r.out.find("communication per step and device: " + windowed.communicated + ":"), std::string::npos)
        << windowed.communicated << "\n" << r.out;
    EXPECT_EQ(Occurrences(r.out, "  check ok"), 3) << r.out;
    EXPECT_NE(r.out.find("step 3/3"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("every step matched one device"), std::string::npos) << r.out;
  }
};

TEST_F(TrainWindowedCliTest, DenseLmAndMoeMatchOneDeviceOnEveryStep) {
  for (const WindowedModel& model : WindowedModels()) ExpectTrainsLikeOneDevice(model);
}

// Other recipes, meshes and optimizers: fully sharded weights with per-layer rematerialization,
// a mesh of 3 x 2 (rings of odd length), and the MoE on data=4,expert=2 with Adafactor and
// top-2 routing.
TEST_F(TrainWindowedCliTest, OtherShardingsAndMeshesMatchOneDeviceOnEveryStep) {
  const std::vector<WindowedModel> models = {
      {"dense_fsdp_remat", {"dense_lm", "--set", "sharding=fsdp", "--set", "remat=layer"}},
      {"dense_3x2",
       {"dense_lm", "--mesh", "x=3,y=2", "--set", "batch=6", "--set", "d_model=24", "--set", "heads=6", "--set",
        "d_ff=48", "--set", "vocab=12", "--set", "seq=12"}},
      {"moe_adafactor_top2",
       {"gshard_moe", "--set", "opt_state_sharding=data", "--set", "optimizer=adafactor", "--set", "routing=top2",
        "--mesh", "data=4,expert=2"}},
  };
  for (const WindowedModel& model : models) ExpectTrainsLikeOneDevice(model);
}

}  // namespace
}  // namespace gspmd
