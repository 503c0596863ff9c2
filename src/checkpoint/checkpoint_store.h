// A directory of training checkpoints: DIR/step-N/ holds one zarr v2 array per carried value
// (parameters, optimizer state; chunks = the shards they were written from) and
// checkpoint.json, the metadata that makes a resume exact (step, program fingerprint, carry,
// data position, seed, metric history) with the size and CRC-32C of every file.
//
//   DIR/step-4/checkpoint.json
//   DIR/step-4/l0.w1/.zarray, DIR/step-4/l0.w1/0.0, DIR/step-4/l0.w1/0.1, ...
//
// A checkpoint is written into DIR/.tmp-step-N/ (every file on disk: syncfs), checkpoint.json last,
// then renamed to DIR/step-N/ and DIR fsynced: a step-N directory is complete, and a crash at
// any moment leaves the earlier ones as they were. Writing has three phases so that the
// devices (threads here, ranks under MPI) write their shards in parallel between a prepare
// and a commit that one writer does.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/array_source.h"
#include "ir/literal.h"
#include "runtime/spmd/spmd_plan.h"

namespace gspmd {

// One carried value.
struct CheckpointArray {
  std::string name;     // its zarr array (a directory): the input's name made file-safe
  int64_t input = -1;   // the entry parameter it restores
  int64_t output = -1;  // the output that carries it
  SpmdLeaf leaf;        // global shape, sharding and shard shape when written (chunks = leaf.local)
};

struct CheckpointFile {
  std::string path;  // relative to the checkpoint directory: "l0.w1/0.1"
  int64_t bytes = 0;
  uint32_t crc32c = 0;
};

// The files one rank wrote, as the text it sends to the rank that commits: a line per file,
// "PATH\tBYTES\tCRC32C-HEX". ReadFileList appends what WriteFileList wrote.
std::string WriteFileList(const std::vector<CheckpointFile>& files);
void ReadFileList(const std::string& text, std::vector<CheckpointFile>& files);

struct CheckpointMeta {
  int64_t step = 0;                  // steps done (the next step to run, 0-based)
  std::string fingerprint;           // ProgramFingerprint of the step
  std::string program;               // the file it was trained from (for messages)
  std::string model;                 // gspmd.model and its config without the mesh ("" if none)
  int64_t num_devices = 0;
  std::string mesh;                  // "x=2,y=4" from the model's config, "" when unknown
  std::string carry;                 // "2:0,3:1,..."
  uint64_t seed = 0;                 // of the first values and the task's batches
  std::string data_dir;              // --data ("" = the task)
  int64_t data_position = 0;         // the batch the next step takes (step k takes batch k)
  std::vector<std::string> metric_names;
  std::vector<std::vector<double>> metrics;  // per step done so far, exact
  std::vector<CheckpointArray> arrays;
  std::vector<CheckpointFile> files;  // every chunk and .zarray (not checkpoint.json)

  int64_t total_bytes() const;
};

std::string CheckpointDirName(int64_t step);  // "step-4"

// Phase 1 (one writer): makes DIR (if needed) and DIR/.tmp-step-N/ with an empty directory
// per array; returns the temporary directory. Errors (unwritable DIR, a full disk) are
// UserErrors naming the path.
std::string PrepareCheckpoint(const std::string& root, const CheckpointMeta& meta);
// Phase 2 (every device, at the same time): writes the chunks `device` owns (it is the lowest
// device holding that shard, DistinctShardOwners) from its shards, shards[i] for
// meta.arrays[i], and the .zarray of every array i with i mod num_devices == device. Returns
// the files written. Each process calls SyncFilesystem(tmp_dir) once after its devices wrote
// (durable_files.h), before the commit: one flush instead of an fsync per file.
std::vector<CheckpointFile> WriteDeviceChunks(const std::string& tmp_dir, const CheckpointMeta& meta,
                                              int64_t device, const std::vector<const Literal*>& shards);
// Phase 3 (one writer, after every device): writes checkpoint.json (meta.files: every
// device's files),
// renames to DIR/step-N (replacing a step-N left there) and, with keep > 0, deletes all but
// the newest `keep` complete checkpoints. Returns the committed directory.
std::string CommitCheckpoint(const std::string& root, const std::string& tmp_dir, const CheckpointMeta& meta,
                             int64_t keep);

// The checkpoints under DIR: complete ones (step-N with a checkpoint.json), newest first.
struct CheckpointEntry {
  std::string path;
  int64_t step = 0;
};
std::vector<CheckpointEntry> ListCheckpoints(const std::string& root);
// Temporary directories a crash left behind (.tmp-step-N), for `checkpoint ls`.
std::vector<std::string> IncompleteCheckpoints(const std::string& root);

// Reads DIR/step-N/checkpoint.json; a missing or malformed file is a UserError naming it.
CheckpointMeta ReadCheckpointMeta(const std::string& checkpoint_dir);
// Checks every file the metadata lists (present, its size, its checksum) and every array's
// .zarray; returns "" or the first problem, "FILE: what is wrong". Never throws for a
// corrupt checkpoint (a missing checkpoint.json is a problem too).
std::string VerifyCheckpoint(const std::string& checkpoint_dir);

// The stored arrays, in meta.arrays order, as sources that read only the chunks a box touches.
std::vector<std::unique_ptr<ArraySource>> OpenCheckpointArrays(const std::string& checkpoint_dir,
                                                               const CheckpointMeta& meta);

}  // namespace gspmd
