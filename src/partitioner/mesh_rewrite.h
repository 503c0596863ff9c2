// Rewrites the shardings of a module onto a bigger device mesh (each mesh axis scaled), so that
// the same program can be partitioned for many more devices (benchmarks, scaling checks).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/module.h"
#include "sharding/sharding.h"

namespace gspmd {

// A logical mesh over devices 0..N-1 in row-major order (device = iota over `dims`), and how
// much to scale each of its axes.
//   mesh_dims  e.g. {2, 4}: device id = data * 4 + model
//   factors    e.g. {16, 16}: the new mesh is {32, 64} (2048 devices)
struct MeshScale {
  std::vector<int64_t> mesh_dims;
  std::vector<int64_t> factors;

  int64_t OldDeviceCount() const;
  int64_t NewDeviceCount() const;
};

// The same sharding on the scaled mesh: every device axis that ends a mesh axis (its most
// major part) becomes `factor` times bigger; minor parts of a split mesh axis keep their size.
// A mesh axis of size 1 (which no sharding uses) scaled up is a new axis every tiled sharding
// is replicated over: {2,4,1} x {1,1,256} keeps each device's shard shapes on 2048 devices.
// Replicated, manual and unknown shardings stay; maximal device d moves to the device with d's
// mesh coordinates times the factors; tuples are rewritten per element. Shard groups and
// metadata are kept; a named-mesh view is dropped (the result prints in device form).
// UserError when the sharding is not a product of mesh axes (an explicit device order that is
// not iota-like), since its scaled form is then undefined.
Sharding ScaleShardingMesh(const Sharding& sharding, const MeshScale& scale);

// Rewrites every instruction's sharding in `module` with ScaleShardingMesh and sets
// num_partitions to the new device count. Tensor dims are not changed: dims that no longer
// divide evenly become uneven shardings. UserError when the module's num_partitions is not the
// mesh's device count, or when it holds collectives with replica groups (their groups cannot
// be scaled).
void ScaleModuleMesh(Module& module, const MeshScale& scale);

}  // namespace gspmd
