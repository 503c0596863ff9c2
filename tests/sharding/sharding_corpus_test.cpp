// Corpus tests: every sharding and replica_groups value in the reference HLO files parses and
// prints back identically; named forms agree with XLA's GSPMD forms; mesh replica groups
// gather in the order the operand shardings need.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "sharding/sharding_text.h"

namespace gspmd {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> CorpusHloFiles() {
  std::vector<fs::path> files;
  const fs::path root = fs::path(GSPMD_TEST_DATA_DIR) / "corpus";
  if (!fs::exists(root)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && entry.path().extension() == ".hlo")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// The balanced {...} value starting at `start` (which must be '{'); strings are skipped.
std::string BalancedBraces(const std::string& text, size_t start) {
  int depth = 0;
  for (size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      continue;
    }
    if (c == '{') ++depth;
    if (c == '}' && --depth == 0) return text.substr(start, i - start + 1);
  }
  return text.substr(start);
}

// The value up to the next comma outside brackets/braces/parens (or end of line).
std::string UpToTopLevelComma(const std::string& text, size_t start) {
  int depth = 0;
  for (size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{' || c == '[' || c == '(') ++depth;
    if (c == '}' || c == ']' || c == ')') --depth;
    if ((c == ',' && depth == 0) || c == '\n' || depth < 0) return text.substr(start, i - start);
  }
  return text.substr(start);
}

std::vector<std::string> ValuesAfter(const std::string& text, const std::string& key, bool braced) {
  std::vector<std::string> values;
  for (size_t pos = text.find(key); pos != std::string::npos; pos = text.find(key, pos + 1)) {
    const bool is_attribute = pos == 0 || text[pos - 1] == ' ' || text[pos - 1] == ',';
    if (!is_attribute) continue;  // e.g. "xla.sdy.sharding="
    const size_t start = pos + key.size();
    if (braced && (start >= text.size() || text[start] != '{')) continue;
    values.push_back(braced ? BalancedBraces(text, start) : UpToTopLevelComma(text, start));
  }
  return values;
}

TEST(ShardingCorpusTest, EveryShardingRoundTrips) {
  const auto files = CorpusHloFiles();
  if (files.empty()) GTEST_SKIP() << "no corpus";
  int count = 0;
  for (const fs::path& file : files) {
    const std::string text = ReadFile(file);
    for (const std::string& value : ValuesAfter(text, "sharding=", /*braced=*/true)) {
      try {
        Sharding s = ParseSharding(value);
        EXPECT_EQ(s.ToString(), value) << file;
        EXPECT_EQ(ParseSharding(s.ToString()), s) << file << ": " << value;
        ++count;
      } catch (const ShardingSyntaxError& e) {
        ADD_FAILURE() << file << ": " << value << ": at " << e.offset << ": " << e.what();
      }
    }
  }
  EXPECT_GT(count, 100);
}

TEST(ShardingCorpusTest, EveryReplicaGroupsRoundTrips) {
  const auto files = CorpusHloFiles();
  if (files.empty()) GTEST_SKIP() << "no corpus";
  int count = 0;
  for (const fs::path& file : files) {
    const std::string text = ReadFile(file);
    for (const std::string& value : ValuesAfter(text, "replica_groups=", /*braced=*/false)) {
      try {
        ReplicaGroups g = ParseReplicaGroups(value);
        EXPECT_EQ(g.ToString(), value) << file;
        const auto groups = g.Groups(8);
        EXPECT_FALSE(groups.empty()) << value;
        ++count;
      } catch (const ShardingSyntaxError& e) {
        ADD_FAILURE() << file << ": " << value << ": at " << e.offset << ": " << e.what();
      }
    }
  }
  EXPECT_GT(count, 10);
}

// Shardy-propagated files carry both XLA's GSPMD sharding and the Shardy one
// (frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [...]>"}); the named form
// built from the latter must be the same sharding.
TEST(ShardingCorpusTest, NamedFormsMatchGspmdForms) {
  const auto files = CorpusHloFiles();
  if (files.empty()) GTEST_SKIP() << "no corpus";
  const std::regex mesh_re(R"re(xla\.sdy\.meshes=\{mesh = #sdy\.mesh<\[([^\]]*)\]>\})re");
  const std::regex axis_re(R"re(\\?"([A-Za-z0-9_]+)\\?"=([0-9]+))re");
  const std::regex line_re(
      R"re(sharding=(\{[^\n]*?\}), frontend_attributes=\{xla\.sdy\.sharding="#sdy\.sharding<@mesh, (\[[^\n]*?\])>"\})re");
  int count = 0;
  for (const fs::path& file : files) {
    const std::string text = ReadFile(file);
    std::smatch mesh_match;
    if (!std::regex_search(text, mesh_match, mesh_re)) continue;
    std::string mesh = "mesh[";
    const std::string axes = mesh_match[1].str();
    bool first = true;
    for (std::sregex_iterator it(axes.begin(), axes.end(), axis_re), end; it != end; ++it) {
      mesh += (first ? "'" : ",'") + (*it)[1].str() + "'=" + (*it)[2].str();
      first = false;
    }
    mesh += "]";
    for (std::sregex_iterator it(text.begin(), text.end(), line_re), end; it != end; ++it) {
      std::string dims = (*it)[2].str();
      dims = std::regex_replace(dims, std::regex(R"(\\")"), "'");
      const std::string named = "{" + mesh + ", " + dims + "}";
      const std::string gspmd = (*it)[1].str();
      Sharding a = ParseSharding(named);
      Sharding b = ParseSharding(gspmd);
      EXPECT_EQ(a, b) << file << ": " << named << " vs " << gspmd;
      ++count;
    }
  }
  EXPECT_GT(count, 5);
}

// For an all-gather of a parameter, device k of each group must hold tile k along the
// gathered dim (and the same tile along the others): the group order is the gather order.
TEST(ShardingCorpusTest, AllGatherGroupOrderMatchesOperandTiles) {
  const auto files = CorpusHloFiles();
  if (files.empty()) GTEST_SKIP() << "no corpus";
  const std::regex param_re(R"re(%([\w.\-]+) = [^\n]*? parameter\(\d+\), sharding=)re");
  const std::regex gather_re(
      R"re(all-gather\(%([\w.\-]+)\), channel_id=\d+, replica_groups=([^\n]*?), dimensions=\{(\d+)\})re");
  int count = 0;
  for (const fs::path& file : files) {
    if (file.filename() != "partitioned.hlo") continue;
    const std::string text = ReadFile(file);
    std::map<std::string, Sharding> params;
    for (std::sregex_iterator it(text.begin(), text.end(), param_re), end; it != end; ++it) {
      const size_t start = it->position(0) + it->length(0);
      params.emplace((*it)[1].str(), ParseSharding(BalancedBraces(text, start)));
    }
    for (std::sregex_iterator it(text.begin(), text.end(), gather_re), end; it != end; ++it) {
      auto param = params.find((*it)[1].str());
      if (param == params.end() || !param->second.IsTiled()) continue;
      const Sharding& sharding = param->second;
      const int64_t dim = std::stoll((*it)[3].str());
      const ReplicaGroups groups = ParseReplicaGroups((*it)[2].str());
      for (const auto& group : groups.Groups(sharding.tile_assignment().num_elements())) {
        ASSERT_EQ(static_cast<int64_t>(group.size()), sharding.tile_assignment().dim(dim));
        const auto first = *sharding.tile_assignment().IndexOf(group[0]);
        for (size_t k = 0; k < group.size(); ++k) {
          auto index = *sharding.tile_assignment().IndexOf(group[k]);
          EXPECT_EQ(index[dim], static_cast<int64_t>(k)) << file << ": " << (*it)[0];
          index[dim] = first[dim];
          for (int64_t d = 0; d < sharding.TiledDataRank(); ++d) {
            EXPECT_EQ(index[d], first[d]) << file << ": " << (*it)[0];
          }
        }
      }
      ++count;
    }
  }
  EXPECT_GE(count, 1);
}

}  // namespace
}  // namespace gspmd
