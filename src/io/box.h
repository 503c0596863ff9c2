// Boxes of row-major arrays (an offset and a size per dimension) and moving them between
// buffers: the shared arithmetic of shard slicing, partial .npy reads and output assembly.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace gspmd {

// The elements [offsets[k], offsets[k] + sizes[k]) of every dimension k.
//   Box{{2, 0}, {2, 4}} of an f32[8,4] array: rows 2 and 3.
struct Box {
  std::vector<int64_t> offsets;
  std::vector<int64_t> sizes;

  int64_t num_elements() const;
  bool operator==(const Box&) const = default;
};

// The whole array of `dims`.
Box WholeBox(const std::vector<int64_t>& dims);
// The common part of two boxes of equal rank (nullopt when it is empty).
std::optional<Box> IntersectBoxes(const Box& a, const Box& b);

// Visits the box `sizes` at src_offsets of an array of src_dims and at dst_offsets of an
// array of dst_dims as runs contiguous in both: visit(src_element, dst_element, run_elements)
// with linear element offsets, in increasing src (and dst) order. Trailing dimensions that the
// box, src and dst all span fully merge into one run. Nothing is visited for an empty box.
void ForEachBoxRun(const std::vector<int64_t>& src_dims, const std::vector<int64_t>& src_offsets,
                   const std::vector<int64_t>& dst_dims, const std::vector<int64_t>& dst_offsets,
                   const std::vector<int64_t>& sizes,
                   const std::function<void(int64_t, int64_t, int64_t)>& visit);

// Copies that box between dense buffers with elements of element_size bytes.
void CopyBox(const uint8_t* src, const std::vector<int64_t>& src_dims, const std::vector<int64_t>& src_offsets,
             uint8_t* dst, const std::vector<int64_t>& dst_dims, const std::vector<int64_t>& dst_offsets,
             const std::vector<int64_t>& sizes, int64_t element_size);

}  // namespace gspmd
