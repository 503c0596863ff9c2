// `gspmd autoshard --iopddl PROBLEM --time-limit SECONDS [--json]`: solves an IOPDDL contest
// problem (one sharding strategy per node under a memory limit) and prints the answer
// `[s0, s1, ...]` as the last line. The HLO-program mode of autoshard is not built yet.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "autoshard/iopddl_reader.h"
#include "autoshard/solver.h"
#include "support/diagnostic.h"
#include "tools/commands.h"

namespace gspmd::tools {
namespace {

struct AutoshardOptions {
  std::string iopddl;
  double time_limit = 60;
  bool json = false;
  uint64_t seed = 1;
  int64_t work_budget = 0;
  bool trace = false;
};

// Time kept back from the limit for expanding, checking and printing the answer.
double SearchSeconds(double limit) { return std::max(0.1, limit * 0.97 - 0.5); }

void RunAutoshard(const AutoshardOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (options.iopddl.empty())
    GSPMD_USER_ERROR("gspmd autoshard: error: the HLO-program mode is not built yet (issue 25); "
                     "give an IOPDDL problem with --iopddl PROBLEM.json[.gz]");
  if (!(options.time_limit > 0))
    GSPMD_USER_ERROR("gspmd autoshard: error: --time-limit ", options.time_limit, " is invalid (expected seconds > 0)");
  const autoshard::StrategyProblem problem = autoshard::ReadIopddlFile(options.iopddl);
  const double read_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  autoshard::SolveOptions solve;
  solve.start = start;
  solve.time_limit_seconds = SearchSeconds(options.time_limit);
  solve.seed = options.seed;
  solve.trace = options.trace;
  solve.work_budget = options.work_budget > 0 ? options.work_budget
                                              : static_cast<int64_t>(SearchSeconds(options.time_limit) *
                                                                     autoshard::kNominalWorkPerSecond);
  const autoshard::SolveResult result = autoshard::SolveStrategyProblem(problem, solve);
  const autoshard::ReductionStats& r = result.reduction;
  const std::string cost = autoshard::WideToString(result.cost);
  const std::string bound = autoshard::WideToString(result.lower_bound);
  const double gap = result.cost > 0 ? static_cast<double>(result.cost - result.lower_bound) / static_cast<double>(result.cost) : 0.0;
  if (options.json) {
    nlohmann::json out = {
        {"problem", problem.name},
        {"nodes", r.input_nodes},
        {"edges", r.input_edges},
        {"reduced_nodes", r.nodes},
        {"reduced_edges", r.edges},
        {"initial_cost", autoshard::WideToString(result.initial_cost)},
        {"cost", cost},
        {"feasible", result.feasible},
        {"lower_bound", bound},
        {"gap", gap},
        {"rounds", result.rounds},
        {"work", result.work},
        {"work_budget", result.work_budget},
        {"stopped_by_clock", result.stopped_by_clock},
        {"read_seconds", read_seconds},
        {"seconds", result.seconds},
    };
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("problem %s: %d nodes, %d edges, usage limit %lld\n", problem.name.c_str(), r.input_nodes,
                r.input_edges, static_cast<long long>(problem.usage_limit));
    std::printf("reduced: %d nodes, %d edges (%d merged along functional edges, %d folded, %d strategies pruned)\n",
                r.nodes, r.edges, r.merged, r.folded, r.pruned_strategies);
    std::printf("initial cost: %s\n", autoshard::WideToString(result.initial_cost).c_str());
    std::printf("best cost: %s (%s)\n", cost.c_str(),
                result.feasible ? "feasible" : "NOT feasible: memory over the limit or a forbidden choice");
    if (result.feasible && result.lower_bound == result.cost)
      std::printf("lower bound: %s (the answer is optimal)\n", bound.c_str());
    else
      std::printf("lower bound: %s (gap %.2f%% of the best cost)\n", bound.c_str(), 100.0 * gap);
    std::printf("time: %.2f s (reading %.2f s), %d rounds, work %lld of %lld%s\n", result.seconds, read_seconds,
                result.rounds, static_cast<long long>(result.work), static_cast<long long>(result.work_budget),
                result.stopped_by_clock ? ", stopped by the time limit" : "");
  }
  std::printf("%s\n", autoshard::FormatAssignment(result.assignment).c_str());
}

}  // namespace

void AddAutoshardCommand(CLI::App& app) {
  auto options = std::make_shared<AutoshardOptions>();
  CLI::App* command = app.add_subcommand(
      "autoshard", "Choose a sharding strategy per instruction under a memory limit (now: IOPDDL contest problems)");
  command->add_option("--iopddl", options->iopddl, "an IOPDDL problem, .json or .json.gz");
  command->add_option("--time-limit", options->time_limit, "wall-clock seconds; the best answer so far is printed")
      ->capture_default_str();
  command->add_flag("--json", options->json, "print the figures as one JSON line before the answer");
  command->add_option("--seed", options->seed, "the search's random seed")->capture_default_str();
  command->add_option("--work-budget", options->work_budget,
                      "inner-loop steps the search may do (default: from --time-limit)");
  command->add_flag("--trace", options->trace, "print one line per Lagrangian round of the search on stderr");
  command->callback([options] { RunAutoshard(*options); });
}

}  // namespace gspmd::tools
