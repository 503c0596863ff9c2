// The lint checks and what they share: the program compiled as written, the mesh its
// shardings imply, and a budget of compiles for judging candidate fixes. Private to src/lint.
#pragma once

#include <string>
#include <vector>

#include "lint/lint.h"
#include "sharding/mesh.h"

namespace gspmd::lint {

class LintContext {
 public:
  LintContext(const ProgramLoader& load, const LintOptions& options);

  const LintOptions& options() const { return options_; }
  const Evaluation& base() const { return base_; }
  const Module& global() const { return *base_.global; }
  const std::vector<DeviceAxis>& mesh() const { return mesh_; }
  // The mesh's axis names (the program's sdy.mesh, or --mesh for HLO text); nullptr without.
  const Mesh* named_mesh() const { return named_mesh_ ? &*named_mesh_ : nullptr; }
  // A sharding as findings print it: "sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}",
  // with " P('data', None)" after it when the mesh names its axes.
  std::string ShardingText(const Sharding& sharding, int64_t rank) const;
  // A fix in the input's language: "P('data', None)" for StableHLO input over named axes, else
  // ShardingText. Also sets the finding's fix_sharding and fix_spec.
  std::string FixText(LintFinding& finding, const Sharding& sharding, int64_t rank) const;
  // "mesh axis 'data' (size 2)" when the mesh names it, else MeshAxisName's words.
  std::string AxisName(const DeviceAxis& axis) const;

  // Whether the user annotated `instruction` (its sharding is theirs, not propagation's).
  bool IsUserAnnotated(const Instruction& instruction) const;
  // The user-annotated instruction `instruction`'s sharding flows from: itself when annotated,
  // nullptr when its sharding is a default.
  const Instruction* ResponsibleAnnotation(const Instruction& instruction) const;
  // The sharding propagation gives `name` when its annotation is removed (nullopt when out of
  // budget or when propagation then fails).
  std::optional<Sharding> ShardingWithoutAnnotation(const std::string& name);
  // Communication bytes per device once `edits` are applied (nullopt when out of budget or
  // when the edited program does not compile).
  std::optional<double> CommAfter(const std::vector<AnnotationEdit>& edits);

  // A finding at `instruction` (its FILE:LINE:COL).
  LintFinding MakeFinding(const std::string& check, const Instruction& instruction) const;

 private:
  bool Spend();

  const ProgramLoader& load_;
  LintOptions options_;
  Evaluation base_;
  std::vector<DeviceAxis> mesh_;
  std::optional<Mesh> named_mesh_;
  size_t evaluations_ = 0;
};

// Each appends its findings.
void CheckConflicts(LintContext& context, std::vector<LintFinding>& findings);
void CheckFullRematerialization(LintContext& context, std::vector<LintFinding>& findings);
void CheckUnevenPadding(LintContext& context, std::vector<LintFinding>& findings);
void CheckReplicatedLarge(LintContext& context, std::vector<LintFinding>& findings);
void CheckUnusedMeshAxes(LintContext& context, std::vector<LintFinding>& findings);
void CheckRedundantAnnotations(LintContext& context, std::vector<LintFinding>& findings);

// A copy of `sharding` (of a rank-`rank` array) with mesh axis `axis`, over which it is
// replicated, moved to split tensor dim `dim` (as its minor-most axis); nullopt when the
// sharding has no such replicated axis.
std::optional<Sharding> SplitOverAxis(const Sharding& sharding, int64_t rank, int64_t num_devices,
                                      const std::vector<DeviceAxis>& mesh, const DeviceAxis& axis, int64_t dim);

// `sharding` (of a rank-`rank` array) as axes cut at the mesh's axis boundaries (a replicated
// sharding: every mesh axis replicated); nullopt for layouts that are no product of axes.
std::optional<AxisSharding> MeshAxesOf(const Sharding& sharding, int64_t rank, int64_t num_devices,
                                       const std::vector<DeviceAxis>& mesh);

// Bytes one device holds of an array of `shape` under `sharding` (its padded shard).
int64_t PerDeviceBytes(const Shape& shape, const Sharding& sharding);

// The mesh axes a sharding replicates over (all of them for a replicated sharding).
std::vector<DeviceAxis> ReplicatedMeshAxes(const Sharding& sharding, int64_t rank, int64_t num_devices,
                                           const std::vector<DeviceAxis>& mesh);

}  // namespace gspmd::lint
