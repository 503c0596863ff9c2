// The `plan` lint check: api::Autoshard finds parameter annotations for the program with its own
// removed; they are applied to the program as written and both are simulated, so the times the
// finding states are what `gspmd simulate` gives before and after the fix.
#include "api/lint_plan.h"

#include <algorithm>
#include <cstdio>

#include "builder/remove_annotations.h"
#include "partitioner/sdy_attributes.h"
#include "sharding/partition_spec.h"
#include "simulate/chip_spec.h"
#include "support/diagnostic.h"
#include "support/units.h"

namespace gspmd::api {
namespace {

using lint::LintFinding;
using lint::LintPlanChange;
using lint::LintPlanSearch;

// No dim of the value is split: replicated, or tiled with every tile the whole value.
bool HoldsWhole(const Sharding& sharding, const Shape& shape) {
  if (sharding.IsReplicated()) return true;
  if (!sharding.IsTiled() || !shape.IsArray()) return false;
  return sharding.ShardDims(shape.dims()) == shape.dims();
}

bool SameLayout(const Sharding& a, const Sharding& b, const Shape& shape) {
  return a == b || (HoldsWhole(a, shape) && HoldsWhole(b, shape));
}

// The mesh the search runs on: the program's named mesh when it has one in iota order over its
// device count (so the fix reads in the user's axis names), else "" (every mesh is searched).
std::string SearchMesh(const std::optional<Mesh>& named, int64_t devices) {
  if (!named || !named->device_ids.empty() || named->num_devices() != devices) return "";
  return MeshFlagText(*named);
}

// A sharding as the fix writes it: the PartitionSpec alone for StableHLO input over named axes,
// else XLA's text with the spec beside it when there is one (as the other checks' fixes).
std::string FixText(const Sharding& sharding, const std::string& spec, int64_t rank, const Mesh* named,
                    bool stablehlo_input) {
  if (stablehlo_input && !spec.empty()) return spec;
  return "sharding=" + ShardingTextWithSpec(sharding, rank, named);
}

std::string Percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f%%", fraction * 100);
  return text;
}

// The parameters whose layout differs between the program as written and the plan (both
// propagated), each with its text in both.
struct ParameterChanges {
  std::vector<LintPlanChange> changes;
  std::vector<std::pair<int64_t, Sharding>> edits;  // parameter number, new sharding
};

// `mine` is the program as written, propagated with its origins recorded (an annotation may be a
// sharding or, from StableHLO, an sdy attribute propagation reads).
ParameterChanges CompareParameters(const Program& program, const Propagated& mine, const Module& plan,
                                   const std::optional<Mesh>& named) {
  ParameterChanges out;
  auto written_by_user = [&](const Instruction& parameter) {
    auto it = mine.result.origins.find(parameter.parent()->name() + "/" + parameter.name());
    return parameter.sharding().has_value() || (it != mine.result.origins.end() && it->second.user);
  };
  const Computation& written = *program.module().entry();
  for (int64_t number = 0; number < written.num_parameters(); ++number) {
    const Instruction& parameter = *written.parameter(number);
    const Shape& shape = parameter.shape();
    const Sharding before =
        mine.program.module().entry()->parameter(number)->sharding().value_or(Sharding::Replicated());
    const Sharding after = plan.entry()->parameter(number)->sharding().value_or(Sharding::Replicated());
    if (SameLayout(before, after, shape)) continue;
    const int64_t rank = shape.IsArray() ? shape.rank() : -1;
    LintPlanChange change;
    if (parameter.source()) change.location = parameter.source()->location;
    change.parameter = parameter.name();
    change.parameter_number = number;
    change.annotated = written_by_user(parameter);
    change.before_sharding = before.ToString();
    change.after_sharding = after.ToString();
    if (named && rank >= 0) {
      change.before_spec = PartitionSpecOf(before, rank, *named).value_or("");
      change.after_spec = PartitionSpecOf(after, rank, *named).value_or("");
    }
    change.replicate = HoldsWhole(after, shape) && !HoldsWhole(before, shape);
    out.changes.push_back(std::move(change));
    out.edits.emplace_back(number, after);
  }
  return out;
}

// "%table with sharding={replicated} (replicate; was sharding={devices=[8,1]<=[8]})".
std::string ChangeText(const LintPlanChange& change, const Mesh* named, int64_t rank, const Sharding& before,
                       const Sharding& after, bool stablehlo_input) {
  const std::string now = FixText(before, change.before_spec, rank, named, stablehlo_input);
  std::string text = "%" + change.parameter + " with " + FixText(after, change.after_spec, rank, named, stablehlo_input);
  text += change.replicate ? " (replicate; " : " (";
  return text + (change.annotated ? "was " : "unannotated, propagated ") + now + ")";
}

// The finding goes after those at or before its location (findings are in program order).
void InsertInProgramOrder(std::vector<LintFinding>& findings, LintFinding finding) {
  auto position = [](const LintFinding& f) { return std::make_pair(f.location.line, f.location.column); };
  auto at = std::upper_bound(findings.begin(), findings.end(), finding,
                             [&](const LintFinding& a, const LintFinding& b) { return position(a) < position(b); });
  findings.insert(at, std::move(finding));
}

// The program with its entry parameters' annotations removed (a sharding, or from StableHLO an
// xla.sdy.sharding attribute) and every other annotation kept.
Program WithoutParameterAnnotations(const Program& program) {
  std::unique_ptr<Module> module = program.CopyModule();
  for (Instruction* parameter : module->entry()->parameters()) {
    parameter->set_sharding(std::nullopt);
    parameter->frontend_attributes = WithoutFrontendAttribute(parameter->frontend_attributes, "xla.sdy.sharding");
  }
  return Program::FromModule(std::move(module), program.name());
}

// One search's plan applied to the program as written, and its step time.
struct PricedPlan {
  std::string search;  // which search found it
  std::string mesh;
  ParameterChanges changes;
  double step_time_s = 0;
  double comm_bytes_per_device = 0;
};

// Searches `searched` with `options`, carries the parameter layouts of the plan over to the program
// as written (`mine`: it propagated) and simulates that. nullopt, with `why`, when the search finds
// no plan, the plan lays the parameters out as written, or it does not compile.
std::optional<PricedPlan> PricePlan(const std::string& name, const Program& program, const Program& searched,
                                    const AutoshardOptions& options, const SimulateOptions& simulate_options,
                                    const Propagated& mine, const std::optional<Mesh>& named, std::string& why) {
  try {
    const AutoshardResult found = Autoshard(searched, options);
    const Propagated plan = Propagate(found.program, PropagateOptions{options.devices, false, {}});
    PricedPlan priced{name, found.mesh, CompareParameters(program, mine, plan.program.module(), named), 0, 0};
    if (priced.changes.changes.empty()) {
      why = name + ": its plan (mesh " + found.mesh + ") lays the parameters out as the program does";
      return std::nullopt;
    }
    std::unique_ptr<Module> fixed = program.CopyModule();
    for (const auto& [number, sharding] : priced.changes.edits)
      fixed->entry()->parameter(number)->set_sharding(sharding);
    const simulate::SimulationReport after =
        Simulate(Program::FromModule(std::move(fixed), program.name()), simulate_options);
    priced.step_time_s = after.step_time_s;
    priced.comm_bytes_per_device = after.comm.comm_bytes_per_device;
    return priced;
  } catch (const UserError& error) {
    why = name + ": " + error.what();
    return std::nullopt;
  }
}

LintFinding PlanFinding(const Program& program, const PricedPlan& plan, const Propagated& mine,
                        const std::optional<Mesh>& named, double before_s, const lint::LintOptions& options) {
  const std::vector<LintPlanChange>& changes = plan.changes.changes;
  const LintPlanChange* first = &changes[0];
  for (const LintPlanChange& change : changes)
    if (std::make_pair(change.location.line, change.location.column) <
        std::make_pair(first->location.line, first->location.column))
      first = &change;
  LintFinding finding;
  finding.location = first->location;
  finding.check = "plan";
  finding.instruction = first->parameter;
  finding.annotation = first->annotated ? first->parameter : "";
  const double saved = before_s - plan.step_time_s;
  finding.message = "autoshard's search finds parameter annotations that cut the step time " +
                    Percent(saved / before_s) + " on " + options.chip + ": " + FormatSeconds(before_s) + " -> " +
                    FormatSeconds(plan.step_time_s) + " per step, " + FormatSeconds(saved) + " saved per step (" +
                    std::to_string(changes.size()) + " annotation" + (changes.size() == 1 ? "" : "s") + " to change)";
  const Computation& written = *program.module().entry();
  const Computation& propagated = *mine.program.module().entry();
  for (size_t i = 0; i < changes.size(); ++i) {
    const int64_t number = changes[i].parameter_number;
    const Shape& shape = written.parameter(number)->shape();
    const Sharding was = propagated.parameter(number)->sharding().value_or(Sharding::Replicated());
    finding.fix += (i == 0 ? "annotate " : "; ") + ChangeText(changes[i], named ? &*named : nullptr,
                                                              shape.IsArray() ? shape.rank() : -1, was,
                                                              plan.changes.edits[i].second, options.stablehlo_input);
  }
  finding.fix_instruction = first->parameter;
  finding.fix_sharding = first->after_sharding;
  finding.fix_spec = first->after_spec;
  finding.changes = changes;
  finding.step_time_before_s = before_s;
  finding.step_time_after_s = plan.step_time_s;
  return finding;
}

}  // namespace

void CheckPlanSearchOptions(const lint::LintOptions& options) {
  if (!(options.time_limit_s > 0))
    GSPMD_USER_ERROR("gspmd lint: error: --time-limit ", options.time_limit_s, " is invalid (expected seconds > 0)");
  try {
    simulate::LoadChipSpec(options.chip);
  } catch (const UserError& error) {
    throw error.Reworded(std::string("gspmd lint: error: --chip: ") + error.what());
  }
}

void AddPlanFinding(const Program& program, const lint::LintOptions& options, lint::LintReport& report) {
  LintPlanSearch& search = report.plan_search;
  if (!options.search) {
    search = {"off", "the search was not run (--no-search)"};
    return;
  }
  const int64_t devices = report.num_devices;
  if (devices < 2) {
    search = {"none", "one device: there is nothing to shard"};
    return;
  }
  SimulateOptions simulate_options;
  simulate_options.chip = options.chip;
  simulate_options.devices = devices;
  simulate_options.per_device = false;
  double before_s = 0;
  std::optional<Propagated> mine;
  try {
    before_s = Simulate(program, simulate_options).step_time_s;
    mine = Propagate(program, PropagateOptions{devices, true, {}});
  } catch (const UserError& error) {
    search = {"failed", std::string("the program as written does not simulate: ") + error.what()};
    return;
  }
  const std::optional<Mesh> named = NamedMeshOf(program.module());
  AutoshardOptions autoshard_options;
  autoshard_options.chip = options.chip;
  autoshard_options.devices = devices;
  autoshard_options.mesh = SearchMesh(named, devices);
  autoshard_options.time_limit_s = options.time_limit_s / 2;
  autoshard_options.max_evaluations = options.max_evaluations;

  // Two searches share the time. The fix changes parameter annotations only, and the user's other
  // annotations stay in their program, so the first searches the parameters with those kept: its
  // plan is what the fixed program compiles to. The second (autoshard's "none": every annotation
  // removed; "boundary" would keep the parameters' as constraints, the very ones to change) can
  // find a better layout where an intermediate annotation stood in the way; it is priced with the
  // intermediates in place, as the user would apply it. The faster wins.
  std::vector<std::string> why(2);
  std::vector<std::optional<PricedPlan>> plans(2);
  autoshard_options.keep = "all";
  plans[0] = PricePlan("parameters searched, other annotations kept", program, WithoutParameterAnnotations(program),
                       autoshard_options, simulate_options, *mine, named, why[0]);
  autoshard_options.keep = "none";
  plans[1] = PricePlan("every annotation removed", program, program, autoshard_options, simulate_options, *mine, named,
                       why[1]);
  const PricedPlan* best = nullptr;
  for (const std::optional<PricedPlan>& plan : plans)
    if (plan && (best == nullptr || plan->step_time_s < best->step_time_s)) best = &*plan;
  search.step_time_before_s = before_s;
  if (best == nullptr) {
    search.status = why[0].find(": its plan") != std::string::npos || why[1].find(": its plan") != std::string::npos
                        ? "none"
                        : "failed";
    const size_t colon0 = why[0].find(": "), colon1 = why[1].find(": ");
    const bool same = why[0].substr(colon0) == why[1].substr(colon1);
    search.message = same ? "both searches" + why[0].substr(colon0) : why[0] + "; " + why[1];
    search.step_time_after_s = before_s;
    return;
  }
  search.step_time_after_s = best->step_time_s;
  if (!(best->step_time_s <= options.plan_threshold * before_s)) {
    search.status = "none";
    search.message = "the best plan found (" + best->search + ", mesh " + best->mesh + ") takes " +
                     FormatSeconds(best->step_time_s) + " per step against " + FormatSeconds(before_s) +
                     " as written: less than " + Percent(1 - options.plan_threshold) + " faster";
    return;
  }
  LintFinding finding = PlanFinding(program, *best, *mine, named, before_s, options);
  finding.comm_before = report.comm_bytes_per_device;
  finding.comm_after = best->comm_bytes_per_device;
  search.status = "found";
  search.message = "the plan of the search with " + best->search + " (mesh " + best->mesh + ") saves " +
                   FormatSeconds(before_s - best->step_time_s) + " per step";
  InsertInProgramOrder(report.findings, std::move(finding));
}

}  // namespace gspmd::api
