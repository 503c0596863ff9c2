// A global array read one box at a time, wherever it lives: an in-memory Literal, a .npy
// file, or a sharded array (a JSON index naming one .npy file per shard, see shard_index.h).
// The SPMD runtime reads each device's shard through it, so no process holds more of an input
// than its devices do.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/box.h"
#include "ir/literal.h"

namespace gspmd {

class ArraySource {
 public:
  virtual ~ArraySource() = default;
  // The array's element type and dims (no layout).
  virtual const Shape& shape() const = 0;
  // What the array is, for messages: its file, or "an in-memory value".
  virtual const std::string& name() const = 0;
  // Copies the elements of `box` (in the array) into dst, a dense array of dst_dims, at
  // dst_offsets. I/O failures are UserErrors naming the file.
  virtual void ReadBox(const Box& box, uint8_t* dst, const std::vector<int64_t>& dst_dims,
                       const std::vector<int64_t>& dst_offsets) const = 0;

  Literal ReadAll() const;
};

// Borrows `value` (an array literal), which must outlive the source.
std::unique_ptr<ArraySource> MakeLiteralSource(const Literal& value);

// A .npy file or a shard index, told apart by content (an index is JSON: it starts with '{').
// The header (or the index and every shard's header) is read and checked now; data is read
// only by ReadBox. Problems are UserErrors naming the file.
std::unique_ptr<ArraySource> OpenArrayFile(const std::string& path);

// OpenArrayFile(path)->ReadAll(): what every command accepting a global .npy input uses.
Literal ReadArrayFile(const std::string& path);

}  // namespace gspmd
