// Malformed text never crashes the parser: every truncation and many single-byte
// corruptions of a real module either parse or raise a UserError.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "hlo_text_test_util.h"

namespace gspmd {
namespace {

std::string ReadCorpusFile(const std::string& relative) {
  std::ifstream in(std::string(GSPMD_TEST_DATA_DIR) + "/corpus/" + relative, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Parses, printing any parsed module too; only UserError may escape.
void ParseOrUserError(const std::string& text) {
  try {
    std::unique_ptr<Module> module = ParseModule(text, "fuzz.hlo");
    PrintModule(*module);
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("fuzz.hlo:"), std::string::npos) << error.what();
  }
}

TEST(ParseRobustnessTest, EveryTruncationParsesOrIsAUserError) {
  std::string text = ReadCorpusFile("gspmd/while_loops/propagated.hlo");
  ASSERT_FALSE(text.empty());
  for (size_t length = 0; length < text.size(); ++length) ParseOrUserError(text.substr(0, length));
}

TEST(ParseRobustnessTest, ByteCorruptionsParseOrAreUserErrors) {
  std::string original = ReadCorpusFile("gspmd/moe_top2_alltoall/partitioned.hlo");
  ASSERT_FALSE(original.empty());
  std::mt19937 random(1234);
  const std::string alphabet = "{}[]()<>=,:#%\"'/*-_.0123456789 \nabfsxT";
  for (int trial = 0; trial < 1500; ++trial) {
    std::string text = original;
    int edits = 1 + static_cast<int>(random() % 3);
    for (int e = 0; e < edits; ++e) {
      size_t pos = random() % text.size();
      switch (random() % 3) {
        case 0: text[pos] = alphabet[random() % alphabet.size()]; break;
        case 1: text.erase(pos, 1 + random() % 8); break;
        default: text.insert(pos, 1, alphabet[random() % alphabet.size()]); break;
      }
    }
    ParseOrUserError(text);
  }
}

}  // namespace
}  // namespace gspmd
