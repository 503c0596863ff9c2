// api::Autoshard: the program-level search (autoshard/program/) over meshes and parameter
// PartitionSpecs, every plan priced by partitioning and simulating it as `gspmd simulate` does.
#include <algorithm>
#include <chrono>
#include <limits>
#include <map>

#include "api/autoshard_mesh_search.h"
#include "api/autoshard_recipes.h"
#include "api/gspmd.h"
#include "autoshard/program/parameter_groups.h"
#include "builder/remove_annotations.h"
#include "partitioner/sdy_attributes.h"
#include "sharding/partition_spec.h"
#include "ir/computation.h"
#include "support/diagnostic.h"

namespace gspmd::api {
namespace {

using autoshard::PlanCost;
using autoshard_internal::Clock;
using autoshard_internal::CostOf;
using autoshard_internal::MeshSearch;

const char* const kAxisNames[] = {"x", "y", "z"};

// The program's own axis names (its sdy.mesh, or --mesh for HLO text) for the searched mesh
// of the same axis sizes, so the plan's PartitionSpecs read in the user's words; that mesh is
// searched first, so it wins a tie.
void NameLikeProgram(std::vector<Mesh>& meshes, const Mesh& named) {
  if (!named.device_ids.empty()) return;
  std::vector<Mesh::Axis> axes;
  for (const Mesh::Axis& axis : named.axes)
    if (axis.size > 1) axes.push_back(axis);
  for (Mesh& mesh : meshes) {
    if (mesh.axes.size() != axes.size() || !mesh.device_ids.empty()) continue;
    bool same_sizes = true;
    for (size_t i = 0; i < axes.size(); ++i) same_sizes = same_sizes && mesh.axes[i].size == axes[i].size;
    if (same_sizes) mesh.axes = axes;
  }
  std::stable_partition(meshes.begin(), meshes.end(), [&](const Mesh& mesh) { return mesh.axes == axes; });
}

// Every way to write `devices` as a product of 1 to 3 axes of size >= 2 (major axis first).
std::vector<Mesh> CandidateMeshes(int64_t devices) {
  std::vector<Mesh> meshes;
  meshes.push_back(Mesh{{{kAxisNames[0], devices}}, {}});
  for (int64_t a = 2; a < devices; ++a) {
    if (devices % a != 0) continue;
    const int64_t rest = devices / a;
    if (rest >= 2) meshes.push_back(Mesh{{{kAxisNames[0], a}, {kAxisNames[1], rest}}, {}});
  }
  for (int64_t a = 2; a < devices; ++a) {
    if (devices % a != 0) continue;
    for (int64_t b = 2; b < devices / a; ++b) {
      if ((devices / a) % b != 0 || devices / a / b < 2) continue;
      meshes.push_back(Mesh{{{kAxisNames[0], a}, {kAxisNames[1], b}, {kAxisNames[2], devices / a / b}}, {}});
    }
  }
  return meshes;
}

bool HasAnnotations(const Module& module) {
  for (const auto& computation : module.computations())
    for (const auto& instruction : computation->instructions())
      if (instruction->sharding() ||
          (instruction->opcode() == Opcode::kCustomCall && instruction->custom_call_target == "Sharding"))
        return true;
  return false;
}

SimulateOptions SimulateOptionsFor(const AutoshardOptions& options, int64_t devices, int64_t budget) {
  SimulateOptions simulate;
  simulate.chip = options.chip;
  simulate.devices = devices;
  simulate.compute_type = options.compute_type;
  simulate.mixed_precision = options.mixed_precision;
  simulate.memory_capacity_bytes = budget;
  simulate.windowed_einsum = options.windowed_einsum;
  // Every plan is simulated: auto prices each loop and tries the kept ones, and each collective
  // kind alone, without the longer search of `gspmd simulate`.
  simulate.windowed_search_steps = 0;
  simulate.per_device = false;
  return simulate;
}


}  // namespace

AutoshardResult Autoshard(const Program& program, const AutoshardOptions& options) {
  const Clock::time_point start = Clock::now();
  if (!(options.time_limit_s > 0))
    GSPMD_USER_ERROR("gspmd autoshard: error: --time-limit ", options.time_limit_s, " is invalid (expected seconds > 0)");
  if (options.keep != "all" && options.keep != "boundary" && options.keep != "none")
    GSPMD_USER_ERROR("gspmd autoshard: error: --keep-annotations '", options.keep, "' (expected all, boundary or none)");
  if (options.memory_budget_bytes < 0)
    GSPMD_USER_ERROR("gspmd autoshard: error: --memory-budget ", options.memory_budget_bytes, " is negative");
  if (program.IsPerDevice())
    GSPMD_USER_ERROR(program.name(), ": error: autoshard needs a global program; this one is per-device already");
  const Module& input = program.module();
  int64_t devices = options.devices;
  std::vector<Mesh> meshes;
  if (!options.mesh.empty()) {
    meshes.push_back(ParseMeshFlag(options.mesh, "gspmd autoshard: error: --mesh"));
    if (devices > 0 && meshes[0].num_devices() != devices)
      GSPMD_USER_ERROR("gspmd autoshard: error: --mesh ", options.mesh, " has ", meshes[0].num_devices(),
                       " devices but --devices is ", devices);
    devices = meshes[0].num_devices();
  }
  if (devices == 0 && !input.Attribute("num_partitions").empty()) devices = input.num_partitions();
  if (devices < 1)
    GSPMD_USER_ERROR("gspmd autoshard: error: --devices ", devices,
                     " (expected the number of devices, >= 1: give --devices N or --mesh AXIS=N,...)");
  if (meshes.empty()) meshes = CandidateMeshes(devices);
  if (const std::optional<Mesh> named = NamedMeshOf(input)) NameLikeProgram(meshes, *named);
  // The chip's HBM unless a budget is given (an unknown chip is refused here, before the search).
  const simulate::ChipSpec chip = simulate::LoadChipSpec(options.chip);
  const int64_t budget = options.memory_budget_bytes > 0 ? options.memory_budget_bytes : chip.hbm_bytes;

  // The base program: the annotations kept as constraints, and the parameters to decide.
  std::unique_ptr<Module> stripped = program.CopyModule();
  if (options.keep == "none") RemoveShardingAnnotations(*stripped);
  if (options.keep == "boundary") RemoveShardingAnnotations(*stripped, AnnotationsToRemove::kIntermediates);
  const bool input_annotated = HasAnnotations(input);
  std::vector<int64_t> searched;
  for (const Instruction* parameter : stripped->entry()->parameters())
    if (!parameter->sharding()) searched.push_back(parameter->parameter_number);
  const std::vector<autoshard::ParameterGroup> groups = autoshard::GroupParameters(*stripped, searched);
  const Program base = Program::FromModule(std::move(stripped), program.name());

  AutoshardResult result{.program = Annotate(base, {}, meshes[0])};
  result.devices = devices;
  result.memory_budget_bytes = budget;
  const SimulateOptions simulate = SimulateOptionsFor(options, devices, budget);
  if (input_annotated && (input.Attribute("num_partitions").empty() || input.num_partitions() == devices)) {
    try {
      result.input_cost = CostOf(Simulate(program, simulate));
    } catch (const UserError&) {
    }
  }

  // A model step keeps a tenth of the time for pricing its plan with every layer recomputed.
  const bool remat_choice = autoshard_internal::CanRematLayers(input);
  const Clock::time_point deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                  std::min(options.time_limit_s, 1e7) * (remat_choice ? 0.85 : 0.95)));
  // The best plan so far: the search (or the recipe refinement) that found it.
  struct Contender {
    std::shared_ptr<const std::vector<autoshard::ParameterGroup>> groups;
    std::unique_ptr<MeshSearch> search;
    autoshard::PlanSearchResult found;
    std::string origin;
    std::shared_ptr<const std::vector<autoshard::ParameterGroup>> screen_groups;
    std::shared_ptr<MeshSearch> screen;  // the two-layer copy that screened candidates
  };
  constexpr int kScreenKeep = 3;
  std::optional<Contender> best;
  std::string best_mesh;
  auto consider = [&](Contender contender, const std::string& mesh) {
    if (best && !autoshard::BetterPlan(contender.found.cost, best->found.cost)) return;
    best = std::move(contender);
    best_mesh = mesh;
  };
  auto shared_groups = std::make_shared<const std::vector<autoshard::ParameterGroup>>(groups);
  // The order meshes are searched in. A model step's meshes are ranked by their best recipe on a
  // two-layer copy of the step, and the time goes to the best three; other programs' meshes
  // share it evenly, in the order of CandidateMeshes.
  std::vector<size_t> order(meshes.size());
  for (size_t m = 0; m < meshes.size(); ++m) order[m] = m;
  size_t focus = meshes.size();
  // A model step with more than two layers: its two-layer copy ranks meshes and screens each
  // group's candidates (only the best few there are partitioned and simulated in full).
  const std::optional<Program> shallow = autoshard_internal::ShallowStep(input, 2);
  std::optional<Program> shallow_base;
  std::shared_ptr<const std::vector<autoshard::ParameterGroup>> shallow_groups;
  if (shallow) {
    std::unique_ptr<Module> module = shallow->CopyModule();
    if (options.keep == "none") RemoveShardingAnnotations(*module);
    if (options.keep == "boundary") RemoveShardingAnnotations(*module, AnnotationsToRemove::kIntermediates);
    std::vector<int64_t> unannotated;
    for (const Instruction* parameter : module->entry()->parameters())
      if (!parameter->sharding()) unannotated.push_back(parameter->parameter_number);
    shallow_groups = std::make_shared<const std::vector<autoshard::ParameterGroup>>(
        autoshard::GroupParameters(*module, unannotated));
    shallow_base = Program::FromModule(std::move(module), program.name());
  }
  if (meshes.size() > 1) {
    if (shallow) {
      std::vector<double> rank(meshes.size(), std::numeric_limits<double>::infinity());
      // At most a quarter of the time: meshes not reached keep their order, after the ranked.
      const Clock::time_point ranking_deadline = start + (deadline - start) / 4;
      for (size_t m = 0; m < meshes.size() && Clock::now() < ranking_deadline; ++m)
        for (const autoshard_internal::RecipeProgram& recipe : autoshard_internal::StandardRecipes(shallow->module(), meshes[m])) {
          try {
            const simulate::SimulationReport report = Simulate(recipe.program, simulate);
            rank[m] = std::min(rank[m], report.step_time_s);
          } catch (const UserError&) {
          }
        }
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rank[a] < rank[b]; });
      focus = std::min<size_t>(3, meshes.size());
    }
  }
  bool any_splits = false;
  for (size_t position = 0; position < order.size(); ++position) {
    const size_t m = order[position];
    const std::string mesh_text = MeshFlagText(meshes[m]);
    const Clock::time_point now = Clock::now();
    if (position >= focus || (position > 0 && now >= deadline)) {
      AutoshardMeshResult skipped{mesh_text, {}, 0, true};
      skipped.cost.error = position >= focus ? "not searched: ranked below the best three on the two-layer step"
                                             : "not searched: the time limit was reached";
      result.meshes.push_back(std::move(skipped));
      result.stopped_early = result.stopped_early || position < focus;
      continue;
    }
    const size_t share = std::min(order.size(), focus) - position;
    const Clock::time_point mesh_deadline = now + (deadline - now) / static_cast<int64_t>(share);
    std::vector<autoshard_internal::RecipeProgram> recipes = autoshard_internal::StandardRecipes(input, meshes[m]);
    AutoshardMeshResult mesh_result{mesh_text, {}, 0, false};
    bool mesh_has_plan = false;
    auto take = [&](Contender contender) {
      mesh_result.evaluations += contender.found.evaluations;
      mesh_result.stopped_early = mesh_result.stopped_early || contender.found.stopped_early;
      if (!mesh_has_plan || autoshard::BetterPlan(contender.found.cost, mesh_result.cost))
        mesh_result.cost = contender.found.cost;
      mesh_has_plan = true;
      consider(std::move(contender), mesh_text);
    };

    // The recipes first (the strongest starting points), each priced in full; then the best one
    // refined group by group with half of what is left; then the search from nothing.
    std::optional<size_t> best_recipe;
    std::vector<PlanCost> recipe_costs;
    for (size_t r = 0; r < recipes.size(); ++r) {
      if (r > 0 && Clock::now() >= mesh_deadline) {
        mesh_result.stopped_early = true;
        break;
      }
      PlanCost cost;
      try {
        cost = CostOf(Simulate(recipes[r].program, simulate));
      } catch (const UserError& error) {
        cost.error = error.what();
      }
      ++mesh_result.evaluations;
      result.recipes.push_back({recipes[r].name, mesh_text, cost});
      recipe_costs.push_back(cost);
      if (!best_recipe || autoshard::BetterPlan(cost, recipe_costs[*best_recipe])) best_recipe = r;
    }
    // Under memory pressure (no recipe fits), the recipes are priced again with every layer
    // recomputed, which may be what makes a plan fit at all.
    if (remat_choice && best_recipe && !recipe_costs[*best_recipe].fits && Clock::now() < mesh_deadline) {
      recipes.erase(recipes.begin() + static_cast<std::ptrdiff_t>(recipe_costs.size()), recipes.end());  // unpriced
      if (std::optional<Program> layered_input = autoshard_internal::WithLayerRemat(input)) {
        for (autoshard_internal::RecipeProgram& recipe : autoshard_internal::StandardRecipes(layered_input->module(), meshes[m])) {
          if (Clock::now() >= mesh_deadline) break;
          PlanCost cost;
          try {
            cost = CostOf(Simulate(recipe.program, simulate));
          } catch (const UserError& error) {
            cost.error = error.what();
          }
          ++mesh_result.evaluations;
          recipe.name += " remat=layer";
          result.recipes.push_back({recipe.name, mesh_text, cost});
          recipe_costs.push_back(cost);
          recipes.push_back(std::move(recipe));
          if (autoshard::BetterPlan(cost, recipe_costs[*best_recipe])) best_recipe = recipes.size() - 1;
        }
      }
    }
    if (best_recipe && recipe_costs[*best_recipe].valid) {
      const autoshard_internal::RecipeProgram& recipe_base = recipes[*best_recipe];
      std::vector<int64_t> all;
      for (int64_t i = 0; i < recipe_base.program.module().entry()->num_parameters(); ++i) all.push_back(i);
      auto recipe_groups = std::make_shared<const std::vector<autoshard::ParameterGroup>>(
          autoshard::GroupParameters(recipe_base.program.module(), all));
      Contender refined{recipe_groups,
                        std::make_unique<MeshSearch>(recipe_base.program, *recipe_groups, meshes[m], simulate, true), {},
                        "recipe " + recipe_base.name + ", refined", {}, {}};
      // The screen: the same recipe on the two-layer copy (recomputing its layers too when the
      // recipe does).
      const std::string layered_suffix = " remat=layer";
      const bool layered_recipe = recipe_base.name.size() > layered_suffix.size() &&
                                  recipe_base.name.compare(recipe_base.name.size() - layered_suffix.size(),
                                                           layered_suffix.size(), layered_suffix) == 0;
      std::optional<Program> screen_step = shallow;
      if (shallow && layered_recipe) screen_step = autoshard_internal::WithLayerRemat(shallow->module());
      if (screen_step) {
        for (autoshard_internal::RecipeProgram& copy : autoshard_internal::StandardRecipes(screen_step->module(), meshes[m])) {
          if (copy.name + (layered_recipe ? layered_suffix : "") != recipe_base.name) continue;
          std::vector<int64_t> every;
          for (int64_t i = 0; i < copy.program.module().entry()->num_parameters(); ++i) every.push_back(i);
          refined.screen_groups = std::make_shared<const std::vector<autoshard::ParameterGroup>>(
              autoshard::GroupParameters(copy.program.module(), every));
          refined.screen = std::make_shared<MeshSearch>(copy.program, *refined.screen_groups, meshes[m], simulate, true);
          refined.search->SetScreen(refined.screen.get(), kScreenKeep);
        }
      }
      const Clock::time_point later = Clock::now();
      refined.found = refined.search->Search(later + (std::max(mesh_deadline, later) - later) / 2, options.max_evaluations);
      if (!autoshard::BetterPlan(refined.found.cost, recipe_costs[*best_recipe]))
        refined.origin = "recipe " + recipe_base.name;
      take(std::move(refined));
    }
    Contender searched{shared_groups, std::make_unique<MeshSearch>(base, *shared_groups, meshes[m], simulate, false), {},
                       "search", {}, {}};
    any_splits = any_splits || searched.search->HasSplits();
    if (shallow_base) {
      searched.screen_groups = shallow_groups;
      searched.screen = std::make_shared<MeshSearch>(*shallow_base, *shallow_groups, meshes[m], simulate, false);
      searched.search->SetScreen(searched.screen.get(), kScreenKeep);
    }
    if (!best || !mesh_has_plan || Clock::now() < mesh_deadline) {
      searched.found = searched.search->Search(mesh_deadline, options.max_evaluations);
      take(std::move(searched));
    } else {
      mesh_result.stopped_early = true;
    }
    result.evaluations += mesh_result.evaluations;
    result.stopped_early = result.stopped_early || mesh_result.stopped_early;
    result.meshes.push_back(std::move(mesh_result));
  }
  if (!any_splits && devices > 1 && !groups.empty())
    GSPMD_USER_ERROR(program.name(), ": error: no parameter has a dim that ", devices,
                     " devices (or a factor of them) divide evenly; autoshard cannot use ", devices, " devices here");
  if (!best->found.cost.valid)
    GSPMD_USER_ERROR(program.name(), ": error: autoshard found no plan the partitioner accepts on ", devices,
                     " devices; the last refusal: ", best->found.cost.error);

  // Recomputation is part of the plan: a model step's chosen plan is priced again with every
  // layer recomputed in the backward pass (remat=layer), and the faster kept.
  std::optional<AutoshardDecision> remat_decision;
  if (autoshard_internal::RecomputesLayers(best->search->base().module())) {
    result.remat = "layer";  // a recipe priced with every layer recomputed won (memory pressure)
  } else if (remat_choice) {
    const Program& chosen_base = best->search->base();
    if (std::optional<Program> layered = autoshard_internal::WithLayerRemat(chosen_base.module())) {
      if (!HasAnnotations(chosen_base.module())) {
        std::unique_ptr<Module> bare = layered->CopyModule();
        RemoveShardingAnnotations(*bare);
        layered = Program::FromModule(std::move(bare), program.name());
      }
      auto search = std::make_unique<MeshSearch>(*layered, *best->groups, best->search->mesh(), simulate,
                                                 best->search->keeps_base());
      const PlanCost cost = search->Evaluate(best->found.choice);
      ++result.evaluations;
      AutoshardDecision decision;
      decision.group = "recomputation (none: XLA rematerializes where memory runs out; layer: every layer recomputed)";
      decision.alternatives.push_back({"remat=none", best->found.cost});
      decision.alternatives.push_back({"remat=layer", cost});
      const bool layer = autoshard::BetterPlan(cost, best->found.cost);
      decision.chosen = decision.alternatives[layer ? 1 : 0].first;
      result.remat = layer ? "layer" : "none";
      if (layer) {
        best->search = std::move(search);
        best->found.cost = cost;
        best->origin += ", remat=layer";
      }
      remat_decision = std::move(decision);
    }
  }
  if (!best->found.cost.fits)
    GSPMD_USER_ERROR(program.name(), ": error: no plan found fits the memory budget of ", budget,
                     " bytes per device; the smallest peak found is ", best->found.cost.peak_bytes, " bytes (mesh ",
                     best_mesh, ", ", best->origin, "); give --memory-budget of at least that, or more devices");
  const std::vector<autoshard::ParameterGroup>& chosen_groups = *best->groups;
  const MeshSearch& chosen = *best->search;
  const autoshard::PlanSearchResult& found = best->found;
  result.mesh = best_mesh;
  result.origin = best->origin;
  result.cost = found.cost;
  result.program = chosen.Annotated(found.choice);
  const Computation& entry = *result.program.module().entry();
  for (size_t g = 0; g < chosen_groups.size(); ++g) {
    AutoshardGroupPlan plan;
    plan.label = chosen_groups[g].label;
    for (int64_t number : chosen_groups[g].parameters) plan.parameters.push_back(entry.parameter(number)->name());
    plan.spec = chosen.SpecText(g, found.choice[g]);
    const std::optional<Sharding>& sharding = entry.parameter(chosen_groups[g].parameters[0])->sharding();
    plan.sharding = sharding ? sharding->ToString() : "";
    plan.bytes = chosen_groups[g].bytes;
    result.plan.push_back(std::move(plan));
  }
  for (const autoshard::GroupDecision& decision : found.decisions) {
    AutoshardDecision out;
    out.group = chosen_groups[decision.group].label;
    out.chosen = chosen.SpecText(decision.group, decision.chosen);
    for (const autoshard::Alternative& alternative : decision.alternatives)
      out.alternatives.push_back({chosen.SpecText(decision.group, alternative.candidate), alternative.cost});
    result.decisions.push_back(std::move(out));
  }
  if (remat_decision) result.decisions.push_back(std::move(*remat_decision));

  // Lower bound: the step's matrix FLOPs spread perfectly over every device at peak.
  try {
    std::unique_ptr<Module> whole = base.CopyModule();
    RemoveShardingAnnotations(*whole);
    whole->set_num_partitions(1);
    const simulate::SimulationReport one = Simulate(Program::FromModule(std::move(whole), program.name()),
                                                    SimulateOptionsFor(options, 1, 0));
    if (one.peak_flops_per_s > 0) result.lower_bound_s = one.model_flops / (static_cast<double>(devices) * one.peak_flops_per_s);
  } catch (const UserError&) {
  }
  result.solve_time_s = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace gspmd::api
