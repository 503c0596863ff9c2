// Named meshes, axis references and the named-mesh sharding view: sizes and XLA text.
#include "sharding/mesh.h"

#include <sstream>

namespace gspmd {
namespace {

void AppendAxes(std::ostringstream& out, const std::vector<AxisRef>& axes, const char* sep) {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i > 0) out << sep;
    out << axes[i].ToString();
  }
}

}  // namespace

int64_t Mesh::num_devices() const {
  if (axes.empty()) return static_cast<int64_t>(device_ids.size());
  int64_t n = 1;
  for (const Axis& axis : axes) n *= axis.size;
  return n;
}

int64_t Mesh::AxisIndex(const std::string& name) const {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].name == name) return static_cast<int64_t>(i);
  }
  return -1;
}

std::string Mesh::ToString() const {
  std::ostringstream out;
  if (is_maximal()) {
    out << "maximal_mesh[device_id=" << device_ids[0] << ']';
    return out.str();
  }
  out << "mesh[";
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i > 0) out << ',';
    out << '\'' << axes[i].name << "'=" << axes[i].size;
  }
  out << ']';
  if (!device_ids.empty()) {
    out << ", device_ids=(";
    for (size_t i = 0; i < device_ids.size(); ++i) {
      if (i > 0) out << ',';
      out << device_ids[i];
    }
    out << ')';
  }
  return out.str();
}

std::string AxisRef::ToString() const {
  std::ostringstream out;
  out << '\'' << name << '\'';
  if (is_sub_axis()) out << ":(" << pre_size << ')' << size;
  return out.str();
}

std::string NamedShardingView::BodyToString() const {
  std::ostringstream out;
  out << mesh.ToString();
  switch (form) {
    case Form::kMaximal:
      return out.str();
    case Form::kReplicated:
      out << ", replicated";
      return out.str();
    case Form::kManual:
      out << ", manual";
      return out.str();
    case Form::kDims:
      break;
  }
  out << ", [";
  for (size_t d = 0; d < dim_axes.size(); ++d) {
    if (d > 0) out << ", ";
    out << '{';
    AppendAxes(out, dim_axes[d], ", ");
    out << '}';
  }
  out << ']';
  auto append_extra = [&](const char* label, const std::vector<AxisRef>& axes) {
    if (axes.empty()) return;
    out << ", " << label << "={";
    AppendAxes(out, axes, ", ");
    out << '}';
  };
  append_extra("replicated", replicated_axes);
  append_extra("unreduced", unreduced_axes);
  append_extra("manual", manual_axes);
  return out.str();
}

std::string NamedShardingView::ToString() const { return "{" + BodyToString() + "}"; }

}  // namespace gspmd
