// Partial reads of .npy files (only a box, through pread with merged short runs), shard
// indexes (parsing, their checks, reading any box across shards) and output files that appear
// only when committed.
#include "io/array_source.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "io/npy.h"
#include "io/output_files.h"
#include "io/shard_index.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

namespace fs = std::filesystem;

class ArraySourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("gspmd_array_source_test_" + std::to_string(getpid()) + "_" + info->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string PathOf(const std::string& name) const { return (dir_ / name).string(); }

  // s32[rows, columns] with element [i, j] = 1000 i + j.
  static Literal Grid(int64_t rows, int64_t columns) {
    Literal value(Shape(ElementType::kS32, {rows, columns}));
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < columns; ++j) value.data<int32_t>()[i * columns + j] = static_cast<int32_t>(1000 * i + j);
    return value;
  }

  static void ExpectBox(const Literal& box, int64_t row, int64_t column) {
    const int64_t rows = box.shape().dim(0), columns = box.shape().dim(1);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < columns; ++j)
        ASSERT_EQ(box.data<int32_t>()[i * columns + j], 1000 * (row + i) + column + j) << i << "," << j;
  }

  static Literal Read(const ArraySource& source, const Box& box) {
    Literal value(Shape(source.shape().element_type(), box.sizes));
    source.ReadBox(box, value.raw(), box.sizes, std::vector<int64_t>(box.sizes.size(), 0));
    return value;
  }

  std::string WriteIndex(const std::string& name, const std::string& text) const {
    std::ofstream(PathOf(name)) << text;
    return PathOf(name);
  }

  fs::path dir_;
};

TEST_F(ArraySourceTest, NpyBoxesReadOnlyTheirElements) {
  WriteNpy(PathOf("grid.npy"), Grid(300, 700));
  std::unique_ptr<ArraySource> source = OpenArrayFile(PathOf("grid.npy"));
  EXPECT_EQ(source->shape(), Shape(ElementType::kS32, {300, 700}));
  ExpectBox(Read(*source, Box{{10, 0}, {5, 700}}), 10, 0);   // whole rows: one run
  ExpectBox(Read(*source, Box{{3, 17}, {290, 3}}), 3, 17);    // a thin column: merged runs
  ExpectBox(Read(*source, Box{{299, 699}, {1, 1}}), 299, 699);
  // Into the middle of a larger buffer.
  Literal padded(Shape(ElementType::kS32, {4, 4}));
  source->ReadBox(Box{{1, 1}, {2, 2}}, padded.raw(), {4, 4}, {1, 2});
  EXPECT_EQ(padded.data<int32_t>()[1 * 4 + 2], 1001);
  EXPECT_EQ(padded.data<int32_t>()[2 * 4 + 3], 2002);
  EXPECT_EQ(padded.data<int32_t>()[0], 0);
}

TEST_F(ArraySourceTest, ShardIndexReadsBoxesAcrossShards) {
  const Literal grid = Grid(6, 10);
  // Two row halves, the second split in columns.
  WriteNpyBoxInPlace(PathOf("s0.npy"), ElementType::kS32, grid.raw(), {6, 10}, Box{{0, 0}, {3, 10}});
  WriteNpyBoxInPlace(PathOf("s1.npy"), ElementType::kS32, grid.raw(), {6, 10}, Box{{3, 0}, {3, 4}});
  WriteNpyBoxInPlace(PathOf("s2.npy"), ElementType::kS32, grid.raw(), {6, 10}, Box{{3, 4}, {3, 6}});
  ShardIndex index;
  index.type = ElementType::kS32;
  index.dims = {6, 10};
  index.shards = {{"s0.npy", Box{{0, 0}, {3, 10}}}, {"s1.npy", Box{{3, 0}, {3, 4}}}, {"s2.npy", Box{{3, 4}, {3, 6}}}};
  const std::string path = WriteIndex("grid.json", ShardIndexJson(index));
  std::unique_ptr<ArraySource> source = OpenArrayFile(path);
  EXPECT_EQ(source->shape(), Shape(ElementType::kS32, {6, 10}));
  ExpectBox(Read(*source, Box{{2, 2}, {3, 5}}), 2, 2);  // touches all three shards
  EXPECT_TRUE(ReadArrayFile(path).BitwiseEquals(grid));
  EXPECT_EQ(ParseShardIndex(ShardIndexJson(index), path).shards.size(), 3u);
}

TEST_F(ArraySourceTest, BadIndexesAreUserErrors) {
  WriteNpy(PathOf("a.npy"), Grid(2, 4));
  auto error_of = [&](const std::string& text) {
    const std::string path = WriteIndex("bad.json", text);
    try {
      OpenArrayFile(path);
    } catch (const UserError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  const std::string head = R"({"format": "gspmd.sharded_array", "version": 1, "dtype": "s32", "shape": [4, 4], "shards": )";
  EXPECT_NE(error_of("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"format": "x"})").find("\"format\" is \"x\""), std::string::npos);
  EXPECT_NE(error_of(head + R"([{"file": "a.npy", "offsets": [0, 0], "shape": [2, 4]}]})").find("cover 8 of the 16"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"([{"file": "a.npy", "offsets": [0, 0], "shape": [2, 4]}, {"file": "a.npy", "offsets": [1, 0], "shape": [2, 4]}]})")
                .find("overlaps shard 0"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"([{"file": "a.npy", "offsets": [3, 0], "shape": [2, 4]}]})").find("reaches past"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"([{"file": "a.npy", "offsets": [0, 0], "shape": [2, 4]}, {"file": "gone.npy", "offsets": [2, 0], "shape": [2, 4]}]})")
                .find(PathOf("bad.json") + ": error: shard index: shard 1 names the file 'gone.npy'"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"([{"file": "a.npy", "offsets": [0, 0], "shape": [2, 4]}, {"file": "a.npy", "offsets": [2, 0], "shape": [2, 2]}, {"file": "a.npy", "offsets": [2, 2], "shape": [2, 2]}]})")
                .find("shard 1 ('a.npy') holds s32[2,4] but the index says s32[2,2]"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"format": "gspmd.sharded_array", "version": 1, "dtype": "f99", "shape": [1], "shards": []})")
                .find("\"dtype\""),
            std::string::npos);
}

TEST_F(ArraySourceTest, PendingFilesAppearOnlyWhenCommitted) {
  const std::string final_path = PathOf("out0.npy");
  {
    PendingFiles files;
    const std::string temporary = files.Add(final_path);
    EXPECT_EQ(FinalPathOf(temporary), final_path);
    WriteNpyInPlace(temporary, Grid(1, 1));
    EXPECT_TRUE(fs::exists(temporary));
    EXPECT_FALSE(fs::exists(final_path));
  }  // not committed: removed
  EXPECT_TRUE(fs::is_empty(dir_));
  PendingFiles files;
  WriteNpyInPlace(files.Add(final_path), Grid(1, 1));
  files.Commit();
  EXPECT_TRUE(fs::exists(final_path));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

}  // namespace
}  // namespace gspmd
