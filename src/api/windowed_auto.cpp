// The search behind `--windowed-einsum auto` with a chip (windowed_auto.h).
#include "api/windowed_auto.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/file_context.h"
#include "ir/instruction.h"
#include "simulate/topology.h"
#include "simulate/windowed_cost.h"
#include "support/diagnostic.h"
#include "support/units.h"

namespace gspmd::api {
namespace {

// The windowed loops of a per-device program (their bodies' names end so).
int64_t WindowedLoopCount(const Module& per_device) {
  int64_t loops = 0;
  for (const auto& computation : per_device.computations())
    if (computation->name().find(".windowed_body") != std::string::npos) ++loops;
  return loops;
}

// A kind of loop: one collective of one dot shape (a model's layers share it), whatever the
// direction and grouping.
std::string KindOf(const WindowedEinsumCandidate& candidate) {
  std::string key = candidate.kind == WindowedEinsumCandidate::Kind::kAllGather ? "all-gather" : "reduce-scatter";
  key += StrCat(" of ", candidate.collective_bytes, " bytes over ", candidate.devices * candidate.group);
  if (candidate.dot != nullptr) {
    key += " for " + candidate.dot->shape().ToString(false) + " dot(";
    for (const Instruction* operand : candidate.dot->operands()) key += operand->shape().ToString(false) + ",";
    key += ")";
  }
  return key;
}

struct Offer {
  int64_t bytes = 0;    // collective bytes per dot
  int64_t dots = 0;     // offers of its plain (ungrouped) loops
  bool priced = false;  // the per-dot price keeps it
  bool seen = false;
};

}  // namespace

WindowedAutoChoice ChooseWindowedLoops(Program program, const SimulateOptions& options, const BoundaryOptions& boundary,
                                       const simulate::ChipSpec& chip, std::optional<ElementType> float_type,
                                       const std::function<simulate::SimulationReport(Module&)>& run) {
  // The device count: given, stated by the module, or else derived from its shardings (a
  // module without num_partitions reads as 1): partition once to learn it.
  const bool states_devices = !program.module().Attribute("num_partitions").empty();
  int64_t devices = options.devices > 0 ? options.devices : (states_devices ? program.module().num_partitions() : 0);
  if (devices <= 0)
    devices = Partition(program, PartitionOptions{options.devices, boundary, "off", {}, ""}).num_devices;
  const simulate::Topology topology = WithFileContext(program.name(), [&] {
    return simulate::Topology::Build(chip, devices, options.topology, options.placement);
  });
  const WindowedEinsumCostCheck priced = simulate::ChipWindowedCostCheck(chip, topology, float_type);

  // Without loops, every candidate refused and recorded with its price.
  auto shared_offers = std::make_shared<std::map<std::string, Offer>>();
  std::map<std::string, Offer>& offers = *shared_offers;
  WindowedEinsumCostCheck record = [&](const WindowedEinsumCandidate& candidate) {
    Offer& offer = offers[KindOf(candidate)];
    // Offers (a dot's directions and unrolling; its groupings count once, so the search's
    // order of kinds is the plain loops' order).
    if (candidate.group == 1) ++offer.dots;
    if (!offer.seen) {
      offer.seen = true;
      offer.bytes = candidate.collective_bytes;
      offer.priced = priced(candidate);
    } else {
      offer.priced = offer.priced || priced(candidate);  // e.g. the other direction, a grouping
    }
    return false;
  };
  std::unique_ptr<Module> off = std::move(Partition(program, PartitionOptions{options.devices, boundary, "auto", record, ""}).per_device).TakeModule();
  simulate::SimulationReport best = run(*off);
  if (offers.empty()) return {std::move(best), [](const WindowedEinsumCandidate&) { return false; }};
  const double peak_limit = 1.05 * static_cast<double>(best.memory.peak_bytes);
  const bool fits_without = best.memory.fits;
  const std::string without =
      StrCat("without loops ", FormatSeconds(best.step_time_s), ", peak ", FormatBytes(best.memory.peak_bytes));

  // The loops of `kinds` (the price decides between a dot's candidates of one kind, e.g. its
  // directions).
  auto check_of = [shared_offers, priced](std::set<std::string> kinds) -> WindowedEinsumCostCheck {
    return [shared_offers, priced, kinds = std::move(kinds)](const WindowedEinsumCandidate& candidate) {
      const std::string kind = KindOf(candidate);
      if (kinds.count(kind) == 0) return false;
      auto offer = shared_offers->find(kind);
      return priced(candidate) || offer == shared_offers->end() || !offer->second.priced;
    };
  };
  // The step with them: true when it is kept as the best so far.
  int64_t programs = 1, best_loops = 0;
  auto try_kinds = [&](const std::set<std::string>& kinds) {
    const WindowedEinsumCostCheck check = check_of(kinds);
    std::unique_ptr<Module> windowed =
        std::move(Partition(program, PartitionOptions{options.devices, boundary, "auto", check, ""}).per_device).TakeModule();
    const int64_t loops = WindowedLoopCount(*windowed);
    if (loops == 0) return false;
    ++programs;
    simulate::SimulationReport with = run(*windowed);
    const bool fits = (with.memory.fits || !fits_without) && static_cast<double>(with.memory.peak_bytes) <= peak_limit;
    if (!fits || !(with.step_time_s < best.step_time_s)) return false;
    best = std::move(with);
    best_loops = loops;
    return true;
  };

  // Kinds in order of the bytes they would move without loops, largest first.
  std::vector<std::pair<std::string, const Offer*>> order;
  for (const auto& [kind, offer] : offers) order.emplace_back(kind, &offer);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.second->bytes * a.second->dots > b.second->bytes * b.second->dots;
  });
  std::set<std::string> kept, all_priced, gathers, scatters;
  for (const auto& [kind, offer] : order) {
    if (!offer->priced) continue;
    all_priced.insert(kind);
    (kind.rfind("all-gather", 0) == 0 ? gathers : scatters).insert(kind);
  }
  if (!all_priced.empty() && try_kinds(all_priced)) kept = all_priced;
  if (options.windowed_search_steps <= 0) {
    // Only each collective kind alone besides.
    for (const std::set<std::string>* one : {&gathers, &scatters})
      if (!one->empty() && one->size() < all_priced.size() && try_kinds(*one)) kept = *one;
  } else {
    int64_t steps = 0;
    for (const auto& [kind, offer] : order) {
      if (steps++ >= options.windowed_search_steps) break;
      std::set<std::string> changed = kept;
      if (!changed.erase(kind)) changed.insert(kind);
      if (changed.empty()) continue;  // without loops: the starting point
      if (try_kinds(changed)) kept = std::move(changed);
    }
  }
  best.windowed_einsum =
      kept.empty() ? StrCat("auto (", chip.name, "): no loops kept (", without, "; ", programs, " programs simulated, ",
                            offers.size(), " kinds of loop offered, ", all_priced.size(), " priced faster alone)")
                   : StrCat("auto (", chip.name, "): kept ", best_loops, " loop", best_loops == 1 ? "" : "s", " of ",
                            kept.size(), " kind", kept.size() == 1 ? "" : "s", ": ",
                            FormatSeconds(best.step_time_s), ", peak ", FormatBytes(best.memory.peak_bytes), " (", without,
                            "; ", programs, " programs simulated, ", offers.size(), " kinds of loop offered, ",
                            all_priced.size(), " priced faster alone)");
  return {std::move(best), check_of(kept)};
}

}  // namespace gspmd::api
