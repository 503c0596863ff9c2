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

// The dot part of a kind's name: its shape and its operands' shapes.
std::string DotKey(const Instruction& dot) {
  std::string key = " for " + dot.shape().ToString(false) + " dot(";
  for (const Instruction* operand : dot.operands()) key += operand->shape().ToString(false) + ",";
  return key + ")";
}

// The collective part of a kind's name.
std::string CollectiveKey(const WindowedEinsumCandidate& candidate) {
  std::string key = candidate.kind == WindowedEinsumCandidate::Kind::kAllGather ? "all-gather" : "reduce-scatter";
  return key + StrCat(" of ", candidate.collective_bytes, " bytes over ", candidate.devices * candidate.group);
}

// A kind of loop: one collective of one dot shape (a model's layers share it), whatever the
// direction and grouping.
std::string KindOf(const WindowedEinsumCandidate& candidate) {
  return CollectiveKey(candidate) + (candidate.dot != nullptr ? DotKey(*candidate.dot) : "");
}

// An all-gather whose operand other dots read too (an activation read by its layer's dot and,
// in the backward pass, by the weight gradient's) stays for them when one dot's loop replaces
// it: the kinds of those other dots' loops of the same gather, which taken together with this
// one leave nothing to gather. Empty when the operand has a user that is not such a dot.
std::set<std::string> PartnerKinds(const WindowedEinsumCandidate& candidate) {
  std::set<std::string> partners;
  if (!candidate.collective_shared || candidate.gathered_operand == nullptr || candidate.dot == nullptr) return partners;
  for (const Instruction* user : candidate.gathered_operand->users()) {
    if (user == candidate.dot) continue;
    if (user->opcode() != Opcode::kDot) return {};
    partners.insert(CollectiveKey(candidate) + DotKey(*user));
  }
  return partners;
}

struct Offer {
  int64_t bytes = 0;    // collective bytes per dot
  int64_t dots = 0;     // offers of its plain (ungrouped) loops
  bool priced = false;  // the per-dot price keeps it
  bool seen = false;
  // Its gather's other readers' kinds (PartnerKinds), and whether the price keeps it when they
  // are windowed too (the gather then goes, so the loop competes with gather and dot).
  std::set<std::string> partners;
  bool shared = false;
  bool priced_together = false;
};

// The candidate priced as if no other dot kept its gather.
WindowedEinsumCandidate Unshared(WindowedEinsumCandidate candidate) {
  candidate.collective_shared = false;
  for (WindowedEinsumCandidate& alternative : candidate.alternatives) alternative.collective_shared = false;
  return candidate;
}

// Kinds whose loops must be taken together to save a shared gather: the connected groups of
// PartnerKinds, each of whose members was offered with all its partners.
std::vector<std::set<std::string>> TogetherGroups(const std::map<std::string, Offer>& offers) {
  std::map<std::string, std::string> parent;
  auto find = [&](std::string kind) {
    while (parent.at(kind) != kind) kind = parent.at(kind) = parent.at(parent.at(kind));
    return kind;
  };
  std::set<std::string> incomplete;
  for (const auto& [kind, offer] : offers)
    if (offer.shared) parent[kind] = kind;
  for (const auto& [kind, offer] : offers) {
    if (!offer.shared) continue;
    if (offer.partners.empty()) incomplete.insert(kind);
    for (const std::string& partner : offer.partners) {
      if (!parent.count(partner)) {
        incomplete.insert(kind);
        continue;
      }
      parent[find(kind)] = find(partner);
    }
  }
  std::map<std::string, std::set<std::string>> by_root;
  for (const auto& [kind, unused] : parent) by_root[find(kind)].insert(kind);
  std::vector<std::set<std::string>> groups;
  for (auto& [root, kinds] : by_root) {
    const bool complete = kinds.size() > 1 && std::none_of(kinds.begin(), kinds.end(), [&](const std::string& kind) {
                            return incomplete.count(kind) != 0;
                          });
    if (complete) groups.push_back(std::move(kinds));
  }
  return groups;
}

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
    const bool shared = candidate.collective_shared;
    const bool together = shared && priced(Unshared(candidate));
    if (!offer.seen) {
      offer.seen = true;
      offer.bytes = candidate.collective_bytes;
      offer.priced = priced(candidate);
      offer.shared = shared;
      if (shared) offer.partners = PartnerKinds(candidate);
      offer.priced_together = together;
    } else {
      offer.priced = offer.priced || priced(candidate);  // e.g. the other direction, a grouping
      offer.priced_together = offer.priced_together || together;
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
  // directions; for kinds in `together`, priced as if their gather went).
  auto check_of = [shared_offers, priced](std::set<std::string> kinds,
                                          std::set<std::string> together) -> WindowedEinsumCostCheck {
    return [shared_offers, priced, kinds = std::move(kinds),
            together = std::move(together)](const WindowedEinsumCandidate& candidate) {
      const std::string kind = KindOf(candidate);
      if (kinds.count(kind) == 0) return false;
      auto offer = shared_offers->find(kind);
      if (offer == shared_offers->end()) return true;
      if (together.count(kind)) return !offer->second.priced_together || priced(Unshared(candidate));
      return priced(candidate) || !offer->second.priced;
    };
  };
  // The step with them: true when it is kept as the best so far.
  int64_t programs = 1, best_loops = 0;
  std::set<std::string> together;  // kinds taken in TogetherGroups
  auto try_kinds = [&](const std::set<std::string>& kinds) {
    const WindowedEinsumCostCheck check = check_of(kinds, together);
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
  // Then each group of kinds that must go together to save a shared gather (the activation a
  // layer's dot and its weight gradient both gather): added, whole, to what is kept.
  for (const std::set<std::string>& group : TogetherGroups(offers)) {
    if (options.windowed_search_steps <= 0) break;
    std::set<std::string> changed = kept;
    changed.insert(group.begin(), group.end());
    if (changed.size() == kept.size()) continue;
    const std::set<std::string> before = together;
    together.insert(group.begin(), group.end());
    if (try_kinds(changed)) kept = std::move(changed);
    else together = before;
  }
  best.windowed_einsum =
      kept.empty() ? StrCat("auto (", chip.name, "): no loops kept (", without, "; ", programs, " programs simulated, ",
                            offers.size(), " kinds of loop offered, ", all_priced.size(), " priced faster alone)")
                   : StrCat("auto (", chip.name, "): kept ", best_loops, " loop", best_loops == 1 ? "" : "s", " of ",
                            kept.size(), " kind", kept.size() == 1 ? "" : "s", ": ",
                            FormatSeconds(best.step_time_s), ", peak ", FormatBytes(best.memory.peak_bytes), " (", without,
                            "; ", programs, " programs simulated, ", offers.size(), " kinds of loop offered, ",
                            all_priced.size(), " priced faster alone)");
  return {std::move(best), check_of(kept, together)};
}

}  // namespace gspmd::api
