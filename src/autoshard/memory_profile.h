// Memory over time for the search: usage per time point under range additions, with the
// maximum over any range, in O(log T) each (a segment tree with lazy additions).
#pragma once

#include <cstdint>
#include <vector>

namespace gspmd::autoshard {

class MemoryProfile {
 public:
  MemoryProfile() = default;
  explicit MemoryProfile(const std::vector<int64_t>& initial);

  int64_t size() const { return size_; }
  // usage[t] += delta for t in [start, end).
  void Add(int64_t start, int64_t end, int64_t delta);
  // max of usage[t] over [start, end); the smallest int64 for an empty range.
  int64_t Max(int64_t start, int64_t end) const;
  int64_t At(int64_t t) const { return Max(t, t + 1); }
  // usage[t] for every t, in O(T).
  std::vector<int64_t> Values() const;
  // The first time point holding the overall maximum.
  int64_t ArgMax() const;

 private:
  void Build(int node, int64_t lo, int64_t hi, const std::vector<int64_t>& initial);
  void Add(int node, int64_t lo, int64_t hi, int64_t start, int64_t end, int64_t delta);
  int64_t Max(int node, int64_t lo, int64_t hi, int64_t start, int64_t end) const;
  void Collect(int node, int64_t lo, int64_t hi, int64_t above, std::vector<int64_t>& out) const;

  int64_t size_ = 0;
  std::vector<int64_t> max_;  // max over the node's range, its own pending addition included
  std::vector<int64_t> add_;  // addition pending for the node's whole range
};

}  // namespace gspmd::autoshard
