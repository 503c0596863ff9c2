// Lint checks on communication: annotations whose values are resharded because they conflict
// with another annotation or with what their users need, and full rematerializations.
#include <algorithm>
#include <map>
#include <set>

#include "analysis/comm_report.h"
#include "ir/opcode.h"
#include "lint/checks.h"
#include "support/units.h"

namespace gspmd::lint {
namespace {

// Ops a reshard is built from besides collectives: they move or cut data but compute nothing.
bool MovesData(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kCopy:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kPad:
    case Opcode::kConvert:
    case Opcode::kGetTupleElement:
      return true;
    default:
      return IsCollective(instruction.opcode());
  }
}

// From a collective made for global instruction `user`, back through the data movement made
// for the same instruction, to the value being moved: the per-device instruction where the
// chain starts (made for another global instruction when an operand is resharded, for `user`
// itself when its own result is).
const Instruction* MovedValue(const Evaluation& base, const Instruction& collective, const std::string& user) {
  const Instruction* current = &collective;
  while (current->operand_count() > 0 && MovesData(*current) && base.GlobalName(*current) == user)
    current = current->operand(0);
  return current;
}

// Candidate annotations for `annotated`: the sharding propagation gives it without its
// annotation, and its tilings with two dims swapped (batch and feature written the wrong way
// round). Only candidates that keep its bytes per device (no fix that just replicates).
std::vector<Sharding> CandidateFixes(LintContext& context, const Instruction& annotated) {
  std::vector<Sharding> candidates;
  const Sharding current = *annotated.sharding();
  const Shape& shape = annotated.shape();
  if (!shape.IsArray()) return candidates;
  const int64_t bytes = PerDeviceBytes(shape, current);
  auto consider = [&](const Sharding& candidate) {
    if (candidate == current || candidate.IsTuple()) return;
    if (PerDeviceBytes(shape, candidate) > bytes) return;
    if (std::find(candidates.begin(), candidates.end(), candidate) != candidates.end()) return;
    candidates.push_back(candidate);
  };
  if (current.IsTiled()) {
    const int64_t num_devices = context.base().num_devices;
    if (std::optional<AxisSharding> axes = DecomposeSharding(current, shape.rank(), num_devices)) {
      for (int64_t i = 0; i < shape.rank(); ++i) {
        for (int64_t j = i + 1; j < shape.rank(); ++j) {
          if (axes->dims[i].empty() && axes->dims[j].empty()) continue;
          AxisSharding swapped = *axes;
          std::swap(swapped.dims[i], swapped.dims[j]);
          if (swapped.TileCount(i) > shape.dim(i) || swapped.TileCount(j) > shape.dim(j)) continue;
          consider(swapped.ToSharding());
        }
      }
    }
  }
  if (std::optional<Sharding> propagated = context.ShardingWithoutAnnotation(annotated.name()))
    consider(*propagated);
  return candidates;
}

// When no annotation of the same size communicates less: annotations that hold more of
// `annotated` per device so its users need not gather it (what propagation gives it without
// the annotation, and replicated), largest saving in memory first.
std::vector<Sharding> MemoryTradingFixes(LintContext& context, const Instruction& annotated) {
  std::vector<Sharding> candidates;
  if (!annotated.shape().IsArray()) return candidates;
  const int64_t bytes = PerDeviceBytes(annotated.shape(), *annotated.sharding());
  auto consider = [&](const Sharding& candidate) {
    if (candidate.IsTuple() || PerDeviceBytes(annotated.shape(), candidate) <= bytes) return;
    if (std::find(candidates.begin(), candidates.end(), candidate) != candidates.end()) return;
    candidates.push_back(candidate);
  };
  if (std::optional<Sharding> propagated = context.ShardingWithoutAnnotation(annotated.name()))
    consider(*propagated);
  consider(Sharding::Replicated());
  return candidates;
}

// The strides of the mesh axes splitting `dims` of `value`.
std::set<int64_t> AxesSplitting(LintContext& context, const Instruction& value, const std::vector<int64_t>& dims) {
  std::set<int64_t> strides;
  if (!value.sharding() || !value.shape().IsArray()) return strides;
  std::optional<AxisSharding> axes =
      MeshAxesOf(*value.sharding(), value.shape().rank(), context.base().num_devices, context.mesh());
  if (!axes) return strides;
  for (int64_t d : dims)
    for (const DeviceAxis& axis : axes->dims.at(d)) strides.insert(axis.stride);
  return strides;
}

// When a dot's own result is reduced: the operands whose contracting dims are split over mesh
// axes that the other operand's are not. Contracting dims split alike on both sides are the
// intended partial sums (Megatron's second matmul); a split on one side only is an annotation
// that disagrees with the other (batch and feature swapped).
std::vector<const Instruction*> MismatchedContractingOperands(LintContext& context, const Instruction& user) {
  std::vector<const Instruction*> mismatched;
  if (user.opcode() != Opcode::kDot || user.operand_count() != 2) return mismatched;
  const DotDimensionNumbers& dims = user.dot_dims();
  const std::set<int64_t> lhs = AxesSplitting(context, *user.operand(0), dims.lhs_contracting_dims);
  const std::set<int64_t> rhs = AxesSplitting(context, *user.operand(1), dims.rhs_contracting_dims);
  if (lhs == rhs) return mismatched;
  if (!std::includes(rhs.begin(), rhs.end(), lhs.begin(), lhs.end())) mismatched.push_back(user.operand(0));
  if (!std::includes(lhs.begin(), lhs.end(), rhs.begin(), rhs.end())) mismatched.push_back(user.operand(1));
  return mismatched;
}

struct Blame {
  double bytes = 0;
  std::map<std::string, double> bytes_by_user;  // global user -> bytes
  std::set<std::string> kinds;
  std::string moved;                            // the value resharded (first seen)
};

std::string Joined(const std::set<std::string>& parts, const char* separator) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : separator) + part;
  return text;
}

// The best of `candidates` for `annotated`: the lowest communication, below the program's.
struct ChosenFix {
  Sharding sharding;
  double comm_after = 0;
};
std::optional<ChosenFix> ChooseFix(LintContext& context, const Instruction& annotated,
                                   const std::vector<Sharding>& candidates) {
  std::optional<ChosenFix> best;
  const double before = context.base().comm_bytes_per_device;
  for (const Sharding& candidate : candidates) {
    std::optional<double> after = context.CommAfter({{annotated.name(), candidate}});
    if (!after || *after >= before - 0.5) continue;
    if (!best || *after < best->comm_after - 0.5) best = ChosenFix{candidate, *after};
  }
  return best;
}

int64_t RankOf(const Instruction& instruction) {
  return instruction.shape().IsArray() ? instruction.shape().rank() : -1;
}

void DescribeFix(const LintContext& context, LintFinding& finding, const Instruction& annotated, const ChosenFix& fix,
                 double remaining) {
  finding.fix_instruction = annotated.name();
  finding.comm_after = fix.comm_after;
  finding.fix_bytes_per_device = remaining;
  finding.fix = StrCat("annotate %", annotated.name(), " with ", context.FixText(finding, fix.sharding, RankOf(annotated)),
                       ": communication ", FormatBytes(finding.comm_before), " -> ", FormatBytes(fix.comm_after),
                       " per device");
}

}  // namespace

void CheckConflicts(LintContext& context, std::vector<LintFinding>& findings) {
  const Module& global = context.global();
  std::map<const Instruction*, Blame> blame;  // keyed by annotated instruction; ordered below
  for (const AttributedCollective& entry : context.base().collectives) {
    const Instruction* user = FindAnyInstruction(global, entry.source);
    if (user == nullptr) continue;
    const Instruction* moved = MovedValue(context.base(), *entry.collective, entry.source);
    const std::string moved_name = context.base().GlobalName(*moved);
    std::vector<const Instruction*> suspects;
    if (!moved_name.empty() && moved_name != entry.source) {
      if (const Instruction* value = FindAnyInstruction(global, moved_name)) suspects.push_back(value);
    } else {
      suspects = MismatchedContractingOperands(context, *user);
    }
    for (const Instruction* suspect : suspects) {
      const Instruction* annotated = context.ResponsibleAnnotation(*suspect);
      if (annotated == nullptr || !annotated->sharding()) continue;
      Blame& b = blame[annotated];
      b.bytes += entry.bytes;
      b.bytes_by_user[entry.source] += entry.bytes;
      b.kinds.insert(std::string(OpcodeName(entry.collective->opcode())));
      if (b.moved.empty()) b.moved = suspect->name();
    }
  }
  // Most bytes first, so the fix budget goes where it matters; ties in program order.
  std::vector<std::pair<const Instruction*, const Blame*>> order;
  for (const auto& computation : global.computations())
    for (const auto& instruction : computation->instructions())
      if (auto it = blame.find(instruction.get()); it != blame.end()) order.emplace_back(it->first, &it->second);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second->bytes > b.second->bytes; });
  for (const auto& [annotated, b] : order) {
    // A fix of the same size first; else one that holds more per device to communicate less
    // (a value its users need whole: the trade is reported with both numbers). Without either
    // the resharding is what the annotations ask for (2-D weights gathered over one axis, MoE
    // dispatch), not a conflict.
    std::optional<ChosenFix> fix = ChooseFix(context, *annotated, CandidateFixes(context, *annotated));
    const bool trades_memory = !fix;
    if (!fix) fix = ChooseFix(context, *annotated, MemoryTradingFixes(context, *annotated));
    if (!fix) continue;
    auto top = std::max_element(b->bytes_by_user.begin(), b->bytes_by_user.end(),
                                [](const auto& x, const auto& y) { return x.second < y.second; });
    const Instruction* user = FindAnyInstruction(global, top->first);
    const Instruction* other = nullptr;
    if (const Instruction* responsible = context.ResponsibleAnnotation(*user); responsible != annotated)
      other = responsible;
    for (const Instruction* operand : user->operands()) {
      if (other != nullptr) break;
      const Instruction* responsible = context.ResponsibleAnnotation(*operand);
      if (responsible != nullptr && responsible != annotated) other = responsible;
    }
    LintFinding finding = context.MakeFinding("conflict", *annotated);
    finding.annotation = annotated->name();
    finding.bytes_per_device = b->bytes;
    const std::string conflicts_with =
        other != nullptr ? StrCat("%", other->name(), "'s annotation ",
                                  context.ShardingText(*other->sharding(), RankOf(*other)))
                         : StrCat("what %", user->name(), " needs");
    finding.message = StrCat("%", annotated->name(), "'s annotation ",
                             context.ShardingText(*annotated->sharding(), RankOf(*annotated)),
                             " conflicts with ", conflicts_with, ": ", Joined(b->kinds, ", "), " at %",
                             user->name(), b->bytes_by_user.size() > 1 ? StrCat(" and ", b->bytes_by_user.size() - 1,
                                                                                 " more") : "",
                             " costs ", FormatBytes(b->bytes), " per device");
    DescribeFix(context, finding, *annotated, *fix, 0);
    if (trades_memory) {
      const Shape& shape = annotated->shape();
      finding.fix += StrCat(", memory ", FormatBytes(PerDeviceBytes(shape, *annotated->sharding())), " -> ",
                            FormatBytes(PerDeviceBytes(shape, fix->sharding)), " per device for %", annotated->name());
    }
    findings.push_back(finding);
  }
}

void CheckFullRematerialization(LintContext& context, std::vector<LintFinding>& findings) {
  const Module& per_device = *context.base().partitioned.module;
  const std::string prefix = "involuntary full rematerialization of %";
  std::set<std::string> reported;
  for (const std::string& warning : context.base().partitioned.warnings) {
    if (warning.compare(0, prefix.size(), prefix) != 0) continue;
    const size_t colon = warning.find(':', prefix.size());
    const std::string local_name = warning.substr(prefix.size(), colon - prefix.size());
    const std::string transition = colon == std::string::npos ? "" : warning.substr(colon + 2);
    const Instruction* local = FindAnyInstruction(per_device, local_name);
    const std::string global_name = local != nullptr ? context.base().GlobalName(*local) : local_name;
    const Instruction* value = FindAnyInstruction(context.global(), global_name);
    if (value == nullptr || !reported.insert(global_name).second) continue;
    double bytes = 0;
    for (const AttributedCollective& entry : context.base().collectives) {
      const Instruction* current = entry.collective;
      while (current != local && current->operand_count() > 0 && MovesData(*current)) current = current->operand(0);
      if (current == local) bytes += entry.bytes;
    }
    LintFinding finding = context.MakeFinding("full-remat", *value);
    const Instruction* annotated = context.ResponsibleAnnotation(*value);
    finding.annotation = annotated ? annotated->name() : "";
    finding.bytes_per_device = bytes;
    finding.message = StrCat("%", global_name, " is gathered to replicated and sliced again (", transition, ")",
                             annotated ? StrCat(", laid out by %", annotated->name(), "'s annotation") : "", ": ",
                             FormatBytes(bytes), " per device");
    if (annotated != nullptr && annotated->sharding()) {
      if (std::optional<ChosenFix> fix = ChooseFix(context, *annotated, CandidateFixes(context, *annotated)))
        DescribeFix(context, finding, *annotated, *fix, 0);
    }
    findings.push_back(finding);
  }
}

}  // namespace gspmd::lint
