// Tests of `gspmd simulate`: the JSON contract, global and per-device inputs, equality of its
// byte counts with `gspmd report --json` on the corpus, and errors for bad chips and topologies.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"

namespace gspmd {
namespace {

using namespace cli_test;  // NOLINT: test helpers

using SimulateCliTest = CliTest;

TEST_F(SimulateCliTest, JsonHasTheContractFields) {
  const CommandResult result = Gspmd({"simulate", (kCorpus / "megatron_mlp" / "partitioned.hlo").string(), "--chip", "tpu-v3", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json json = nlohmann::json::parse(result.out);
  for (const char* key : {"step_time_s", "mfu", "flops_per_device", "comm_bytes_per_device", "peak_bytes_per_device", "fits_memory"})
    EXPECT_TRUE(json.contains(key)) << key;
  EXPECT_GT(json["step_time_s"].get<double>(), 0);
  EXPECT_TRUE(json["fits_memory"].get<bool>());
  EXPECT_EQ(json["devices"], 8);
  EXPECT_EQ(json["collective_ops"].size(), 1u);
  EXPECT_EQ(json["collective_ops"][0]["kind"], "all-reduce");
}

TEST_F(SimulateCliTest, ByteCountsEqualTheCommunicationReport) {
  for (const char* name : {"megatron_mlp", "moe_top2_alltoall", "transformer_train_1l", "while_loops", "conv_spatial_halo",
                           "reshard_variety"}) {
    for (const char* file : {"partitioned.hlo", "pre.hlo"}) {
      // For pre.hlo both commands see our partition: report needs it written out first.
      std::string per_device = (kCorpus / name / file).string();
      if (std::string(file) == "pre.hlo") {
        per_device = Path(std::string(name) + "_ours.hlo");
        ASSERT_EQ(Gspmd({"partition", (kCorpus / name / file).string(), "-o", per_device}).exit_code, 0) << name;
      }
      const CommandResult report = Gspmd({"report", per_device, "--json"});
      const CommandResult simulate = Gspmd({"simulate", per_device, "--chip", "tpu-v3", "--json"});
      ASSERT_EQ(report.exit_code, 0) << report.err;
      ASSERT_EQ(simulate.exit_code, 0) << simulate.err;
      const nlohmann::json expected = nlohmann::json::parse(report.out);
      const nlohmann::json actual = nlohmann::json::parse(simulate.out);
      for (const char* key : {"comm_bytes_per_device", "collectives", "comm_bytes_by_kind"})
        EXPECT_EQ(actual[key], expected[key]) << name << " " << file << " " << key;
      // The live-range peak is report's; the simulator's own peak runs loops and updates in
      // place, as XLA does, so it may only be lower.
      EXPECT_EQ(actual["memory"]["live_range_peak_bytes"], expected["peak_bytes_per_device"]) << name << " " << file;
      EXPECT_LE(actual["peak_bytes_per_device"].get<double>(), expected["peak_bytes_per_device"].get<double>())
          << name << " " << file;
    }
  }
}

TEST_F(SimulateCliTest, GlobalProgramsArePartitionedFirst) {
  const std::string pre = (kCorpus / "megatron_mlp" / "pre.hlo").string();
  const CommandResult global = Gspmd({"simulate", pre, "--chip", "tpu-v3", "--json"});
  ASSERT_EQ(global.exit_code, 0) << global.err;
  const std::string ours = Path("ours.hlo");
  ASSERT_EQ(Gspmd({"partition", pre, "-o", ours}).exit_code, 0);
  const CommandResult per_device = Gspmd({"simulate", ours, "--chip", "tpu-v3", "--json"});
  ASSERT_EQ(per_device.exit_code, 0) << per_device.err;
  const nlohmann::json a = nlohmann::json::parse(global.out), b = nlohmann::json::parse(per_device.out);
  EXPECT_EQ(a["flops_per_device"], b["flops_per_device"]);
  EXPECT_EQ(a["comm_bytes_per_device"], b["comm_bytes_per_device"]);
  EXPECT_EQ(a["step_time_s"], b["step_time_s"]);

  const CommandResult text = Gspmd({"simulate", pre, "--chip", "a100", "--topology", "1"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("step time:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("nvlink 8 (switch) x ib 1 (switch), 8 of 8 devices"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("memory per device: peak"), std::string::npos);
}

TEST_F(SimulateCliTest, OutputIsDeterministic) {
  const std::string file = (kCorpus / "transformer_train_1l" / "pre.hlo").string();
  const CommandResult first = Gspmd({"simulate", file, "--chip", "tpu-v3", "--json"});
  const CommandResult second = Gspmd({"simulate", file, "--chip", "tpu-v3", "--json"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, second.out);
}

TEST_F(SimulateCliTest, BadChipsAndTopologiesAreClearErrors) {
  const std::string file = (kCorpus / "megatron_mlp" / "partitioned.hlo").string();
  CommandResult result = Gspmd({"simulate", file, "--chip", "tpu-v9"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("unknown chip 'tpu-v9' (built in: a100, h100, tpu-v3, tpu-v4"), std::string::npos) << result.err;

  const std::string broken = WriteFile("broken.json", "{\n  \"name\": \"broken\",\n  \"compute\": {\"matrix_flops_per_s\": {}}\n}\n");
  result = Gspmd({"simulate", file, "--chip", broken});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find(broken + ":3:15: error: compute.matrix_flops_per_s: expected an object of compute type -> FLOP/s"),
            std::string::npos)
      << result.err;

  const std::string syntax = WriteFile("syntax.json", "{\n  \"name\": \"x\",,\n}\n");
  result = Gspmd({"simulate", file, "--chip", syntax});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find(syntax + ":2:15: error: malformed JSON"), std::string::npos) << result.err;

  // 8 partitions on a slice of 1x1 chips (2 cores).
  result = Gspmd({"simulate", file, "--chip", "tpu-v3", "--topology", "1x1"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find(file + ": error: the program has 8 partitions but the tpu-v3 topology 1x1 has only 2 devices"),
            std::string::npos)
      << result.err;
  result = Gspmd({"simulate", file, "--chip", "tpu-v3", "--placement", "x,y"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("--placement 'x,y'"), std::string::npos) << result.err;
  result = Gspmd({"simulate", file, "--chip", "tpu-v3", "--compute-type", "s32"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("--compute-type 's32' is not a floating-point type"), std::string::npos) << result.err;
  result = Gspmd({"simulate", file, "--chip", "tpu-v3", "--mixed-precision", "pred"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("--mixed-precision 'pred' is not a floating-point type"), std::string::npos) << result.err;
  result = Gspmd({"simulate", file, "--chip", "tpu-v3", "--mixed-precision", "bf16", "--compute-type", "bf16"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("give at most one"), std::string::npos) << result.err;
  result = Gspmd({"simulate", file, "--chip", "tpu-v3", "--devices", "4"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_FALSE(result.err.empty());
}

}  // namespace
}  // namespace gspmd
