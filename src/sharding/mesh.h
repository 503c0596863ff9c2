// Named meshes ("mesh['data'=2,'model'=4]") and the named-mesh views of shardings and
// replica groups.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gspmd {

class TileAssignment;

// A named N-D array of device ids. Devices default to iota order.
//   mesh['data'=2,'model'=4]  ->  axes data(2), model(4); device (d, m) = 4*d + m
//   mesh['a'=2,'b'=2], device_ids=(3,2,1,0)   explicit device order (row-major)
//   maximal_mesh[device_id=3]                  no axes, one device (device_ids = {3})
struct Mesh {
  struct Axis {
    std::string name;
    int64_t size = 1;
    bool operator==(const Axis&) const = default;
  };
  std::vector<Axis> axes;
  std::vector<int64_t> device_ids;  // empty: iota

  int64_t num_devices() const;
  int64_t AxisIndex(const std::string& name) const;  // -1 when absent
  bool is_maximal() const { return axes.empty() && device_ids.size() == 1; }
  // The device at a row-major linear position over the axes.
  int64_t DeviceAtLinear(int64_t linear) const {
    return device_ids.empty() ? linear : device_ids[linear];
  }
  std::string ToString() const;  // "mesh['data'=2,'model'=4]" ("mesh[]" when empty)
  bool operator==(const Mesh&) const = default;
};

// A reference to a mesh axis or a sub-axis: 'b' or 'b':(pre)size (Shardy's meaning): axis b
// is viewed as [pre, size, b/(pre*size)] (major to minor) and this is the middle dim, so
// 'b':(1)2 is the major half of a b of size 4 and 'b':(2)2 the minor half.
struct AxisRef {
  std::string name;
  int64_t pre_size = 1;   // sub-axis only
  int64_t size = -1;      // -1: the whole axis
  bool is_sub_axis() const { return size >= 0; }
  std::string ToString() const;  // "'b'" or "'b':(2)2"
  bool operator==(const AxisRef&) const = default;
};

// The named-mesh text of a sharding, kept to print it back as written:
//   {mesh['data'=2,'model'=4], [{'data'}, {}, {'model'}]}
//   {mesh['d'=8], manual}    {mesh[], replicated}
struct NamedShardingView {
  Mesh mesh;
  enum class Form { kDims, kReplicated, kManual, kMaximal } form = Form::kDims;
  std::vector<std::vector<AxisRef>> dim_axes;  // per tensor dim, major to minor
  std::vector<AxisRef> replicated_axes;        // optional ", replicated={...}"-style extras
  std::vector<AxisRef> unreduced_axes;
  std::vector<AxisRef> manual_axes;            // ", manual={...}": manual subgroup axes
  std::string ToString() const;                // with the braces
  // Without the braces, so a caller can append ", metadata={...}" before the closing one.
  std::string BodyToString() const;
  bool operator==(const NamedShardingView&) const = default;
};

}  // namespace gspmd
