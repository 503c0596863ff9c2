// Shared kernel helpers: errors, permutations and a cache-blocked n-d transpose.
#include "runtime/interp/kernel_util.h"

#include <algorithm>
#include <cstring>

#include "ir/opcode.h"

namespace gspmd::kernel {

void KernelError(const Instruction& instruction, const std::string& message) {
  throw UserError(StrCat("in %", instruction.name(), " (", OpcodeName(instruction.opcode()), "): ", message));
}

int64_t Product(std::span<const int64_t> dims) {
  int64_t product = 1;
  for (int64_t d : dims) product *= d;
  return product;
}

bool IsIdentityPermutation(std::span<const int64_t> permutation) {
  for (size_t i = 0; i < permutation.size(); ++i)
    if (permutation[i] != static_cast<int64_t>(i)) return false;
  return true;
}

bool Contains(std::span<const int64_t> values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

namespace {

// A transpose after merging source dims that stay adjacent and in order in the result, and
// dropping size-1 dims. dst dim i has size dims[i] and source stride src_strides[i].
struct CollapsedTranspose {
  std::vector<int64_t> dims;
  std::vector<int64_t> src_strides;
};

CollapsedTranspose Collapse(std::span<const int64_t> src_dims, std::span<const int64_t> permutation) {
  std::vector<int64_t> strides = RowMajorStrides(std::vector<int64_t>(src_dims.begin(), src_dims.end()));
  CollapsedTranspose result;
  int64_t previous_src_dim = -2;
  for (int64_t src_dim : permutation) {
    int64_t size = src_dims[src_dim];
    if (size == 1) continue;
    bool merges = !result.dims.empty() && src_dim == previous_src_dim + 1;
    // Source dims in between that were dropped (size 1) keep adjacency; check strides instead.
    if (!merges && !result.dims.empty())
      merges = result.src_strides.back() == strides[src_dim] * size;
    if (merges) {
      result.dims.back() *= size;
      result.src_strides.back() = strides[src_dim];
    } else {
      result.dims.push_back(size);
      result.src_strides.push_back(strides[src_dim]);
    }
    previous_src_dim = src_dim;
  }
  return result;
}

template <typename T>
void TransposeTyped(const T* src, const CollapsedTranspose& t, T* dst) {
  const int64_t rank = static_cast<int64_t>(t.dims.size());
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  std::vector<int64_t> dst_strides = RowMajorStrides(t.dims);
  const int64_t inner = rank - 1;
  // The dst dim that walks the source contiguously; tile it together with the inner dim.
  int64_t unit = -1;
  for (int64_t d = 0; d < rank; ++d)
    if (t.src_strides[d] == 1) unit = d;
  if (unit == inner || unit < 0) {
    std::vector<int64_t> outer_dims(t.dims.begin(), t.dims.end() - 1);
    IndexCounter counter(outer_dims);
    const int64_t n = t.dims[inner], s = t.src_strides[inner];
    int64_t count = Product(outer_dims);
    T* out = dst;
    for (int64_t i = 0; i < count; ++i, counter.Next()) {
      int64_t base = 0;
      for (int64_t d = 0; d < inner; ++d) base += counter[d] * t.src_strides[d];
      const T* in = src + base;
      if (s == 1) {
        std::memcpy(out, in, sizeof(T) * n);
      } else {
        for (int64_t j = 0; j < n; ++j) out[j] = in[j * s];
      }
      out += n;
    }
    return;
  }
  // Iterate every dim except `unit` and `inner`, then 2-d tiles of (unit, inner).
  std::vector<int64_t> rest_dims, rest_src, rest_dst;
  for (int64_t d = 0; d < inner; ++d) {
    if (d == unit) continue;
    rest_dims.push_back(t.dims[d]);
    rest_src.push_back(t.src_strides[d]);
    rest_dst.push_back(dst_strides[d]);
  }
  constexpr int64_t kTile = 32;
  const int64_t na = t.dims[unit], nb = t.dims[inner];
  const int64_t dst_a = dst_strides[unit], src_b = t.src_strides[inner];
  IndexCounter counter(rest_dims);
  int64_t count = Product(rest_dims);
  for (int64_t i = 0; i < count; ++i, counter.Next()) {
    int64_t src_base = 0, dst_base = 0;
    for (size_t d = 0; d < rest_dims.size(); ++d) {
      src_base += counter[d] * rest_src[d];
      dst_base += counter[d] * rest_dst[d];
    }
    for (int64_t a0 = 0; a0 < na; a0 += kTile) {
      int64_t a1 = std::min(na, a0 + kTile);
      for (int64_t b0 = 0; b0 < nb; b0 += kTile) {
        int64_t b1 = std::min(nb, b0 + kTile);
        for (int64_t a = a0; a < a1; ++a) {
          const T* in = src + src_base + a;
          T* out = dst + dst_base + a * dst_a;
          for (int64_t b = b0; b < b1; ++b) out[b] = in[b * src_b];
        }
      }
    }
  }
}

}  // namespace

void TransposeBytes(const void* src, std::span<const int64_t> src_dims,
                    std::span<const int64_t> permutation, int64_t element_size, void* dst) {
  if (Product(src_dims) == 0) return;
  CollapsedTranspose t = Collapse(src_dims, permutation);
  switch (element_size) {
    case 1: return TransposeTyped(static_cast<const uint8_t*>(src), t, static_cast<uint8_t*>(dst));
    case 2: return TransposeTyped(static_cast<const uint16_t*>(src), t, static_cast<uint16_t*>(dst));
    case 4: return TransposeTyped(static_cast<const uint32_t*>(src), t, static_cast<uint32_t*>(dst));
    case 8: return TransposeTyped(static_cast<const uint64_t*>(src), t, static_cast<uint64_t*>(dst));
    default: break;
  }
  GSPMD_CHECK(false, "TransposeBytes: element size ", element_size);
}

Literal TransposeLiteral(const Literal& operand, std::span<const int64_t> permutation) {
  const std::vector<int64_t>& dims = operand.shape().dims();
  std::vector<int64_t> result_dims;
  for (int64_t p : permutation) result_dims.push_back(dims[p]);
  Literal result(Shape(operand.element_type(), result_dims));
  TransposeBytes(operand.raw(), dims, permutation, ElementByteSize(operand.element_type()), result.raw());
  return result;
}

std::vector<float> ToFloatBuffer(const Literal& literal) {
  std::vector<float> buffer(static_cast<size_t>(literal.element_count()));
  ConvertElements(literal.element_type(), literal.raw(), ElementType::kF32, buffer.data(),
                  literal.element_count());
  return buffer;
}

}  // namespace gspmd::kernel
