// api::Annotate: entry parameters' shardings from JAX's vocabulary (a named mesh and one
// PartitionSpec per parameter), and api::WriteTextFile.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "api/gspmd.h"
#include "sharding/sharding.h"
#include "sharding/tile_assignment.h"

namespace gspmd::api {
namespace {

[[noreturn]] void Fail(const Program& program, const std::string& message) {
  ThrowUserErrorAt(SourceLocation{program.name(), 0, 0}, message, UserErrorKind::kSharding);
}

std::string ParameterList(const Computation& entry) {
  std::string names;
  for (const Instruction* parameter : entry.parameters())
    names += (names.empty() ? "" : ", ") + std::to_string(parameter->parameter_number) + " %" + parameter->name();
  return names.empty() ? "none" : names;
}

std::string AxisList(const Mesh& mesh) {
  std::string names;
  for (const Mesh::Axis& axis : mesh.axes) names += (names.empty() ? "'" : ", '") + axis.name + "'";
  return names;
}

Instruction* FindParameter(const Program& program, Computation& entry, const ParameterSpec& spec) {
  if (spec.index) {
    if (*spec.index >= 0 && *spec.index < entry.num_parameters()) return entry.parameter(*spec.index);
    Fail(program, StrCat("annotate: no parameter ", *spec.index, " (the entry takes ", entry.num_parameters(),
                         ": ", ParameterList(entry), ")"));
  }
  const std::string name = !spec.name.empty() && spec.name[0] == '%' ? spec.name.substr(1) : spec.name;
  for (Instruction* parameter : entry.parameters())
    if (parameter->name() == name) return parameter;
  Fail(program, StrCat("annotate: no parameter named '", name, "' (parameters: ", ParameterList(entry), ")"));
}

// dims tiled over the axes the spec names, major first, then the unused axes as one
// replicated trailing dim: the mesh's iota order transposed to (dim 0's axes, dim 1's axes,
// ..., unused axes) and reshaped to the tile dims.
Sharding ShardingFor(const Program& program, const Instruction& parameter, const ParameterSpec& spec,
                     const Mesh& mesh) {
  const Shape& shape = parameter.shape();
  const std::string where = StrCat("parameter ", parameter.parameter_number, " (%", parameter.name(), ")");
  if (!shape.IsArray()) Fail(program, StrCat("annotate: ", where, " is a tuple; only array parameters take a spec"));
  if (static_cast<int64_t>(spec.dims.size()) > shape.rank())
    Fail(program, StrCat("annotate: the spec of ", where, " has ", spec.dims.size(), " entries but ",
                         shape.ToString(false), " has ", shape.rank(), " dims (expected at most ", shape.rank(), ")"));
  std::vector<int64_t> tile_dims(shape.rank(), 1);
  std::vector<int64_t> perm;
  std::vector<bool> used(mesh.axes.size(), false);
  for (size_t d = 0; d < spec.dims.size(); ++d) {
    for (const std::string& axis : spec.dims[d]) {
      const int64_t index = mesh.AxisIndex(axis);
      if (index < 0)
        Fail(program, StrCat("annotate: the spec of ", where, " names mesh axis '", axis, "', which the mesh ",
                             mesh.ToString(), " does not have (axes: ", AxisList(mesh), ")"));
      if (used[index])
        Fail(program, StrCat("annotate: the spec of ", where, " uses mesh axis '", axis,
                             "' twice (each axis splits at most one dim)"));
      used[index] = true;
      tile_dims[d] *= mesh.axes[index].size;
      perm.push_back(index);
    }
  }
  int64_t replicated = 1;
  for (size_t a = 0; a < mesh.axes.size(); ++a) {
    if (used[a]) continue;
    replicated *= mesh.axes[a].size;
    perm.push_back(static_cast<int64_t>(a));
  }
  if (replicated == mesh.num_devices()) return Sharding::Replicated();
  std::vector<int64_t> reshape;
  for (const Mesh::Axis& axis : mesh.axes) reshape.push_back(axis.size);
  std::vector<int64_t> identity(mesh.axes.size());
  for (size_t a = 0; a < identity.size(); ++a) identity[a] = static_cast<int64_t>(a);
  if (perm == identity) perm.clear();
  if (replicated == 1) return Sharding::Tiled(TileAssignment::Iota(tile_dims, reshape, perm));
  tile_dims.push_back(replicated);
  return Sharding::PartiallyReplicated(TileAssignment::Iota(tile_dims, reshape, perm));
}

void CheckMesh(const Program& program, const Mesh& mesh) {
  if (mesh.axes.empty()) Fail(program, "annotate: the mesh has no axes (expected e.g. Mesh({\"data\": 2, \"model\": 4}))");
  for (size_t a = 0; a < mesh.axes.size(); ++a) {
    if (mesh.axes[a].size < 1)
      Fail(program, StrCat("annotate: mesh axis '", mesh.axes[a].name, "' has size ", mesh.axes[a].size,
                           " (expected a positive size)"));
    for (size_t b = 0; b < a; ++b)
      if (mesh.axes[b].name == mesh.axes[a].name)
        Fail(program, StrCat("annotate: the mesh names axis '", mesh.axes[a].name, "' twice"));
  }
}

}  // namespace

Program Annotate(const Program& program, const std::vector<ParameterSpec>& specs, const Mesh& mesh) {
  CheckMesh(program, mesh);
  if (program.IsPerDevice())
    Fail(program, "annotate needs a global program; this one is per-device already (it has collectives or "
                  "partition-id, or is the partitioner's output)");
  const Module& original = program.module();
  const int64_t devices = mesh.num_devices();
  if (!original.Attribute("num_partitions").empty() && original.num_partitions() != 1 &&
      original.num_partitions() != devices)
    Fail(program, StrCat("annotate: the program states num_partitions=", original.num_partitions(), " but the mesh ",
                         mesh.ToString(), " has ", devices, " devices"));
  std::unique_ptr<Module> module = program.CopyModule();
  Computation& entry = *module->entry();
  std::vector<const Instruction*> annotated;
  for (const ParameterSpec& spec : specs) {
    Instruction* parameter = FindParameter(program, entry, spec);
    if (std::find(annotated.begin(), annotated.end(), parameter) != annotated.end())
      Fail(program, StrCat("annotate: parameter ", parameter->parameter_number, " (%", parameter->name(),
                           ") has two specs (by name and by index?)"));
    annotated.push_back(parameter);
    parameter->set_sharding(ShardingFor(program, *parameter, spec, mesh));
  }
  module->set_num_partitions(devices);
  return Program::FromModule(std::move(module), program.name());
}

void WriteTextFile(const std::string& path, const std::string& text) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    ThrowUserErrorAt(SourceLocation{path, 0, 0}, "is a directory (expected a file path to write)",
                     UserErrorKind::kResource);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (out) out.close();
  if (!out)
    ThrowUserErrorAt(SourceLocation{path, 0, 0}, "cannot write the file (expected a writable path)",
                     UserErrorKind::kResource);
}

}  // namespace gspmd::api
