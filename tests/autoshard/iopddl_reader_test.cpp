// The IOPDDL reader: the contest's example, gzip input, and one test per class of bad input
// (truncated gzip, truncated JSON, wrong matrix length, missing key, negative interval, ...).
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "autoshard/iopddl_reader.h"
#include "autoshard_test_util.h"
#include "support/diagnostic.h"

namespace gspmd::autoshard {
namespace {

std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Gzip(const std::string& text) {
  uLongf size = compressBound(text.size()) + 64;
  std::string out(size, '\0');
  z_stream stream{};
  deflateInit2(&stream, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

std::string TempFile(const std::string& name, const std::string& bytes) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("gspmd_iopddl_" + std::to_string(getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

// The message of the UserError that reading `text` raises ("" when it reads fine).
std::string ErrorOf(const std::string& text) {
  try {
    ParseIopddlText(text, "p.json");
  } catch (const UserError& error) {
    return error.what();
  }
  return "";
}

const char kSmall[] = R"({"problem": {"name": "small", "nodes": {"intervals": [[0, 2], [1, 3]],
  "costs": [[1, 2], [3, 4, 5]], "usages": [[1, 1], [2, 2, 2]]},
  "edges": {"nodes": [[0, 1]], "costs": [[0, 1, 2, 3, 4, 5]]}, "usage_limit": 10}})";

TEST(IopddlReaderTest, ReadsTheContestExample) {
  const StrategyProblem problem = ReadIopddlFile((test::kIopddlData / "example.json").string());
  EXPECT_EQ(problem.name, "example");
  ASSERT_EQ(problem.nodes.size(), 5u);
  ASSERT_EQ(problem.edges.size(), 5u);
  EXPECT_EQ(problem.usage_limit, 50);
  EXPECT_EQ(problem.nodes[2].start, 50);
  EXPECT_EQ(problem.nodes[2].end, 120);
  EXPECT_EQ(problem.nodes[2].costs, (std::vector<Cost>{25, 45, 35}));
  EXPECT_EQ(problem.nodes[2].usages, (std::vector<int64_t>{15, 20, 15}));
  EXPECT_EQ(problem.edges[2].from, 1);
  EXPECT_EQ(problem.edges[2].to, 3);
  EXPECT_EQ(problem.edges[2].costs, (std::vector<Cost>{90, 10, 20, 80}));
}

TEST(IopddlReaderTest, GzipGivesTheSameProblem) {
  const std::string text = ReadText(test::kIopddlData / "example.json");
  const std::string path = TempFile("example.json.gz", Gzip(text));
  const StrategyProblem problem = ReadIopddlFile(path);
  std::filesystem::remove(path);
  EXPECT_EQ(problem.nodes.size(), 5u);
  EXPECT_EQ(problem.edges[4].costs, (std::vector<Cost>{70, 60}));
}

TEST(IopddlReaderTest, HugeCostsAreClampedToForbidden) {
  std::string text = kSmall;
  text.replace(text.find("[3, 4, 5]"), 9, "[3, 1e30, 18446744073709551615]");
  const StrategyProblem problem = ParseIopddlText(text, "p.json");
  EXPECT_EQ(problem.nodes[1].costs, (std::vector<Cost>{3, kForbiddenCost, kForbiddenCost}));
}

TEST(IopddlReaderTest, TruncatedGzipIsAnError) {
  const std::string compressed = Gzip(ReadText(test::kIopddlData / "example.json"));
  const std::string path = TempFile("cut.json.gz", compressed.substr(0, compressed.size() / 2));
  try {
    ReadIopddlFile(path);
    FAIL() << "expected an error";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find(path + ": error: truncated gzip data"), std::string::npos) << error.what();
  }
  std::filesystem::remove(path);
}

TEST(IopddlReaderTest, CorruptGzipIsAnError) {
  std::string compressed = Gzip(ReadText(test::kIopddlData / "example.json"));
  for (size_t i = 12; i < compressed.size() - 8; i += 3) compressed[i] = static_cast<char>(compressed[i] ^ 0x5a);
  const std::string path = TempFile("bad.json.gz", compressed);
  try {
    ReadIopddlFile(path);
    FAIL() << "expected an error";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find(": error: "), std::string::npos) << error.what();
  }
  std::filesystem::remove(path);
}

TEST(IopddlReaderTest, TruncatedJsonIsAnError) {
  const std::string text = ReadText(test::kIopddlData / "example.json");
  const std::string message = ErrorOf(text.substr(0, text.size() / 2));
  EXPECT_NE(message.find("p.json: error: the JSON text ends early"), std::string::npos) << message;
  EXPECT_NE(message.find("inside problem.nodes."), std::string::npos) << message;
}

TEST(IopddlReaderTest, WrongMatrixLengthNamesTheEdge) {
  std::string text = kSmall;
  text.replace(text.find("[0, 1, 2, 3, 4, 5]"), 18, "[0, 1, 2, 3, 4]");
  EXPECT_EQ(ErrorOf(text),
            "p.json: error: problem.edges.costs[0] has 5 entries, expected 2 x 3 = 6 (the strategies of nodes 0 and 1)");
}

TEST(IopddlReaderTest, MissingKeyIsNamed) {
  std::string text = kSmall;
  text.replace(text.find("\"usage_limit\": 10"), 17, "\"limit\": 10");
  EXPECT_EQ(ErrorOf(text), "p.json: error: missing key problem.usage_limit");
  text = kSmall;
  text.replace(text.find("\"usages\""), 8, "\"usage\"");
  EXPECT_EQ(ErrorOf(text), "p.json: error: missing key problem.nodes.usages");
  EXPECT_EQ(ErrorOf("{\"nodes\": {}}"),
            "p.json: error: missing key problem (the top-level object must hold \"problem\": {...})");
}

TEST(IopddlReaderTest, NegativeIntervalIsAnError) {
  std::string text = kSmall;
  text.replace(text.find("[1, 3]"), 6, "[3, 1]");
  EXPECT_EQ(ErrorOf(text), "p.json: error: problem.nodes.intervals[1] is [3, 1], a negative interval (expected start <= end)");
  text = kSmall;
  text.replace(text.find("[1, 3]"), 6, "[-1, 3]");
  EXPECT_EQ(ErrorOf(text), "p.json: error: problem.nodes.intervals[1][0] is -1, expected a non-negative integer");
}

TEST(IopddlReaderTest, BadValuesAreNamed) {
  std::string text = kSmall;
  text.replace(text.find("[1, 2]"), 6, "[1, \"x\"]");
  EXPECT_EQ(ErrorOf(text), "p.json: error: problem.nodes.costs[0][1] is a string, expected an integer");
  text = kSmall;
  text.replace(text.find("[[0, 1]]"), 8, "[[0, 7]]");
  EXPECT_EQ(ErrorOf(text), "p.json: error: problem.edges.nodes[0][1] is 7, expected a node index below 2");
  text = kSmall;
  text.replace(text.find("[[1, 1], [2, 2, 2]]"), 19, "[[1, 1], [2, 2]]");
  EXPECT_EQ(ErrorOf(text),
            "p.json: error: problem.nodes.usages[1] has 2 entries, expected one per strategy (3, the length of "
            "problem.nodes.costs[1])");
  text = kSmall;
  text.replace(text.find("[[0, 2], [1, 3]]"), 16, "[[0, 2]]");
  EXPECT_EQ(ErrorOf(text),
            "p.json: error: problem.nodes.intervals has 1 entries, expected one per node (2, the length of "
            "problem.nodes.costs)");
  text = kSmall;
  text.replace(text.find("[1, 2]"), 6, "[1.5, 2]");
  EXPECT_EQ(ErrorOf(text), "p.json: error: problem.nodes.costs[0][0] is 1.5, expected an integer");
}

TEST(IopddlReaderTest, UnreadableFileIsAnError) {
  try {
    ReadIopddlFile("/nonexistent/problem.json");
    FAIL() << "expected an error";
  } catch (const UserError& error) {
    EXPECT_EQ(std::string(error.what()), "/nonexistent/problem.json: error: cannot open the file for reading");
  }
}

}  // namespace
}  // namespace gspmd::autoshard
