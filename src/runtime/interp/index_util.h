// Private helpers of the interpreter kernels: strided block copies over raw element buffers.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace gspmd {

// One dimension of a strided copy: `size` steps, moving the source pointer by `src_stride`
// elements and the destination pointer by `dst_stride` elements per step (strides may be 0
// or negative).
struct StridedDim {
  int64_t size = 1;
  int64_t src_stride = 0;
  int64_t dst_stride = 0;
};

// For every index i of the iteration space `dims` (outermost first):
//   dst[sum_d i_d * dst_stride_d] = src[sum_d i_d * src_stride_d]
// with elements of `element_size` bytes (1, 2, 4 or 8; other sizes are copied bytewise).
// Contiguous runs become memcpy and transposed planes are copied in cache-sized tiles, so
// broadcast, transpose, slice, pad, concatenate and reverse all go through here. src and dst
// point at the first element (index all zeros).
void CopyStrided(const uint8_t* src, uint8_t* dst, std::vector<StridedDim> dims,
                 int64_t element_size);

// Row-major strides of dims, in elements.
std::vector<int64_t> RowMajorElementStrides(std::span<const int64_t> dims);

// Fills `count` elements of `element_size` bytes at dst with copies of the element at value.
void FillElements(uint8_t* dst, const uint8_t* value, int64_t count, int64_t element_size);

}  // namespace gspmd
