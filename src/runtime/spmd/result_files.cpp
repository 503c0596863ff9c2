// Writing a run's results: global .npy files, or shards and their index.
#include "runtime/spmd/result_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "io/npy.h"
#include "runtime/spmd/spmd_executor.h"
#include "support/allocation.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

std::string Join(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).string();
}

std::string ShardFileName(size_t result, size_t shard) {
  return "out" + std::to_string(result) + ".shard" + std::to_string(shard) + ".npy";
}

}  // namespace

std::string GlobalResultPath(const std::string& out_dir, size_t result) {
  return Join(out_dir, "out" + std::to_string(result) + ".npy");
}

std::string ResultIndexPath(const std::string& out_dir, size_t result) {
  return Join(out_dir, "out" + std::to_string(result) + ".json");
}

void CreateOutputDirectory(const std::string& out_dir) {
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (error)
    ThrowUserErrorAt(SourceLocation{out_dir, 0, 0},
                     "cannot create the output directory: " + error.message() + " (expected a writable path)");
}

ResultShards ShardsOfResult(const SpmdPlan& plan, size_t result) {
  const SpmdLeaf& leaf = plan.results[result];
  ResultShards shards;
  shards.index.type = leaf.global.element_type();
  shards.index.dims = leaf.global.dims();
  for (int64_t owner : DistinctShardOwners(leaf, plan.num_devices)) {
    const Sharding::ShardRegion region = ShardRegionOf(leaf, owner);
    Box box{region.offsets, region.sizes};
    if (box.num_elements() == 0 && !box.sizes.empty()) continue;
    shards.index.shards.push_back({ShardFileName(result, shards.index.shards.size()), std::move(box)});
    shards.owners.push_back(owner);
  }
  return shards;
}

void WriteOwnedShards(const SpmdPlan& plan, const std::string& out_dir, std::span<const int64_t> devices,
                      const std::vector<std::vector<Literal>>& results, PendingFiles& files) {
  for (size_t i = 0; i < plan.results.size(); ++i) {
    const ResultShards shards = ShardsOfResult(plan, i);
    for (size_t k = 0; k < shards.owners.size(); ++k) {
      auto it = std::find(devices.begin(), devices.end(), shards.owners[k]);
      if (it == devices.end()) continue;
      const Literal& value = results[static_cast<size_t>(it - devices.begin())][i];
      const Box& box = shards.index.shards[k].box;
      // The owner's value is its padded shard; the file holds the valid box at its origin.
      const Box at_origin{std::vector<int64_t>(box.sizes.size(), 0), box.sizes};
      WriteNpyBoxInPlace(files.Add(Join(out_dir, shards.index.shards[k].file)), value.element_type(), value.raw(),
                         value.shape().dims(), at_origin);
    }
  }
}

void WriteResultIndexes(const SpmdPlan& plan, const std::string& out_dir, PendingFiles& files) {
  for (size_t i = 0; i < plan.results.size(); ++i) {
    const std::string path = ResultIndexPath(out_dir, i);
    const std::string temporary = files.Add(path);
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << ShardIndexJson(ShardsOfResult(plan, i).index);
    out.flush();
    if (!out) ThrowUserErrorAt(SourceLocation{path, 0, 0}, "cannot write the shard index (expected a writable path)");
  }
}

std::vector<std::string> ResultLines(const SpmdPlan& plan, const std::string& out_dir, bool sharded) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < plan.results.size(); ++i) {
    const std::string shape = plan.results[i].global.ToString(false);
    if (!sharded) {
      lines.push_back(GlobalResultPath(out_dir, i) + " " + shape);
      continue;
    }
    const size_t count = ShardsOfResult(plan, i).owners.size();
    lines.push_back(ResultIndexPath(out_dir, i) + " " + shape + " (" + std::to_string(count) +
                    (count == 1 ? " shard)" : " shards)"));
  }
  return lines;
}

std::vector<std::string> WriteResultsFromAllDevices(const SpmdPlan& plan, const std::vector<std::vector<Literal>>& results,
                                                    const std::string& out_dir, bool sharded) {
  CreateOutputDirectory(out_dir);
  PendingFiles files;
  if (sharded) {
    std::vector<int64_t> devices;
    for (int64_t d = 0; d < plan.num_devices; ++d) devices.push_back(d);
    WriteOwnedShards(plan, out_dir, devices, results, files);
    WriteResultIndexes(plan, out_dir, files);  // added last: renamed after every shard
  } else {
    for (size_t i = 0; i < plan.results.size(); ++i) {
      std::vector<const Literal*> shards;
      for (const std::vector<Literal>& leaves : results) shards.push_back(&leaves[i]);
      const std::string path = GlobalResultPath(out_dir, i);
      Literal global;
      try {
        global = ReportingOutOfMemory(StrCat("for ", plan.results[i].global.ToString(false)), [&] {
          return AssembleGlobal(shards, plan.results[i].sharding, plan.results[i].global);
        });
      } catch (const UserError& error) {
        // Memory for the global array: the message says which output needed it.
        if (error.HasLocation()) throw;
        ThrowUserErrorAt(SourceLocation{path, 0, 0},
                         StrCat(error.what(), " (assembling the global result from the devices' shards; "
                                              "--sharded-output writes the shards without assembling them)"),
                         error.kind());
      }
      WriteNpyInPlace(files.Add(path), global);
    }
  }
  files.Commit();
  return ResultLines(plan, out_dir, sharded);
}

}  // namespace gspmd
