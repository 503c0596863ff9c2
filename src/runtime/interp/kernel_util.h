// Helpers shared by the interpreter's heavy kernels: dimension bookkeeping, transposes, error
// messages, and the floating-point conversions kernels need around oneDNN.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/element_type.h"
#include "ir/instruction.h"
#include "ir/literal.h"
#include "support/diagnostic.h"

namespace gspmd::kernel {

// Throws a UserError "in %NAME (OPCODE): MESSAGE".
[[noreturn]] void KernelError(const Instruction& instruction, const std::string& message);

// Product of dims (1 for none).
int64_t Product(std::span<const int64_t> dims);

bool IsIdentityPermutation(std::span<const int64_t> permutation);
bool Contains(std::span<const int64_t> values, int64_t value);

// Copies src (row-major, dims src_dims) into dst so that dst's dim i is src's dim
// permutation[i]. element_size is 1, 2, 4 or 8 bytes.
void TransposeBytes(const void* src, std::span<const int64_t> src_dims,
                    std::span<const int64_t> permutation, int64_t element_size, void* dst);

// A transposed copy of an array literal (result dim i = operand dim permutation[i]).
Literal TransposeLiteral(const Literal& operand, std::span<const int64_t> permutation);

// Converts an array's elements to a float / double / int64 buffer.
std::vector<float> ToFloatBuffer(const Literal& literal);

// Storage helpers for 16-bit floats: arithmetic happens in float.
template <typename T>
inline constexpr bool kIsHalfFloat = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <typename T>
using AccumulatorType = std::conditional_t<kIsHalfFloat<T>, float, T>;

template <typename T>
inline AccumulatorType<T> Widen(T value) {
  if constexpr (kIsHalfFloat<T>)
    return static_cast<float>(value);
  else
    return value;
}

template <typename T>
inline T Narrow(AccumulatorType<T> value) {
  if constexpr (kIsHalfFloat<T>)
    return T(value);
  else
    return value;
}

// Odometer over a row-major index space: Next() advances the index and returns false once it
// wraps around.
class IndexCounter {
 public:
  explicit IndexCounter(std::vector<int64_t> dims) : dims_(std::move(dims)), index_(dims_.size(), 0) {}
  const std::vector<int64_t>& index() const { return index_; }
  int64_t operator[](size_t i) const { return index_[i]; }
  bool Next() {
    for (int64_t d = static_cast<int64_t>(dims_.size()) - 1; d >= 0; --d) {
      if (++index_[d] < dims_[d]) return true;
      index_[d] = 0;
    }
    return false;
  }

 private:
  std::vector<int64_t> dims_;
  std::vector<int64_t> index_;
};

}  // namespace gspmd::kernel
