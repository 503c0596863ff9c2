// DeviceAxes: a tiled sharding seen as mesh axes, where every axis is one digit of the device
// id in a mixed radix. Resharding between two shardings becomes moving axes between dims.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sharding/sharding.h"

namespace gspmd {

// One digit of the device id: devices whose ids differ only in this digit form a group of
// `size` members, spaced `stride` apart. The axes of a sharding partition the digits of
// 0..num_devices-1: device id = sum over axes of digit(axis) * stride(axis).
struct DeviceAxis {
  int64_t stride = 1;
  int64_t size = 1;
  bool operator==(const DeviceAxis&) const = default;
  bool operator<(const DeviceAxis& other) const { return stride < other.stride; }
};

// A sharding of a rank-k array as axes:
//   dims[d]        the axes splitting tensor dim d, major to minor (tile index along d is
//                  the mixed-radix number of those digits)
//   replicated     axes over which the value is replicated (partial replication)
//   manual         axes of manual subgroups
//   unreduced      axes whose devices hold pieces of a partial sum (reduced by `reduction`)
// Example: {devices=[2,1,4]<=[8] last_tile_dim_replicate} on f32[16,32]:
//   dims = {{(4,2)}, {}}, replicated = {(1,4)}
// Invariant: all axes together have product num_devices and distinct strides that form a
// mixed radix (every stride is the product of the sizes of the axes with smaller strides).
struct AxisSharding {
  std::vector<std::vector<DeviceAxis>> dims;
  std::vector<DeviceAxis> replicated;
  std::vector<DeviceAxis> manual;
  std::vector<DeviceAxis> unreduced;
  Sharding::Reduction reduction = Sharding::Reduction::kSum;  // meaningful with unreduced axes

  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  int64_t TileCount(int64_t dim) const;  // product of the sizes of dims[dim]
  std::vector<DeviceAxis> AllAxes() const;  // every axis, sorted by stride
  // The tile index along each dim held by `device`.
  std::vector<int64_t> TileIndex(int64_t device) const;
  // Back to a Sharding (iota tile assignment; partial replication/manual as subgroups).
  Sharding ToSharding() const;
  std::string ToString() const;  // "[{4x2}, {}] rep{1x4}" for debugging
  bool operator==(const AxisSharding&) const = default;

 private:
  Sharding BuildSharding() const;  // ToSharding without the cache
};

// Decomposes a sharding of a rank-`rank` array over `num_devices` devices into axes.
// Replicated (and manual) shardings give all-replicated (all-manual) axes. nullopt when the
// device array is not a product of digit axes (for example a reversed device order), or for
// maximal/tuple/unknown shardings.
std::optional<AxisSharding> DecomposeSharding(const Sharding& sharding, int64_t rank,
                                              int64_t num_devices);

// Splits the axes of `a` and `b` into a common refinement, so that every axis of either is a
// run of axes of the result. nullopt when their digit boundaries are incompatible (e.g.
// sizes 2x3 against 3x2 on 6 devices).
std::optional<std::pair<AxisSharding, AxisSharding>> RefineToCommonAxes(const AxisSharding& a,
                                                                        const AxisSharding& b);

// Writes all `layouts` over one set of axes that refines every one of them (as
// RefineToCommonAxes does for two). Layouts whose digit boundaries do not refine with those of
// `layouts[anchor]` (e.g. 2x3 against 3x2 on 6 devices) are first replaced by stand-ins: the
// same tile counts per dim and the same replication, in a device order that does refine (the
// reshard planner moves a value between a layout and its stand-in with a collective-permute).
// nullopt when some layout has no stand-in (for example one with manual axes).
std::optional<std::vector<AxisSharding>> RefineAllToCommonAxes(const std::vector<AxisSharding>& layouts,
                                                                size_t anchor);

// Splits every axis of `sharding` at the given strides (each boundary b with
// axis.stride < b < axis.stride * axis.size cuts that axis in two).
AxisSharding SplitAxesAt(const AxisSharding& sharding, const std::vector<int64_t>& boundaries);

// The replica groups of a collective over `axes`: for every assignment of the other digits,
// the devices obtained by varying the `axes` digits, ordered with the first axis of `axes` as
// the most significant. Groups are ordered by the other digits' device ids.
std::vector<std::vector<int64_t>> GroupsOverAxes(const std::vector<DeviceAxis>& axes,
                                                 int64_t num_devices);

}  // namespace gspmd
