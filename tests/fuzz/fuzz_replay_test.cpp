// Replays what the fuzzers found (tests/data/fuzz/<target>/, one input per file) through the
// fuzz targets' bodies, and the HLO seeds of tests/data through the parser's round trip, so
// every crash found stays fixed in the ordinary build.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz_targets.h"

namespace gspmd::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> FilesUnder(const fs::path& dir, const std::string& extension = "") {
  std::vector<fs::path> files;
  if (!fs::exists(dir)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file() && (extension.empty() || entry.path().extension() == extension) &&
        entry.path().filename() != "README.md")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

const fs::path kData = GSPMD_TEST_DATA_DIR;

TEST(FuzzReplayTest, HloParserRegressions) {
  for (const fs::path& file : FilesUnder(kData / "fuzz" / "hlo_parser")) {
    SCOPED_TRACE(file.string());
    FuzzHloText(ReadAll(file));
  }
}

TEST(FuzzReplayTest, NpyReaderRegressions) {
  for (const fs::path& file : FilesUnder(kData / "fuzz" / "npy_reader")) {
    SCOPED_TRACE(file.string());
    std::string bytes = ReadAll(file);
    FuzzNpyBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
}

TEST(FuzzReplayTest, PartitionRegressions) {
  for (const fs::path& file : FilesUnder(kData / "fuzz" / "partition")) {
    SCOPED_TRACE(file.string());
    FuzzPartitionText(ReadAll(file));
  }
}

TEST(FuzzReplayTest, EverySeedModuleRoundTrips) {
  std::vector<fs::path> seeds = FilesUnder(kData, ".hlo");
  EXPECT_GT(seeds.size(), 10u);
  for (const fs::path& file : seeds) {
    SCOPED_TRACE(file.string());
    FuzzHloText(ReadAll(file));  // aborts when the printed module does not parse back identically
  }
}

}  // namespace
}  // namespace gspmd::fuzz
