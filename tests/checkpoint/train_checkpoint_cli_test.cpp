// `gspmd train --checkpoint-dir` and `gspmd checkpoint ls|verify`: k steps, stopped, then
// resumed to N equal N steps straight through, bit for bit (parameters, optimizer state and
// every step's losses) for the dense LM and the MoE; a corrupt checkpoint is named and never
// loaded (--resume-fallback takes the previous one and says so); a checkpoint written on 8
// devices resumes on 4 and on 1; another program's checkpoint, an unwritable directory and a
// full disk get clear errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/literal_compare.h"
#include "cli/cli_test_util.h"
#include "io/npy.h"

namespace gspmd {
namespace {

using namespace cli_test;  // NOLINT: test helpers

class CheckpointCliTest : public CliTest {
 protected:
  std::string Model(const std::string& name, const std::string& mesh, const std::string& set = "layers=2") {
    const std::string hlo = Path(name + "_" + set + "_" + mesh + ".hlo");
    if (fs::exists(hlo)) return hlo;
    CommandResult r = Gspmd({"model", name, "--set", set, "--mesh", mesh, "-o", hlo});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return hlo;
  }
  CommandResult Train(const std::string& hlo, int steps, const std::string& dir, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"train", hlo, "--steps", std::to_string(steps), "--checkpoint-dir", Path(dir),
                                     "--progress", "lines"};
    args.insert(args.end(), more.begin(), more.end());
    return Gspmd(args);
  }
  // The arrays `-o` wrote in `a` and `b` are the same bytes.
  void ExpectSameBytes(const std::string& a, const std::string& b) {
    int files = 0;
    for (const fs::directory_entry& entry : fs::directory_iterator(Path(a))) {
      ++files;
      EXPECT_EQ(ReadText(entry.path()), ReadText(Path(b) / entry.path().filename())) << entry.path().filename();
    }
    EXPECT_GT(files, 10);
  }
  void ExpectClose(const std::string& a, const std::string& b, double rtol) {
    const nlohmann::json outputs = nlohmann::json::parse(ReadText(Path(a) + "/index.json"))["outputs"];
    for (const nlohmann::json& output : outputs) {
      const std::string file = output["file"];
      const LiteralComparison c = CompareLiterals(ReadNpy(Path(a) + "/" + file), ReadNpy(Path(b) + "/" + file), rtol, 1e-6);
      EXPECT_TRUE(c.matches) << file << ": " << c.message;
    }
  }
  nlohmann::json Meta(const std::string& checkpoint) {
    return nlohmann::json::parse(ReadText(Path(checkpoint) + "/checkpoint.json"));
  }
  // Straight through N steps vs k steps then --resume to N, for each k.
  void ExpectExactResume(const std::string& hlo, int steps, const std::vector<int>& ks) {
    CommandResult straight = Train(hlo, steps, "straight", {"-o", Path("out_straight")});
    ASSERT_EQ(straight.exit_code, 0) << straight.err;
    const std::string last = "/step-" + std::to_string(steps);
    for (int k : ks) {
      const std::string dir = "ck" + std::to_string(k);
      ASSERT_EQ(Train(hlo, k, dir).exit_code, 0);
      CommandResult resumed = Train(hlo, steps, dir, {"--resume", "-o", Path("out" + std::to_string(k))});
      ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
      EXPECT_NE(resumed.out.find("resumed from " + Path(dir) + "/step-" + std::to_string(k) + ": " +
                                 std::to_string(k) + " of " + std::to_string(steps) + " steps done"),
                std::string::npos)
          << resumed.out;
      EXPECT_EQ(resumed.out.find("step 1/"), std::string::npos) << resumed.out;
      ExpectSameBytes("out_straight", "out" + std::to_string(k));
      EXPECT_EQ(Meta("straight" + last)["metrics"], Meta(dir + last)["metrics"]) << "k = " << k;  // every step's loss
      EXPECT_EQ(Meta("straight" + last)["files"], Meta(dir + last)["files"]) << "k = " << k;      // every chunk's checksum
    }
  }
};

TEST_F(CheckpointCliTest, DenseLmResumedEqualsStraightThrough) {
  ExpectExactResume(Model("dense_lm", "x=2,y=4"), 4, {1, 2, 3});
}

TEST_F(CheckpointCliTest, MoeResumedEqualsStraightThrough) {
  ExpectExactResume(Model("gshard_moe", "data=2,expert=4"), 3, {1, 2});
}

TEST_F(CheckpointCliTest, LsAndVerifyListStepSizeAndLayout) {
  const std::string hlo = Model("dense_lm", "x=2,y=4");
  ASSERT_EQ(Train(hlo, 3, "c", {"--checkpoint-every", "1", "--keep", "2"}).exit_code, 0);
  CommandResult ls = Gspmd({"checkpoint", "ls", Path("c")});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(ls.out.find(Path("c") + "/step-3  step 3  222 KiB  49 arrays  8 devices (mesh x=2,y=4)  dense_lm layers=2"),
            0u)
      << ls.out;
  EXPECT_NE(ls.out.find("/step-2  step 2"), std::string::npos);
  EXPECT_EQ(ls.out.find("/step-1 "), std::string::npos) << "--keep 2";
  CommandResult verify = Gspmd({"checkpoint", "verify", Path("c")});
  EXPECT_EQ(verify.exit_code, 0) << verify.err;
  EXPECT_NE(verify.out.find("2 of 2 checkpoints verified"), std::string::npos) << verify.out;
}

TEST_F(CheckpointCliTest, CorruptCheckpointIsNamedAndNeverLoaded) {
  const std::string hlo = Model("dense_lm", "x=2,y=4");
  ASSERT_EQ(Train(hlo, 4, "straight", {"-o", Path("out_straight")}).exit_code, 0);
  ASSERT_EQ(Train(hlo, 3, "c", {"--checkpoint-every", "1"}).exit_code, 0);
  const std::string chunk = Path("c") + "/step-3/l0.w1/0.0";
  {
    std::fstream f(chunk, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(17);
    f.put('\x55');
  }
  CommandResult verify = Gspmd({"checkpoint", "verify", Path("c")});
  EXPECT_EQ(verify.exit_code, 1);
  EXPECT_NE(verify.out.find(Path("c") + "/step-3  step 3"), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find("CORRUPT: " + chunk + ": checksum "), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find("2 of 3 checkpoints verified"), std::string::npos) << verify.out;

  CommandResult refused = Train(hlo, 4, "c", {"--resume"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find(Path("c") + "/step-3: error: checkpoint step-3 is corrupt: " + chunk + ": checksum"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("nothing was loaded"), std::string::npos) << refused.err;

  CommandResult fallback = Train(hlo, 4, "c", {"--resume", "--resume-fallback", "-o", Path("out_fallback")});
  ASSERT_EQ(fallback.exit_code, 0) << fallback.err;
  EXPECT_NE(fallback.err.find("checkpoint " + Path("c") + "/step-3 is corrupt: " + chunk), std::string::npos)
      << fallback.err;
  EXPECT_NE(fallback.out.find("resumed from " + Path("c") + "/step-2: 2 of 4 steps done"), std::string::npos)
      << fallback.out;
  ExpectSameBytes("out_straight", "out_fallback");

  // A truncated chunk and a missing metadata file, named with their checkpoint.
  fs::remove_all(Path("c") + "/step-4");  // the fallback run's
  const std::string truncated = Path("c") + "/step-2/adam_v.l1.wo/0.0.1";
  fs::resize_file(truncated, 10);
  fs::remove(Path("c") + "/step-1/checkpoint.json");
  verify = Gspmd({"checkpoint", "verify", Path("c")});
  EXPECT_EQ(verify.exit_code, 1);
  EXPECT_NE(verify.out.find(Path("c") + "/step-2  step 2"), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find("CORRUPT: " + truncated + ": 10 bytes, expected"), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find(Path("c") + "/step-1  unreadable: " + Path("c") +
                            "/step-1/checkpoint.json: missing: checkpoint step-1 has no metadata"),
            std::string::npos)
      << verify.out;
  refused = Train(hlo, 4, "c", {"--resume", "--resume-fallback"});
  EXPECT_EQ(refused.exit_code, 0) << refused.err;  // nothing verifies: starts afresh, saying why
  EXPECT_NE(refused.err.find(truncated + ": 10 bytes"), std::string::npos) << refused.err;
  EXPECT_NE(refused.out.find("starting at step 1"), std::string::npos) << refused.out;
}

// Written on 8 devices (2x4), resumed on 4 (2x2) and on 1: each device reads its regions of the
// stored chunks. A run on another layout reduces in another order (the 8- and 4-device runs
// already differ by ~2e-5 after one step), so the result is compared with the uninterrupted run
// on that layout within rtol 1e-4; that the load itself is exact is checkpoint_store_test's.
TEST_F(CheckpointCliTest, WrittenOnEightDevicesResumesOnFourAndOne) {
  ASSERT_EQ(Train(Model("dense_lm", "x=2,y=4"), 2, "c8").exit_code, 0);
  for (const std::string mesh : {"x=2,y=2", "x=1,y=1"}) {
    const std::string hlo = Model("dense_lm", mesh);
    const std::string tag = mesh == "x=2,y=2" ? "4" : "1";
    fs::copy(Path("c8"), Path("c" + tag), fs::copy_options::recursive);
    ASSERT_EQ(Train(hlo, 4, "u" + tag, {"-o", Path("uninterrupted" + tag)}).exit_code, 0);
    CommandResult r = Train(hlo, 4, "c" + tag, {"--resume", "-o", Path("resumed" + tag)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("2 of 4 steps done (written on 8 devices, mesh x=2,y=4)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" on " + tag + " device"), std::string::npos) << r.out;
    ExpectClose("uninterrupted" + tag, "resumed" + tag, 1e-4);
    EXPECT_EQ(Meta("c" + tag + "/step-4")["num_devices"], std::stoi(tag));
  }
}

TEST_F(CheckpointCliTest, AnotherProgramsCheckpointIsRefused) {
  ASSERT_EQ(Train(Model("dense_lm", "x=2,y=4"), 1, "c").exit_code, 0);
  CommandResult r = Train(Model("dense_lm", "x=2,y=4", "layers=3"), 2, "c", {"--resume"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(Path("c") + "/step-1/checkpoint.json: error: cannot resume from checkpoint step-1: it was "
                                   "written by another program (dense_lm layers=2 "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("is dense_lm layers=3 "), std::string::npos) << r.err;
  r = Train(Model("dense_lm", "x=2,y=4"), 2, "c", {"--resume", "--seed", "5"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("it was written with --seed 0 but this run has --seed 5"), std::string::npos) << r.err;
}

TEST_F(CheckpointCliTest, UnwritableDirectoryAndFullDisk) {
  const std::string hlo = Model("dense_lm", "x=2,y=4");
  const std::string file = WriteFile("plain.txt", "not a directory\n");
  CommandResult r = Gspmd({"train", hlo, "--steps", "1", "--checkpoint-dir", file + "/ck"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(file + "/ck: error: cannot create the directory ("), std::string::npos) << r.err;

  // A file size limit of 16 KiB (ulimit -f, its signal ignored so write fails with EFBIG)
  // stands in for a full disk: the largest chunk does not fit.
  const std::string command = "ulimit -f 16; trap '' XFSZ; exec " + Quote(GSPMD_BINARY) + " train " + Quote(hlo) +
                              " --steps 1 --progress quiet --checkpoint-dir " + Quote(Path("full")) + " 2>" +
                              Quote(Path("full.err"));
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  const std::string err = ReadText(Path("full.err"));
  EXPECT_NE(err.find(Path("full") + "/.tmp-step-1/"), std::string::npos) << err;
  EXPECT_NE(err.find("error: cannot write the file ("), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(Path("full") + "/step-1"));
  CommandResult ls = Gspmd({"checkpoint", "ls", Path("full")});
  EXPECT_NE(ls.out.find(".tmp-step-1  incomplete"), std::string::npos) << ls.out;
}

// --plot draws every step of the run, those before the resume included.
TEST_F(CheckpointCliTest, PlotOfAResumedRunCoversEveryStep) {
  const std::string hlo = Model("dense_lm", "x=2,y=4");
  ASSERT_EQ(Train(hlo, 2, "c").exit_code, 0);
  CommandResult r = Train(hlo, 3, "c", {"--resume", "--plot", Path("loss.svg")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + Path("loss.svg") + " (loss of 3 steps)"), std::string::npos) << r.out;
  EXPECT_NE(ReadText(Path("loss.svg")).find("dense_lm: loss per step on 8 devices"), std::string::npos);
}

// --json: the steps this run made, and where it resumed from; the other lines go to stderr.
TEST_F(CheckpointCliTest, JsonOfAResumedRunSaysWhereItBegan) {
  const std::string hlo = Model("dense_lm", "x=2,y=4");
  ASSERT_EQ(Train(hlo, 2, "c").exit_code, 0);
  CommandResult r = Train(hlo, 4, "c", {"--resume", "--json", "-o", Path("out")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json record = nlohmann::json::parse(r.out);
  EXPECT_EQ(record["steps"], 2);
  EXPECT_EQ(record["per_step"][0]["step"], 3);
  EXPECT_EQ(record["checkpoint"]["resumed_from"], Path("c") + "/step-2");
  EXPECT_EQ(record["checkpoint"]["resumed_step"], 2);
  EXPECT_EQ(record["checkpoint"]["latest"], Path("c") + "/step-4");
  EXPECT_EQ(record["saved"]["files"], 51);
  EXPECT_NE(r.err.find("resumed from " + Path("c") + "/step-2"), std::string::npos) << r.err;
}

TEST_F(CheckpointCliTest, FlagsNeedACheckpointDir) {
  CommandResult r = Gspmd({"train", Model("dense_lm", "x=2,y=4"), "--resume"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--checkpoint-every, --keep and --resume need --checkpoint-dir DIR"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gspmd
