// `gspmd train --backend mpi --checkpoint-dir`: every rank writes its devices' shards and rank
// 0 commits; k steps then --resume to N equals N straight through bit for bit under mpirun -np
// 8 (dense LM and MoE); a checkpoint written by 8 ranks resumes on the threads backend, and a
// rank killed mid-run (kill -9) leaves the previous checkpoint complete, from which the run
// resumes to the same bits.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/mpi/mpi_test_util.h"

namespace gspmd::mpi_test {
namespace {

class CheckpointMpiTest : public MpiTest {
 protected:
  std::string Model(const std::string& name, const std::string& mesh) {
    const std::string hlo = Path(name + ".hlo");
    Launch r = Gspmd({"model", name, "--set", "layers=2", "--mesh", mesh, "-o", hlo});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return hlo;
  }
  std::vector<std::string> Train(const std::string& hlo, int steps, const std::string& dir,
                                 std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"train", hlo, "--backend", "mpi", "--steps", std::to_string(steps),
                                     "--checkpoint-dir", Path(dir), "--progress", "lines"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }
  void ExpectSameBytes(const std::string& a, const std::string& b) {
    int files = 0;
    for (const fs::directory_entry& entry : fs::directory_iterator(Path(a))) {
      ++files;
      EXPECT_EQ(ReadText(entry.path()), ReadText(Path(b) + "/" + entry.path().filename().string()))
          << a << " vs " << b << ": " << entry.path().filename();
    }
    EXPECT_GT(files, 10);
  }
  nlohmann::json Meta(const std::string& checkpoint) {
    return nlohmann::json::parse(ReadText(Path(checkpoint) + "/checkpoint.json"));
  }
  void ExpectExactResume(const std::string& hlo, int steps, const std::vector<int>& ks) {
    const MpiLayout layout{8, 1, ""};
    Launch straight = Mpi(layout, Train(hlo, steps, "straight", {"-o", Path("out_straight")}));
    ASSERT_EQ(straight.exit_code, 0) << straight.err;
    const std::string last = "/step-" + std::to_string(steps);
    for (int k : ks) {
      const std::string dir = "ck" + std::to_string(k);
      Launch first = Mpi(layout, Train(hlo, k, dir));
      ASSERT_EQ(first.exit_code, 0) << first.err;
      Launch resumed = Mpi(layout, Train(hlo, steps, dir, {"--resume", "-o", Path("out" + std::to_string(k))}));
      ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
      EXPECT_NE(resumed.out.find("resumed from " + Path(dir) + "/step-" + std::to_string(k)), std::string::npos)
          << resumed.out;
      EXPECT_NE(resumed.out.find("8 MPI ranks x 1 device per rank, sharded carry, checkpoints in"), std::string::npos)
          << resumed.out;
      ExpectSameBytes("out_straight", "out" + std::to_string(k));
      EXPECT_EQ(Meta("straight" + last)["metrics"], Meta(dir + last)["metrics"]) << "k = " << k;
      EXPECT_EQ(Meta("straight" + last)["files"], Meta(dir + last)["files"]) << "k = " << k;
    }
  }
};

TEST_F(CheckpointMpiTest, DenseLmResumedEqualsStraightThroughOnEightRanks) {
  ExpectExactResume(Model("dense_lm", "x=2,y=4"), 4, {1, 3});
}

TEST_F(CheckpointMpiTest, MoeResumedEqualsStraightThroughOnEightRanks) {
  ExpectExactResume(Model("gshard_moe", "data=2,expert=4"), 3, {2});
}

// A checkpoint 4 ranks x 2 devices wrote verifies, and the threads backend resumes from it.
TEST_F(CheckpointMpiTest, RanksCheckpointVerifiesAndResumesOnThreads) {
  const std::string hlo = Model("dense_lm", "x=2,y=4");
  Launch ranks = Mpi({4, 2, ""}, Train(hlo, 2, "ranks", {"--devices-per-rank", "2"}));
  ASSERT_EQ(ranks.exit_code, 0) << ranks.err;
  Launch verify = Gspmd({"checkpoint", "verify", Path("ranks")});
  EXPECT_EQ(verify.exit_code, 0) << verify.out;
  Launch resumed = Gspmd({"train", hlo, "--steps", "3", "--checkpoint-dir", Path("ranks"), "--resume"});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("resumed from " + Path("ranks") + "/step-2"), std::string::npos) << resumed.out;
  const nlohmann::json files = Meta("ranks/step-2")["files"];
  EXPECT_EQ(files.size(), Meta("ranks/step-3")["files"].size());
}

}  // namespace
}  // namespace gspmd::mpi_test
