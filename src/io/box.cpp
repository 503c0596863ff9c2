// Box arithmetic and the run iteration behind every box copy.
#include "io/box.h"

#include <algorithm>
#include <cstring>

#include "ir/shape.h"
#include "support/diagnostic.h"

namespace gspmd {

int64_t Box::num_elements() const {
  int64_t count = 1;
  for (int64_t size : sizes) count *= size;
  return count;
}

Box WholeBox(const std::vector<int64_t>& dims) {
  return Box{std::vector<int64_t>(dims.size(), 0), dims};
}

std::optional<Box> IntersectBoxes(const Box& a, const Box& b) {
  GSPMD_CHECK(a.offsets.size() == b.offsets.size(), "intersecting boxes of different rank");
  Box common;
  for (size_t k = 0; k < a.offsets.size(); ++k) {
    const int64_t begin = std::max(a.offsets[k], b.offsets[k]);
    const int64_t end = std::min(a.offsets[k] + a.sizes[k], b.offsets[k] + b.sizes[k]);
    if (end <= begin) return std::nullopt;
    common.offsets.push_back(begin);
    common.sizes.push_back(end - begin);
  }
  return common;
}

void ForEachBoxRun(const std::vector<int64_t>& src_dims, const std::vector<int64_t>& src_offsets,
                   const std::vector<int64_t>& dst_dims, const std::vector<int64_t>& dst_offsets,
                   const std::vector<int64_t>& sizes,
                   const std::function<void(int64_t, int64_t, int64_t)>& visit) {
  const size_t rank = sizes.size();
  GSPMD_CHECK(src_dims.size() == rank && dst_dims.size() == rank && src_offsets.size() == rank &&
                  dst_offsets.size() == rank,
              "box copy with mismatched ranks");
  for (int64_t size : sizes)
    if (size <= 0) return;
  const std::vector<int64_t> src_strides = RowMajorStrides(src_dims);
  const std::vector<int64_t> dst_strides = RowMajorStrides(dst_dims);
  int64_t src_base = 0, dst_base = 0;
  for (size_t k = 0; k < rank; ++k) {
    GSPMD_CHECK(src_offsets[k] + sizes[k] <= src_dims[k] && dst_offsets[k] + sizes[k] <= dst_dims[k],
                "box dimension ", k, " out of bounds");
    src_base += src_offsets[k] * src_strides[k];
    dst_base += dst_offsets[k] * dst_strides[k];
  }
  // Dims [outer_rank, rank) form one contiguous run of `run` elements in both buffers.
  size_t outer_rank = rank;
  int64_t run = 1;
  while (outer_rank > 0) {
    const size_t k = outer_rank - 1;
    run *= sizes[k];
    --outer_rank;
    if (sizes[k] != src_dims[k] || sizes[k] != dst_dims[k]) break;
  }
  std::vector<int64_t> index(outer_rank, 0);
  while (true) {
    int64_t src_offset = src_base, dst_offset = dst_base;
    for (size_t k = 0; k < outer_rank; ++k) {
      src_offset += index[k] * src_strides[k];
      dst_offset += index[k] * dst_strides[k];
    }
    visit(src_offset, dst_offset, run);
    size_t k = outer_rank;
    while (k > 0) {
      --k;
      if (++index[k] < sizes[k]) break;
      index[k] = 0;
      if (k == 0) return;
    }
    if (outer_rank == 0) return;
  }
}

void CopyBox(const uint8_t* src, const std::vector<int64_t>& src_dims, const std::vector<int64_t>& src_offsets,
             uint8_t* dst, const std::vector<int64_t>& dst_dims, const std::vector<int64_t>& dst_offsets,
             const std::vector<int64_t>& sizes, int64_t element_size) {
  ForEachBoxRun(src_dims, src_offsets, dst_dims, dst_offsets, sizes,
                [&](int64_t src_element, int64_t dst_element, int64_t run) {
                  std::memcpy(dst + dst_element * element_size, src + src_element * element_size,
                              static_cast<size_t>(run * element_size));
                });
}

}  // namespace gspmd
