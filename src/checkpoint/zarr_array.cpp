// Zarr v2: dtypes, .zarray text, chunk keys, and reading boxes from chunk files.
#include "checkpoint/zarr_array.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "io/box.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

struct DtypeName {
  ElementType type;
  const char* zarr;
};
constexpr DtypeName kDtypes[] = {
    {ElementType::kPred, "|b1"}, {ElementType::kS8, "|i1"},  {ElementType::kS16, "<i2"}, {ElementType::kS32, "<i4"},
    {ElementType::kS64, "<i8"},  {ElementType::kU8, "|u1"},  {ElementType::kU16, "<u2"}, {ElementType::kU32, "<u4"},
    {ElementType::kU64, "<u8"},  {ElementType::kF16, "<f2"}, {ElementType::kBF16, "|V2"}, {ElementType::kF32, "<f4"},
    {ElementType::kF64, "<f8"},  {ElementType::kC64, "<c8"}, {ElementType::kC128, "<c16"},
};

class ZarrSource final : public ArraySource {
 public:
  ZarrSource(std::string dir, ZarrArrayMeta meta) : dir_(std::move(dir)), meta_(std::move(meta)) {}
  const Shape& shape() const override { return meta_.shape; }
  const std::string& name() const override { return dir_; }

  void ReadBox(const Box& box, uint8_t* dst, const std::vector<int64_t>& dst_dims,
               const std::vector<int64_t>& dst_offsets) const override {
    const std::vector<int64_t>& dims = meta_.shape.dims();
    const size_t rank = dims.size();
    // The range of chunk indices the box touches, per dimension.
    std::vector<int64_t> first(rank), last(rank);
    for (size_t k = 0; k < rank; ++k) {
      if (box.sizes[k] == 0) return;
      first[k] = box.offsets[k] / meta_.chunks[k];
      last[k] = (box.offsets[k] + box.sizes[k] - 1) / meta_.chunks[k];
    }
    std::vector<uint8_t> chunk(static_cast<size_t>(meta_.chunk_bytes()));
    std::vector<int64_t> index = first;
    while (true) {
      Box chunk_box{std::vector<int64_t>(rank), std::vector<int64_t>(rank)};
      for (size_t k = 0; k < rank; ++k) {
        chunk_box.offsets[k] = index[k] * meta_.chunks[k];
        chunk_box.sizes[k] = std::min(meta_.chunks[k], dims[k] - chunk_box.offsets[k]);
      }
      const std::optional<Box> common = rank == 0 ? std::optional<Box>(box) : IntersectBoxes(box, chunk_box);
      if (common) {
        ReadChunk(index, chunk);
        std::vector<int64_t> in_chunk(rank), in_dst(rank);
        for (size_t k = 0; k < rank; ++k) {
          in_chunk[k] = common->offsets[k] - chunk_box.offsets[k];
          in_dst[k] = dst_offsets[k] + common->offsets[k] - box.offsets[k];
        }
        CopyBox(chunk.data(), meta_.chunks, in_chunk, dst, dst_dims, in_dst, common->sizes,
                ElementByteSize(meta_.shape.element_type()));
      }
      size_t k = rank;
      while (k > 0 && index[k - 1] == last[k - 1]) {
        index[k - 1] = first[k - 1];
        --k;
      }
      if (k == 0) return;
      ++index[k - 1];
    }
  }

 private:
  void ReadChunk(const std::vector<int64_t>& index, std::vector<uint8_t>& chunk) const {
    const std::string path = dir_ + "/" + ChunkKey(index);
    std::ifstream in(path, std::ios::binary);
    if (!in) ThrowUserErrorAt(SourceLocation{path, 0, 0}, "cannot open the chunk file", UserErrorKind::kResource);
    in.read(reinterpret_cast<char*>(chunk.data()), static_cast<std::streamsize>(chunk.size()));
    const auto got = in.gcount();
    if (got != static_cast<std::streamsize>(chunk.size()) || in.peek() != std::char_traits<char>::eof())
      ThrowUserErrorAt(SourceLocation{path, 0, 0},
                       StrCat("the chunk file is not ", chunk.size(), " bytes (a chunk of ", meta_.shape.ToString(false),
                              " in chunks of ", chunk.size() / ElementByteSize(meta_.shape.element_type()),
                              " elements)"),
                       UserErrorKind::kResource);
  }

  std::string dir_;
  ZarrArrayMeta meta_;
};

}  // namespace

int64_t ZarrArrayMeta::chunk_bytes() const {
  int64_t elements = 1;
  for (int64_t c : chunks) elements *= c;
  return elements * ElementByteSize(shape.element_type());
}

std::vector<int64_t> ZarrArrayMeta::grid() const {
  std::vector<int64_t> grid;
  for (size_t k = 0; k < chunks.size(); ++k) grid.push_back((shape.dims()[k] + chunks[k] - 1) / chunks[k]);
  return grid;
}

std::string ZarrDtype(ElementType type) {
  for (const DtypeName& d : kDtypes)
    if (d.type == type) return d.zarr;
  return "";
}

std::string ZarrArrayJson(const ZarrArrayMeta& meta) {
  nlohmann::ordered_json j;
  j["zarr_format"] = 2;
  j["shape"] = meta.shape.dims();
  j["chunks"] = meta.chunks;
  j["dtype"] = ZarrDtype(meta.shape.element_type());
  j["order"] = "C";
  j["compressor"] = nullptr;
  j["filters"] = nullptr;
  // zarr reads a void type's fill value as base64 text or null, a bool's as a bool.
  const ElementType type = meta.shape.element_type();
  j["fill_value"] = type == ElementType::kBF16   ? nlohmann::ordered_json(nullptr)
                    : type == ElementType::kPred ? nlohmann::ordered_json(false)
                                                 : nlohmann::ordered_json(0);
  j["dimension_separator"] = ".";
  return j.dump(2) + "\n";
}

ZarrArrayMeta ParseZarrArrayJson(const std::string& text, const std::string& file, ElementType element_type) {
  auto bad = [&](const std::string& what) -> void {
    ThrowUserErrorAt(SourceLocation{file, 0, 0}, what);
  };
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) bad("not a zarr v2 .zarray (expected a JSON object)");
  if (j.value("zarr_format", 0) != 2) bad("not a zarr v2 array (expected \"zarr_format\": 2)");
  if (!j.contains("compressor") || !j["compressor"].is_null() || (j.contains("filters") && !j["filters"].is_null()))
    bad("the array is compressed or filtered; this reader takes raw chunks (\"compressor\": null, \"filters\": null)");
  if (j.value("order", "C") != "C") bad("expected \"order\": \"C\"");
  if (j.value("dimension_separator", ".") != ".") bad("expected \"dimension_separator\": \".\"");
  if (!j.contains("shape") || !j.contains("chunks") || !j["shape"].is_array() || !j["chunks"].is_array() ||
      j["shape"].size() != j["chunks"].size())
    bad("expected \"shape\" and \"chunks\" lists of the same length");
  const std::string dtype = j.value("dtype", "");
  if (dtype != ZarrDtype(element_type))
    bad(StrCat("dtype \"", dtype, "\" but the checkpoint says ", ElementTypeName(element_type), " (\"",
               ZarrDtype(element_type), "\")"));
  ZarrArrayMeta meta;
  meta.shape = Shape(element_type, j["shape"].get<std::vector<int64_t>>());
  meta.chunks = j["chunks"].get<std::vector<int64_t>>();
  for (size_t k = 0; k < meta.chunks.size(); ++k)
    if (meta.chunks[k] < 1 || meta.shape.dims()[k] < 0) bad("chunk dims must be positive and shape dims not negative");
  return meta;
}

std::string ChunkKey(const std::vector<int64_t>& chunk_index) {
  if (chunk_index.empty()) return "0";
  std::string key;
  for (size_t k = 0; k < chunk_index.size(); ++k) key += (k == 0 ? "" : ".") + std::to_string(chunk_index[k]);
  return key;
}

std::unique_ptr<ArraySource> OpenZarrArray(const std::string& dir, const ZarrArrayMeta& meta) {
  return std::make_unique<ZarrSource>(dir, meta);
}

}  // namespace gspmd
