// Reading Shardy's round-trip attributes (xla.sdy.meshes, xla.sdy.in_shardings, ...) that
// JAX writes into frontend_attributes, as named-mesh sharding views.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/module.h"
#include "sharding/mesh.h"
#include "sharding/sharding.h"

namespace gspmd {

// The meshes of a module: its frontend attribute xla.sdy.meshes, e.g.
//   frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["d"=8]>}}
// Keyed by mesh name; empty when the module has none. A malformed attribute is a UserError.
std::map<std::string, Mesh> SdyMeshesOf(const Module& module);

// The module's named mesh, in JAX's vocabulary: its one xla.sdy.meshes mesh (maximal meshes
// aside), or with several the one its sdy shardings name most often (the first by name on a
// tie); nullopt when it names none.
std::optional<Mesh> NamedMeshOf(const Module& module);

// Names the mesh of a module that has none (--mesh for HLO text): xla.sdy.meshes becomes
// {mesh = #sdy.mesh<["data"=2, "model"=4]>}, so every later stage finds it with NamedMeshOf.
// `what` starts the errors ("gspmd show: error: --mesh"): a mesh whose device count is not the
// module's (num_partitions, or what its shardings use), or one other than the module's own
// sdy mesh, is a UserError. The same mesh as the module's is accepted and changes nothing.
void SetNamedMesh(Module& module, const Mesh& mesh, const std::string& what);

// One Shardy mesh: #sdy.mesh<["a"=2, "b"=4]> or #sdy.mesh<["a"=2], device_ids=[1, 0]>.
// `where` names what the text belongs to (for errors).
Mesh ParseSdyMesh(const std::string& text, const std::string& where);

// #sdy.sharding<@mesh, [{"a"}, {}]> (one) and #sdy.sharding_per_value<[<@mesh, ...>, ...]>
// (one per value). Open dims ("?"), priorities and inline meshes are accepted; the result is
// a view over the named mesh. An unknown mesh name or a bad axis is a UserError.
NamedShardingView ParseSdySharding(const std::string& text, const std::map<std::string, Mesh>& meshes,
                                   const std::string& where);
std::vector<NamedShardingView> ParseSdyShardingPerValue(const std::string& text,
                                                        const std::map<std::string, Mesh>& meshes,
                                                        const std::string& where);

// #sdy<manual_axes{"a", "b"}> -> {"a", "b"}.
std::vector<std::string> ParseSdyManualAxes(const std::string& text, const std::string& where);

// The sharding a view describes (validated: unknown axes or overlaps are UserErrors).
Sharding ShardingFromSdyView(const NamedShardingView& view, const std::string& where);

}  // namespace gspmd
