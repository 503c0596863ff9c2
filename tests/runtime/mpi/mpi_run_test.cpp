// `gspmd run --backend mpi`: sharded outputs feeding the next training step, and clear errors
// for a missing launcher, a rank x device count that does not fit the program, and a shard
// index naming a missing shard.
#include <algorithm>

#include "io/npy.h"
#include "runtime/mpi/mpi_test_util.h"

namespace gspmd::mpi_test {
namespace {

const fs::path kTrainStep = fs::path(GSPMD_TEST_DATA_DIR) / "corpus" / "gspmd" / "transformer_train_1l";

// The step's inputs are (x, y, 8 parameters); its outputs (loss, 8 updated parameters).
std::vector<std::string> StepInputs(const fs::path& parameters_dir, const std::string& suffix) {
  std::vector<std::string> args = {"-i", (kTrainStep / "in0.npy").string(), "-i", (kTrainStep / "in1.npy").string()};
  for (int p = 0; p < 8; ++p) {
    args.push_back("-i");
    args.push_back(parameters_dir.empty() ? (kTrainStep / ("in" + std::to_string(p + 2) + ".npy")).string()
                                          : (parameters_dir / ("out" + std::to_string(p + 1) + suffix)).string());
  }
  return args;
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

int Count(const std::string& text, const std::string& what) {
  int count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

class MpiRunTest : public MpiTest {};

// Two training steps with sharded files in between (never gathered) equal two steps with
// global files, on both backends.
TEST_F(MpiRunTest, ShardedOutputsFeedTheNextStep) {
  const std::string step = (kTrainStep / "pre.hlo").string();
  // Reference: two steps on threads with global files.
  ASSERT_EQ(Gspmd(Concat({"run", step, "-o", Path("g1")}, StepInputs("", ""))).exit_code, 0);
  ASSERT_EQ(Gspmd(Concat({"run", step, "-o", Path("g2")}, StepInputs(dir_ / "g1", ".npy"))).exit_code, 0);

  for (const MpiLayout& layout : {MpiLayout{8, 1, ""}, MpiLayout{2, 4, ""}}) {
    fs::remove_all(dir_ / "s1");
    fs::remove_all(dir_ / "s2");
    const std::vector<std::string> mpi = {"--backend", "mpi", "--devices-per-rank",
                                          std::to_string(layout.devices_per_rank), "--sharded-output"};
    Launch first = Mpi(layout, Concat(Concat({"run", step, "-o", Path("s1")}, mpi), StepInputs("", "")));
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_NE(first.out.find("out1.json"), std::string::npos) << first.out;
    Launch second = Mpi(layout, Concat(Concat({"run", step, "-o", Path("s2")}, mpi), StepInputs(dir_ / "s1", ".json")));
    ASSERT_EQ(second.exit_code, 0) << second.err;
    ExpectSameOutputs(dir_ / "s1", dir_ / "g1", 1e-6, ".json");
    ExpectSameOutputs(dir_ / "s2", dir_ / "g2", 1e-6, ".json");
  }
  // The threads backend writes and reads the same format.
  ASSERT_EQ(Gspmd(Concat({"run", step, "--sharded-output", "-o", Path("t1")}, StepInputs("", ""))).exit_code, 0);
  ASSERT_EQ(Gspmd(Concat({"run", step, "-o", Path("t2")}, StepInputs(dir_ / "t1", ".json"))).exit_code, 0);
  ExpectSameOutputs(dir_ / "t2", dir_ / "g2", 1e-6);
}

TEST_F(MpiRunTest, BackendMpiWithoutLauncherIsAnError) {
  const Launch launch = Gspmd(Concat({"run", (kTrainStep / "pre.hlo").string(), "--backend", "mpi", "-o", Path("o")},
                                     StepInputs("", "")));
  EXPECT_EQ(launch.exit_code, 1);
  EXPECT_NE(launch.err.find("not started by an MPI launcher"), std::string::npos) << launch.err;
  EXPECT_NE(launch.err.find("mpirun -np R"), std::string::npos) << launch.err;
  EXPECT_FALSE(fs::exists(dir_ / "o"));
}

TEST_F(MpiRunTest, MpiOptionsNeedTheMpiBackend) {
  const Launch launch = Gspmd(Concat({"run", (kTrainStep / "pre.hlo").string(), "--devices-per-rank", "2", "-o",
                                      Path("o")},
                                     StepInputs("", "")));
  EXPECT_EQ(launch.exit_code, 1);
  EXPECT_NE(launch.err.find("--devices-per-rank needs --backend mpi"), std::string::npos) << launch.err;
}

// 3 ranks x 1 device cannot run a program partitioned for 8: one rank reports, all exit 1.
TEST_F(MpiRunTest, RankDeviceCountMismatchIsOneClearError) {
  const std::string partitioned = (kTrainStep / "partitioned.hlo").string();
  const Launch launch = Mpi({3, 1, ""}, Concat({"run", partitioned, "--per-device", "--like", (kTrainStep / "propagated.hlo").string(),
                                                "--backend", "mpi", "-o", Path("o")},
                                               StepInputs("", "")));
  EXPECT_NE(launch.exit_code, 0);
  EXPECT_NE(launch.err.find("3 MPI ranks x 1 device per rank = 3 devices"), std::string::npos) << launch.err;
  EXPECT_NE(launch.err.find("num_partitions=8"), std::string::npos) << launch.err;
  EXPECT_EQ(Count(launch.err, "gspmd: rank"), 1) << launch.err;
  EXPECT_FALSE(fs::exists(dir_ / "o"));

  // A global program whose shardings need 8 devices, on 2 x 2.
  const Launch global = Mpi({2, 2, ""}, Concat({"run", (kTrainStep / "pre.hlo").string(), "--backend", "mpi",
                                                "--devices-per-rank", "2", "-o", Path("o")},
                                               StepInputs("", "")));
  EXPECT_NE(global.exit_code, 0);
  EXPECT_NE(global.err.find("2 MPI ranks x 2 devices per rank = 4 devices"), std::string::npos) << global.err;
  EXPECT_EQ(Count(global.err, "gspmd: rank"), 1) << global.err;
}

TEST_F(MpiRunTest, IndexNamingAMissingShardIsAnError) {
  const std::string step = (kTrainStep / "pre.hlo").string();
  ASSERT_EQ(Gspmd(Concat({"run", step, "--sharded-output", "-o", Path("s1")}, StepInputs("", ""))).exit_code, 0);
  const fs::path missing = dir_ / "s1" / "out3.shard1.npy";
  ASSERT_TRUE(fs::exists(missing));
  fs::remove(missing);
  const std::string index = (dir_ / "s1" / "out3.json").string();
  // Threads backend.
  const Launch threads = Gspmd(Concat({"run", step, "-o", Path("s2")}, StepInputs(dir_ / "s1", ".json")));
  EXPECT_EQ(threads.exit_code, 1);
  EXPECT_NE(threads.err.find(index + ": error: shard index: shard 1 names the file 'out3.shard1.npy'"),
            std::string::npos)
      << threads.err;
  // MPI backend: one rank reports.
  const Launch mpi = Mpi({8, 1, ""}, Concat({"run", step, "--backend", "mpi", "-o", Path("s2")}, StepInputs(dir_ / "s1", ".json")));
  EXPECT_NE(mpi.exit_code, 0);
  EXPECT_NE(mpi.err.find("gspmd: rank 0: " + index + ": error: shard index: shard 1"), std::string::npos) << mpi.err;
  EXPECT_EQ(Count(mpi.err, "gspmd: rank"), 1) << mpi.err;
  EXPECT_FALSE(fs::exists(dir_ / "s2"));
}

}  // namespace
}  // namespace gspmd::mpi_test
