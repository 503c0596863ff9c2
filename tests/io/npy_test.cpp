// Tests for .npy reading and writing: round trips of every type, malformed files, the corpus.
#include "io/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

namespace fs = std::filesystem;

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("gspmd_npy_test_" + std::to_string(getpid()) + "_" + info->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string PathOf(const std::string& name) const { return (dir_ / name).string(); }

  // Writes raw bytes to a file in the temp dir and returns its path.
  std::string WriteBytes(const std::string& name, const std::string& bytes) const {
    std::string path = PathOf(name);
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path;
  }

  // A version-1.0 file with the given header text and data bytes.
  std::string WriteNpyV1(const std::string& name, const std::string& header, const std::string& data) const {
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
    bytes.push_back(static_cast<char>(header.size() & 0xff));
    bytes.push_back(static_cast<char>(header.size() >> 8));
    return WriteBytes(name, bytes + header + data);
  }

  // Reads path expecting a UserError; returns its message.
  static std::string ReadError(const std::string& path) {
    try {
      ReadNpy(path);
    } catch (const UserError& error) {
      return error.what();
    }
    ADD_FAILURE() << "no error reading " << path;
    return "";
  }

  fs::path dir_;
};

Literal Iota(ElementType type, std::vector<int64_t> dims) {
  Literal literal(Shape(type, std::move(dims)));
  for (int64_t i = 0; i < literal.element_count(); ++i)
    literal.SetFromDouble(i, type == ElementType::kPred ? (i % 3 == 0) : static_cast<double>(i % 7) - 3.0 * IsSignedInteger(type) - 1.5 * IsFloatingPoint(type));
  return literal;
}

TEST_F(NpyTest, RoundTripsEveryTypeAndRank) {
  const ElementType types[] = {
      ElementType::kPred, ElementType::kS8,  ElementType::kS16, ElementType::kS32, ElementType::kS64,
      ElementType::kU8,   ElementType::kU16, ElementType::kU32, ElementType::kU64, ElementType::kF16,
      ElementType::kBF16, ElementType::kF32, ElementType::kF64,
  };
  const std::vector<std::vector<int64_t>> shapes = {{}, {5}, {2, 3}, {2, 0, 4}, {3, 1, 2, 2}};
  for (ElementType type : types) {
    for (const auto& dims : shapes) {
      Literal original = Iota(type, dims);
      std::string path = PathOf("x.npy");
      WriteNpy(path, original);
      Literal loaded = ReadNpy(path);
      EXPECT_TRUE(loaded.BitwiseEquals(original))
          << ElementTypeName(type) << " " << original.shape().ToString() << " -> " << loaded.shape().ToString();
      EXPECT_EQ(loaded.shape().dims(), dims);
      EXPECT_EQ(loaded.element_type(), type);
      EXPECT_EQ(fs::file_size(path) % 64, static_cast<uintmax_t>(original.byte_size() % 64))
          << "header not padded to 64 bytes";
    }
  }
}

TEST_F(NpyTest, WritesNumpyCompatibleHeader) {
  WriteNpy(PathOf("a.npy"), Iota(ElementType::kF32, {2, 3}));
  std::ifstream in(PathOf("a.npy"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 24u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t header_length = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
  EXPECT_EQ((10 + header_length) % 64, 0u);
  EXPECT_EQ(bytes.size(), 10 + header_length + 24);
  EXPECT_EQ(bytes.find("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"), 10u);
  EXPECT_EQ(bytes[10 + header_length - 1], '\n');

  WriteNpy(PathOf("s.npy"), Literal::Scalar(ElementType::kS64, 7));
  Literal scalar = ReadNpy(PathOf("s.npy"));
  EXPECT_EQ(scalar.shape().rank(), 0);
  EXPECT_EQ(scalar.GetAsInt64(0), 7);

  WriteNpy(PathOf("b.npy"), Iota(ElementType::kBF16, {4}));
  std::ifstream bin(PathOf("b.npy"), std::ios::binary);
  std::string bbytes((std::istreambuf_iterator<char>(bin)), std::istreambuf_iterator<char>());
  EXPECT_NE(bbytes.find("'descr': 'bfloat16'"), std::string::npos);
  EXPECT_NE(bbytes.find("'shape': (4,)"), std::string::npos);
}

TEST_F(NpyTest, ReadsVersions2And3) {
  for (char major : {'\x02', '\x03'}) {
    std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n";
    std::string bytes = std::string("\x93NUMPY", 6) + major + '\0';
    uint32_t len = static_cast<uint32_t>(header.size());
    bytes.append(reinterpret_cast<const char*>(&len), 4);
    int32_t data[2] = {-5, 9};
    bytes += header + std::string(reinterpret_cast<const char*>(data), 8);
    Literal literal = ReadNpy(WriteBytes("v.npy", bytes));
    ASSERT_EQ(literal.element_type(), ElementType::kS32);
    EXPECT_EQ(literal.GetAsInt64(0), -5);
    EXPECT_EQ(literal.GetAsInt64(1), 9);
  }
}

TEST_F(NpyTest, ConvertsBigEndian) {
  std::string data("\x00\x00\x01\x02\xff\xff\xff\xfe", 8);
  Literal literal = ReadNpy(WriteNpyV1("be.npy", "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", data));
  EXPECT_EQ(literal.GetAsInt64(0), 0x0102);
  EXPECT_EQ(literal.GetAsInt64(1), -2);
  float one = 1.0f;
  uint8_t be[4];
  std::memcpy(be, &one, 4);
  std::string fdata = {static_cast<char>(be[3]), static_cast<char>(be[2]), static_cast<char>(be[1]),
                       static_cast<char>(be[0])};
  Literal f = ReadNpy(WriteNpyV1("bef.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (), }", fdata));
  EXPECT_EQ(f.GetAsDouble(0), 1.0);
}

TEST_F(NpyTest, AcceptsV2AsBFloat16AndNormalizesBools) {
  BFloat16 value(2.5f);
  std::string data(reinterpret_cast<const char*>(&value.bits), 2);
  Literal bf = ReadNpy(WriteNpyV1("bf.npy", "{'descr': '<V2', 'fortran_order': False, 'shape': (1,), }", data));
  EXPECT_EQ(bf.element_type(), ElementType::kBF16);
  EXPECT_EQ(bf.GetAsDouble(0), 2.5);
  Literal pred = ReadNpy(WriteNpyV1("p.npy", "{\"descr\": \"|b1\", \"fortran_order\": False, \"shape\": [3]}",
                                    std::string("\x00\x07\x01", 3)));
  EXPECT_EQ(pred.raw()[0], 0);
  EXPECT_EQ(pred.raw()[1], 1);
  EXPECT_EQ(pred.raw()[2], 1);
}

TEST_F(NpyTest, MalformedFilesAreUserErrors) {
  const std::string good_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string eight_bytes(8, '\0');
  struct Case {
    std::string name;
    std::string path;
    std::string expected_message;
  };
  std::vector<Case> cases;
  auto add = [&](const std::string& name, const std::string& path, const std::string& what) {
    cases.push_back({name, path, path + ": error: " + what});
  };
  add("missing", PathOf("does_not_exist.npy"), "cannot open file (expected a readable .npy file)");
  add("bad magic", WriteBytes("magic.npy", "PK\x03\x04 not numpy"),
      "bad magic (expected a .npy file starting with \\x93NUMPY)");
  add("empty", WriteBytes("empty.npy", ""), "bad magic (expected a .npy file starting with \\x93NUMPY)");
  add("bad version", WriteBytes("version.npy", std::string("\x93NUMPY\x04\x00\x00\x00", 10)),
      "unsupported .npy format version 4.0 (expected 1.0, 2.0 or 3.0)");
  add("truncated length", WriteBytes("len.npy", std::string("\x93NUMPY\x01\x00\x10", 9)),
      "file is truncated in the header length (expected 2 bytes, found 1)");
  add("truncated header", WriteBytes("header.npy", std::string("\x93NUMPY\x01\x00\x40\x00{'descr'", 17)),
      "file is truncated in the header (expected 64 header bytes, found 7)");
  add("not a dict", WriteNpyV1("list.npy", "['<f4', False, (2,)]", eight_bytes),
      "header is not a dict (expected a Python dict literal starting with '{')");
  add("broken dict", WriteNpyV1("broken.npy", "{'descr' '<f4'}", eight_bytes),
      "malformed header: expected ':' after key 'descr' at offset 9 (expected a dict like {'descr': '<f4', "
      "'fortran_order': False, 'shape': (2, 3)})");
  add("missing descr", WriteNpyV1("nodescr.npy", "{'fortran_order': False, 'shape': (2,), }", eight_bytes),
      "header has no 'descr' key (expected a dtype string such as '<f4')");
  add("missing shape", WriteNpyV1("noshape.npy", "{'descr': '<f4', 'fortran_order': False}", eight_bytes),
      "header has no 'shape' key (expected a tuple of dimensions such as (2, 3))");
  add("missing fortran_order", WriteNpyV1("nofo.npy", "{'descr': '<f4', 'shape': (2,)}", eight_bytes),
      "header has no 'fortran_order' key (expected True or False)");
  add("shape not tuple", WriteNpyV1("shapestr.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': '2'}",
                                    eight_bytes),
      "header key 'shape' has the wrong type (expected a tuple of dimensions such as (2, 3))");
  add("fortran order", WriteNpyV1("fortran.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2,)}",
                                  eight_bytes),
      "fortran_order is True (expected C-order data, fortran_order False)");
  add("unknown dtype", WriteNpyV1("complex.npy", "{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}",
                                  eight_bytes),
      "unsupported dtype '<c8' (expected one of |b1, |i1, <i2, <i4, <i8, |u1, <u2, <u4, <u8, <f2, <f4, <f8, "
      "bfloat16 or <V2)");
  add("short data", WriteNpyV1("short.npy", good_header, std::string(5, '\0')),
      "data is shorter than the shape needs (expected 8 bytes for shape (2,) of '<f4', found 5)");
  add("long data", WriteNpyV1("long.npy", good_header, std::string(12, '\0')),
      "file has 4 bytes after the data (expected exactly 8 bytes for shape (2,) of '<f4')");
  add("huge shape",
      WriteNpyV1("huge.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (999999999999, 999999999999)}",
                 eight_bytes),
      "shape (999999999999, 999999999999) is too large (expected an array that fits in memory)");
  for (const Case& c : cases) EXPECT_EQ(ReadError(c.path), c.expected_message) << c.name;
}

TEST_F(NpyTest, WriteToMissingDirectoryIsUserError) {
  std::string path = PathOf("no/such/dir/x.npy");
  try {
    WriteNpy(path, Iota(ElementType::kF32, {2}));
    ADD_FAILURE() << "no error";
  } catch (const UserError& error) {
    EXPECT_EQ(std::string(error.what()), path + ": error: cannot open file for writing (expected a writable path)");
  }
}

TEST(NpyCorpusTest, ReadsEveryCorpusFile) {
  const fs::path corpus = fs::path(GSPMD_TEST_DATA_DIR) / "corpus";
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(corpus)) {
    if (entry.path().extension() != ".npy") continue;
    Literal literal = ReadNpy(entry.path().string());
    EXPECT_TRUE(literal.element_type() == ElementType::kF32 || literal.element_type() == ElementType::kS32)
        << entry.path();
    ++files;
  }
  EXPECT_GT(files, 50);
  // A known shape: the first parameter of transformer_train_1l is the (batch, seq, model) input.
  Literal x = ReadNpy((corpus / "gspmd/transformer_train_1l/in0.npy").string());
  EXPECT_EQ(x.shape().rank(), 3);
}

}  // namespace
}  // namespace gspmd
