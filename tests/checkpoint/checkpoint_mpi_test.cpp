// `gspmd train --backend mpi --checkpoint-dir`: every rank writes its devices' shards and rank
// 0 commits; k steps then --resume to N equals N straight through bit for bit under mpirun -np
// 8 (dense LM and MoE); a checkpoint written by 8 ranks resumes on the threads backend, and a
// rank killed mid-run (kill -9) leaves the previous checkpoint complete, from which the run
// resumes to the same bits.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
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

// kill -9 of one rank at spread-out moments of a run that checkpoints every step (mid-step,
// mid-write, mid-commit, as the timing falls): each time the job ends within 10 s, every
// complete checkpoint left verifies, and --resume reaches the straight run's bits. 2 moments
// here, 20 with GSPMD_MPI_SOAK=1 or GSPMD_CHECKPOINT_KILLS=N (docs/performance.md records
// the count).
TEST_F(CheckpointMpiTest, RankKilledMidRunResumesToTheSameBits) {
  const std::string hlo = Model("dense_lm", "x=2,y=4");
  const MpiLayout layout{8, 1, ""};
  const int steps = 6;
  Launch straight = Mpi(layout, Train(hlo, steps, "straight", {"-o", Path("out_straight")}));
  ASSERT_EQ(straight.exit_code, 0) << straight.err;
  const char* asked = std::getenv("GSPMD_CHECKPOINT_KILLS");  // a count of one's own
  const int points = asked != nullptr ? std::atoi(asked) : SoakMode() ? 20 : 2;
  int killed = 0, checkpoints_found = 0;
  for (int i = 0; i < points; ++i) {
    const std::string dir = "k" + std::to_string(i);
    std::string command = MpirunPrefix(layout) + " " + Quote(GSPMD_BINARY) + Args(Train(hlo, steps, dir, {"--checkpoint-every", "1"}));
    command = "(" + command + " >" + Quote(Path(dir + ".out")) + " 2>" + Quote(Path(dir + ".err")) + " & echo $! >" +
              Quote(Path(dir + ".pid")) + ")";
    ASSERT_EQ(std::system(command.c_str()), 0);
    // Rank 0 prints "step k/6" just before checkpoint k is written: wait for it (k = 1..5 in
    // turn), then 0-39 ms more, so the kill lands in the write, the commit or the next step.
    const std::string line = "step " + std::to_string(1 + i % (steps - 1)) + "/";
    const auto launched = std::chrono::steady_clock::now();
    while (ReadText(Path(dir + ".out")).find(line) == std::string::npos &&
           std::chrono::steady_clock::now() - launched < std::chrono::seconds(20))
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::this_thread::sleep_for(std::chrono::milliseconds(i * 7 % 40));
    const std::string mpirun = ReadText(Path(dir + ".pid")).substr(0, ReadText(Path(dir + ".pid")).find('\n'));
    const std::string victim = "pgrep -P " + mpirun + " | sed -n 3p";
    const auto start = std::chrono::steady_clock::now();
    if (std::system(("v=$(" + victim + "); [ -n \"$v\" ] && kill -9 $v").c_str()) == 0) ++killed;
    while (std::system(("kill -0 " + mpirun + " 2>/dev/null").c_str()) == 0) {
      ASSERT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << "point " << i << ": the job did not end";
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (fs::exists(Path(dir))) {
      Launch verify = Gspmd({"checkpoint", "verify", Path(dir)});
      EXPECT_TRUE(verify.exit_code == 0 || verify.out.find("no complete checkpoints") != std::string::npos)
          << "point " << i << ":\n" << verify.out;
      if (verify.out.find(" verified") != std::string::npos) ++checkpoints_found;
    }
    Launch resumed = Mpi(layout, Train(hlo, steps, dir, {"--resume", "-o", Path("out" + std::to_string(i))}));
    ASSERT_EQ(resumed.exit_code, 0) << "point " << i << ": " << resumed.err;
    ExpectSameBytes("out_straight", "out" + std::to_string(i));
  }
  std::printf("kill -9 of one rank at %d moments: %d killed a running rank, %d left checkpoints to resume from; "
              "every resume equals the straight run\n", points, killed, checkpoints_found);
}

}  // namespace
}  // namespace gspmd::mpi_test
