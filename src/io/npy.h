// Reading and writing NumPy .npy files as Literals, whole or one box at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/box.h"
#include "ir/literal.h"

namespace gspmd {

// What the header of a .npy file says, checked against the file's size.
struct NpyHeader {
  ElementType type = ElementType::kInvalid;
  std::vector<int64_t> dims;
  bool big_endian = false;
  int64_t data_offset = 0;  // bytes from the start of the file to the first element
};

// Reads and checks the header of a .npy file (format 1.0-3.0, C order) of any executable
// element type (bool, int8..int64, uint8..uint64, float16, float32, float64; bfloat16 stored
// as '<V2' or ml_dtypes' 'bfloat16' descr). The data must be exactly as long as the shape
// says. A malformed file is a UserError naming the file and the problem.
NpyHeader ReadNpyHeader(const std::string& path);

// Reads the whole array.
Literal ReadNpy(const std::string& path);

// Reads only the elements of `box` (in the file's array) into dst, a dense array of dst_dims,
// at dst_offsets; nothing else of the file is read. Big-endian data is swapped and pred bytes
// normalized to 0/1. A read failure is a UserError naming the file.
void ReadNpyBox(const std::string& path, const NpyHeader& header, const Box& box, uint8_t* dst,
                const std::vector<int64_t>& dst_dims, const std::vector<int64_t>& dst_offsets);

// Writes an array literal (scalars included) as a .npy file: under a temporary name first,
// renamed to `path` when complete, so a failed write leaves no file behind.
void WriteNpy(const std::string& path, const Literal& literal);
// Writes straight to `path` (for callers that manage temporary names themselves).
void WriteNpyInPlace(const std::string& path, const Literal& literal);

// The magic, version and header of a .npy file holding `dims` of `type`; the data follows
// directly (for writers that stream the data in pieces).
std::string NpyHeaderBytes(ElementType type, const std::vector<int64_t>& dims);

// Converts elements as read from a file of `header` into Literal form (byte order, pred 0/1).
void NormalizeNpyElements(const NpyHeader& header, uint8_t* data, int64_t count);

// How numpy code names `type`, for hints ("np.float32", "ml_dtypes.bfloat16", "np.bool_").
std::string NumpyDtypeName(ElementType type);

// An element type named the HLO way ("f32", "bf16") or numpy's and JAX's ("float32",
// "bfloat16"); nullopt for anything else.
std::optional<ElementType> ParseDtypeName(std::string_view name);

}  // namespace gspmd

namespace gspmd {

// Writes the elements of `box` of a dense array (dims, element type) straight to `path` as a
// .npy file of shape box.sizes, streaming the box's runs (no copy of the box in memory).
void WriteNpyBoxInPlace(const std::string& path, ElementType type, const uint8_t* data,
                        const std::vector<int64_t>& dims, const Box& box);

}  // namespace gspmd
