// The checkpoint store without the trainer: zarr v2 metadata and chunk keys, shards written
// by their owners on one layout and read back exactly on another (reshard on load, uneven
// edges, partial replication), verify naming the damaged file, and program fingerprints that
// ignore the mesh but not the model.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "checkpoint/checkpoint_store.h"
#include "checkpoint/durable_files.h"
#include "checkpoint/program_fingerprint.h"
#include "checkpoint/zarr_array.h"
#include "runtime/spmd/spmd_executor.h"
#include "sharding/sharding_text.h"
#include "text/parser.h"

namespace gspmd {
namespace {

namespace fs = std::filesystem;

class CheckpointStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gspmd_checkpoint_store_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static SpmdLeaf Leaf(const Shape& global, const std::string& sharding) {
    SpmdLeaf leaf;
    leaf.sharding = ParseSharding(sharding);
    leaf.global = global;
    leaf.local = Shape(global.element_type(), leaf.sharding.ShardDims(global.dims()));
    return leaf;
  }

  static Literal Iota(const Shape& shape) {
    Literal value(shape);
    for (int64_t i = 0; i < value.element_count(); ++i) value.SetFromDouble(i, static_cast<double>(i) * 0.5 - 3);
    return value;
  }

  // Writes `values` (global) as step `step` from every device's shards of `leaves`.
  std::string Write(int64_t step, int64_t devices, const std::vector<Literal>& values,
                    const std::vector<SpmdLeaf>& leaves) {
    CheckpointMeta meta;
    meta.step = step;
    meta.fingerprint = "0123456789abcdef";
    meta.num_devices = devices;
    for (size_t i = 0; i < leaves.size(); ++i)
      meta.arrays.push_back({"v" + std::to_string(i), static_cast<int64_t>(i), static_cast<int64_t>(i), leaves[i]});
    const std::string tmp = PrepareCheckpoint(dir_.string(), meta);
    for (int64_t d = 0; d < devices; ++d) {
      std::vector<Literal> shards;
      for (size_t i = 0; i < leaves.size(); ++i) shards.push_back(ShardOfGlobal(values[i], leaves[i].sharding, d));
      std::vector<const Literal*> pointers;
      for (const Literal& shard : shards) pointers.push_back(&shard);
      for (CheckpointFile& file : WriteDeviceChunks(tmp, meta, d, pointers)) meta.files.push_back(file);
    }
    SyncFilesystem(tmp);
    return CommitCheckpoint(dir_.string(), tmp, meta, /*keep=*/2);
  }

  fs::path dir_;
};

TEST_F(CheckpointStoreTest, ZarrMetadataIsWhatZarrV2Writes) {
  const ZarrArrayMeta meta{Shape(ElementType::kF32, {32, 64}), {16, 16}};
  EXPECT_EQ(ZarrArrayJson(meta),
            "{\n  \"zarr_format\": 2,\n  \"shape\": [\n    32,\n    64\n  ],\n  \"chunks\": [\n    16,\n    16\n  ],\n"
            "  \"dtype\": \"<f4\",\n  \"order\": \"C\",\n  \"compressor\": null,\n  \"filters\": null,\n"
            "  \"fill_value\": 0,\n  \"dimension_separator\": \".\"\n}\n");
  EXPECT_EQ(ChunkKey({0, 3}), "0.3");
  EXPECT_EQ(ChunkKey({}), "0");
  EXPECT_EQ(ZarrDtype(ElementType::kS32), "<i4");
  EXPECT_EQ(ZarrDtype(ElementType::kPred), "|b1");
  EXPECT_EQ(ZarrDtype(ElementType::kBF16), "|V2");  // what zarr opens (it refuses "<V2")
  const ZarrArrayMeta read = ParseZarrArrayJson(ZarrArrayJson(meta), "x/.zarray", ElementType::kF32);
  EXPECT_EQ(read.chunks, meta.chunks);
  EXPECT_EQ(read.shape.dims(), meta.shape.dims());
  try {
    ParseZarrArrayJson(R"({"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<f4", "compressor": {"id": "zlib"}})",
                       "x/.zarray", ElementType::kF32);
    FAIL() << "a compressed array was read";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("x/.zarray: error: the array is compressed"), std::string::npos) << e.what();
  }
}

// Written on 8 devices (2x4, uneven edges, a partially replicated value, a scalar), read on 4
// (2x2), on 1 and on another split: every device's shard equals the slice of the global value.
TEST_F(CheckpointStoreTest, ShardsWrittenOnOneLayoutReadExactlyOnAnother) {
  const std::vector<Shape> shapes = {Shape(ElementType::kF32, {6, 8}), Shape(ElementType::kF32, {5, 7}),
                                     Shape(ElementType::kS32, {4, 6}), Shape(ElementType::kS32, {})};
  std::vector<Literal> values;
  for (const Shape& shape : shapes) values.push_back(Iota(shape));
  const std::vector<SpmdLeaf> written = {Leaf(shapes[0], "{devices=[2,4]<=[8]}"), Leaf(shapes[1], "{devices=[2,4]<=[8]}"),
                                         Leaf(shapes[2], "{devices=[1,2,4]<=[8] last_tile_dim_replicate}"),
                                         Leaf(shapes[3], "{replicated}")};
  const std::string path = Write(3, 8, values, written);
  EXPECT_EQ(fs::path(path).filename(), "step-3");
  EXPECT_FALSE(fs::exists(dir_ / ".tmp-step-3"));
  EXPECT_TRUE(fs::exists(dir_ / "step-3" / "v1" / "1.3"));   // rows 3..4 (of 3), columns 6..6 (of 2)
  EXPECT_EQ(fs::file_size(dir_ / "step-3" / "v1" / "1.3"), 3 * 2 * 4u);  // padded to the chunk
  EXPECT_TRUE(fs::exists(dir_ / "step-3" / "v3" / "0"));
  EXPECT_EQ(VerifyCheckpoint(path), "");

  const CheckpointMeta meta = ReadCheckpointMeta(path);
  EXPECT_EQ(meta.files.size(), 8u + 8u + 2u + 1u + 4u);  // chunks (one writer each) + .zarray
  const std::vector<std::unique_ptr<ArraySource>> sources = OpenCheckpointArrays(path, meta);
  for (const std::string& layout : {"{devices=[2,2]<=[4]}", "{devices=[1,3]<=[3]}", "{replicated}"}) {
    const Sharding sharding = ParseSharding(layout);
    const int64_t devices = std::max<int64_t>(1, sharding.RequiredDeviceCount());
    for (size_t i = 0; i + 1 < values.size(); ++i)
      for (int64_t d = 0; d < devices; ++d) {
        const Literal read = ReadShard(*sources[i], sharding, d);
        const Literal expected = ShardOfGlobal(values[i], sharding, d);
        ASSERT_EQ(read.byte_size(), expected.byte_size());
        EXPECT_EQ(std::memcmp(read.raw(), expected.raw(), expected.byte_size()), 0) << layout << " v" << i << " d" << d;
      }
  }
  EXPECT_EQ(sources[3]->ReadAll().GetAsDouble(0), -3.0);
}

TEST_F(CheckpointStoreTest, VerifyNamesTheDamagedFile) {
  const Shape shape(ElementType::kF32, {4, 8});
  std::vector<Literal> values;
  values.push_back(Iota(shape));
  const std::string path = Write(1, 4, values, {Leaf(shape, "{devices=[1,4]<=[4]}")});
  const fs::path chunk = fs::path(path) / "v0" / "0.2";
  {
    std::fstream f(chunk, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(5);
    f.put('\x7f');
  }
  EXPECT_EQ(VerifyCheckpoint(path).rfind(chunk.string() + ": checksum ", 0), 0u) << VerifyCheckpoint(path);
  fs::resize_file(chunk, 3);
  EXPECT_EQ(VerifyCheckpoint(path), chunk.string() + ": 3 bytes, expected 32 (truncated)");
  fs::remove(fs::path(path) / "checkpoint.json");
  EXPECT_NE(VerifyCheckpoint(path).find("checkpoint.json: missing: checkpoint step-1 has no metadata"), std::string::npos)
      << VerifyCheckpoint(path);
}

TEST_F(CheckpointStoreTest, KeepDeletesOlderCheckpointsAfterTheCommit) {
  const Shape shape(ElementType::kF32, {4});
  std::vector<Literal> values;
  values.push_back(Iota(shape));
  for (int64_t step = 1; step <= 4; ++step) Write(step, 2, values, {Leaf(shape, "{devices=[2]<=[2]}")});
  const std::vector<CheckpointEntry> entries = ListCheckpoints(dir_.string());
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].step, 4);
  EXPECT_EQ(entries[1].step, 3);
}

TEST(Crc32cTest, IsTheCastagnoliCheckValue) {
  const std::string text = "123456789";
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  EXPECT_EQ(Crc32c(bytes), 0xe3069283u);
  EXPECT_EQ(Crc32c(bytes.subspan(4), Crc32c(bytes.first(4))), 0xe3069283u);  // continued
  EXPECT_EQ(Hex32(0xe3069283u), "e3069283");
}

TEST(ProgramFingerprintTest, IgnoresShardingsAndDeviceCountButNotTheComputation) {
  const char* kOn8 = R"(HloModule m, num_partitions=8, frontend_attributes={gspmd.config="layers=1 mesh=x=8"}
ENTRY main {
  a = f32[8,4] parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT n = f32[8,4] negate(a), sharding={devices=[8,1]<=[8]}
})";
  const char* kOn2 = R"(HloModule m, num_partitions=2, frontend_attributes={gspmd.config="layers=1 mesh=x=2"}
ENTRY main {
  a = f32[8,4] parameter(0), sharding={devices=[2,1]<=[2]}
  ROOT n = f32[8,4] negate(a), sharding={replicated}
})";
  const char* kOther = R"(HloModule m, num_partitions=2
ENTRY main {
  a = f32[8,4] parameter(0), sharding={devices=[2,1]<=[2]}
  ROOT n = f32[8,4] abs(a)
})";
  const std::string on8 = ProgramFingerprint(*ParseModule(kOn8));
  EXPECT_EQ(on8, ProgramFingerprint(*ParseModule(kOn2))) << LayoutFreeText(*ParseModule(kOn8));
  EXPECT_NE(on8, ProgramFingerprint(*ParseModule(kOther)));
  EXPECT_EQ(on8.size(), 16u);
}

}  // namespace
}  // namespace gspmd
