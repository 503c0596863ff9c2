// Sequential tree-reweighted message passing (TRW-S, Kolmogorov 2006) over the reduced
// problem's pairwise costs with caller-given node costs: a lower bound for any node costs
// (memory ignored) and a labelling decoded from the messages.
#pragma once

#include <cstdint>
#include <vector>

#include "autoshard/reduced_problem.h"

namespace gspmd::autoshard {

class MessagePassing {
 public:
  explicit MessagePassing(const ReducedProblem& problem);

  // Node costs, per (node, strategy) in node order then strategy order. Messages are kept:
  // a change of node costs re-starts from where the last passes left off.
  void SetNodeCosts(std::vector<double> costs);
  // One forward and one backward pass over the nodes in index order.
  void Iterate(int64_t& work);
  // A value no assignment's (node costs + edge costs) goes below.
  double LowerBound(int64_t& work) const;
  // Node by node in index order: the best strategy given the earlier nodes' choices and the
  // later nodes' messages.
  std::vector<int> Decode(int64_t& work) const;

 private:
  void Pass(bool forward, int64_t& work);
  // Sum of node costs and incoming messages of v.
  void Belief(int v, std::vector<double>& belief) const;

  const ReducedProblem& problem_;
  std::vector<size_t> node_offset_;    // into costs_
  std::vector<double> costs_;
  std::vector<size_t> message_offset_;  // per edge: [to b (k_b)], then [to a (k_a)]
  std::vector<double> messages_;
  std::vector<double> weight_;          // per node: 1 / max(earlier neighbours, later neighbours)
};

}  // namespace gspmd::autoshard
