// Converting a named-mesh sharding view ({mesh[...], [{'a'}, {}]}) into tiles and subgroups.
#include <algorithm>

#include "sharding/mesh_parts.h"
#include "sharding/sharding.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

Sharding TiledFromDims(const NamedShardingView& view) {
  std::vector<AxisRef> all_refs;
  for (const auto& dim : view.dim_axes) all_refs.insert(all_refs.end(), dim.begin(), dim.end());
  all_refs.insert(all_refs.end(), view.manual_axes.begin(), view.manual_axes.end());
  all_refs.insert(all_refs.end(), view.unreduced_axes.begin(), view.unreduced_axes.end());
  all_refs.insert(all_refs.end(), view.replicated_axes.begin(), view.replicated_axes.end());
  MeshParts parts;
  const std::string problem = parts.Build(view.mesh, all_refs);
  GSPMD_CHECK(problem.empty(), "invalid named sharding ", view.ToString(), ": ", problem);
  GSPMD_CHECK(FirstOverlappingAxisRef(view.mesh, all_refs) < 0, "overlapping axes in ",
              view.ToString());

  const std::vector<int64_t>& sizes = parts.part_sizes();
  std::vector<bool> used(sizes.size(), false);
  std::vector<int64_t> order;
  std::vector<int64_t> tile_dims;
  auto take = [&](const std::vector<AxisRef>& refs) {
    int64_t product = 1;
    for (const AxisRef& ref : refs) {
      for (int64_t part : parts.PartsOf(ref)) {
        order.push_back(part);
        used[part] = true;
        product *= sizes[part];
      }
    }
    return product;
  };
  for (const auto& dim : view.dim_axes) tile_dims.push_back(take(dim));
  std::vector<Sharding::SubgroupType> types;
  if (!view.manual_axes.empty()) {
    tile_dims.push_back(take(view.manual_axes));
    types.push_back(Sharding::SubgroupType::kManual);
  }
  // unreduced={...}: those devices hold pieces of a sum (Shardy's unreduced axes).
  if (!view.unreduced_axes.empty()) {
    tile_dims.push_back(take(view.unreduced_axes));
    types.push_back(Sharding::SubgroupType::kUnreduced);
  }
  // Everything else (unused, replicated={...}) holds replicas.
  int64_t replicas = 1;
  for (size_t part = 0; part < sizes.size(); ++part) {
    if (used[part]) continue;
    order.push_back(static_cast<int64_t>(part));
    replicas *= sizes[part];
  }
  tile_dims.push_back(replicas);
  types.push_back(Sharding::SubgroupType::kReplicated);
  TileAssignment tiles = parts.DeviceArray().Transpose(order).Reshape(tile_dims);
  return Sharding::Tiled(std::move(tiles), std::move(types));
}

}  // namespace

Sharding Sharding::FromNamedView(NamedShardingView view) {
  Sharding result;
  switch (view.form) {
    case NamedShardingView::Form::kMaximal:
      GSPMD_CHECK(view.mesh.is_maximal(), "maximal named sharding without a maximal mesh");
      result = Maximal(view.mesh.device_ids[0]);
      break;
    case NamedShardingView::Form::kReplicated:
      result = Replicated();
      break;
    case NamedShardingView::Form::kManual:
      result = Manual();
      break;
    case NamedShardingView::Form::kDims:
      result = TiledFromDims(view);
      break;
  }
  result.set_named_view(std::move(view));
  return result;
}

}  // namespace gspmd
