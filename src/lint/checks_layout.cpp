// Lint checks on memory layout: uneven splits that pad too much, large values replicated over
// a mesh axis they could be split over, mesh axes no value uses, and annotations propagation
// would have produced anyway.
#include <algorithm>
#include <map>
#include <set>

#include "lint/checks.h"
#include "support/units.h"
#include "visualize/sharding_picture.h"

namespace gspmd::lint {
namespace {

using visualize::TileCounts;

// Bytes per device spent on padding: the per-device buffer minus an even share of the value.
double PaddingBytes(const Shape& shape, const Sharding& sharding) {
  const std::vector<int64_t> counts = TileCounts(sharding, shape.rank());
  int64_t tiles = 1;
  for (int64_t c : counts) tiles *= c;
  return static_cast<double>(PerDeviceBytes(shape, sharding)) - static_cast<double>(shape.byte_size()) / tiles;
}

double PaddingShare(const Shape& shape, const Sharding& sharding) {
  if (shape.byte_size() == 0) return 0;
  const std::vector<int64_t> counts = TileCounts(sharding, shape.rank());
  int64_t tiles = 1;
  for (int64_t c : counts) tiles *= c;
  return static_cast<double>(PerDeviceBytes(shape, sharding)) * tiles / shape.byte_size() - 1.0;
}

bool IsCheckedArray(const Instruction& instruction) {
  return instruction.shape().IsArray() && instruction.shape().rank() > 0 && instruction.sharding() &&
         instruction.sharding()->IsTiled();
}

// Fixes for an uneven split of `shape`: each uneven split moved to a dim it divides (memory
// kept), and fewer ways along each uneven dim (its minor axes replicated instead).
std::vector<Sharding> EvenSplits(const Shape& shape, const Sharding& sharding, int64_t num_devices) {
  std::vector<Sharding> candidates;
  std::optional<AxisSharding> axes = DecomposeSharding(sharding, shape.rank(), num_devices);
  if (!axes) return candidates;
  AxisSharding moved = *axes;
  // Cut every axis into prime-sized digits, so that a split can shrink by one factor at a time.
  std::vector<int64_t> boundaries;
  for (const DeviceAxis& axis : axes->AllAxes()) {
    int64_t rest = axis.size;
    int64_t stride = axis.stride;
    for (int64_t p = 2; p * p <= rest; ++p) {
      while (rest % p == 0) {
        stride *= p;
        rest /= p;
        boundaries.push_back(stride);
      }
    }
  }
  AxisSharding fewer = SplitAxesAt(*axes, boundaries);
  bool moved_all = true;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.dim(d) % axes->TileCount(d) == 0) continue;
    bool placed = false;
    for (int64_t other = 0; other < shape.rank() && !placed; ++other) {
      if (other == d || !moved.dims[other].empty() || shape.dim(other) % moved.TileCount(d) != 0) continue;
      std::swap(moved.dims[d], moved.dims[other]);
      placed = true;
    }
    moved_all = moved_all && placed;
    while (!fewer.dims[d].empty() && shape.dim(d) % fewer.TileCount(d) != 0) {
      fewer.replicated.push_back(fewer.dims[d].back());
      fewer.dims[d].pop_back();
    }
  }
  std::sort(fewer.replicated.begin(), fewer.replicated.end());
  if (moved_all) candidates.push_back(moved.ToSharding());
  candidates.push_back(fewer.ToSharding());
  return candidates;
}

std::string CommChange(const LintFinding& finding) {
  return StrCat("communication ", FormatBytes(finding.comm_before), " -> ", FormatBytes(finding.comm_after),
                " per device");
}

// `value` split over `axis` along the dim where that communicates least (nullopt when no dim
// divides evenly); *comm is the program's communication then (1e300 when not measured).
std::optional<Sharding> BestSplitOverAxis(LintContext& context, const Instruction& value, const DeviceAxis& axis,
                                          double* comm) {
  const Shape& shape = value.shape();
  const Sharding& sharding = *value.sharding();
  const std::vector<int64_t> counts = TileCounts(sharding, shape.rank());
  std::optional<Sharding> best;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.dim(d) % (counts[d] * axis.size) != 0) continue;
    std::optional<Sharding> split =
        SplitOverAxis(sharding, shape.rank(), context.base().num_devices, context.mesh(), axis, d);
    if (!split) continue;
    const double cost = context.CommAfter({{value.name(), *split}}).value_or(1e300);
    if (!best || cost < *comm) {
      best = split;
      *comm = cost;
    }
  }
  return best;
}

}  // namespace

void CheckUnevenPadding(LintContext& context, std::vector<LintFinding>& findings) {
  struct Group {
    const Instruction* first = nullptr;  // the value reported
    int64_t more = 0;                    // further values laid out from the same annotation
  };
  std::map<const Instruction*, Group> groups;  // by responsible annotation (or the value)
  std::vector<const Instruction*> order;
  const int64_t num_devices = context.base().num_devices;
  for (const auto& instruction : context.global().entry()->instructions()) {
    if (!IsCheckedArray(*instruction)) continue;
    if (PaddingShare(instruction->shape(), *instruction->sharding()) <= context.options().padding_threshold) continue;
    const Instruction* responsible = context.ResponsibleAnnotation(*instruction);
    const Instruction* key = responsible ? responsible : instruction.get();
    auto [it, inserted] = groups.emplace(key, Group{instruction.get(), 0});
    if (inserted) {
      order.push_back(key);
      continue;
    }
    // Report the annotation itself when it is one of the uneven values.
    if (instruction.get() == key) it->second.first = key;
    ++it->second.more;
  }
  for (const Instruction* key : order) {
    const Group& group = groups.at(key);
    const Instruction& value = *group.first;
    const Shape& shape = value.shape();
    const Sharding& sharding = *value.sharding();
    const std::vector<int64_t> counts = TileCounts(sharding, shape.rank());
    std::string dims_text;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (shape.dim(d) % counts[d] == 0) continue;
      const int64_t padded = (shape.dim(d) + counts[d] - 1) / counts[d] * counts[d];
      dims_text += StrCat(dims_text.empty() ? "" : ", ", "dim ", d, " of size ", shape.dim(d), " split ", counts[d],
                          " ways pads to ", padded);
    }
    LintFinding finding = context.MakeFinding("uneven-padding", value);
    const bool annotated_here = context.IsUserAnnotated(value);
    finding.annotation = annotated_here ? value.name() : (key != &value ? key->name() : "");
    finding.bytes_per_device = PaddingBytes(shape, sharding);
    finding.message = StrCat("%", value.name(), " ", shape.ToString(false), " ",
                             context.ShardingText(sharding, shape.rank()), ": ",
                             dims_text, "; padding is ", FormatPercent(PaddingShare(shape, sharding)), " of the value, ",
                             FormatBytes(finding.bytes_per_device), " per device",
                             group.more > 0 ? StrCat(" (and ", group.more, " more values laid out from it)") : "");
    if (annotated_here) {
      // The candidate that communicates least, then the one with fewer bytes per device.
      std::optional<Sharding> best;
      std::optional<double> best_comm;
      for (const Sharding& candidate : EvenSplits(shape, sharding, num_devices)) {
        std::optional<double> comm = context.CommAfter({{value.name(), candidate}});
        const bool better = !best || (comm && (!best_comm || *comm < *best_comm - 0.5 ||
                                               (*comm < *best_comm + 0.5 && PerDeviceBytes(shape, candidate) <
                                                                                PerDeviceBytes(shape, *best))));
        if (!better) continue;
        best = candidate;
        best_comm = comm;
      }
      if (best) {
        finding.fix_instruction = value.name();
        finding.fix_bytes_per_device = PaddingBytes(shape, *best);
        finding.comm_after = best_comm.value_or(finding.comm_before);
        finding.fix = StrCat("annotate %", value.name(), " with ", context.FixText(finding, *best, shape.rank()),
                             ": padding ",
                             FormatBytes(finding.fix_bytes_per_device), " per device (",
                             FormatBytes(PerDeviceBytes(shape, *best)), " per device in all)",
                             best_comm ? ", " + CommChange(finding) : "");
      }
    }
    findings.push_back(finding);
  }
}

void CheckReplicatedLarge(LintContext& context, std::vector<LintFinding>& findings) {
  const std::vector<DeviceAxis>& mesh = context.mesh();
  const int64_t num_devices = context.base().num_devices;
  if (mesh.empty()) return;
  for (const auto& instruction : context.global().entry()->instructions()) {
    const Instruction& value = *instruction;
    const bool checked = value.opcode() == Opcode::kParameter || context.IsUserAnnotated(value);
    if (!checked || !value.shape().IsArray() || value.shape().rank() == 0 || !value.sharding()) continue;
    const Shape& shape = value.shape();
    const Sharding& sharding = *value.sharding();
    if (!sharding.IsTiled() && !sharding.IsReplicated()) continue;
    const int64_t bytes = PerDeviceBytes(shape, sharding);
    if (bytes <= context.options().large_bytes) continue;
    // The largest mesh axis it is replicated over and that some dim divides; the dim whose
    // split communicates least.
    std::vector<DeviceAxis> replicated = ReplicatedMeshAxes(sharding, shape.rank(), num_devices, mesh);
    std::stable_sort(replicated.begin(), replicated.end(),
                     [](const DeviceAxis& a, const DeviceAxis& b) { return a.size > b.size; });
    for (const DeviceAxis& axis : replicated) {
      double best_comm = 0;
      std::optional<Sharding> best = BestSplitOverAxis(context, value, axis, &best_comm);
      if (!best) continue;
      LintFinding finding = context.MakeFinding("replicated", value);
      finding.annotation = context.IsUserAnnotated(value) ? value.name() : "";
      finding.bytes_per_device = static_cast<double>(bytes) - static_cast<double>(bytes) / axis.size;
      finding.message = StrCat("%", value.name(), " ", shape.ToString(false), " ",
                               context.ShardingText(sharding, shape.rank()),
                               " holds ", FormatBytes(bytes), " per device and is replicated over ",
                               context.AxisName(axis), ", which it could be split over: ",
                               FormatBytes(finding.bytes_per_device), " more per device");
      finding.fix_instruction = value.name();
      finding.fix_bytes_per_device = 0;
      finding.comm_after = best_comm < 1e300 ? best_comm : finding.comm_before;
      finding.fix = StrCat("annotate %", value.name(), " with ", context.FixText(finding, *best, shape.rank()), ": ",
                           FormatBytes(PerDeviceBytes(shape, *best)), " per device, ", CommChange(finding));
      findings.push_back(finding);
      break;
    }
  }
}

void CheckUnusedMeshAxes(LintContext& context, std::vector<LintFinding>& findings) {
  const std::vector<DeviceAxis>& mesh = context.mesh();
  const int64_t num_devices = context.base().num_devices;
  std::set<int64_t> used_strides;
  std::set<std::string> seen;  // sharding text and rank: each layout is decomposed once
  for (const auto& computation : context.global().computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (!IsCheckedArray(*instruction)) continue;
      const Shape& shape = instruction->shape();
      if (!seen.insert(instruction->sharding()->ToString() + "/" + std::to_string(shape.rank())).second) continue;
      std::vector<DeviceAxis> replicated = ReplicatedMeshAxes(*instruction->sharding(), shape.rank(), num_devices, mesh);
      for (const DeviceAxis& axis : mesh)
        if (std::find(replicated.begin(), replicated.end(), axis) == replicated.end()) used_strides.insert(axis.stride);
    }
  }
  for (const DeviceAxis& axis : mesh) {
    if (used_strides.count(axis.stride) != 0) continue;
    // The fix: split the largest entry parameter that some dim lets split over the axis.
    const Instruction* target = nullptr;
    for (const Instruction* parameter : context.global().entry()->parameters()) {
      const Shape& shape = parameter->shape();
      if (!shape.IsArray() || !parameter->sharding()) continue;
      if (target != nullptr && shape.byte_size() <= target->shape().byte_size()) continue;
      const std::vector<int64_t> counts = TileCounts(*parameter->sharding(), shape.rank());
      for (int64_t d = 0; d < shape.rank(); ++d) {
        if (shape.dim(d) % (counts[d] * axis.size) != 0) continue;
        if (!SplitOverAxis(*parameter->sharding(), shape.rank(), num_devices, mesh, axis, d)) continue;
        target = parameter;
        break;
      }
    }
    double split_comm = 0;
    std::optional<Sharding> split;
    if (target != nullptr) split = BestSplitOverAxis(context, *target, axis, &split_comm);
    const Instruction* where = target ? target : context.global().entry()->root();
    LintFinding finding = context.MakeFinding("unused-axis", *where);
    const double peak = static_cast<double>(context.base().peak_bytes_per_device);
    finding.bytes_per_device = peak - peak / axis.size;
    finding.message = StrCat(context.AxisName(axis), " of the ", num_devices, "-device mesh splits no value: every "
                             "value is held ", axis.size, " times over; of the peak of ", FormatBytes(peak),
                             " per device, ", FormatBytes(finding.bytes_per_device), " is replication over it");
    if (split) {
      std::optional<double> after;
      if (split_comm < 1e300) after = split_comm;
      finding.fix_instruction = target->name();
      finding.fix_bytes_per_device = 0;
      finding.comm_after = after.value_or(finding.comm_before);
      finding.fix = StrCat("annotate %", target->name(), " with ",
                           context.FixText(finding, *split, target->shape().rank()), " (or use ",
                           num_devices / axis.size, " devices)", after ? ": " + CommChange(finding) : "");
    }
    findings.push_back(finding);
  }
}

void CheckRedundantAnnotations(LintContext& context, std::vector<LintFinding>& findings) {
  for (const auto& instruction : context.global().entry()->instructions()) {
    if (!context.IsUserAnnotated(*instruction) || !instruction->sharding()) continue;
    std::optional<Sharding> propagated = context.ShardingWithoutAnnotation(instruction->name());
    if (!propagated || !(*propagated == *instruction->sharding())) continue;
    LintFinding finding = context.MakeFinding("redundant", *instruction);
    finding.warning = false;
    finding.annotation = instruction->name();
    finding.message = StrCat("%", instruction->name(), "'s annotation ",
                             context.ShardingText(*instruction->sharding(), instruction->shape().rank()),
                             " is what propagation gives it without the annotation");
    finding.fix = "the annotation can be removed";
    finding.comm_after = finding.comm_before;
    findings.push_back(finding);
  }
}

}  // namespace gspmd::lint
