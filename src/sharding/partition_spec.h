// JAX's vocabulary for a sharding: a mesh of named axes ("data=2,model=4") and, per tensor dim,
// the axes splitting it (a PartitionSpec, printed P('data', None)); found for XLA's shardings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sharding/mesh.h"
#include "sharding/sharding.h"

namespace gspmd {

// The named mesh is `Mesh` (sharding/mesh.h): axis names and sizes, major to minor, and the
// device order (iota unless device_ids say otherwise).

// PartitionSpec by axis names: per tensor dim, the mesh axes splitting it (major to minor);
// {} leaves it unsplit (JAX's None). The builder's mesh_split also reads {"?"} (left open).
using PartitionSpec = std::vector<std::vector<std::string>>;

// "P(('x', 'y'), None, 'y')": one entry per dim, so trailing Nones are kept and a replicated
// rank-2 value reads P(None, None) (JAX prints P() for it: the same sharding).
std::string SpecText(const PartitionSpec& spec);

// "data=2,model=4" -> mesh['data'=2,'model'=4] (iota device order). `what` starts the error
// message ("gspmd show: error: --mesh"); empty items, names that are not identifiers, a name
// given twice and sizes that are not positive integers are UserErrors naming the item.
Mesh ParseMeshFlag(const std::string& text, const std::string& what);

// "data=2,model=4": the mesh as ParseMeshFlag reads it (device order not shown).
std::string MeshFlagText(const Mesh& mesh);

// The PartitionSpec over `mesh` that lays a rank-`rank` value out as `sharding` does: per dim
// the mesh axes (in order) whose devices' tiles match the sharding's, axes no dim uses holding
// replicas. Axes of size 1 are never listed. nullopt when no spec gives this layout: maximal,
// manual, unknown and tuple shardings, manual or unreduced subgroups, a device count other
// than the mesh's, or tiles that follow no product of whole mesh axes.
//   mesh data=2,model=4: {devices=[2,1,4]<=[8] last_tile_dim_replicate}, rank 2 -> P('data', None)
//                        {devices=[8,1]<=[8]} -> P(('data', 'model'), None)
//                        {devices=[4,2]<=[2,4]T(1,0)} -> P('model', 'data')
std::optional<PartitionSpec> PartitionSpecAxesOf(const Sharding& sharding, int64_t rank, const Mesh& mesh);
std::optional<std::string> PartitionSpecOf(const Sharding& sharding, int64_t rank, const Mesh& mesh);

// The named axes a collective's device groups run over, in mesh order: "'model'", or
// "('data', 'model')" for several; nullopt when the groups are not the devices that differ
// only along some axes (or are single devices, or the device count is not the mesh's).
//   mesh data=2,model=4: {{0,1,2,3},{4,5,6,7}} -> 'model'   {{0,4},{1,5},...} -> 'data'
std::optional<std::string> MeshAxesOfGroups(const std::vector<std::vector<int64_t>>& groups, const Mesh& mesh);

// XLA's text with the PartitionSpec beside it when `mesh` is given and one fits:
//   "{devices=[2,1,4]<=[8] last_tile_dim_replicate} P('data', None)"; XLA's text alone
// otherwise (no mesh, no spec, or rank < 0 for a value that is no array).
std::string ShardingTextWithSpec(const Sharding& sharding, int64_t rank, const Mesh* mesh);

}  // namespace gspmd
