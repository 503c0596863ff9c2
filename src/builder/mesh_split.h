// mesh_split (GSPMD paper): annotate a value with how a named device mesh splits its dims,
// written as the same Sharding custom-calls / parameter shardings JAX emits.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "builder/program_builder.h"
#include "sharding/mesh.h"
#include "sharding/partition_spec.h"
#include "sharding/sharding.h"

namespace gspmd {

// dims_mapping entries besides a mesh dim index:
inline constexpr int64_t kReplicated = -1;   // the tensor dim is not split
inline constexpr int64_t kUnspecified = -2;  // left open: propagation may split it

// A mesh with named axes (major to minor) and optionally an explicit row-major device order:
//   MakeMesh({{"data", 2}, {"model", 4}})                   devices 0..7, device(d, m) = 4d + m
//   MakeMesh({{"x", 2}, {"y", 2}}, {3, 1, 2, 0})            explicit order
// Bad meshes (empty or repeated axis names, sizes < 1, device ids that are not distinct,
// negative, or not one per mesh position) are UserErrors.
Mesh MakeMesh(const std::vector<std::pair<std::string, int64_t>>& axes, std::vector<int64_t> device_ids = {});

// The sharding mesh_split writes for a rank-`rank` value: tensor dim i split over mesh dim
// dims_mapping[i]; mesh dims used by no tensor dim become a replicated subgroup
// (last_tile_dim_replicate); kUnspecified dims are unsplit in the sharding. `what` names the
// annotated value in error messages. dims_mapping of the wrong length, a mesh dim used twice
// or out of range, or an invalid mesh are UserErrors.
Sharding MeshSharding(const Mesh& mesh, const std::vector<int64_t>& dims_mapping, int64_t rank,
                      const std::string& what = "mesh_split");

// The general form: tensor dim i split over the mesh dims dim_axes[i] at once (major to minor,
// JAX's P(('x', 'y'), None)); an empty list leaves the dim unsplit. Mesh dims used by no
// tensor dim become a replicated subgroup. A mesh dim used twice, out of range, or a list of
// the wrong length is a UserError.
//   mesh [x=2,y=4], dim_axes {{0, 1}, {}}  ->  {devices=[8,1]<=[8]}
Sharding MeshShardingOverAxes(const Mesh& mesh, const std::vector<std::vector<int64_t>>& dim_axes, int64_t rank,
                              const std::string& what = "mesh_split");

// PartitionSpec and SpecText (sharding/partition_spec.h); {"?"} leaves a dim open for
// propagation (mesh_split only).
std::vector<std::vector<int64_t>> DimAxesFromSpec(const Mesh& mesh, const PartitionSpec& spec);

// dims_mapping from axis names, PartitionSpec style: "" = kReplicated, "?" = kUnspecified,
// otherwise a mesh axis name (unknown names are UserErrors).
std::vector<int64_t> DimsMappingFromAxes(const Mesh& mesh, const std::vector<std::string>& axes);

// mesh_split(value, mesh, dims_mapping): a Sharding custom-call of `value` (JAX's
// with_sharding_constraint) placed by `builder`, returned for the caller to use in place of
// `value`. With kUnspecified entries it is the partially specified form: those dims are listed
// in backend_config="unspecified_dims=[...]" and stay open for propagation.
Instruction* mesh_split(ComputationBuilder& builder, Instruction* value, const Mesh& mesh,
                        const std::vector<int64_t>& dims_mapping);
Instruction* mesh_split(ComputationBuilder& builder, Instruction* value, const Mesh& mesh,
                        const std::vector<std::string>& axes);

// mesh_split by PartitionSpec: dims may be split over several axes; {"?"} dims stay open.
Instruction* mesh_split(ComputationBuilder& builder, Instruction* value, const Mesh& mesh, const PartitionSpec& spec);

// An entry parameter's own sharding (JAX's in_shardings): sets it and returns the parameter.
// kUnspecified is not allowed here (a parameter sharding is complete).
Instruction* ShardParameter(Instruction* parameter, const Mesh& mesh, const std::vector<int64_t>& dims_mapping);
Instruction* ShardParameter(Instruction* parameter, const Mesh& mesh, const PartitionSpec& spec);

}  // namespace gspmd
