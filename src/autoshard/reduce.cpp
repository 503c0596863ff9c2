// Exact reductions, applied from a work list until none applies:
//  - arc consistency: a strategy that every strategy of some neighbour forbids is dropped;
//  - a separable edge (cost(s, t) = f(s) + g(t)) moves into its two nodes' costs;
//  - a functional edge (each strategy of u allows exactly one strategy of v) merges v into u:
//    v's cost, memory segments and other edges are re-indexed by u's strategies;
//  - a node whose memory does not depend on its choice and that has at most two neighbours is
//    folded away: into its neighbour's costs (degree 1) or into an edge between its two
//    neighbours (degree 2, min over its strategies), its choice recorded as a table.
// Nodes keep their input strategy numbering throughout (dropped strategies cost
// kForbiddenCost); the result renumbers each node's remaining strategies from 0.
#include "autoshard/reduce.h"

#include <algorithm>
#include <deque>
#include <unordered_map>

#include "support/diagnostic.h"

namespace gspmd::autoshard {

// Largest k_w1 x k_v x k_w2 a degree-2 fold may take (its time and its table).
constexpr int64_t kMaxFoldWork = 4'000'000;

class Reducer {
 public:
  explicit Reducer(const StrategyProblem& problem) : input_(problem) {}
  Reduction Run();

 private:
  struct Segment {
    int64_t start, end;
    std::vector<int64_t> usage;  // per strategy of the owning node
  };
  struct Node {
    bool alive = true;
    std::vector<Cost> costs;
    std::vector<Segment> segments;
    std::vector<int> edges;
    int k() const { return static_cast<int>(costs.size()); }
  };
  struct Edge {
    bool alive = true;
    int a, b;  // a < b
    std::vector<Cost> m;  // k_a x k_b
  };

  bool Allowed(int n, int s) const { return nodes_[n].costs[s] < kForbiddenCost; }
  int Other(int e, int n) const { return edges_[e].a == n ? edges_[e].b : edges_[e].a; }
  Cost Get(int e, int from, int s_from, int s_other) const {
    const Edge& edge = edges_[e];
    const int columns = nodes_[edge.b].k();
    return from == edge.a ? edge.m[static_cast<size_t>(s_from) * columns + s_other]
                          : edge.m[static_cast<size_t>(s_other) * columns + s_from];
  }
  static uint64_t Key(int a, int b) { return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b); }

  void AddEdge(int from, int to, std::vector<Cost> m);  // m is k_from x k_to
  void KillEdge(int e);
  void CompactEdges(int n);
  bool Prune(int e, int side);  // drops strategies of `side` no strategy across e allows
  bool TrySeparable(int e);
  bool TryMerge(int e);
  void Merge(int keep, int gone, int e, const std::vector<int>& map);
  bool MemoryFree(int n) const;
  bool TryFold(int n);
  void AddBaseline(int64_t start, int64_t end, int64_t usage);
  void Push(int n) { work_.push_back(n); }
  void Finalize(Reduction& out);

  const StrategyProblem& input_;
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  std::unordered_map<uint64_t, int> edge_of_;
  std::deque<int> work_;
  std::vector<int64_t> baseline_diff_;
  Cost constant_ = 0;
  bool infeasible_ = false;
  std::vector<Expansion::Event> events_;
  ReductionStats stats_;
};

void Reducer::AddEdge(int from, int to, std::vector<Cost> m) {
  const int kf = nodes_[from].k(), kt = nodes_[to].k();
  if (from > to) {
    std::vector<Cost> t(m.size());
    for (int i = 0; i < kf; ++i)
      for (int j = 0; j < kt; ++j) t[static_cast<size_t>(j) * kf + i] = m[static_cast<size_t>(i) * kt + j];
    m.swap(t);
    std::swap(from, to);
  }
  const auto found = edge_of_.find(Key(from, to));
  if (found != edge_of_.end()) {
    std::vector<Cost>& existing = edges_[found->second].m;
    for (size_t i = 0; i < m.size(); ++i) existing[i] = AddCost(existing[i], m[i]);
    return;
  }
  const int e = static_cast<int>(edges_.size());
  edges_.push_back(Edge{true, from, to, std::move(m)});
  edge_of_.emplace(Key(from, to), e);
  nodes_[from].edges.push_back(e);
  nodes_[to].edges.push_back(e);
}

void Reducer::KillEdge(int e) {
  edges_[e].alive = false;
  edges_[e].m.clear();
  edges_[e].m.shrink_to_fit();
  edge_of_.erase(Key(edges_[e].a, edges_[e].b));
}

void Reducer::CompactEdges(int n) {
  std::vector<int>& list = nodes_[n].edges;
  list.erase(std::remove_if(list.begin(), list.end(), [&](int e) { return !edges_[e].alive; }), list.end());
}

bool Reducer::Prune(int e, int side) {
  const int other = Other(e, side);
  bool changed = false;
  int left = 0;
  for (int s = 0; s < nodes_[side].k(); ++s) left += Allowed(side, s) ? 1 : 0;
  for (int s = 0; s < nodes_[side].k(); ++s) {
    if (!Allowed(side, s)) continue;
    bool supported = false;
    for (int t = 0; t < nodes_[other].k() && !supported; ++t)
      supported = Allowed(other, t) && Get(e, side, s, t) < kForbiddenCost;
    if (supported) continue;
    if (left == 1) {  // every strategy is forbidden: keep the last, the answer will be forbidden
      infeasible_ = true;
      continue;
    }
    nodes_[side].costs[s] = kForbiddenCost;
    --left;
    ++stats_.pruned_strategies;
    changed = true;
  }
  return changed;
}

bool Reducer::TrySeparable(int e) {
  const Edge& edge = edges_[e];
  const int a = edge.a, b = edge.b;
  int s0 = -1;
  for (int s = 0; s < nodes_[a].k() && s0 < 0; ++s)
    if (Allowed(a, s)) s0 = s;
  if (s0 < 0) return false;  // no strategy of `a` left: nothing to separate (and no row to read)
  int t0 = -1;
  for (int t = 0; t < nodes_[b].k(); ++t)
    if (Allowed(b, t) && (t0 < 0 || Get(e, a, s0, t) < Get(e, a, s0, t0))) t0 = t;
  if (s0 < 0 || t0 < 0 || Get(e, a, s0, t0) >= kForbiddenCost) return false;
  // cost(s, t) == cost(s, t0) + cost(s0, t) - cost(s0, t0) for every allowed pair?
  const Cost base = Get(e, a, s0, t0);
  for (int t = 0; t < nodes_[b].k(); ++t)
    if (Allowed(b, t) && Get(e, a, s0, t) >= kForbiddenCost) return false;
  for (int s = 0; s < nodes_[a].k(); ++s) {
    if (!Allowed(a, s)) continue;
    const Cost row = Get(e, a, s, t0);
    if (row >= kForbiddenCost) return false;
    for (int t = 0; t < nodes_[b].k(); ++t)
      if (Allowed(b, t) && Get(e, a, s, t) != row + Get(e, a, s0, t) - base) return false;
  }
  for (int s = 0; s < nodes_[a].k(); ++s)
    if (Allowed(a, s)) nodes_[a].costs[s] = AddCost(nodes_[a].costs[s], Get(e, a, s, t0));
  for (int t = 0; t < nodes_[b].k(); ++t)
    if (Allowed(b, t)) nodes_[b].costs[t] = AddCost(nodes_[b].costs[t], Get(e, a, s0, t) - base);
  KillEdge(e);
  return true;
}

bool Reducer::TryMerge(int e) {
  for (int side = 0; side < 2; ++side) {
    const int keep = side == 0 ? edges_[e].a : edges_[e].b;
    const int gone = Other(e, keep);
    std::vector<int> map(nodes_[keep].k(), -1);
    bool functional = true;
    for (int s = 0; s < nodes_[keep].k() && functional; ++s) {
      if (!Allowed(keep, s)) continue;
      for (int t = 0; t < nodes_[gone].k(); ++t) {
        if (!Allowed(gone, t) || Get(e, keep, s, t) >= kForbiddenCost) continue;
        if (map[s] >= 0) {
          functional = false;
          break;
        }
        map[s] = t;
      }
      if (map[s] < 0) functional = false;  // unsupported (not pruned: the last strategy)
    }
    if (!functional) continue;
    Merge(keep, gone, e, map);
    return true;
  }
  return false;
}

void Reducer::Merge(int keep, int gone, int e, const std::vector<int>& map) {
  Node& k = nodes_[keep];
  for (int s = 0; s < k.k(); ++s)
    if (map[s] >= 0) k.costs[s] = AddCost(k.costs[s], AddCost(nodes_[gone].costs[map[s]], Get(e, keep, s, map[s])));
  for (Segment& segment : nodes_[gone].segments) {
    Segment moved{segment.start, segment.end, std::vector<int64_t>(k.k(), 0)};
    for (int s = 0; s < k.k(); ++s)
      if (map[s] >= 0) moved.usage[s] = segment.usage[map[s]];
    nodes_[keep].segments.push_back(std::move(moved));
  }
  KillEdge(e);
  std::vector<int> others = nodes_[gone].edges;
  for (int e2 : others) {
    if (!edges_[e2].alive) continue;
    const int c = Other(e2, gone);
    const int kc = nodes_[c].k();
    std::vector<Cost> m(static_cast<size_t>(nodes_[keep].k()) * kc, kForbiddenCost);
    for (int s = 0; s < nodes_[keep].k(); ++s) {
      if (map[s] < 0) continue;
      for (int t = 0; t < kc; ++t) m[static_cast<size_t>(s) * kc + t] = Get(e2, gone, map[s], t);
    }
    KillEdge(e2);
    AddEdge(keep, c, std::move(m));
    Push(c);
  }
  Expansion::Event event;
  event.node = gone;
  event.by1 = keep;
  event.table = map;
  for (int& t : event.table) t = std::max(t, 0);
  events_.push_back(std::move(event));
  nodes_[gone] = Node{};
  nodes_[gone].alive = false;
  ++stats_.merged;
  Push(keep);
}

bool Reducer::MemoryFree(int n) const {
  const Node& node = nodes_[n];
  for (const Segment& segment : node.segments) {
    if (segment.end <= segment.start) continue;
    int64_t first = -1;
    for (int s = 0; s < node.k(); ++s) {
      if (!Allowed(n, s)) continue;
      if (first < 0) first = segment.usage[s];
      if (segment.usage[s] != first) return false;
    }
  }
  return true;
}

void Reducer::AddBaseline(int64_t start, int64_t end, int64_t usage) {
  if (end <= start || usage == 0) return;
  baseline_diff_[start] += usage;
  baseline_diff_[end] -= usage;
}

bool Reducer::TryFold(int n) {
  Node& node = nodes_[n];
  if (node.edges.size() > 2 || !MemoryFree(n)) return false;
  int any = 0;
  while (!Allowed(n, any) && any + 1 < node.k()) ++any;
  Expansion::Event event;
  event.node = n;
  if (node.edges.empty()) {
    int best = any;
    for (int s = 0; s < node.k(); ++s)
      if (Allowed(n, s) && node.costs[s] < node.costs[best]) best = s;
    constant_ = AddCost(constant_, node.costs[best]);
    event.table = {best};
  } else if (node.edges.size() == 1) {
    const int e = node.edges[0];
    const int w = Other(e, n);
    event.by1 = w;
    event.table.assign(nodes_[w].k(), any);
    for (int t = 0; t < nodes_[w].k(); ++t) {
      if (!Allowed(w, t)) continue;
      Cost best = kForbiddenCost;
      for (int s = 0; s < node.k(); ++s) {
        if (!Allowed(n, s)) continue;
        const Cost c = AddCost(node.costs[s], Get(e, n, s, t));
        if (c < best) {
          best = c;
          event.table[t] = s;
        }
      }
      nodes_[w].costs[t] = AddCost(nodes_[w].costs[t], best);
    }
    KillEdge(e);
    Push(w);
  } else {
    const int e1 = node.edges[0], e2 = node.edges[1];
    const int w1 = Other(e1, n), w2 = Other(e2, n);
    const int k1 = nodes_[w1].k(), k2 = nodes_[w2].k();
    if (static_cast<int64_t>(k1) * k2 * node.k() > kMaxFoldWork) return false;
    event.by1 = w1;
    event.by2 = w2;
    event.columns = k2;
    event.table.assign(static_cast<size_t>(k1) * k2, any);
    std::vector<Cost> m(static_cast<size_t>(k1) * k2, kForbiddenCost);
    for (int s1 = 0; s1 < k1; ++s1) {
      if (!Allowed(w1, s1)) continue;
      for (int s2 = 0; s2 < k2; ++s2) {
        if (!Allowed(w2, s2)) continue;
        Cost best = kForbiddenCost;
        for (int s = 0; s < node.k(); ++s) {
          if (!Allowed(n, s)) continue;
          const Cost c = AddCost(AddCost(node.costs[s], Get(e1, n, s, s1)), Get(e2, n, s, s2));
          if (c < best) {
            best = c;
            event.table[static_cast<size_t>(s1) * k2 + s2] = s;
          }
        }
        m[static_cast<size_t>(s1) * k2 + s2] = best;
      }
    }
    KillEdge(e1);
    KillEdge(e2);
    AddEdge(w1, w2, std::move(m));
    Push(w1);
    Push(w2);
  }
  for (const Segment& segment : node.segments) AddBaseline(segment.start, segment.end, segment.usage[any]);
  events_.push_back(std::move(event));
  nodes_[n] = Node{};
  nodes_[n].alive = false;
  ++stats_.folded;
  return true;
}

Reduction Reducer::Run() {
  const int n_in = static_cast<int>(input_.nodes.size());
  stats_.input_nodes = n_in;
  stats_.input_edges = static_cast<int>(input_.edges.size());
  const int64_t horizon = input_.TimeHorizon();
  baseline_diff_.assign(horizon + 1, 0);
  nodes_.resize(n_in);
  for (int i = 0; i < n_in; ++i) {
    const StrategyProblem::Node& in = input_.nodes[i];
    nodes_[i].costs = in.costs;
    if (in.end > in.start) nodes_[i].segments.push_back(Segment{in.start, in.end, in.usages});
    bool any = false;
    for (Cost c : in.costs) any = any || c < kForbiddenCost;
    if (!any) {  // nothing allowed: keep the cheapest, flagged
      infeasible_ = true;
      const auto cheapest = std::min_element(in.costs.begin(), in.costs.end()) - in.costs.begin();
      nodes_[i].costs[cheapest] = kForbiddenCost - 1;
    }
  }
  for (const StrategyProblem::Edge& edge : input_.edges) {
    if (edge.from == edge.to) {  // a self-loop: its diagonal is a node cost
      const int k = nodes_[edge.from].k();
      for (int s = 0; s < k; ++s)
        nodes_[edge.from].costs[s] = AddCost(nodes_[edge.from].costs[s], edge.costs[static_cast<size_t>(s) * k + s]);
      continue;
    }
    AddEdge(edge.from, edge.to, edge.costs);
  }
  for (int i = 0; i < n_in; ++i) Push(i);
  while (!work_.empty()) {
    const int n = work_.front();
    work_.pop_front();
    if (!nodes_[n].alive) continue;
    CompactEdges(n);
    bool again = false;
    for (size_t i = 0; i < nodes_[n].edges.size(); ++i) {
      const int e = nodes_[n].edges[i];
      if (!edges_[e].alive) continue;
      const int other = Other(e, n);
      if (Prune(e, other)) Push(other);
      if (Prune(e, n)) again = true;
    }
    if (again) {
      for (int e : nodes_[n].edges)
        if (edges_[e].alive) Push(Other(e, n));
      Push(n);
      continue;
    }
    for (size_t i = 0; i < nodes_[n].edges.size() && nodes_[n].alive; ++i) {
      const int e = nodes_[n].edges[i];
      if (!edges_[e].alive) continue;
      const int other = Other(e, n);
      if (TrySeparable(e)) {
        Push(other);
        Push(n);
        continue;
      }
      if (TryMerge(e)) {
        Push(n);
        break;
      }
    }
    if (!nodes_[n].alive) continue;
    CompactEdges(n);
    TryFold(n);
  }
  Reduction out;
  Finalize(out);
  return out;
}

void Reducer::Finalize(Reduction& out) {
  ReducedProblem& reduced = out.problem;
  Expansion& expansion = out.expansion;
  const int n_in = static_cast<int>(nodes_.size());
  std::vector<int> index(n_in, -1);
  for (int n = 0; n < n_in; ++n) {
    if (!nodes_[n].alive) continue;
    index[n] = static_cast<int>(reduced.nodes.size());
    ReducedProblem::Node node;
    std::vector<int> originals;
    for (int s = 0; s < nodes_[n].k(); ++s) {
      if (!Allowed(n, s)) continue;
      originals.push_back(s);
      node.costs.push_back(nodes_[n].costs[s]);
    }
    // Segments: equal ranges summed; the smallest usage goes to the baseline.
    std::vector<Segment>& segments = nodes_[n].segments;
    std::sort(segments.begin(), segments.end(),
              [](const Segment& x, const Segment& y) { return std::tie(x.start, x.end) < std::tie(y.start, y.end); });
    for (size_t i = 0; i < segments.size();) {
      size_t j = i;
      std::vector<int64_t> usage(originals.size(), 0);
      for (; j < segments.size() && segments[j].start == segments[i].start && segments[j].end == segments[i].end; ++j)
        for (size_t s = 0; s < originals.size(); ++s) usage[s] += segments[j].usage[originals[s]];
      const int64_t least = *std::min_element(usage.begin(), usage.end());
      AddBaseline(segments[i].start, segments[i].end, least);
      bool varies = false;
      for (int64_t& u : usage) {
        u -= least;
        varies = varies || u != 0;
      }
      if (varies && segments[i].end > segments[i].start) {
        node.segments.push_back(ReducedProblem::Segment{segments[i].start, segments[i].end, node.usages.size()});
        node.usages.insert(node.usages.end(), usage.begin(), usage.end());
      }
      i = j;
    }
    reduced.nodes.push_back(std::move(node));
    expansion.root_of_reduced_.push_back(n);
    expansion.original_strategy_.push_back(std::move(originals));
  }
  for (const Edge& edge : edges_) {
    if (!edge.alive) continue;
    const int a = index[edge.a], b = index[edge.b];
    GSPMD_CHECK(a >= 0 && b >= 0 && a < b, "edge between removed nodes");
    ReducedProblem::Edge out_edge{a, b, {}};
    const int kb_in = nodes_[edge.b].k();
    const std::vector<int>& sa = expansion.original_strategy_[a];
    const std::vector<int>& sb = expansion.original_strategy_[b];
    out_edge.costs.reserve(sa.size() * sb.size());
    for (int s : sa)
      for (int t : sb) out_edge.costs.push_back(edge.m[static_cast<size_t>(s) * kb_in + t]);
    const int e = static_cast<int>(reduced.edges.size());
    reduced.nodes[a].adjacent.push_back({b, e});
    reduced.nodes[b].adjacent.push_back({a, e});
    reduced.edges.push_back(std::move(out_edge));
  }
  reduced.usage_limit = input_.usage_limit;
  reduced.horizon = static_cast<int64_t>(baseline_diff_.size()) - 1;
  reduced.baseline.assign(reduced.horizon, 0);
  int64_t running = 0;
  for (int64_t t = 0; t < reduced.horizon; ++t) reduced.baseline[t] = running += baseline_diff_[t];
  reduced.constant = constant_;
  reduced.live_by_bucket.assign((reduced.horizon >> ReducedProblem::kBucketShift) + 1, {});
  for (size_t v = 0; v < reduced.nodes.size(); ++v) {
    int64_t last = -1;  // segments are sorted by start: skip buckets already listed
    for (const ReducedProblem::Segment& segment : reduced.nodes[v].segments) {
      const int64_t first = std::max(last + 1, segment.start >> ReducedProblem::kBucketShift);
      const int64_t end = (segment.end - 1) >> ReducedProblem::kBucketShift;
      for (int64_t b = first; b <= end; ++b) reduced.live_by_bucket[b].push_back(static_cast<int>(v));
      last = std::max(last, end);
    }
  }
  reduced.infeasible_strategies = infeasible_;
  expansion.input_nodes_ = n_in;
  expansion.events_ = std::move(events_);
  stats_.nodes = static_cast<int>(reduced.nodes.size());
  stats_.edges = static_cast<int>(reduced.edges.size());
  out.stats = stats_;
}

std::vector<int> Expansion::Expand(const std::vector<int>& reduced_assignment) const {
  std::vector<int> choice(input_nodes_, -1);
  for (size_t r = 0; r < root_of_reduced_.size(); ++r)
    choice[root_of_reduced_[r]] = original_strategy_[r][reduced_assignment[r]];
  for (auto it = events_.rbegin(); it != events_.rend(); ++it) {
    const Event& event = *it;
    if (event.by1 < 0) {
      choice[event.node] = event.table[0];
    } else if (event.by2 < 0) {
      choice[event.node] = event.table[choice[event.by1]];
    } else {
      choice[event.node] = event.table[static_cast<size_t>(choice[event.by1]) * event.columns + choice[event.by2]];
    }
  }
  return choice;
}

Reduction Reduce(const StrategyProblem& problem) { return Reducer(problem).Run(); }

}  // namespace gspmd::autoshard
