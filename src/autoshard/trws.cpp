// TRW-S. Messages m(u->v) live on edges; node v's belief is its cost plus all incoming
// messages. A pass visits nodes in order and, for each neighbour w further along the pass,
// sets m(v->w)(t) = min_s [weight_v * belief_v(s) - m(w->v)(s) + cost(s, t)], shifted to
// min 0. The bound is the reparametrized problem's: the sum over nodes of their smallest
// belief plus, over edges, the smallest cost(s, t) - m(a->b)(t) - m(b->a)(s).
#include "autoshard/trws.h"

#include <algorithm>
#include <limits>

namespace gspmd::autoshard {

constexpr double kHuge = 1e18;

MessagePassing::MessagePassing(const ReducedProblem& problem) : problem_(problem) {
  const int n = static_cast<int>(problem.nodes.size());
  node_offset_.assign(n + 1, 0);
  for (int v = 0; v < n; ++v) node_offset_[v + 1] = node_offset_[v] + problem.nodes[v].strategy_count();
  costs_.assign(node_offset_[n], 0.0);
  message_offset_.assign(problem.edges.size() + 1, 0);
  for (size_t e = 0; e < problem.edges.size(); ++e)
    message_offset_[e + 1] = message_offset_[e] + problem.nodes[problem.edges[e].a].strategy_count() +
                             problem.nodes[problem.edges[e].b].strategy_count();
  messages_.assign(message_offset_.back(), 0.0);
  weight_.assign(n, 1.0);
  for (int v = 0; v < n; ++v) {
    int earlier = 0, later = 0;
    for (const ReducedProblem::Adjacent& a : problem.nodes[v].adjacent) (a.node < v ? earlier : later)++;
    weight_[v] = 1.0 / std::max({earlier, later, 1});
  }
}

void MessagePassing::SetNodeCosts(std::vector<double> costs) { costs_ = std::move(costs); }

void MessagePassing::Belief(int v, std::vector<double>& belief) const {
  const int k = problem_.nodes[v].strategy_count();
  belief.assign(costs_.begin() + node_offset_[v], costs_.begin() + node_offset_[v] + k);
  for (const ReducedProblem::Adjacent& a : problem_.nodes[v].adjacent) {
    const ReducedProblem::Edge& edge = problem_.edges[a.edge];
    // Message into v: to b is stored first, to a after it.
    const double* in = messages_.data() + message_offset_[a.edge] +
                       (v == edge.b ? 0 : problem_.nodes[edge.b].strategy_count());
    for (int s = 0; s < k; ++s) belief[s] = std::min(belief[s] + in[s], kHuge);
  }
}

void MessagePassing::Pass(bool forward, int64_t& work) {
  const int n = static_cast<int>(problem_.nodes.size());
  std::vector<double> belief, h;
  for (int step = 0; step < n; ++step) {
    const int v = forward ? step : n - 1 - step;
    Belief(v, belief);
    const int kv = static_cast<int>(belief.size());
    for (const ReducedProblem::Adjacent& a : problem_.nodes[v].adjacent) {
      if (forward ? a.node < v : a.node > v) continue;
      const ReducedProblem::Edge& edge = problem_.edges[a.edge];
      const int w = a.node;
      const int kw = problem_.nodes[w].strategy_count();
      const int kb = problem_.nodes[edge.b].strategy_count();
      double* to_w = messages_.data() + message_offset_[a.edge] + (w == edge.b ? 0 : kb);
      const double* from_w = messages_.data() + message_offset_[a.edge] + (v == edge.b ? 0 : kb);
      h.resize(kv);
      for (int s = 0; s < kv; ++s) h[s] = weight_[v] * belief[s] - from_w[s];
      double least = std::numeric_limits<double>::infinity();
      for (int t = 0; t < kw; ++t) {
        double best = std::numeric_limits<double>::infinity();
        if (v == edge.a) {
          for (int s = 0; s < kv; ++s) best = std::min(best, h[s] + static_cast<double>(edge.costs[static_cast<size_t>(s) * kb + t]));
        } else {
          const Cost* row = edge.costs.data() + static_cast<size_t>(t) * kb;
          for (int s = 0; s < kv; ++s) best = std::min(best, h[s] + static_cast<double>(row[s]));
        }
        to_w[t] = best;
        least = std::min(least, best);
      }
      for (int t = 0; t < kw; ++t) to_w[t] = std::min(to_w[t] - least, kHuge);
      work += static_cast<int64_t>(kv) * kw;
    }
  }
}

void MessagePassing::Iterate(int64_t& work) {
  Pass(true, work);
  Pass(false, work);
}

double MessagePassing::LowerBound(int64_t& work) const {
  double bound = 0;
  std::vector<double> belief;
  for (size_t v = 0; v < problem_.nodes.size(); ++v) {
    Belief(static_cast<int>(v), belief);
    bound += *std::min_element(belief.begin(), belief.end());
  }
  for (size_t e = 0; e < problem_.edges.size(); ++e) {
    const ReducedProblem::Edge& edge = problem_.edges[e];
    const int ka = problem_.nodes[edge.a].strategy_count(), kb = problem_.nodes[edge.b].strategy_count();
    const double* to_b = messages_.data() + message_offset_[e];
    const double* to_a = to_b + kb;
    double least = std::numeric_limits<double>::infinity();
    for (int s = 0; s < ka; ++s)
      for (int t = 0; t < kb; ++t)
        least = std::min(least, static_cast<double>(edge.costs[static_cast<size_t>(s) * kb + t]) - to_b[t] - to_a[s]);
    bound += least;
    work += static_cast<int64_t>(ka) * kb;
  }
  return bound;
}

std::vector<int> MessagePassing::Decode(int64_t& work) const {
  const int n = static_cast<int>(problem_.nodes.size());
  std::vector<int> x(n, 0);
  std::vector<double> score;
  for (int v = 0; v < n; ++v) {
    const int k = problem_.nodes[v].strategy_count();
    score.assign(costs_.begin() + node_offset_[v], costs_.begin() + node_offset_[v] + k);
    for (const ReducedProblem::Adjacent& a : problem_.nodes[v].adjacent) {
      const ReducedProblem::Edge& edge = problem_.edges[a.edge];
      if (a.node < v) {
        for (int s = 0; s < k; ++s) score[s] += static_cast<double>(problem_.EdgeCost(a.edge, v, s, x[a.node]));
      } else {
        const double* in = messages_.data() + message_offset_[a.edge] + (v == edge.b ? 0 : problem_.nodes[edge.b].strategy_count());
        for (int s = 0; s < k; ++s) score[s] += in[s];
      }
      work += k;
    }
    x[v] = static_cast<int>(std::min_element(score.begin(), score.end()) - score.begin());
  }
  return x;
}

}  // namespace gspmd::autoshard
