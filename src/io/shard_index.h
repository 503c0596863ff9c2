// The index of a sharded array: a small JSON file naming the array's element type and shape
// and, for each distinct shard, the .npy file (next to the index) holding the box it covers.
// `gspmd run --sharded-output` writes one per result; every command that takes a global .npy
// input takes an index instead.
//
//   {"format": "gspmd.sharded_array", "version": 1, "dtype": "f32", "shape": [8, 16],
//    "shards": [{"file": "out0.shard0.npy", "offsets": [0, 0], "shape": [4, 16]},
//               {"file": "out0.shard1.npy", "offsets": [4, 0], "shape": [4, 16]}]}
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/box.h"
#include "io/npy.h"
#include "ir/element_type.h"

namespace gspmd {

inline constexpr char kShardIndexFormat[] = "gspmd.sharded_array";

struct ShardIndex {
  struct Shard {
    std::string file;  // as written in the index: relative to the index's directory (or absolute)
    Box box;           // the elements of the array it holds; the file's shape is box.sizes
  };
  ElementType type = ElementType::kInvalid;
  std::vector<int64_t> dims;
  std::vector<Shard> shards;
};

// Parses and checks an index: the JSON fields and their types, every shard inside the array,
// shards that do not overlap and together cover every element. UserErrors name the index file
// and the shard.
ShardIndex ParseShardIndex(const std::string& text, const std::string& path);
// ParseShardIndex of the file's contents.
ShardIndex ReadShardIndex(const std::string& path);

// The shard's file as a path usable from the current directory.
std::string ShardFilePath(const std::string& index_path, const ShardIndex::Shard& shard);

// The index as JSON text (deterministic: shards in the given order, one per line).
std::string ShardIndexJson(const ShardIndex& index);

}  // namespace gspmd
