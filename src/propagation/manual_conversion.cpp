// RefineAcrossManualBoundary: moves the split of unspecified dims between the global and the
// manual side of a manual-region boundary, as device axes.
#include "propagation/manual_conversion.h"

#include <algorithm>

#include "partitioner/device_axes.h"

namespace gspmd::propagation {

std::optional<Sharding> RefineAcrossManualBoundary(const Sharding& source, const Sharding& target,
                                                   const std::vector<int64_t>& open_dims, int64_t rank,
                                                   int64_t num_devices) {
  if (!source.IsTiled() || target.IsTuple() || source.IsTuple()) return std::nullopt;
  std::optional<AxisSharding> from = DecomposeSharding(source, rank, num_devices);
  std::optional<AxisSharding> to = DecomposeSharding(target, rank, num_devices);
  if (!from || !to) return std::nullopt;
  std::optional<std::pair<AxisSharding, AxisSharding>> common = RefineToCommonAxes(*from, *to);
  if (!common) return std::nullopt;
  const AxisSharding& a = common->first;
  AxisSharding b = common->second;
  bool changed = false;
  for (int64_t d : open_dims) {
    if (d < 0 || d >= rank || a.dims[d].empty() || !b.dims[d].empty()) continue;
    bool free = std::all_of(a.dims[d].begin(), a.dims[d].end(), [&](const DeviceAxis& axis) {
      return std::find(b.replicated.begin(), b.replicated.end(), axis) != b.replicated.end();
    });
    if (!free) continue;
    for (const DeviceAxis& axis : a.dims[d]) b.replicated.erase(std::find(b.replicated.begin(), b.replicated.end(), axis));
    b.dims[d] = a.dims[d];
    changed = true;
  }
  if (!changed) return std::nullopt;
  return b.ToSharding();
}

}  // namespace gspmd::propagation
