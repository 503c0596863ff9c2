// The segment tree behind MemoryProfile. Additions stay at the nodes that cover their range
// (never pushed down): max_[node] = add_[node] + max(children's max_).
#include "autoshard/memory_profile.h"

#include <algorithm>
#include <limits>

namespace gspmd::autoshard {

constexpr int64_t kNone = std::numeric_limits<int64_t>::min() / 4;

MemoryProfile::MemoryProfile(const std::vector<int64_t>& initial) : size_(static_cast<int64_t>(initial.size())) {
  if (size_ == 0) return;
  max_.assign(4 * size_, 0);
  add_.assign(4 * size_, 0);
  Build(1, 0, size_, initial);
}

void MemoryProfile::Build(int node, int64_t lo, int64_t hi, const std::vector<int64_t>& initial) {
  if (hi - lo == 1) {
    max_[node] = initial[lo];
    return;
  }
  const int64_t mid = (lo + hi) / 2;
  Build(2 * node, lo, mid, initial);
  Build(2 * node + 1, mid, hi, initial);
  max_[node] = std::max(max_[2 * node], max_[2 * node + 1]);
}

void MemoryProfile::Add(int64_t start, int64_t end, int64_t delta) {
  start = std::max<int64_t>(start, 0);
  end = std::min(end, size_);
  if (start >= end || delta == 0) return;
  Add(1, 0, size_, start, end, delta);
}

void MemoryProfile::Add(int node, int64_t lo, int64_t hi, int64_t start, int64_t end, int64_t delta) {
  if (start <= lo && hi <= end) {
    max_[node] += delta;
    add_[node] += delta;
    return;
  }
  const int64_t mid = (lo + hi) / 2;
  if (start < mid) Add(2 * node, lo, mid, start, end, delta);
  if (end > mid) Add(2 * node + 1, mid, hi, start, end, delta);
  max_[node] = add_[node] + std::max(max_[2 * node], max_[2 * node + 1]);
}

int64_t MemoryProfile::Max(int64_t start, int64_t end) const {
  start = std::max<int64_t>(start, 0);
  end = std::min(end, size_);
  if (start >= end) return kNone;
  return Max(1, 0, size_, start, end);
}

int64_t MemoryProfile::Max(int node, int64_t lo, int64_t hi, int64_t start, int64_t end) const {
  if (start <= lo && hi <= end) return max_[node];
  const int64_t mid = (lo + hi) / 2;
  int64_t best = kNone;
  if (start < mid) best = std::max(best, Max(2 * node, lo, mid, start, end));
  if (end > mid) best = std::max(best, Max(2 * node + 1, mid, hi, start, end));
  return best + add_[node];
}

std::vector<int64_t> MemoryProfile::Values() const {
  std::vector<int64_t> out(size_, 0);
  if (size_ > 0) Collect(1, 0, size_, 0, out);
  return out;
}

void MemoryProfile::Collect(int node, int64_t lo, int64_t hi, int64_t above, std::vector<int64_t>& out) const {
  if (hi - lo == 1) {
    out[lo] = above + max_[node];
    return;
  }
  const int64_t mid = (lo + hi) / 2;
  Collect(2 * node, lo, mid, above + add_[node], out);
  Collect(2 * node + 1, mid, hi, above + add_[node], out);
}

int64_t MemoryProfile::ArgMax() const {
  if (size_ == 0) return -1;
  int node = 1;
  int64_t lo = 0, hi = size_;
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    const int64_t target = max_[node] - add_[node];
    if (max_[2 * node] == target) {
      node = 2 * node;
      hi = mid;
    } else {
      node = 2 * node + 1;
      lo = mid;
    }
  }
  return lo;
}

}  // namespace gspmd::autoshard
