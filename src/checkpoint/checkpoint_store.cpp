// Checkpoint directories: prepare / write chunks / commit, list, verify, open.
#include "checkpoint/checkpoint_store.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "checkpoint/durable_files.h"
#include "checkpoint/zarr_array.h"
#include "sharding/sharding_text.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

namespace fs = std::filesystem;

constexpr char kMetaFile[] = "checkpoint.json";
constexpr char kFormat[] = "gspmd-checkpoint-1";

ZarrArrayMeta ZarrMetaOf(const CheckpointArray& array) {
  return ZarrArrayMeta{Shape(array.leaf.global.element_type(), array.leaf.global.dims()), array.leaf.local.dims()};
}

// "step-12" -> 12; -1 for any other name.
int64_t StepOfDirName(const std::string& name) {
  if (name.rfind("step-", 0) != 0 || name.size() == 5) return -1;
  int64_t step = 0;
  for (size_t i = 5; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || step > (int64_t{1} << 50)) return -1;
    step = step * 10 + (name[i] - '0');
  }
  return step;
}

[[noreturn]] void FailAt(const std::string& path, const std::string& what) {
  ThrowUserErrorAt(SourceLocation{path, 0, 0}, what, UserErrorKind::kResource);
}

void MakeDirectory(const std::string& path) {
  std::error_code error;
  fs::create_directories(path, error);
  if (error) FailAt(path, StrCat("cannot create the directory (", error.message(), ")"));
}

void RemoveTree(const std::string& path) {
  std::error_code error;
  fs::remove_all(path, error);
  if (error) FailAt(path, StrCat("cannot remove the directory (", error.message(), ")"));
}

std::string ReadWholeFile(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  ok = static_cast<bool>(in);
  if (!ok) return "";
  std::string bytes(static_cast<size_t>(in.tellg()), '\0');
  in.seekg(0);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ok = static_cast<bool>(in) || bytes.empty();
  return bytes;
}

nlohmann::ordered_json MetaJson(const CheckpointMeta& meta) {
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["step"] = meta.step;
  j["fingerprint"] = meta.fingerprint;
  j["program"] = meta.program;
  j["model"] = meta.model;
  j["num_devices"] = meta.num_devices;
  j["mesh"] = meta.mesh;
  j["carry"] = meta.carry;
  j["data"] = {{"dir", meta.data_dir}, {"position", meta.data_position}, {"seed", meta.seed}};
  // The MoE's random routing draws from the carried step counter and the model's seed (both
  // in the program and the carry), so the seed and data position are the whole random state.
  j["random_state"] = {{"seed", meta.seed}, {"routing", "from the carried step counter"}};
  j["metric_names"] = meta.metric_names;
  j["metrics"] = meta.metrics;
  nlohmann::ordered_json arrays = nlohmann::ordered_json::array();
  for (const CheckpointArray& a : meta.arrays)
    arrays.push_back({{"name", a.name},
                      {"input", a.input},
                      {"output", a.output},
                      {"dtype", ElementTypeName(a.leaf.global.element_type())},
                      {"shape", a.leaf.global.dims()},
                      {"chunks", a.leaf.local.dims()},
                      {"sharding", a.leaf.sharding.ToString()}});
  j["arrays"] = std::move(arrays);
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const CheckpointFile& f : meta.files)
    files.push_back({{"path", f.path}, {"bytes", f.bytes}, {"crc32c", Hex32(f.crc32c)}});
  j["files"] = std::move(files);
  return j;
}

CheckpointMeta MetaFromJson(const nlohmann::json& j, const std::string& file) {
  if (j.value("format", "") != kFormat)
    FailAt(file, StrCat("not a gspmd checkpoint (expected \"format\": \"", kFormat, "\")"));
  CheckpointMeta meta;
  meta.step = j.at("step").get<int64_t>();
  meta.fingerprint = j.at("fingerprint").get<std::string>();
  meta.program = j.value("program", "");
  meta.model = j.value("model", "");
  meta.num_devices = j.at("num_devices").get<int64_t>();
  meta.mesh = j.value("mesh", "");
  meta.carry = j.value("carry", "");
  meta.data_dir = j.at("data").value("dir", "");
  meta.data_position = j.at("data").at("position").get<int64_t>();
  meta.seed = j.at("data").at("seed").get<uint64_t>();
  meta.metric_names = j.at("metric_names").get<std::vector<std::string>>();
  meta.metrics = j.at("metrics").get<std::vector<std::vector<double>>>();
  for (const nlohmann::json& a : j.at("arrays")) {
    CheckpointArray array;
    array.name = a.at("name").get<std::string>();
    array.input = a.at("input").get<int64_t>();
    array.output = a.at("output").get<int64_t>();
    const std::string dtype = a.at("dtype").get<std::string>();
    const std::optional<ElementType> type = ParseElementType(dtype);
    if (!type || ZarrDtype(*type).empty()) FailAt(file, StrCat("array ", array.name, ": unknown dtype '", dtype, "'"));
    array.leaf.global = Shape(*type, a.at("shape").get<std::vector<int64_t>>());
    array.leaf.local = Shape(*type, a.at("chunks").get<std::vector<int64_t>>());
    if (array.leaf.local.rank() != array.leaf.global.rank())
      FailAt(file, StrCat("array ", array.name, ": chunks and shape differ in rank"));
    try {
      array.leaf.sharding = ParseSharding(a.at("sharding").get<std::string>());
    } catch (const std::exception& e) {
      FailAt(file, StrCat("array ", array.name, ": sharding does not read: ", e.what()));
    }
    if (array.name.empty() || array.name.find('/') != std::string::npos || array.name[0] == '.')
      FailAt(file, StrCat("array name '", array.name, "' is not a directory name"));
    meta.arrays.push_back(std::move(array));
  }
  for (const nlohmann::json& f : j.at("files")) {
    CheckpointFile entry;
    entry.path = f.at("path").get<std::string>();
    entry.bytes = f.at("bytes").get<int64_t>();
    entry.crc32c = static_cast<uint32_t>(std::stoul(f.at("crc32c").get<std::string>(), nullptr, 16));
    meta.files.push_back(std::move(entry));
  }
  return meta;
}

// The problem with one listed file, or "".
std::string CheckFile(const std::string& dir, const CheckpointFile& file) {
  const std::string path = (fs::path(dir) / file.path).string();
  if (file.path.find("..") != std::string::npos) return StrCat(path, ": a path outside the checkpoint");
  bool ok = false;
  const std::string bytes = ReadWholeFile(path, ok);
  if (!ok) return StrCat(path, ": missing");
  if (static_cast<int64_t>(bytes.size()) != file.bytes)
    return StrCat(path, ": ", bytes.size(), " bytes, expected ", file.bytes, bytes.size() < static_cast<size_t>(file.bytes) ? " (truncated)" : "");
  const uint32_t sum = Crc32c(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  if (sum != file.crc32c)
    return StrCat(path, ": checksum ", Hex32(sum), ", expected ", Hex32(file.crc32c), " (the bytes changed)");
  return "";
}

// Device `device`'s chunk of `array` when it is the lowest device holding that shard (and the
// shard is not padding only, which has no chunk in zarr's grid), unsynced; appended to written.
void WriteChunk(const std::string& tmp_dir, const CheckpointArray& array, int64_t device, int64_t num_devices,
                const Literal& shard, std::vector<CheckpointFile>& written) {
  const std::vector<int64_t> owners = DistinctShardOwners(array.leaf, num_devices);
  if (std::find(owners.begin(), owners.end(), device) == owners.end()) return;
  const Sharding::ShardRegion region = ShardRegionOf(array.leaf, device);
  const std::vector<int64_t>& chunks = array.leaf.local.dims();
  std::vector<int64_t> index;
  bool past_the_end = false;  // a shard of padding only: no chunk in zarr's grid
  for (size_t k = 0; k < chunks.size(); ++k) {
    index.push_back(region.offsets[k] / chunks[k]);
    past_the_end = past_the_end || region.sizes[k] == 0;
  }
  if (past_the_end) return;
  GSPMD_CHECK(shard.byte_size() == ZarrMetaOf(array).chunk_bytes(), "device ", device, "'s shard of ", array.name,
              " is ", shard.byte_size(), " bytes, its chunk ", ZarrMetaOf(array).chunk_bytes());
  const std::span<const uint8_t> bytes(shard.raw(), static_cast<size_t>(shard.byte_size()));
  const std::string relative = array.name + "/" + ChunkKey(index);
  const uint32_t crc = WriteFileUnsyncedWithCrc32c((fs::path(tmp_dir) / relative).string(), bytes);
  written.push_back({relative, shard.byte_size(), crc});
}

}  // namespace

int64_t CheckpointMeta::total_bytes() const {
  int64_t total = 0;
  for (const CheckpointFile& f : files) total += f.bytes;
  return total;
}

std::string CheckpointDirName(int64_t step) { return StrCat("step-", step); }

std::string PrepareCheckpoint(const std::string& root, const CheckpointMeta& meta) {
  MakeDirectory(root);
  const std::string tmp = (fs::path(root) / (".tmp-" + CheckpointDirName(meta.step))).string();
  if (fs::exists(tmp)) RemoveTree(tmp);  // a crash's leftover
  MakeDirectory(tmp);
  for (const CheckpointArray& array : meta.arrays) MakeDirectory((fs::path(tmp) / array.name).string());
  return tmp;
}

std::vector<CheckpointFile> WriteDeviceChunks(const std::string& tmp_dir, const CheckpointMeta& meta, int64_t device,
                                              const std::vector<const Literal*>& shards) {
  GSPMD_CHECK(shards.size() == meta.arrays.size(), "one shard per checkpoint array");
  std::vector<CheckpointFile> written;
  for (size_t i = 0; i < meta.arrays.size(); ++i) {
    const CheckpointArray& array = meta.arrays[i];
    if (static_cast<int64_t>(i) % meta.num_devices == device) {  // the .zarray: one device each
      const std::string text = ZarrArrayJson(ZarrMetaOf(array));
      const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(text.data()), text.size());
      WriteFileUnsynced((fs::path(tmp_dir) / array.name / ".zarray").string(), bytes);
      written.push_back({array.name + "/.zarray", static_cast<int64_t>(text.size()), Crc32c(bytes)});
    }
    WriteChunk(tmp_dir, array, device, meta.num_devices, *shards[i], written);
  }
  return written;
}

std::string CommitCheckpoint(const std::string& root, const std::string& tmp_dir, const CheckpointMeta& meta,
                             int64_t keep) {
  CheckpointMeta complete = meta;
  std::sort(complete.files.begin(), complete.files.end(),
            [](const CheckpointFile& a, const CheckpointFile& b) { return a.path < b.path; });
  WriteFileDurably((fs::path(tmp_dir) / kMetaFile).string(), MetaJson(complete).dump(1) + "\n");
  SyncDirectory(tmp_dir);
  const std::string final_dir = (fs::path(root) / CheckpointDirName(meta.step)).string();
  if (fs::exists(final_dir)) RemoveTree(final_dir);  // the same step written again (a resumed run)
  RenameDurably(tmp_dir, final_dir);
  if (keep > 0) {
    const std::vector<CheckpointEntry> all = ListCheckpoints(root);
    for (size_t i = static_cast<size_t>(keep); i < all.size(); ++i) RemoveTree(all[i].path);
    if (all.size() > static_cast<size_t>(keep)) SyncDirectory(root);
  }
  return final_dir;
}

std::vector<CheckpointEntry> ListCheckpoints(const std::string& root) {
  std::vector<CheckpointEntry> entries;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(root, error)) {
    const int64_t step = StepOfDirName(entry.path().filename().string());
    if (step < 0 || !entry.is_directory()) continue;
    // Listed even without checkpoint.json (lost or removed), so verify and --resume name it.
    entries.push_back({entry.path().string(), step});
  }
  std::sort(entries.begin(), entries.end(),
            [](const CheckpointEntry& a, const CheckpointEntry& b) { return a.step > b.step; });
  return entries;
}

std::vector<std::string> IncompleteCheckpoints(const std::string& root) {
  std::vector<std::string> paths;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(root, error))
    if (entry.path().filename().string().rfind(".tmp-step-", 0) == 0) paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  return paths;
}

CheckpointMeta ReadCheckpointMeta(const std::string& checkpoint_dir) {
  const std::string file = (fs::path(checkpoint_dir) / kMetaFile).string();
  bool ok = false;
  const std::string text = ReadWholeFile(file, ok);
  if (!ok) FailAt(file, StrCat("missing: checkpoint ", fs::path(checkpoint_dir).filename().string(),
                               " has no metadata (it is incomplete or was damaged)"));
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) FailAt(file, "not valid JSON (the metadata was damaged)");
  try {
    return MetaFromJson(j, file);
  } catch (const UserError&) {
    throw;
  } catch (const std::exception& e) {
    FailAt(file, StrCat("the metadata lacks a field or has one of the wrong type (", e.what(), ")"));
  }
}

std::string VerifyCheckpoint(const std::string& checkpoint_dir) {
  CheckpointMeta meta;
  try {
    meta = ReadCheckpointMeta(checkpoint_dir);
  } catch (const UserError& error) {
    std::string message = error.what();
    const std::string marker = ": error: ";
    const size_t at = message.find(marker);
    return at == std::string::npos ? message : message.substr(0, at) + ": " + message.substr(at + marker.size());
  }
  std::vector<std::string> listed;
  for (const CheckpointFile& file : meta.files) {
    std::string problem = CheckFile(checkpoint_dir, file);
    if (!problem.empty()) return problem;
    listed.push_back(file.path);
  }
  for (const CheckpointArray& array : meta.arrays) {
    const std::string zarray = array.name + "/.zarray";
    if (std::find(listed.begin(), listed.end(), zarray) == listed.end())
      return StrCat((fs::path(checkpoint_dir) / zarray).string(), ": not listed in checkpoint.json");
  }
  return "";
}

std::vector<std::unique_ptr<ArraySource>> OpenCheckpointArrays(const std::string& checkpoint_dir,
                                                               const CheckpointMeta& meta) {
  std::vector<std::unique_ptr<ArraySource>> sources;
  for (const CheckpointArray& array : meta.arrays) {
    const std::string dir = (fs::path(checkpoint_dir) / array.name).string();
    bool ok = false;
    const std::string text = ReadWholeFile(dir + "/.zarray", ok);
    if (!ok) FailAt(dir + "/.zarray", "missing");
    const ZarrArrayMeta stored = ParseZarrArrayJson(text, dir + "/.zarray", array.leaf.global.element_type());
    if (stored.shape.dims() != array.leaf.global.dims() || stored.chunks != array.leaf.local.dims())
      FailAt(dir + "/.zarray", "its shape or chunks differ from checkpoint.json");
    sources.push_back(OpenZarrArray(dir, stored));
  }
  return sources;
}

std::string WriteFileList(const std::vector<CheckpointFile>& files) {
  std::string text;
  for (const CheckpointFile& f : files) text += StrCat(f.path, "\t", f.bytes, "\t", Hex32(f.crc32c), "\n");
  return text;
}

void ReadFileList(const std::string& text, std::vector<CheckpointFile>& files) {
  std::istringstream lines(text);
  CheckpointFile f;
  std::string hex;
  while (std::getline(lines, f.path, '\t') && lines >> f.bytes >> hex) {
    lines.ignore(1);
    f.crc32c = static_cast<uint32_t>(std::stoul(hex, nullptr, 16));
    files.push_back(f);
  }
}

}  // namespace gspmd
