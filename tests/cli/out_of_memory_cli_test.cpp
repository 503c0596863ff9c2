// Memory running out is a located user error, never a signal: `gspmd run`, `eval` and `train` of
// programs too big for an address-space limit (RLIMIT_AS, as `prlimit --as` or `ulimit -v` set
// it) exit with 1 and an `error:` line giving the bytes asked for, and leave no output behind.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"

// AddressSanitizer reserves terabytes of address space for its shadow memory, so a sanitized
// gspmd cannot even start under a small RLIMIT_AS: the tests that set one skip themselves
// there. The tests with an injected failure (GSPMD_TEST_MAX_ALLOCATION) run in every build and
// take the same path from the failed allocation to the exit code.

namespace gspmd::cli_test {
namespace {

// The address-space limit of the limited runs: far below what the programs ask for, well above
// what gspmd needs to start (its libraries, 8 device threads' stacks; about 0.3 GB).
constexpr uint64_t kAddressSpaceLimit = uint64_t{1} << 30;

struct LimitedResult {
  int exit_code = -1;   // -1 when killed by a signal
  int signal = 0;       // the signal that ended it, 0 when it exited
  std::string out, err;
};

// Runs `gspmd ARGS...` in a child with RLIMIT_AS = address_space (0: unlimited) and `env`
// ("NAME=VALUE") added to the environment.
LimitedResult RunGspmd(const fs::path& dir, const std::vector<std::string>& args, uint64_t address_space,
                       const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv_text = {GSPMD_BINARY};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_text) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_text = env;
  for (char** entry = environ; *entry != nullptr; ++entry) env_text.emplace_back(*entry);
  std::vector<char*> envp;
  for (std::string& entry : env_text) envp.push_back(entry.data());
  envp.push_back(nullptr);
  const std::string out_path = (dir / "stdout.txt").string(), err_path = (dir / "stderr.txt").string();

  // Everything the child needs is built above: after fork it only makes system calls.
  const pid_t child = fork();
  if (child == 0) {
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(126);
    if (address_space > 0) {
      const struct rlimit limit = {address_space, address_space};
      if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(126);
    }
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  LimitedResult result;
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child) return result;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = ReadText(out_path);
  result.err = ReadText(err_path);
  return result;
}

// A clean failure: exit code 1 (no signal), and an error line that says memory ran out and
// gives `bytes` (a regex for the byte count, e.g. "1073741824" or "[0-9]+").
void ExpectOutOfMemoryError(const LimitedResult& result, const std::string& bytes) {
  EXPECT_EQ(result.signal, 0) << "killed by signal " << result.signal << "\n" << result.err;
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const std::regex line("(^|\n)[^\n]*error: [^\n]*out of memory: cannot allocate [^\n]*\\(" + bytes +
                        " bytes\\)[^\n]*(\n|$)");
  EXPECT_TRUE(std::regex_search(result.err, line)) << result.err;
  EXPECT_EQ(result.err.find("internal error"), std::string::npos) << result.err;
}

class OutOfMemoryCliTest : public CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    const std::string scalar = Path("two.npy");
    Literal two(Shape(ElementType::kF32, {}));
    two.data<float>()[0] = 2.0f;
    WriteNpy(scalar, two);
  }

  // A broadcast of a scalar to f32[8, columns], split in 8 rows: a device's row is columns * 4
  // bytes, the whole array 8 times that.
  std::string BroadcastProgram(int64_t columns) const {
    const std::string dims = "8," + std::to_string(columns);
    return WriteFile("broadcast.hlo", "HloModule broadcast\n\nENTRY main {\n  p = f32[] parameter(0)\n"
                                      "  ROOT b = f32[" + dims + "] broadcast(p), dimensions={}, "
                                      "sharding={devices=[8,1]<=[8]}\n}\n");
  }

  void ExpectNoOutput(const std::string& out_dir) const {
    if (!fs::exists(out_dir)) return;
    for (const auto& entry : fs::directory_iterator(out_dir)) ADD_FAILURE() << "left behind: " << entry.path();
  }
};

// ---- under an address-space limit (not under AddressSanitizer) ----

// 8 devices each asking for a 2 GiB row of a 16 GiB array under a 1 GiB limit: the device that
// fails first is reported with its instruction and the bytes; the others are not waited for.
TEST_F(OutOfMemoryCliTest, RunOnThreadsUnderAddressLimit) {
#ifdef GSPMD_TEST_SANITIZED
  GTEST_SKIP() << "AddressSanitizer cannot run under a small RLIMIT_AS";
#endif
  const std::string program = BroadcastProgram(int64_t{1} << 29);
  const LimitedResult result =
      RunGspmd(dir_, {"run", program, "--devices", "8", "-i", Path("two.npy"), "-o", Path("out")}, kAddressSpaceLimit);
  ExpectOutOfMemoryError(result, "2147483648");
  EXPECT_NE(result.err.find("device "), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("%b: out of memory: cannot allocate 2.00 GiB (2147483648 bytes) for f32[1,536870912]"),
            std::string::npos)
      << result.err;
  ExpectNoOutput(Path("out"));
}

TEST_F(OutOfMemoryCliTest, EvalUnderAddressLimit) {
#ifdef GSPMD_TEST_SANITIZED
  GTEST_SKIP() << "AddressSanitizer cannot run under a small RLIMIT_AS";
#endif
  const std::string program = BroadcastProgram(int64_t{1} << 27);  // 4 GiB
  const LimitedResult result =
      RunGspmd(dir_, {"eval", program, "-i", Path("two.npy"), "-o", Path("out")}, kAddressSpaceLimit);
  ExpectOutOfMemoryError(result, "4294967296");
  EXPECT_NE(result.err.find(program + ":5:8: error: %b: out of memory: cannot allocate 4.00 GiB (4294967296 bytes) "
                                      "for f32[8,134217728]"),
            std::string::npos)
      << result.err;
  ExpectNoOutput(Path("out"));
}

// The issue's second example: select-and-scatter over 10^8 elements on 8 devices. Whichever
// buffer runs out first (a value, or the kernel's own list of selected positions) is named
// with its bytes.
TEST_F(OutOfMemoryCliTest, SelectAndScatterOverHundredMillionElements) {
#ifdef GSPMD_TEST_SANITIZED
  GTEST_SKIP() << "AddressSanitizer cannot run under a small RLIMIT_AS";
#endif
  const std::string program = WriteFile("select_and_scatter.hlo", R"(HloModule select_and_scatter

ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

ENTRY main {
  p = f32[] parameter(0)
  operand = f32[8,12500000] iota(), iota_dimension=1, sharding={devices=[8,1]<=[8]}
  source = f32[8,6250000] broadcast(p), dimensions={}, sharding={devices=[8,1]<=[8]}
  zero = f32[] constant(0)
  ROOT s = f32[8,12500000] select-and-scatter(operand, source, zero), window={size=1x2 stride=1x2}, select=ge, scatter=add, sharding={devices=[8,1]<=[8]}
}
)");
  const LimitedResult result = RunGspmd(
      dir_, {"run", program, "--devices", "8", "-i", Path("two.npy"), "-o", Path("out")}, uint64_t{600} << 20);
  ExpectOutOfMemoryError(result, "[0-9]+");
  EXPECT_NE(result.err.find("device "), std::string::npos) << result.err;
  ExpectNoOutput(Path("out"));
}

// The values (operand, source, result: 200 MB) fit a 520 MB limit; the kernel's own index
// lists (240 MB) do not: the failure inside the kernel is located at the instruction too.
TEST_F(OutOfMemoryCliTest, KernelScratchUnderAddressLimit) {
#ifdef GSPMD_TEST_SANITIZED
  GTEST_SKIP() << "AddressSanitizer cannot run under a small RLIMIT_AS";
#endif
  const std::string program = WriteFile("select_and_scatter.hlo", R"(HloModule select_and_scatter

ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}

ENTRY main {
  p = f32[] parameter(0)
  operand = f32[20000000] iota(), iota_dimension=0
  source = f32[10000000] broadcast(p), dimensions={}
  zero = f32[] constant(0)
  ROOT s = f32[20000000] select-and-scatter(operand, source, zero), window={size=2 stride=2}, select=ge, scatter=add
}
)");
  const LimitedResult result =
      RunGspmd(dir_, {"eval", program, "-i", Path("two.npy"), "-o", Path("out")}, uint64_t{520} << 20);
  ExpectOutOfMemoryError(result, "[0-9]+");
  EXPECT_TRUE(std::regex_search(result.err, std::regex(":20:8: error: %s: out of memory: cannot allocate [^\n]* "
                                                       "while evaluating it \\(its result, f32\\[20000000\\]")))
      << result.err;
  ExpectNoOutput(Path("out"));
}

// A training step whose parameters alone (two 1 GiB weight matrices) exceed the limit.
TEST_F(OutOfMemoryCliTest, TrainUnderAddressLimit) {
#ifdef GSPMD_TEST_SANITIZED
  GTEST_SKIP() << "AddressSanitizer cannot run under a small RLIMIT_AS";
#endif
  const CommandResult model =
      Gspmd({"model", "dense_lm", "--set", "layers=1", "--set", "d_model=8192", "--set", "d_ff=32768", "-o",
             Path("step.hlo")});
  ASSERT_EQ(model.exit_code, 0) << model.err;
  const LimitedResult result =
      RunGspmd(dir_, {"train", Path("step.hlo"), "--steps", "2", "--progress", "lines", "-o", Path("saved")},
               kAddressSpaceLimit);
  ExpectOutOfMemoryError(result, "[0-9]+");
  ExpectNoOutput(Path("saved"));
}

// 64 devices need 64 threads, whose stacks (8 MiB each) do not fit in 400 MB: the run stops
// before any device starts, so none waits for a device that never comes.
TEST_F(OutOfMemoryCliTest, DeviceThreadsThatCannotStart) {
#ifdef GSPMD_TEST_SANITIZED
  GTEST_SKIP() << "AddressSanitizer cannot run under a small RLIMIT_AS";
#endif
  const std::string program = WriteFile("wide.hlo", "HloModule wide\n\nENTRY main {\n  p = f32[] parameter(0)\n"
                                                    "  ROOT b = f32[64,16] broadcast(p), dimensions={}, "
                                                    "sharding={devices=[64,1]<=[64]}\n}\n");
  const LimitedResult result = RunGspmd(
      dir_, {"run", program, "--devices", "64", "-i", Path("two.npy"), "-o", Path("out")}, uint64_t{400} << 20);
  EXPECT_EQ(result.signal, 0) << result.err;
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_TRUE(std::regex_search(result.err, std::regex("error: cannot start the thread of device [0-9]+ of 64: ")))
      << result.err;
  ExpectNoOutput(Path("out"));
}

// Memory running out outside the runtime (here while `gspmd model` builds a paper-sized
// training step) has no instruction or device to name; main's last resort still says it, with
// the bytes, exit 1.
TEST_F(OutOfMemoryCliTest, ModelUnderAddressLimit) {
#ifdef GSPMD_TEST_SANITIZED
  GTEST_SKIP() << "AddressSanitizer cannot run under a small RLIMIT_AS";
#endif
  const LimitedResult result = RunGspmd(
      dir_, {"model", "--preset", "gshard-2048e-36l", "-o", Path("big.hlo")}, uint64_t{128} << 20);
  EXPECT_EQ(result.signal, 0) << result.err;
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_TRUE(std::regex_search(result.err, std::regex("^gspmd: error: out of memory: cannot allocate [0-9]+ bytes")))
      << result.err;
  EXPECT_FALSE(fs::exists(Path("big.hlo")));
}

// ---- injected failures (every build, AddressSanitizer included) ----

TEST_F(OutOfMemoryCliTest, InjectedFailureInRun) {
  const std::string program = BroadcastProgram(1024);  // 4 KiB per device
  const LimitedResult result = RunGspmd(
      dir_, {"run", program, "--devices", "8", "-i", Path("two.npy"), "-o", Path("out")}, 0,
      {"GSPMD_TEST_MAX_ALLOCATION=2048"});
  ExpectOutOfMemoryError(result, "4096");
  EXPECT_TRUE(std::regex_search(result.err, std::regex("device [0-7]: ")));
  EXPECT_NE(result.err.find("%b: out of memory: cannot allocate 4.00 KiB (4096 bytes) for f32[1,1024]"),
            std::string::npos)
      << result.err;
  ExpectNoOutput(Path("out"));
}

// The devices' rows fit; the assembled global result does not: the error names the output file
// (and no file appears).
TEST_F(OutOfMemoryCliTest, InjectedFailureAssemblingTheResult) {
  const std::string program = BroadcastProgram(1024);
  const LimitedResult result = RunGspmd(
      dir_, {"run", program, "--devices", "8", "-i", Path("two.npy"), "-o", Path("out")}, 0,
      {"GSPMD_TEST_MAX_ALLOCATION=8192"});
  ExpectOutOfMemoryError(result, "32768");
  EXPECT_NE(result.err.find((fs::path(Path("out")) / "out0.npy").string() +
                            ": error: out of memory: cannot allocate 32.0 KiB (32768 bytes) for f32[8,1024]"),
            std::string::npos)
      << result.err;
  ExpectNoOutput(Path("out"));
}

TEST_F(OutOfMemoryCliTest, InjectedFailureInEval) {
  const std::string program = BroadcastProgram(1024);
  const LimitedResult result = RunGspmd(dir_, {"eval", program, "-i", Path("two.npy"), "-o", Path("out")}, 0,
                                        {"GSPMD_TEST_MAX_ALLOCATION=4096"});
  ExpectOutOfMemoryError(result, "32768");
  EXPECT_NE(result.err.find(program + ":5:8: error: %b: out of memory"), std::string::npos) << result.err;
  ExpectNoOutput(Path("out"));
}

TEST_F(OutOfMemoryCliTest, InjectedFailureInTrain) {
  // Parameters of at most 12 KiB, activations of up to 1 MiB per device: the first step stops
  // in a device.
  const CommandResult model =
      Gspmd({"model", "dense_lm", "--set", "batch=64", "--set", "seq=64", "-o", Path("step.hlo")});
  ASSERT_EQ(model.exit_code, 0) << model.err;
  const LimitedResult result =
      RunGspmd(dir_, {"train", Path("step.hlo"), "--steps", "2", "--progress", "lines", "-o", Path("saved")}, 0,
               {"GSPMD_TEST_MAX_ALLOCATION=65536"});
  ExpectOutOfMemoryError(result, "[0-9]+");
  EXPECT_TRUE(std::regex_search(result.err, std::regex("device [0-7]: [^\n]*step\\.hlo:[0-9]+:[0-9]+: error: %")))
      << result.err;
  ExpectNoOutput(Path("saved"));
}

TEST_F(OutOfMemoryCliTest, MalformedInjectionIsAnError) {
  const std::string program = BroadcastProgram(4);
  const LimitedResult result = RunGspmd(dir_, {"eval", program, "-i", Path("two.npy"), "-o", Path("out")}, 0,
                                        {"GSPMD_TEST_MAX_ALLOCATION=lots"});
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.err.find("GSPMD_TEST_MAX_ALLOCATION=lots: error: expected a byte count"), std::string::npos)
      << result.err;
}

}  // namespace
}  // namespace gspmd::cli_test
