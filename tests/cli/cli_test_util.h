// Shared by the CLI tests: runs the built `gspmd` binary in a per-test temporary directory and
// captures its exit code, stdout and stderr.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/literal_compare.h"
#include "io/npy.h"

namespace gspmd::cli_test {

namespace fs = std::filesystem;

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Single-quotes `text` for /bin/sh.
inline std::string Quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  return quoted + "'";
}

inline const fs::path kCorpusRoot = fs::path(GSPMD_TEST_DATA_DIR) / "corpus";
inline const fs::path kCorpus = kCorpusRoot / "gspmd";

// The case's in0.npy, in1.npy, ... in order.
inline std::vector<std::string> CaseInputs(const fs::path& case_dir) {
  std::vector<std::string> inputs;
  for (int i = 0; fs::exists(case_dir / ("in" + std::to_string(i) + ".npy")); ++i)
    inputs.push_back((case_dir / ("in" + std::to_string(i) + ".npy")).string());
  return inputs;
}

inline int CaseOutputCount(const fs::path& case_dir) {
  int count = 0;
  while (fs::exists(case_dir / ("out" + std::to_string(count) + ".npy"))) ++count;
  return count;
}

// actual_dir/out<i>.npy matches expected_dir/out<i>.npy for i < count, and there is no more.
inline void ExpectAllClose(const fs::path& actual_dir, const fs::path& expected_dir, int count, double rtol) {
  for (int i = 0; i < count; ++i) {
    const std::string name = "out" + std::to_string(i) + ".npy";
    const LiteralComparison comparison =
        CompareLiterals(ReadNpy((actual_dir / name).string()), ReadNpy((expected_dir / name).string()), rtol);
    EXPECT_TRUE(comparison.matches) << expected_dir << " " << name << ": " << comparison.message;
  }
  EXPECT_FALSE(fs::exists(actual_dir / ("out" + std::to_string(count) + ".npy")));
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("gspmd_cli_test_" + std::to_string(getpid()) + "_" + info->test_suite_name() + "_" + info->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `gspmd ARGS...` with stdout and stderr captured separately.
  CommandResult Gspmd(const std::vector<std::string>& args) const {
    std::string command = Quote(GSPMD_BINARY);
    for (const std::string& arg : args) command += " " + Quote(arg);
    const fs::path out = dir_ / "stdout.txt";
    const fs::path err = dir_ / "stderr.txt";
    command += " >" + Quote(out.string()) + " 2>" + Quote(err.string());
    const int status = std::system(command.c_str());
    CommandResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = ReadText(out);
    result.err = ReadText(err);
    return result;
  }

  std::string WriteFile(const std::string& name, const std::string& text) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

}  // namespace gspmd::cli_test
