// Shared by the MPI backend's tests: launching `mpirun ... gspmd run --backend mpi` (as root
// only inside this launcher: CI runs as root), timing it, and comparing with the threads
// backend. Soak mode (GSPMD_MPI_SOAK=1) runs more layouts and transports.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/literal_compare.h"
#include "io/array_source.h"

namespace gspmd::mpi_test {

namespace fs = std::filesystem;

struct Launch {
  int exit_code = -1;
  std::string out;
  std::string err;
  double seconds = 0;
};

inline std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline std::string Quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

inline bool SoakMode() {
  const char* value = std::getenv("GSPMD_MPI_SOAK");
  return value != nullptr && std::string(value) == "1";
}

inline bool HaveMpirun() { return std::system("command -v mpirun >/dev/null 2>&1") == 0; }

// How mpirun is started. Root is allowed for this command only (CI runs as root).
struct MpiLayout {
  int ranks = 8;
  int devices_per_rank = 1;
  std::string btl;  // "" (OpenMPI's choice: shared memory on one machine) or e.g. "self,tcp"
  std::string Name() const {
    std::string name = std::to_string(ranks) + "x" + std::to_string(devices_per_rank);
    if (!btl.empty()) name += "_" + btl.substr(btl.rfind(',') + 1);
    return name;
  }
};

// Open MPI 4 makes its session directory (/tmp/ompi.HOST.UID) with a mkdir that races when two
// mpiruns start at once (ctest -j in CI: "A call to mkdir was unable to create the desired
// directory ... File exists", and the job fails before any rank runs). Each test process
// therefore gives its jobs a base directory of its own, removed when the process ends.
inline const std::string& MpiSessionBase() {
  static const struct Base {
    std::string path;
    Base() : path((fs::temp_directory_path() / ("gspmd_mpi_session_" + std::to_string(getpid()))).string()) {
      fs::create_directories(path);
    }
    ~Base() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } base;
  return base.path;
}

inline std::string MpirunPrefix(const MpiLayout& layout, const std::string& fault = "") {
  std::string command = "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1";
  if (!fault.empty()) command += " GSPMD_MPI_FAULT=" + Quote(fault);
  // 8 ranks on a 2-core machine: oversubscribed, unbound.
  command += " mpirun --oversubscribe --bind-to none --mca orte_tmpdir_base " + Quote(MpiSessionBase()) + " -np " +
             std::to_string(layout.ranks);
  if (!layout.btl.empty()) command += " --mca btl " + layout.btl;
  if (!fault.empty()) command += " -x GSPMD_MPI_FAULT";
  return command;
}

class MpiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(HaveMpirun()) << "mpirun is not installed (scripts/install-deps.sh installs openmpi-bin)";
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name)
      if (c == '/') c = '_';
    dir_ = fs::temp_directory_path() / ("gspmd_mpi_test_" + std::to_string(getpid()) + "_" + name);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (std::getenv("GSPMD_MPI_KEEP") == nullptr) fs::remove_all(dir_);
  }

  static std::string Args(const std::vector<std::string>& args) {
    std::string text;
    for (const std::string& arg : args) text += " " + Quote(arg);
    return text;
  }

  Launch Run(const std::string& command) const {
    const fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const auto start = std::chrono::steady_clock::now();
    const int status = std::system((command + " >" + Quote(out.string()) + " 2>" + Quote(err.string())).c_str());
    Launch launch;
    launch.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    launch.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    launch.out = ReadText(out);
    launch.err = ReadText(err);
    return launch;
  }

  // mpirun ... gspmd ARGS (ARGS should include --backend mpi).
  Launch Mpi(const MpiLayout& layout, const std::vector<std::string>& args, const std::string& fault = "") const {
    return Run(MpirunPrefix(layout, fault) + " " + Quote(GSPMD_BINARY) + Args(args));
  }
  // gspmd ARGS without a launcher.
  Launch Gspmd(const std::vector<std::string>& args) const { return Run(Quote(GSPMD_BINARY) + Args(args)); }

  fs::path dir_;

 public:
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
};

// Every out<i>.npy / out<i>.json of `actual_dir` equals `expected_dir`'s (integers and
// booleans exactly, floats within rtol), and there are as many.
inline void ExpectSameOutputs(const fs::path& actual_dir, const fs::path& expected_dir, double rtol,
                              const std::string& actual_suffix = ".npy") {
  int count = 0;
  for (; fs::exists(expected_dir / ("out" + std::to_string(count) + ".npy")); ++count) {
    const std::string name = "out" + std::to_string(count);
    const fs::path actual = actual_dir / (name + actual_suffix);
    ASSERT_TRUE(fs::exists(actual)) << actual;
    const LiteralComparison comparison =
        CompareLiterals(ReadArrayFile(actual.string()), ReadArrayFile((expected_dir / (name + ".npy")).string()), rtol);
    EXPECT_TRUE(comparison.matches) << actual << ": " << comparison.message;
  }
  EXPECT_GT(count, 0) << expected_dir;
  EXPECT_FALSE(fs::exists(actual_dir / ("out" + std::to_string(count) + actual_suffix)));
}

// The files of a directory (none when it does not exist), hidden ones included.
inline std::vector<std::string> FilesIn(const fs::path& dir) {
  std::vector<std::string> names;
  if (!fs::exists(dir)) return names;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) names.push_back(entry.path().filename().string());
  return names;
}

}  // namespace gspmd::mpi_test
