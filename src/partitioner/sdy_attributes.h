// Reading Shardy's round-trip attributes (xla.sdy.meshes, xla.sdy.in_shardings, ...) that
// JAX writes into frontend_attributes, as named-mesh sharding views.
#pragma once

#include <map>
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
