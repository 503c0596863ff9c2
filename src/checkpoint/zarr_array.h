// Zarr v2 arrays on a filesystem, written and read here (no C++ zarr library is packaged for
// Debian): the .zarray metadata, chunk keys, chunk files of raw little-endian C-order bytes
// (no compressor, no filters), and an ArraySource that reads a box from the chunks it touches.
//
//   DIR/l0.w1/.zarray  {"zarr_format": 2, "shape": [32, 64], "chunks": [16, 16], "dtype": "<f4",
//                       "order": "C", "compressor": null, "filters": null, "fill_value": 0,
//                       "dimension_separator": "."}
//   DIR/l0.w1/0.3      the chunk at rows 0..15, columns 48..63 (16*16*4 bytes)
// Edge chunks are stored at the full chunk shape (zarr v2 pads them); a chunk wholly past the
// end of the array does not exist in zarr's grid and is never written.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/array_source.h"
#include "ir/shape.h"

namespace gspmd {

struct ZarrArrayMeta {
  Shape shape;                  // element type and global dims
  std::vector<int64_t> chunks;  // chunk dims (the shard shape), same rank as shape

  int64_t chunk_bytes() const;
  // Chunks along each dimension: ceil(dim / chunk) (1 for a scalar).
  std::vector<int64_t> grid() const;
};

// The zarr v2 dtype of an element type: "<f4", "<i4", "|b1", "<f2", "<f8", "<i8", "|u1", ...;
// bf16 is "|V2" (two raw bytes, numpy having no bfloat16: zarr opens it as void, and
// `.view(ml_dtypes.bfloat16)` reads it; zarr refuses "<V2"). "" when zarr cannot hold the type.
std::string ZarrDtype(ElementType type);

// The .zarray text (one key per line, keys in the order above).
std::string ZarrArrayJson(const ZarrArrayMeta& meta);
// Reads a .zarray; anything this reader cannot read (another format, a compressor, filters,
// order "F", another separator) is a UserError naming `file`. `element_type` tells bf16 from
// other two-byte void types (the checkpoint metadata records it).
ZarrArrayMeta ParseZarrArrayJson(const std::string& text, const std::string& file, ElementType element_type);

// "0.3" for chunk (0, 3); "0" for the one chunk of a scalar.
std::string ChunkKey(const std::vector<int64_t>& chunk_index);

// The array stored in `dir` with `meta`: ReadBox reads only the chunk files the box touches
// (whole chunks, one at a time). A missing or short chunk file is a UserError naming it.
std::unique_ptr<ArraySource> OpenZarrArray(const std::string& dir, const ZarrArrayMeta& meta);

}  // namespace gspmd
