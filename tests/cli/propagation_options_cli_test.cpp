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

// Shardy results are annotated through xla.sdy.FuncResultSharding calls feeding an unannotated
// root tuple; =false must keep those annotations (what JAX's Shardy export asks when every
// result's sharding is given), not close the leaves as replicated and gather them.
TEST_F(CliTest, PropagateToOutputsFalseKeepsShardyResultAnnotations) {
  const std::string file = WriteFile("m.mlir", R"(module @jit_fn attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["data"=8]>
  func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<8x4xf32>
    %1 = stablehlo.multiply %arg0, %arg0 : tensor<8x4xf32>
    return %0, %1 : tensor<8x4xf32>, tensor<8x4xf32>
  }
}
)");
  for (const char* flags : {"false", "false,false", "false,true"}) {
    CommandResult result = Gspmd({"partition", file, "--propagate-to-outputs", flags});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out.find("all-gather"), std::string::npos) << flags << "\n" << result.out;
    EXPECT_NE(result.out.find("ROOT %tuple.1 = (f32[1,4]{1,0}, f32[8,4]{1,0})"), std::string::npos) << flags << "\n" << result.out;
  }
}

}  // namespace
}  // namespace gspmd
