// The three kinds of ArraySource: an in-memory literal, a .npy file, a sharded array.
#include "io/array_source.h"

#include <fstream>

#include "io/npy.h"
#include "io/shard_index.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

class LiteralSource final : public ArraySource {
 public:
  explicit LiteralSource(const Literal& value) : value_(value), shape_(value.element_type(), value.shape().dims()) {
    GSPMD_CHECK(value.shape().IsArray(), "an array source needs an array, got ", value.shape().ToString());
  }
  const Shape& shape() const override { return shape_; }
  const std::string& name() const override { return name_; }
  void ReadBox(const Box& box, uint8_t* dst, const std::vector<int64_t>& dst_dims,
               const std::vector<int64_t>& dst_offsets) const override {
    CopyBox(value_.raw(), shape_.dims(), box.offsets, dst, dst_dims, dst_offsets, box.sizes,
            ElementByteSize(shape_.element_type()));
  }

 private:
  const Literal& value_;
  Shape shape_;
  std::string name_ = "an in-memory value";
};

class NpyFileSource final : public ArraySource {
 public:
  explicit NpyFileSource(std::string path)
      : path_(std::move(path)), header_(ReadNpyHeader(path_)), shape_(header_.type, header_.dims) {}
  const Shape& shape() const override { return shape_; }
  const std::string& name() const override { return path_; }
  void ReadBox(const Box& box, uint8_t* dst, const std::vector<int64_t>& dst_dims,
               const std::vector<int64_t>& dst_offsets) const override {
    ReadNpyBox(path_, header_, box, dst, dst_dims, dst_offsets);
  }

 private:
  std::string path_;
  NpyHeader header_;
  Shape shape_;
};

class ShardedSource final : public ArraySource {
 public:
  explicit ShardedSource(std::string path) : path_(std::move(path)), index_(ReadShardIndex(path_)) {
    shape_ = Shape(index_.type, index_.dims);
    for (size_t i = 0; i < index_.shards.size(); ++i) {
      const ShardIndex::Shard& shard = index_.shards[i];
      const std::string file = ShardFilePath(path_, shard);
      std::ifstream probe(file, std::ios::binary);
      if (!probe)
        ThrowUserErrorAt(SourceLocation{path_, 0, 0},
                         StrCat("shard index: shard ", i, " names the file '", shard.file, "' (", file,
                                "), which does not exist or cannot be read"));
      NpyHeader header = ReadNpyHeader(file);
      if (header.type != index_.type || header.dims != shard.box.sizes)
        ThrowUserErrorAt(SourceLocation{path_, 0, 0},
                         StrCat("shard index: shard ", i, " ('", shard.file, "') holds ",
                                Shape(header.type, header.dims).ToString(false), " but the index says ",
                                Shape(index_.type, shard.box.sizes).ToString(false)));
      files_.push_back(file);
      headers_.push_back(std::move(header));
    }
  }
  const Shape& shape() const override { return shape_; }
  const std::string& name() const override { return path_; }
  void ReadBox(const Box& box, uint8_t* dst, const std::vector<int64_t>& dst_dims,
               const std::vector<int64_t>& dst_offsets) const override {
    for (size_t i = 0; i < index_.shards.size(); ++i) {
      const Box& shard_box = index_.shards[i].box;
      std::optional<Box> common = IntersectBoxes(box, shard_box);
      if (!common.has_value()) continue;
      Box in_shard{common->offsets, common->sizes};
      std::vector<int64_t> at = dst_offsets;
      for (size_t k = 0; k < at.size(); ++k) {
        in_shard.offsets[k] -= shard_box.offsets[k];
        at[k] += common->offsets[k] - box.offsets[k];
      }
      ReadNpyBox(files_[i], headers_[i], in_shard, dst, dst_dims, at);
    }
  }

 private:
  std::string path_;
  ShardIndex index_;
  Shape shape_;
  std::vector<std::string> files_;
  std::vector<NpyHeader> headers_;
};

bool StartsLikeJson(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char c = 0;
  while (in.get(c)) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{';
  }
  return false;
}

}  // namespace

Literal ArraySource::ReadAll() const {
  Literal value(shape());
  ReadBox(WholeBox(shape().dims()), value.raw(), shape().dims(), std::vector<int64_t>(shape().rank(), 0));
  return value;
}

std::unique_ptr<ArraySource> MakeLiteralSource(const Literal& value) {
  return std::make_unique<LiteralSource>(value);
}

std::unique_ptr<ArraySource> OpenArrayFile(const std::string& path) {
  if (StartsLikeJson(path)) return std::make_unique<ShardedSource>(path);
  return std::make_unique<NpyFileSource>(path);
}

Literal ReadArrayFile(const std::string& path) { return OpenArrayFile(path)->ReadAll(); }

}  // namespace gspmd
