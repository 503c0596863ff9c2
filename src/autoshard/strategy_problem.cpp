// The checker of an assignment: total cost in 128 bits, forbidden choices, peak memory.
#include "autoshard/strategy_problem.h"

#include <algorithm>

#include "support/diagnostic.h"

namespace gspmd::autoshard {

std::string WideToString(WideCost value) {
  if (value == 0) return "0";
  const bool negative = value < 0;
  unsigned __int128 magnitude = negative ? -static_cast<unsigned __int128>(value) : value;
  std::string digits;
  while (magnitude > 0) {
    digits.push_back(static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  }
  if (negative) digits.push_back('-');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

int64_t StrategyProblem::TimeHorizon() const {
  int64_t horizon = 0;
  for (const Node& node : nodes)
    if (node.end > node.start) horizon = std::max(horizon, node.end);
  return horizon;
}

AssignmentCheck CheckAssignment(const StrategyProblem& problem, const std::vector<int>& assignment) {
  AssignmentCheck check;
  const int node_count = static_cast<int>(problem.nodes.size());
  if (static_cast<int>(assignment.size()) != node_count) {
    check.problem = StrCat("the assignment has ", assignment.size(), " strategies, expected one per node (",
                           node_count, ")");
    return check;
  }
  for (int i = 0; i < node_count; ++i) {
    const int s = assignment[i];
    if (s < 0 || s >= problem.nodes[i].strategy_count()) {
      check.problem = StrCat("node ", i, " is given strategy ", s, ", expected 0..",
                             problem.nodes[i].strategy_count() - 1);
      return check;
    }
  }
  check.well_formed = true;
  auto note_forbidden = [&check](const std::string& what) {
    if (!check.forbidden && check.problem.empty()) check.problem = what;
    check.forbidden = true;
  };
  for (int i = 0; i < node_count; ++i) {
    const Cost c = problem.nodes[i].costs[assignment[i]];
    check.cost += c;
    if (c >= kForbiddenCost) note_forbidden(StrCat("node ", i, " strategy ", assignment[i], " is forbidden"));
  }
  for (size_t e = 0; e < problem.edges.size(); ++e) {
    const StrategyProblem::Edge& edge = problem.edges[e];
    const int columns = problem.nodes[edge.to].strategy_count();
    const Cost c = edge.costs[static_cast<size_t>(assignment[edge.from]) * columns + assignment[edge.to]];
    check.cost += c;
    if (c >= kForbiddenCost)
      note_forbidden(StrCat("edge ", e, " (", edge.from, ", ", edge.to, ") at (", assignment[edge.from], ", ",
                            assignment[edge.to], ") is forbidden"));
  }
  // Memory: a sweep over the interval ends.
  std::vector<std::pair<int64_t, int64_t>> events;  // (time, +usage at start / -usage at end)
  for (int i = 0; i < node_count; ++i) {
    const StrategyProblem::Node& node = problem.nodes[i];
    if (node.end <= node.start) continue;
    const int64_t usage = node.usages[assignment[i]];
    events.emplace_back(node.start, usage);
    events.emplace_back(node.end, -usage);
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0;
  for (size_t k = 0; k < events.size();) {
    const int64_t time = events[k].first;
    for (; k < events.size() && events[k].first == time; ++k) live += events[k].second;
    if (live > check.peak_usage) {
      check.peak_usage = live;
      check.peak_time = time;
    }
  }
  check.fits_memory = check.peak_usage <= problem.usage_limit;
  if (!check.fits_memory && check.problem.empty())
    check.problem = StrCat("memory ", check.peak_usage, " at time ", check.peak_time, " exceeds the limit ",
                           problem.usage_limit);
  return check;
}

std::string FormatAssignment(const std::vector<int>& assignment) {
  std::string text = "[";
  for (size_t i = 0; i < assignment.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(assignment[i]);
  }
  return text + "]";
}

}  // namespace gspmd::autoshard
