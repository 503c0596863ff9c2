// `gspmd partition` / `gspmd run` with --propagate-to-parameters and --propagate-to-outputs:
// whether propagation may choose the boundary shardings, per leaf, and bad values.
#include <gtest/gtest.h>

#include <string>

#include "cli/cli_test_util.h"

namespace gspmd {
namespace {

using namespace cli_test;  // NOLINT: test helpers

constexpr const char* kProgram = R"(HloModule m, num_partitions=4
ENTRY %e {
  %p0 = f32[8] parameter(0)
  %p1 = f32[8] parameter(1)
  ROOT %add = f32[8] add(%p0, %p1), sharding={devices=[4]<=[4]}
}
)";

std::string ShardingOf(const std::string& text, const std::string& name) {
  const size_t at = text.find("%" + name + " = ");
  if (at == std::string::npos) return "";
  const size_t begin = text.find("sharding=", at);
  const size_t end = text.find('\n', at);
  if (begin == std::string::npos || begin > end) return "";
  return text.substr(begin + 9, text.find('}', begin) - begin - 8);
}

TEST_F(CliTest, PropagateToParametersChoosesPerParameter) {
  const std::string file = WriteFile("m.hlo", kProgram);
  CommandResult by_default = Gspmd({"partition", file, "--propagate-only"});
  ASSERT_EQ(by_default.exit_code, 0) << by_default.err;
  EXPECT_EQ(ShardingOf(by_default.out, "p0"), "{devices=[4]<=[4]}");
  CommandResult closed = Gspmd({"partition", file, "--propagate-only", "--propagate-to-parameters=false"});
  ASSERT_EQ(closed.exit_code, 0) << closed.err;
  // As in XLA, a parameter propagation may not choose keeps no sharding (partitioned replicated).
  EXPECT_EQ(ShardingOf(closed.out, "p0"), "");
  EXPECT_EQ(ShardingOf(closed.out, "p1"), "");
  CommandResult mixed = Gspmd({"partition", file, "--propagate-only", "--propagate-to-parameters", "false,true"});
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  EXPECT_EQ(ShardingOf(mixed.out, "p0"), "");
  EXPECT_EQ(ShardingOf(mixed.out, "p1"), "{devices=[4]<=[4]}");
  // The partitioned program gathers nothing when the parameters may be split.
  CommandResult partitioned = Gspmd({"partition", file, "--propagate-to-parameters=true"});
  ASSERT_EQ(partitioned.exit_code, 0) << partitioned.err;
  EXPECT_EQ(partitioned.out.find("all-gather"), std::string::npos) << partitioned.out;
}

TEST_F(CliTest, BadPropagateToValuesAreErrors) {
  const std::string file = WriteFile("m.hlo", kProgram);
  CommandResult word = Gspmd({"partition", file, "--propagate-to-outputs=maybe"});
  EXPECT_EQ(word.exit_code, 1);
  EXPECT_NE(word.err.find("--propagate-to-outputs: expected true, false or a comma-separated list"), std::string::npos)
      << word.err;
  CommandResult count = Gspmd({"partition", file, "--propagate-to-parameters=true,true,true"});
  EXPECT_EQ(count.exit_code, 1);
  EXPECT_NE(count.err.find("lists 3 values but the entry computation has 2 parameters"), std::string::npos)
      << count.err;
}

}  // namespace
}  // namespace gspmd
