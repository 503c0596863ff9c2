// Fast paths of sort: comparators that order by a key computed from one operand, and a stable
// merge sort that stays in bounds whatever the comparator does (std::stable_sort does not
// with an inconsistent comparator, e.g. LT on NaNs).
//
//   %cmp (a: f32[], b: f32[], i: s32[], j: s32[]) -> pred[] {      K(x) = JAX's total-order
//     ... %ka = s32[] select(..., bitcast-convert(%a), ...)          key of x, the same
//     ... %kb = s32[] select(..., bitcast-convert(%b), ...)          program on both sides
//     ROOT %lt = pred[] compare(%ka, %kb), direction=LT
//   }
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/computation.h"
#include "runtime/interp/kernel_scalar_program.h"
#include "runtime/interp/kernels.h"

namespace gspmd::kernel {

// compare(K(p[2k]), K(p[2k+1])) or the mirrored form, LT or GT, K a scalar function of one
// parameter (absent when K is the parameter itself).
struct KeyedOrder {
  int64_t key_operand = 0;
  bool descending = false;
  bool total_order = false;
  ElementType key_type = ElementType::kInvalid;
  std::optional<ScalarProgram> key;
};
std::optional<KeyedOrder> RecognizeKeyedOrder(const Computation& comparator, Operands operands);

// Sorts permutation[0..n) (indices 0..n-1) stably by less(i, j); never reads out of range,
// even when less is no strict weak order.
template <typename Less>
void SafeStableSort(std::vector<int64_t>& permutation, Less&& less) {
  const size_t n = permutation.size();
  for (size_t i = 0; i < n; ++i) permutation[i] = static_cast<int64_t>(i);
  constexpr size_t kRun = 16;
  for (size_t lo = 0; lo < n; lo += kRun) {  // guarded insertion sort of short runs
    size_t hi = std::min(n, lo + kRun);
    for (size_t i = lo + 1; i < hi; ++i) {
      int64_t value = permutation[i];
      size_t j = i;
      while (j > lo && less(value, permutation[j - 1])) {
        permutation[j] = permutation[j - 1];
        --j;
      }
      permutation[j] = value;
    }
  }
  std::vector<int64_t> buffer(n);
  for (size_t width = kRun; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = std::min(n, lo + width), hi = std::min(n, lo + 2 * width);
      size_t a = lo, b = mid, out = lo;
      while (a < mid && b < hi) buffer[out++] = less(permutation[b], permutation[a]) ? permutation[b++] : permutation[a++];
      while (a < mid) buffer[out++] = permutation[a++];
      while (b < hi) buffer[out++] = permutation[b++];
    }
    permutation.swap(buffer);
  }
}

}  // namespace gspmd::kernel
