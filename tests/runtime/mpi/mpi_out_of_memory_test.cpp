// Memory running out under `mpirun ... --backend mpi`: a rank whose device cannot allocate a
// value (under an address-space limit, as `prlimit --as` or a cluster's `ulimit -v` sets it)
// reports `gspmd: rank R: ... error: ... out of memory: cannot allocate N bytes ...` and the
// whole job ends with exit code 1 and no output, never a signal; so does rank 0 when a window
// of the output it assembles does not fit. (MPI tests run in the Release build only, so the
// address-space limit is safe here: no AddressSanitizer shadow to reserve.)
#include <regex>

#include "io/npy.h"
#include "runtime/mpi/mpi_test_util.h"

namespace gspmd::mpi_test {
namespace {

class MpiOutOfMemoryTest : public MpiTest {
 protected:
  void SetUp() override {
    MpiTest::SetUp();
    Literal two(Shape(ElementType::kF32, {}));
    two.data<float>()[0] = 2.0f;
    WriteNpy(Path("two.npy"), two);
  }

  // A broadcast of a scalar to f32[8, columns], one row per device.
  std::string BroadcastProgram(int64_t columns) const {
    const std::string path = Path("broadcast.hlo");
    std::ofstream(path) << "HloModule broadcast, num_partitions=8\n\nENTRY main {\n  p = f32[] parameter(0)\n"
                           "  ROOT b = f32[8," << columns << "] broadcast(p), dimensions={}, "
                           "sharding={devices=[8,1]<=[8]}\n}\n";
    return path;
  }

  // mpirun (2 ranks x 4 devices) of `gspmd ARGS`, each rank under an address-space limit of
  // `address_space` bytes (0: none; mpirun itself is not limited) and with `variable`
  // ("NAME=VALUE", passed on with -x) in its environment.
  Launch MpiLimited(uint64_t address_space, const std::vector<std::string>& args, const std::string& variable = "") const {
    std::string command = MpirunPrefix({2, 4, ""});
    if (!variable.empty()) command = "env " + Quote(variable) + " " + command + " -x " + variable.substr(0, variable.find('='));
    if (address_space > 0) command += " prlimit --as=" + std::to_string(address_space);
    return Run(command + " " + Quote(GSPMD_BINARY) + Args(args));
  }

  std::vector<std::string> RunArgs(const std::string& program) const {
    return {"run", program, "--backend", "mpi", "--devices-per-rank", "4", "-i", Path("two.npy"), "-o", Path("out")};
  }
};

void ExpectJobEndsWithOutOfMemory(const Launch& launch, const std::string& line_pattern) {
  EXPECT_EQ(launch.exit_code, 1) << launch.err;
  EXPECT_LT(launch.seconds, 30) << launch.err;
  EXPECT_TRUE(std::regex_search(launch.err, std::regex(line_pattern))) << launch.err;
  EXPECT_EQ(launch.err.find("Signal: Aborted"), std::string::npos) << launch.err;
  EXPECT_EQ(launch.err.find("exited on signal"), std::string::npos) << launch.err;
}

// 2 ranks x 4 devices, each device asking for a 2 GiB row under a 1 GiB limit per rank.
TEST_F(MpiOutOfMemoryTest, DeviceValueUnderAddressLimit) {
  const Launch launch = MpiLimited(uint64_t{1} << 30, RunArgs(BroadcastProgram(int64_t{1} << 29)));
  ExpectJobEndsWithOutOfMemory(
      launch, "gspmd: rank [01]: device [0-7]: [^\n]*broadcast\\.hlo:5:8: error: %b: out of memory: cannot allocate "
              "2\\.00 GiB \\(2147483648 bytes\\) for f32\\[1,536870912\\]");
  EXPECT_TRUE(FilesIn(Path("out")).empty());
}

// The devices' rows fit; the window of the global file rank 0 assembles does not.
TEST_F(MpiOutOfMemoryTest, OutputWindowOnRankZero) {
  const Launch launch = MpiLimited(0, RunArgs(BroadcastProgram(1024)), "GSPMD_TEST_MAX_ALLOCATION=8192");
  ExpectJobEndsWithOutOfMemory(launch, "gspmd: rank 0: error: out of memory: cannot allocate 32\\.0 KiB \\(32768 "
                                       "bytes\\) for a window of [^\n]*out0\\.npy");
  EXPECT_TRUE(FilesIn(Path("out")).empty());
}

// `gspmd train --backend mpi` of a step too big for the ranks' memory.
TEST_F(MpiOutOfMemoryTest, TrainUnderAddressLimit) {
  // A 1 GiB weight matrix: each rank fails making the first step's inputs, before any device runs
  // (the ranks agree on that and exit with 1).
  const Launch model = Gspmd({"model", "dense_lm", "--set", "layers=1", "--set", "d_model=2048", "--set",
                              "d_ff=131072", "-o", Path("step.hlo")});
  ASSERT_EQ(model.exit_code, 0) << model.err;
  const Launch launch =
      MpiLimited(uint64_t{1} << 30,
              {"train", Path("step.hlo"), "--backend", "mpi", "--devices-per-rank", "4", "--steps", "2", "--progress",
               "lines", "-o", Path("saved")});
  ExpectJobEndsWithOutOfMemory(launch, "gspmd: rank [01]: [^\n]*error: [^\n]*out of memory: cannot allocate [^\n]* "
                                       "\\([0-9]+ bytes\\)");
  EXPECT_TRUE(FilesIn(Path("saved")).empty());
}

}  // namespace
}  // namespace gspmd::mpi_test
