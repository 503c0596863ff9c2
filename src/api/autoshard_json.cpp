// AutoshardResultToJson: the figures of `gspmd autoshard --json` and of gspmd's Python
// Program.autoshard, in one place.
#include "api/gspmd.h"

namespace gspmd::api {
namespace {

nlohmann::json CostJson(const autoshard::PlanCost& cost) {
  if (!cost.valid) return {{"error", cost.error}};
  return {{"step_time_s", cost.step_time_s}, {"mfu", cost.mfu}, {"peak_bytes_per_device", cost.peak_bytes},
          {"fits_memory", cost.fits}, {"comm_bytes_per_device", cost.comm_bytes}};
}

}  // namespace

nlohmann::json AutoshardResultToJson(const AutoshardResult& result, bool explain) {
  nlohmann::json meshes = nlohmann::json::array();
  for (const api::AutoshardMeshResult& mesh : result.meshes) {
    nlohmann::json entry = CostJson(mesh.cost);
    entry["mesh"] = mesh.mesh;
    entry["evaluations"] = mesh.evaluations;
    entry["stopped_early"] = mesh.stopped_early;
    meshes.push_back(entry);
  }
  nlohmann::json plan = nlohmann::json::array();
  for (const api::AutoshardGroupPlan& group : result.plan)
    plan.push_back({{"group", group.label}, {"parameters", group.parameters}, {"spec", group.spec},
                    {"sharding", group.sharding}, {"bytes", group.bytes}});
  nlohmann::json out = CostJson(result.cost);
  out["mesh"] = result.mesh;
  out["devices"] = result.devices;
  out["memory_budget_bytes"] = result.memory_budget_bytes;
  out["solve_time_s"] = result.solve_time_s;
  out["lower_bound_s"] = result.lower_bound_s ? nlohmann::json(*result.lower_bound_s) : nlohmann::json(nullptr);
  out["evaluations"] = result.evaluations;
  out["stopped_early"] = result.stopped_early;
  out["input"] = result.input_cost ? CostJson(*result.input_cost) : nlohmann::json(nullptr);
  out["meshes"] = meshes;
  out["plan"] = plan;
  out["origin"] = result.origin;
  out["remat"] = result.remat.empty() ? nlohmann::json(nullptr) : nlohmann::json(result.remat);
  nlohmann::json recipes = nlohmann::json::array();
  for (const api::AutoshardRecipe& recipe : result.recipes) {
    nlohmann::json entry = CostJson(recipe.cost);
    entry["recipe"] = recipe.name;
    entry["mesh"] = recipe.mesh;
    recipes.push_back(entry);
  }
  out["recipes"] = recipes;
  if (explain) {
    nlohmann::json decisions = nlohmann::json::array();
    for (const api::AutoshardDecision& decision : result.decisions) {
      nlohmann::json alternatives = nlohmann::json::array();
      for (const auto& [spec, cost] : decision.alternatives) {
        nlohmann::json entry = CostJson(cost);
        entry["spec"] = spec;
        alternatives.push_back(entry);
      }
      decisions.push_back({{"group", decision.group}, {"chosen", decision.chosen}, {"alternatives", alternatives}});
    }
    out["decisions"] = decisions;
  }
  return out;
}

}  // namespace gspmd::api
