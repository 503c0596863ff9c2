// The files a run writes into its output directory: out<i>.npy per result (global), or with
// --sharded-output out<i>.json (a shard index) plus one out<i>.shard<k>.npy per distinct shard.
// Everything is written under temporary names (PendingFiles) and appears when committed.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "io/output_files.h"
#include "io/shard_index.h"
#include "runtime/spmd/spmd_plan.h"

namespace gspmd {

std::string GlobalResultPath(const std::string& out_dir, size_t result);
std::string ResultIndexPath(const std::string& out_dir, size_t result);

// Creates out_dir (and parents); UserError naming it when that fails.
void CreateOutputDirectory(const std::string& out_dir);

// The index of result i: one shard per distinct non-empty tile, owned (written) by the lowest
// device holding it, named out<i>.shard<k>.npy.
struct ResultShards {
  ShardIndex index;
  std::vector<int64_t> owners;  // parallel to index.shards
};
ResultShards ShardsOfResult(const SpmdPlan& plan, size_t result);

// Writes, for every result, the shards whose owner is one of `devices`, from results[j] (the
// leaves of devices[j]), into `files`.
void WriteOwnedShards(const SpmdPlan& plan, const std::string& out_dir, std::span<const int64_t> devices,
                      const std::vector<std::vector<Literal>>& results, PendingFiles& files);
// Writes every result's index into `files`.
void WriteResultIndexes(const SpmdPlan& plan, const std::string& out_dir, PendingFiles& files);

// The line printed for each result once committed: "DIR/out0.npy f32[8,16]" or
// "DIR/out0.json f32[8,16] (4 shards)".
std::vector<std::string> ResultLines(const SpmdPlan& plan, const std::string& out_dir, bool sharded);

// The threads backend: every device's results are in this process (results[d] for device d).
// Writes and commits every file; returns the lines to print.
std::vector<std::string> WriteResultsFromAllDevices(const SpmdPlan& plan, const std::vector<std::vector<Literal>>& results,
                                                    const std::string& out_dir, bool sharded);

}  // namespace gspmd
