// Tests of chip description files: the built-in chips, lookup by path and $GSPMD_CHIP_PATH,
// and positioned errors for malformed files.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "simulate/chip_spec.h"
#include "support/diagnostic.h"

namespace gspmd::simulate {
namespace {

namespace fs = std::filesystem;

// A minimal valid description; tests break one field of it.
const char* kMinimal = R"({
  "name": "toy",
  "compute": {
    "matrix_flops_per_s": {"bf16": 1e12},
    "vector_flops_per_s": 1e11
  },
  "memory": {"capacity_bytes": 1000000, "bandwidth_bytes_per_s": 1e9},
  "network": {
    "levels": [{"name": "ring", "kind": "torus", "dims": ["x"], "shape": [8], "bandwidth_bytes_per_s": 1e9}]
  }
})";

std::string ErrorOf(const std::string& text) {
  try {
    ParseChipSpec(text, "toy.json");
  } catch (const UserError& error) {
    return error.what();
  }
  return "(no error)";
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return text.replace(pos, from.size(), to);
}

TEST(ChipSpecTest, BuiltinChipsLoadWithTheirPublishedFigures) {
  EXPECT_EQ(BuiltinChipNames(), (std::vector<std::string>{"a100", "h100", "tpu-v3", "tpu-v4"}));
  for (const std::string& name : BuiltinChipNames()) {
    const ChipSpec chip = LoadChipSpec(name);
    EXPECT_EQ(chip.name, name);
    EXPECT_EQ(chip.path, "builtin:" + name + ".json");
    EXPECT_FALSE(chip.levels.empty()) << name;
    EXPECT_GT(chip.hbm_bytes, 0) << name;
  }
  const ChipSpec v3 = LoadChipSpec("tpu-v3");
  EXPECT_DOUBLE_EQ(v3.matrix_flops.at("bf16"), 61.5e12);
  EXPECT_EQ(v3.hbm_bytes, int64_t{16} << 30);
  EXPECT_DOUBLE_EQ(v3.hbm_bandwidth, 450e9);
  ASSERT_EQ(v3.levels.size(), 2u);
  EXPECT_EQ(v3.levels[0].name, "core");
  EXPECT_EQ(v3.levels[0].max_shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(v3.levels[1].max_shape, (std::vector<int64_t>{32, 32}));
  EXPECT_DOUBLE_EQ(v3.levels[1].bandwidth, 1e11);
  EXPECT_EQ(v3.f32_dot.at("DEFAULT").compute_type, "bf16");
  EXPECT_EQ(v3.f32_dot.at("DEFAULT").passes, 1);
  EXPECT_EQ(v3.f32_dot.at("HIGHEST").passes, 6);
  const ChipSpec a100 = LoadChipSpec("a100");
  EXPECT_EQ(a100.f32_dot.at("DEFAULT").compute_type, "tf32");
  EXPECT_EQ(a100.levels[0].name, "nvlink");
  EXPECT_EQ(a100.levels[1].name, "ib");
}

TEST(ChipSpecTest, NumbersMayCarryTheirSource) {
  const ChipSpec chip = ParseChipSpec(
      Replace(kMinimal, "\"vector_flops_per_s\": 1e11", R"("vector_flops_per_s": {"value": 2e11, "source": "datasheet"})"),
      "toy.json");
  EXPECT_DOUBLE_EQ(chip.vector_flops, 2e11);
  EXPECT_EQ(chip.f32_dot.at("DEFAULT").compute_type, "f32");  // no f32_dot: f32 runs as f32
  EXPECT_EQ(chip.levels[0].wraparound_multiple, (std::vector<int64_t>{8}));
  EXPECT_DOUBLE_EQ(chip.Efficiency("dot"), 1.0);
}

TEST(ChipSpecTest, LoadsByPathAndFromTheSearchPath) {
  const fs::path dir = fs::temp_directory_path() / ("gspmd_chip_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "toy.json") << kMinimal;
  EXPECT_EQ(LoadChipSpec((dir / "toy.json").string()).name, "toy");
  ::setenv("GSPMD_CHIP_PATH", ("/nonexistent:" + dir.string()).c_str(), 1);
  const ChipSpec found = LoadChipSpec("toy");
  ::unsetenv("GSPMD_CHIP_PATH");
  EXPECT_EQ(found.path, (dir / "toy.json").string());
  fs::remove_all(dir);
}

TEST(ChipSpecTest, UnknownChipListsTheKnownOnes) {
  try {
    LoadChipSpec("tpu-v9");
    FAIL() << "expected an error";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("unknown chip 'tpu-v9' (built in: a100, h100, tpu-v3, tpu-v4"), std::string::npos)
        << error.what();
  }
  EXPECT_NE(std::string([] {
              try {
                LoadChipSpec("/nonexistent/chip.json");
              } catch (const UserError& error) {
                return std::string(error.what());
              }
              return std::string();
            }())
                .find("/nonexistent/chip.json: error: cannot read chip description file"),
            std::string::npos);
}

TEST(ChipSpecTest, MalformedFilesNameTheFieldAndItsPosition) {
  // Syntax: the comma is missing before line 3's key; the parser stops after reading it.
  EXPECT_NE(ErrorOf("{\n  \"name\": \"toy\"\n  \"compute\": {}\n}").find("toy.json:3:11: error: malformed JSON"), std::string::npos)
      << ErrorOf("{\n  \"name\": \"toy\"\n  \"compute\": {}\n}");
  // A number of the wrong type, at its own position.
  EXPECT_EQ(ErrorOf(Replace(kMinimal, "\"vector_flops_per_s\": 1e11", "\"vector_flops_per_s\": \"fast\"")),
            "toy.json:5:5: error: compute.vector_flops_per_s: expected a number, got string \"fast\"");
  // A misspelt field.
  EXPECT_EQ(ErrorOf(Replace(kMinimal, "\"capacity_bytes\"", "\"capacity\"")),
            "toy.json:7:14: error: memory.capacity: unknown field 'capacity' (expected one of: capacity_bytes, "
            "bandwidth_bytes_per_s)");
  // A missing field points at its object.
  EXPECT_EQ(ErrorOf(Replace(kMinimal, "\"memory\": {\"capacity_bytes\": 1000000, ", "\"memory\": {")),
            "toy.json:7:3: error: memory.capacity_bytes: missing (a required field)");
  // Values out of range.
  EXPECT_NE(ErrorOf(Replace(kMinimal, "1e9}]", "-1}]")).find("network.levels[0].bandwidth_bytes_per_s: expected a number > 0, got -1"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Replace(kMinimal, "\"kind\": \"torus\"", "\"kind\": \"ring\"")).find("expected \"switch\" or \"torus\""),
            std::string::npos);
  EXPECT_NE(ErrorOf(Replace(kMinimal, "\"dims\": [\"x\"]", "\"dims\": [\"x\", \"y\"]")).find("expected an array of 1 dimension names"),
            std::string::npos);
  const std::string efficiency = Replace(kMinimal, "\"vector_flops_per_s\": 1e11", "\"vector_flops_per_s\": 1e11, \"efficiency\": {\"dot\": 1.5}");
  EXPECT_NE(ErrorOf(efficiency).find("compute.efficiency.dot: expected an efficiency in (0, 1], got 1.5"), std::string::npos);
  const std::string precision = Replace(kMinimal, "\"vector_flops_per_s\": 1e11",
                                        "\"vector_flops_per_s\": 1e11, \"f32_dot\": {\"DEFAULT\": {\"compute_type\": \"bf16\", \"passes\": 1}}");
  EXPECT_NE(ErrorOf(precision).find("f32_dot.HIGH: missing"), std::string::npos) << ErrorOf(precision);
  EXPECT_NE(ErrorOf("[1, 2]").find("expected a JSON object describing a chip"), std::string::npos);
}

}  // namespace
}  // namespace gspmd::simulate
