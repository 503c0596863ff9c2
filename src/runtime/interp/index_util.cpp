// Strided block copies for the interpreter's shape kernels (memcpy rows, tiled transposes).
#include "runtime/interp/index_util.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace gspmd {
namespace {

constexpr int64_t kTile = 32;

// Drops unit dimensions and merges neighbours that are contiguous in both buffers, in place.
void Canonicalize(std::vector<StridedDim>& dims) {
  size_t kept = 0;
  for (const StridedDim& dim : dims) {
    if (dim.size == 1) continue;
    if (kept > 0) {
      StridedDim& outer = dims[kept - 1];
      bool contiguous = outer.src_stride == dim.src_stride * dim.size &&
                        outer.dst_stride == dim.dst_stride * dim.size;
      if (contiguous) {
        outer.size *= dim.size;
        outer.src_stride = dim.src_stride;
        outer.dst_stride = dim.dst_stride;
        continue;
      }
    }
    dims[kept++] = dim;
  }
  dims.resize(kept);
}

// Calls fn(src_offset, dst_offset) (in elements) for every index of the dims other than
// skip_a and skip_b (-1: none). The counters live on the stack up to kInlineRank dims.
template <typename Fn>
void ForEachOuter(const std::vector<StridedDim>& dims, int64_t skip_a, int64_t skip_b, Fn&& fn) {
  constexpr size_t kInlineRank = 16;
  int64_t inline_active[kInlineRank], inline_index[kInlineRank];
  std::vector<int64_t> heap;
  int64_t* active = inline_active;
  int64_t* index = inline_index;
  if (dims.size() > kInlineRank) {
    heap.resize(2 * dims.size());
    active = heap.data();
    index = heap.data() + dims.size();
  }
  int64_t count = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t dim = static_cast<int64_t>(d);
    if (dim == skip_a || dim == skip_b) continue;
    active[count] = dim;
    index[count] = 0;
    ++count;
  }
  int64_t src = 0;
  int64_t dst = 0;
  while (true) {
    fn(src, dst);
    int64_t a = count - 1;
    for (; a >= 0; --a) {
      const StridedDim& dim = dims[active[a]];
      if (++index[a] < dim.size) {
        src += dim.src_stride;
        dst += dim.dst_stride;
        break;
      }
      src -= dim.src_stride * (dim.size - 1);
      dst -= dim.dst_stride * (dim.size - 1);
      index[a] = 0;
    }
    if (a < 0) return;
  }
}

template <typename T>
void CopyLine(const T* src, T* dst, int64_t n, int64_t src_stride, int64_t dst_stride) {
  if (dst_stride == 1 && src_stride == 0) {
    T value = *src;
    for (int64_t i = 0; i < n; ++i) dst[i] = value;
    return;
  }
  if (dst_stride == 1) {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i * src_stride];
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i * dst_stride] = src[i * src_stride];
}

// Copies a plane where `a` is contiguous in the source and `b` (innermost) in the destination.
template <typename T>
void CopyTiledPlane(const T* src, T* dst, const StridedDim& a, const StridedDim& b) {
  for (int64_t a0 = 0; a0 < a.size; a0 += kTile) {
    int64_t a1 = std::min(a.size, a0 + kTile);
    for (int64_t b0 = 0; b0 < b.size; b0 += kTile) {
      int64_t b1 = std::min(b.size, b0 + kTile);
      for (int64_t i = a0; i < a1; ++i) {
        const T* s = src + i * a.src_stride;
        T* d = dst + i * a.dst_stride;
        for (int64_t j = b0; j < b1; ++j) d[j] = s[j * b.src_stride];
      }
    }
  }
}

template <typename T>
void CopyTyped(const uint8_t* src_bytes, uint8_t* dst_bytes, const std::vector<StridedDim>& dims) {
  const T* src = reinterpret_cast<const T*>(src_bytes);
  T* dst = reinterpret_cast<T*>(dst_bytes);
  const StridedDim& inner = dims.back();
  int64_t last = static_cast<int64_t>(dims.size()) - 1;
  if (inner.src_stride == 1 && inner.dst_stride == 1) {
    size_t row_bytes = sizeof(T) * static_cast<size_t>(inner.size);
    ForEachOuter(dims, last, -1, [&](int64_t s, int64_t d) { std::memcpy(dst + d, src + s, row_bytes); });
    return;
  }
  // A transposed plane: some outer dim is contiguous in the source while the inner one is
  // contiguous in the destination.
  int64_t plane = -1;
  if (inner.dst_stride == 1 && inner.src_stride != 0 && inner.size >= 8) {
    for (int64_t d = last - 1; d >= 0; --d) {
      if (std::llabs(dims[d].src_stride) == 1 && dims[d].size >= 8) {
        plane = d;
        break;
      }
    }
  }
  if (plane >= 0) {
    ForEachOuter(dims, last, plane, [&](int64_t s, int64_t d) {
      CopyTiledPlane(src + s, dst + d, dims[plane], inner);
    });
    return;
  }
  ForEachOuter(dims, last, -1, [&](int64_t s, int64_t d) {
    CopyLine(src + s, dst + d, inner.size, inner.src_stride, inner.dst_stride);
  });
}

void CopyBytewise(const uint8_t* src, uint8_t* dst, const std::vector<StridedDim>& dims,
                  int64_t element_size) {
  ForEachOuter(dims, -1, -1, [&](int64_t s, int64_t d) {
    std::memcpy(dst + d * element_size, src + s * element_size, static_cast<size_t>(element_size));
  });
}

}  // namespace

void CopyStrided(const uint8_t* src, uint8_t* dst, std::vector<StridedDim> dims,
                 int64_t element_size) {
  for (const StridedDim& dim : dims)
    if (dim.size <= 0) return;
  Canonicalize(dims);
  const std::vector<StridedDim>& canonical = dims;
  if (canonical.empty()) {
    std::memcpy(dst, src, static_cast<size_t>(element_size));
    return;
  }
  switch (element_size) {
    case 1: return CopyTyped<uint8_t>(src, dst, canonical);
    case 2: return CopyTyped<uint16_t>(src, dst, canonical);
    case 4: return CopyTyped<uint32_t>(src, dst, canonical);
    case 8: return CopyTyped<uint64_t>(src, dst, canonical);
    default: return CopyBytewise(src, dst, canonical, element_size);
  }
}

std::vector<int64_t> RowMajorElementStrides(std::span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

void FillElements(uint8_t* dst, const uint8_t* value, int64_t count, int64_t element_size) {
  if (count <= 0) return;
  bool all_zero = true;
  for (int64_t b = 0; b < element_size; ++b) all_zero = all_zero && value[b] == 0;
  if (all_zero || element_size == 1) {
    std::memset(dst, value[0], static_cast<size_t>(count * element_size));
    return;
  }
  StridedDim dim{count, 0, 1};
  CopyStrided(value, dst, {dim}, element_size);
}

}  // namespace gspmd
