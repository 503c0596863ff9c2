// `gspmd show`: the exact pictures of fixed shardings (2-D tiled, partially replicated,
// uneven, a rank-3 dims table), colour only when asked for, and errors for bad input.
#include "cli/cli_test_util.h"

namespace gspmd::cli_test {
namespace {

constexpr const char* kProgram = R"(HloModule show, num_partitions=8

ENTRY main {
  a = f32[8,16] parameter(0), sharding={devices=[2,4]<=[8]}
  b = f32[8,16] parameter(1), sharding={devices=[2,2,2]<=[8] last_tile_dim_replicate}
  c = f32[10] parameter(2), sharding={devices=[4,2]<=[8] last_tile_dim_replicate}
  d = f32[4,6,8] parameter(3), sharding={devices=[2,1,4]<=[8]}
  e = f32[10,6] parameter(4), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
  ROOT t = (f32[8,16], f32[8,16]) tuple(a, b)
}
)";

class ShowTest : public CliTest {
 protected:
  std::string Show(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"show", WriteFile("program.hlo", kProgram)};
    args.insert(args.end(), extra.begin(), extra.end());
    CommandResult result = Gspmd(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.out;
  }
};

TEST_F(ShowTest, TwoDimensionalTiled) {
  EXPECT_EQ(Show({"--value", "a"}),
            "mesh: 8 devices\n"
            "\n"
            "%a f32[8,16] {devices=[2,4]<=[8]}\n"
            "          [0:4)   [4:8)   [8:12)   [12:16)\n"
            "        +-------+-------+--------+---------+\n"
            "  [0:4) |   0   |   1   |   2    |    3    |\n"
            "        +-------+-------+--------+---------+\n"
            "  [4:8) |   4   |   5   |   6    |    7    |\n"
            "        +-------+-------+--------+---------+\n"
            "  per device: f32[4,4] (64 B)\n");
}

TEST_F(ShowTest, PartiallyReplicated) {
  EXPECT_EQ(Show({"--value", "%b"}),
            "mesh: 8 devices\n"
            "\n"
            "%b f32[8,16] {devices=[2,2,2]<=[8] last_tile_dim_replicate}\n"
            "          [0:8)   [8:16)\n"
            "        +-------+--------+\n"
            "  [0:4) |  0,1  |  2,3   |\n"
            "        +-------+--------+\n"
            "  [4:8) |  4,5  |  6,7   |\n"
            "        +-------+--------+\n"
            "  per device: f32[4,8] (128 B); partially replicated: each tile on 2 devices\n");
}

TEST_F(ShowTest, UnevenLastTiles) {
  EXPECT_EQ(Show({"--value", "c", "--value", "e"}),
            "mesh: 8 devices\n"
            "\n"
            "%c f32[10] {devices=[4,2]<=[8] last_tile_dim_replicate}\n"
            "    [0:3)   [3:6)   [6:9)   [9:10) +2 pad\n"
            "  +-------+-------+-------+---------------+\n"
            "  |  0,1  |  2,3  |  4,5  |      6,7      |\n"
            "  +-------+-------+-------+---------------+\n"
            "  per device: f32[3] (12 B); partially replicated: each tile on 2 devices; padding 20.0% of the "
            "value\n"
            "\n"
            "%e f32[10,6] {devices=[4,1,2]<=[8] last_tile_dim_replicate}\n"
            "                  [0:6)\n"
            "                +-------+\n"
            "  [0:3)         |  0,1  |\n"
            "                +-------+\n"
            "  [3:6)         |  2,3  |\n"
            "                +-------+\n"
            "  [6:9)         |  4,5  |\n"
            "                +-------+\n"
            "  [9:10) +2 pad |  6,7  |\n"
            "                +-------+\n"
            "  per device: f32[3,6] (72 B); partially replicated: each tile on 2 devices; padding 20.0% of the "
            "value\n");
}

TEST_F(ShowTest, HigherRankIsADimsTable) {
  EXPECT_EQ(Show({"--value", "d"}),
            "mesh: 8 devices\n"
            "\n"
            "%d f32[4,6,8] {devices=[2,1,4]<=[8]}\n"
            "  dim size tiles mesh axes shard padding\n"
            "  0   4    2     2@stride4 2     0\n"
            "  1   6    1     -         6     0\n"
            "  2   8    4     4@stride1 2     0\n"
            "  per device: f32[2,6,2] (96 B)\n");
}

TEST_F(ShowTest, DefaultsToParametersAndResult) {
  const std::string out = Show({});
  for (const char* heading : {"parameter 0: %a", "parameter 1: %b", "parameter 2: %c", "parameter 3: %d",
                              "parameter 4: %e", "result: %t", "  leaf 1: f32[8,16] {replicated}"})
    EXPECT_NE(out.find(heading), std::string::npos) << heading << "\n" << out;
}

TEST_F(ShowTest, ColourOnlyWhenAskedOrOnATerminal) {
  // stdout is a file here: auto means no colour, as NO_COLOR and --color never do.
  const std::string plain = Show({"--value", "b"});
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);
  EXPECT_EQ(Show({"--value", "b", "--color", "never"}), plain);
  const std::string coloured = Show({"--value", "b", "--color", "always"});
  EXPECT_NE(coloured.find("\x1b[30;46m  0,1  \x1b[0m"), std::string::npos) << coloured;
  EXPECT_NE(coloured.find("\x1b[30;43m  2,3   \x1b[0m"), std::string::npos) << coloured;
}

TEST_F(ShowTest, PerDeviceProgramShowsGlobalLayout) {
  CommandResult result = Gspmd({"show", (kCorpus / "megatron_mlp" / "partitioned.hlo").string(), "--value", "param.1"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("%param.1 f32[32,128] {devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}\n"
                            "  (per-device program: global shape = shard shape x tiles)\n"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("|  0,4   |   1,5   |   2,6   |   3,7    |"), std::string::npos) << result.out;
}

TEST_F(ShowTest, BadInput) {
  const std::string path = WriteFile("program.hlo", kProgram);
  CommandResult unknown = Gspmd({"show", path, "--value", "nope"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_EQ(unknown.out, "");
  EXPECT_EQ(unknown.err, path + ": error: --value: no instruction named %nope (entry parameters: %a, %b, %c, %d, %e)\n");
  CommandResult unwritable = Gspmd({"show", path, "-o", "/nonexistent-dir/out.txt"});
  EXPECT_EQ(unwritable.exit_code, 1);
  EXPECT_NE(unwritable.err.find("/nonexistent-dir/out.txt"), std::string::npos) << unwritable.err;
  CommandResult colour = Gspmd({"show", path, "--color", "sometimes"});
  EXPECT_EQ(colour.exit_code, 1);
  EXPECT_NE(colour.err.find("--color 'sometimes' is not one of auto, always, never"), std::string::npos) << colour.err;
}

}  // namespace
}  // namespace gspmd::cli_test
