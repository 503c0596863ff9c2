// `gspmd autoshard FILE --devices N [--mesh ...]`: a sharding plan for a global program, found
// by searching meshes and parameter PartitionSpecs with the simulator's costs (api::Autoshard);
// `gspmd autoshard --iopddl PROBLEM` solves an IOPDDL contest problem (one strategy per node
// under a memory limit) and prints the answer `[s0, s1, ...]` as the last line.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "api/gspmd.h"
#include "autoshard/iopddl_reader.h"
#include "autoshard/solver.h"
#include "support/diagnostic.h"
#include "support/units.h"
#include "tools/commands.h"
#include "tools/tool_util.h"

namespace gspmd::tools {
namespace {

struct AutoshardCliOptions {
  bool global = false;  // --global: FILE is global even when it looks per-device
  std::string file;
  std::string iopddl;
  double time_limit = 60;
  bool json = false;
  uint64_t seed = 1;
  int64_t work_budget = 0;
  bool trace = false;
  // Program mode.
  std::string chip = "tpu-v3";
  int64_t devices = 0;
  std::string mesh;
  std::string memory_budget;
  std::string keep = "all";
  std::string out;
  bool explain = false;
  int64_t max_evaluations = 0;
  std::string compute_type;
  std::string mixed_precision;
  std::string windowed_einsum = api::kWindowedEinsumDefault;
};

// Time kept back from the limit for expanding, checking and printing the answer.
double SearchSeconds(double limit) { return std::max(0.1, limit * 0.97 - 0.5); }

void RunIopddl(const AutoshardCliOptions& options) {
  const auto start = std::chrono::steady_clock::now();
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
      std::printf("lower bound: %s (gap %s of the best cost)\n", bound.c_str(), FormatPercent(gap).c_str());
    std::printf("time: %s (reading %s), %d rounds, work %lld of %lld%s\n", FormatSeconds(result.seconds).c_str(),
                FormatSeconds(read_seconds).c_str(), result.rounds,
                static_cast<long long>(result.work), static_cast<long long>(result.work_budget),
                result.stopped_by_clock ? ", stopped by the time limit" : "");
  }
  std::printf("%s\n", autoshard::FormatAssignment(result.assignment).c_str());
}

// "16GiB", "16G" (binary), "16GB" (decimal), "1.5e9", "123456" -> bytes.
int64_t ParseByteSize(const std::string& text) {
  size_t used = 0;
  double number = 0;
  try {
    number = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = text.substr(used);
  std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return std::tolower(c); });
  const std::pair<const char*, double> units[] = {
      {"", 1},        {"b", 1},          {"k", 1024.0},  {"kib", 1024.0}, {"kb", 1e3},
      {"m", 1 << 20}, {"mib", 1 << 20},  {"mb", 1e6},    {"g", 1 << 30},  {"gib", 1 << 30},
      {"gb", 1e9},    {"t", 1099511627776.0}, {"tib", 1099511627776.0}, {"tb", 1e12}};
  for (const auto& [name, scale] : units) {
    if (used == 0 || unit != name || !(number > 0) || !std::isfinite(number * scale) || number * scale > 9e18) continue;
    return static_cast<int64_t>(number * scale);
  }
  GSPMD_USER_ERROR("gspmd autoshard: error: --memory-budget '", text,
                   "': expected a positive size such as 16GiB, 12G, 16GB or 17179869184");
}

std::string CostLine(const autoshard::PlanCost& cost, int64_t budget) {
  if (!cost.valid) return "not compiled: " + cost.error;
  return "step " + FormatSeconds(cost.step_time_s) + ", MFU " + FormatPercent(cost.mfu) + ", peak " +
         FormatBytes(cost.peak_bytes) + " of " + FormatBytes(budget) + (cost.fits ? " (fits)" : " (does NOT fit)") +
         ", " + FormatBytes(cost.comm_bytes) + " sent per device";
}

void RunProgram(const AutoshardCliOptions& options) {
  api::AutoshardOptions search;
  search.chip = options.chip;
  search.devices = options.devices;
  search.mesh = options.mesh;
  if (!options.memory_budget.empty()) search.memory_budget_bytes = ParseByteSize(options.memory_budget);
  search.keep = options.keep;
  search.time_limit_s = options.time_limit;
  search.max_evaluations = options.max_evaluations;
  search.compute_type = options.compute_type;
  search.mixed_precision = options.mixed_precision;
  search.windowed_einsum = options.windowed_einsum;
  const api::Program program = LoadGlobalProgram(options.file, options.global);
  const api::AutoshardResult result = api::Autoshard(program, search);
  if (!options.out.empty()) api::WriteTextFile(options.out, result.program.Text());

  if (options.json) {
    std::printf("%s\n", api::AutoshardResultToJson(result, options.explain).dump(2).c_str());
    return;
  }

  std::printf("autoshard %s: %lld devices, chip %s, memory budget %s per device\n", program.name().c_str(),
              static_cast<long long>(result.devices), options.chip.c_str(),
              FormatBytes(result.memory_budget_bytes).c_str());
  std::printf("meshes searched (best plan of each):\n");
  std::map<std::string, int> not_searched;  // reason -> meshes
  for (const api::AutoshardMeshResult& mesh : result.meshes) {
    if (mesh.evaluations == 0) {
      ++not_searched[mesh.cost.error];
      continue;
    }
    std::printf("  %-14s %s (%lld plans%s)\n", mesh.mesh.c_str(), CostLine(mesh.cost, result.memory_budget_bytes).c_str(),
                static_cast<long long>(mesh.evaluations), mesh.stopped_early ? ", stopped by the time or evaluation limit" : "");
  }
  for (const auto& [reason, count] : not_searched)
    std::printf("  %d other mesh%s %s (--json lists them)\n", count, count == 1 ? "" : "es", reason.c_str());
  if (!result.recipes.empty()) {
    std::printf("the model's standard recipes:\n");
    for (const api::AutoshardRecipe& recipe : result.recipes)
      std::printf("  %-14s %-40s %s\n", recipe.mesh.c_str(), recipe.name.c_str(),
                  CostLine(recipe.cost, result.memory_budget_bytes).c_str());
  }
  std::printf("chosen mesh: %s (plan from the %s)\n", result.mesh.c_str(), result.origin.c_str());
  std::printf("plan (one decision per group of parameters with the same role):\n");
  int as_recipe = 0, following = 0;
  for (const api::AutoshardGroupPlan& group : result.plan) {
    // Groups that keep the recipe's annotation, or follow their weight, are counted, not listed.
    if (group.spec == "(as the recipe)") {
      ++as_recipe;
      continue;
    }
    if (group.spec.rfind("(as ", 0) == 0) {
      ++following;
      continue;
    }
    std::printf("  %-24s %-26s %-12s %s\n", group.label.c_str(), group.spec.c_str(),
                FormatBytes(group.bytes).c_str(), group.sharding.c_str());
  }
  if (as_recipe > 0) std::printf("  (%d more groups as the recipe has them)\n", as_recipe);
  if (following > 0) std::printf("  (%d groups of optimizer state sharded as their weights)\n", following);
  if (result.remat == "layer")
    std::printf("recomputation: every layer (remat=layer): the backward pass recomputes each layer's inner activations from its input\n");
  else if (result.remat == "none")
    std::printf("recomputation: none written (remat=none); XLA rematerializes where memory runs out, as the estimate does\n");
  std::printf("plan:  %s\n", CostLine(result.cost, result.memory_budget_bytes).c_str());
  if (result.input_cost)
    std::printf("input: %s (the input's own annotations)\n", CostLine(*result.input_cost, result.memory_budget_bytes).c_str());
  if (result.lower_bound_s)
    std::printf("lower bound on the step: %s (the step's matrix FLOPs over all devices at peak)\n",
                FormatSeconds(*result.lower_bound_s).c_str());
  std::printf("solved in %s: %lld plans partitioned and simulated%s\n", FormatSeconds(result.solve_time_s).c_str(),
              static_cast<long long>(result.evaluations), result.stopped_early ? ", stopped by the time or evaluation limit" : "");
  if (options.explain) {
    std::printf("why (the alternatives weighed for each group, with the others as chosen):\n");
    for (const api::AutoshardDecision& decision : result.decisions) {
      std::printf("  %s: %s\n", decision.group.c_str(), decision.chosen.c_str());
      for (const auto& [spec, cost] : decision.alternatives)
        std::printf("    %s %-26s %s\n", spec == decision.chosen ? "*" : " ", spec.c_str(),
                    CostLine(cost, result.memory_budget_bytes).c_str());
    }
  }
  if (!options.out.empty()) std::printf("wrote %s\n", options.out.c_str());
}

void RunAutoshard(const AutoshardCliOptions& options) {
  if (!options.iopddl.empty() && !options.file.empty())
    GSPMD_USER_ERROR("gspmd autoshard: error: give a program FILE or --iopddl PROBLEM, not both");
  if (!options.iopddl.empty()) return RunIopddl(options);
  if (options.file.empty())
    GSPMD_USER_ERROR("gspmd autoshard: error: expected a program FILE (HLO text or .mlir) or --iopddl PROBLEM.json[.gz]");
  RunProgram(options);
}

}  // namespace

void AddAutoshardCommand(CLI::App& app) {
  auto options = std::make_shared<AutoshardCliOptions>();
  CLI::App* command = app.add_subcommand(
      "autoshard",
      "Find a sharding plan: mesh and parameter PartitionSpecs searched with the simulator's costs (or solve an "
      "IOPDDL problem)");
  command->add_option("FILE", options->file, "a global program (HLO text or .mlir), with or without annotations");
  command->add_option("--chip", options->chip, "the chip the costs are for (as gspmd simulate)")->capture_default_str();
  command->add_option("--devices", options->devices, "devices to shard over (default: the program's num_partitions)");
  command->add_option("--mesh", options->mesh, "the mesh AXIS=N,...; without it every 1-3 axis mesh is searched");
  command->add_option("--memory-budget", options->memory_budget, "bytes per device (e.g. 16GiB; default: the chip's HBM)");
  command->add_option("--keep-annotations", options->keep, "the input's annotations kept as constraints: all|boundary|none")
      ->capture_default_str();
  command->add_option("-o,--out", options->out, "write the program with the chosen annotations to this file");
  AddGlobalOverride(*command, options->global);
  command->add_flag("--explain", options->explain, "for each decision, the alternatives weighed and their costs");
  command->add_option("--max-evaluations", options->max_evaluations,
                      "plans compiled and simulated per mesh (default: until the search settles or time runs out); "
                      "with it the answer is the same on any machine, without it a search the clock stops "
                      "depends on the machine's speed");
  command->add_option("--compute-type", options->compute_type, "re-type the float math (as gspmd simulate)");
  command->add_option("--mixed-precision", options->mixed_precision, "bf16 math, f32 state (as gspmd simulate)");
  AddWindowedEinsumOption(*command, options->windowed_einsum);
  command->add_option("--iopddl", options->iopddl, "an IOPDDL problem, .json or .json.gz");
  command->add_option("--time-limit", options->time_limit, "wall-clock seconds; the best answer so far is given")
      ->capture_default_str();
  command->add_flag("--json", options->json, "print the figures as JSON (IOPDDL: one line before the answer)");
  command->add_option("--seed", options->seed, "IOPDDL: the search's random seed")->capture_default_str();
  command->add_option("--work-budget", options->work_budget,
                      "IOPDDL: inner-loop steps the search may do (default: from --time-limit)");
  command->add_flag("--trace", options->trace, "IOPDDL: one line per Lagrangian round of the search on stderr");
  // Options of one mode given in the other would be ignored: refused instead.
  CLI::Option* iopddl = command->get_option("--iopddl");
  for (const char* program_only : {"--chip", "--devices", "--mesh", "--memory-budget", "--keep-annotations", "--out",
                                   "--global", "--explain", "--max-evaluations", "--compute-type", "--mixed-precision",
                                   "--windowed-einsum"})
    command->get_option(program_only)->excludes(iopddl);
  for (const char* iopddl_only : {"--seed", "--work-budget", "--trace"}) command->get_option(iopddl_only)->needs(iopddl);
  command->callback([options] { RunAutoshard(*options); });
}

}  // namespace gspmd::tools
