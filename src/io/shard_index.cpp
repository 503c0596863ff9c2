// Shard index files: JSON parsing with checks that name the index and the shard, and writing.
#include "io/shard_index.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "support/allocation.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

using Json = nlohmann::json;

[[noreturn]] void Fail(const std::string& path, const std::string& message) {
  ThrowUserErrorAt(SourceLocation{path, 0, 0}, "shard index: " + message);
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

std::vector<int64_t> IntList(const Json& value, const std::string& what, const std::string& path) {
  if (!value.is_array()) Fail(path, what + " must be a list of non-negative integers");
  std::vector<int64_t> ints;
  for (const Json& element : value) {
    if (!element.is_number_integer() || element.get<int64_t>() < 0)
      Fail(path, what + " must be a list of non-negative integers, got " + element.dump());
    ints.push_back(element.get<int64_t>());
  }
  return ints;
}

const Json& Field(const Json& object, const char* key, const std::string& where, const std::string& path) {
  auto it = object.find(key);
  if (it == object.end()) Fail(path, where + " has no \"" + key + "\" field");
  return *it;
}

std::string ShardName(size_t index, const std::string& file) {
  return "shard " + std::to_string(index) + " ('" + file + "')";
}

void CheckShardsTileTheArray(const ShardIndex& index, const std::string& path) {
  int64_t total = 1;
  for (int64_t dim : index.dims) total *= dim;
  int64_t covered = 0;
  for (size_t i = 0; i < index.shards.size(); ++i) {
    const ShardIndex::Shard& shard = index.shards[i];
    if (shard.box.offsets.size() != index.dims.size() || shard.box.sizes.size() != index.dims.size())
      Fail(path, ShardName(i, shard.file) + " has offsets " + DimsText(shard.box.offsets) + " and shape " +
                     DimsText(shard.box.sizes) + ", expected " + std::to_string(index.dims.size()) +
                     " dimensions like the array " + DimsText(index.dims));
    for (size_t k = 0; k < index.dims.size(); ++k) {
      if (shard.box.offsets[k] + shard.box.sizes[k] > index.dims[k])
        Fail(path, ShardName(i, shard.file) + " at offsets " + DimsText(shard.box.offsets) + " with shape " +
                       DimsText(shard.box.sizes) + " reaches past the array's shape " + DimsText(index.dims));
    }
    covered += shard.box.num_elements();
    for (size_t j = 0; j < i; ++j) {
      if (shard.box.num_elements() == 0 || index.shards[j].box.num_elements() == 0) continue;
      if (IntersectBoxes(shard.box, index.shards[j].box).has_value())
        Fail(path, ShardName(i, shard.file) + " overlaps " + ShardName(j, index.shards[j].file) +
                       " (expected each element in exactly one shard)");
    }
  }
  if (covered != total)
    Fail(path, "the shards cover " + std::to_string(covered) + " of the " + std::to_string(total) +
                   " elements of the array " + DimsText(index.dims) + " (expected each element in exactly one shard)");
}

}  // namespace

ShardIndex ParseShardIndex(const std::string& text, const std::string& path) {
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::parse_error& error) {
    Fail(path, std::string("not valid JSON: ") + error.what());
  }
  if (!json.is_object()) Fail(path, "expected a JSON object with \"format\": \"" + std::string(kShardIndexFormat) + "\"");
  const Json& format = Field(json, "format", "the index", path);
  if (!format.is_string() || format.get<std::string>() != kShardIndexFormat)
    Fail(path, "\"format\" is " + format.dump() + ", expected \"" + kShardIndexFormat + "\"");
  const Json& version = Field(json, "version", "the index", path);
  if (!version.is_number_integer() || version.get<int64_t>() != 1)
    Fail(path, "\"version\" is " + version.dump() + ", expected 1");
  const Json& dtype = Field(json, "dtype", "the index", path);
  ShardIndex index;
  if (dtype.is_string()) {
    std::optional<ElementType> type = ParseDtypeName(dtype.get<std::string>());
    if (type.has_value() && IsArrayType(*type)) index.type = *type;
  }
  if (index.type == ElementType::kInvalid)
    Fail(path, "\"dtype\" is " + dtype.dump() + ", expected an element type such as \"f32\", \"bf16\", \"s32\" or \"pred\"");
  index.dims = IntList(Field(json, "shape", "the index", path), "\"shape\"", path);
  const Json& shards = Field(json, "shards", "the index", path);
  if (!shards.is_array() || shards.empty()) Fail(path, "\"shards\" must be a non-empty list");
  for (size_t i = 0; i < shards.size(); ++i) {
    const Json& entry = shards[i];
    const std::string where = "shard " + std::to_string(i);
    if (!entry.is_object()) Fail(path, where + " must be an object with \"file\", \"offsets\" and \"shape\"");
    const Json& file = Field(entry, "file", where, path);
    if (!file.is_string() || file.get<std::string>().empty()) Fail(path, where + ": \"file\" must be a file name");
    ShardIndex::Shard shard;
    shard.file = file.get<std::string>();
    shard.box.offsets = IntList(Field(entry, "offsets", where, path), where + " \"offsets\"", path);
    shard.box.sizes = IntList(Field(entry, "shape", where, path), where + " \"shape\"", path);
    index.shards.push_back(std::move(shard));
  }
  CheckShardsTileTheArray(index, path);
  return index;
}

ShardIndex ReadShardIndex(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ThrowUserErrorAt(SourceLocation{path, 0, 0}, "cannot open file (expected a readable shard index)");
  // Not `stream << in.rdbuf()`: it swallows a failed allocation and leaves the text cut short.
  const std::string text = ReportingOutOfMemory(StrCat("while reading the shard index ", path), [&] {
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  });
  return ParseShardIndex(text, path);
}

std::string ShardFilePath(const std::string& index_path, const ShardIndex::Shard& shard) {
  const std::filesystem::path file(shard.file);
  if (file.is_absolute()) return shard.file;
  return (std::filesystem::path(index_path).parent_path() / file).string();
}

std::string ShardIndexJson(const ShardIndex& index) {
  auto list = [](const std::vector<int64_t>& ints) { return Json(ints).dump(); };
  std::string text = "{\"format\": \"" + std::string(kShardIndexFormat) + "\", \"version\": 1, \"dtype\": \"" +
                     std::string(ElementTypeName(index.type)) + "\", \"shape\": " + list(index.dims) +
                     ",\n \"shards\": [\n";
  for (size_t i = 0; i < index.shards.size(); ++i) {
    const ShardIndex::Shard& shard = index.shards[i];
    text += "  {\"file\": " + Json(shard.file).dump() + ", \"offsets\": " + list(shard.box.offsets) +
            ", \"shape\": " + list(shard.box.sizes) + "}";
    text += i + 1 < index.shards.size() ? ",\n" : "\n";
  }
  return text + " ]}\n";
}

}  // namespace gspmd
