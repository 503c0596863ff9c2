// PlanSpmdRun and reading each device's shards of the arguments.
#include "runtime/spmd/spmd_plan.h"

#include <new>
#include <set>

#include "ir/computation.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

void AppendLeafShapes(const Shape& shape, std::vector<Shape>& leaves) {
  if (!shape.IsTuple()) {
    leaves.push_back(shape);
    return;
  }
  for (const Shape& element : shape.tuple_shapes()) AppendLeafShapes(element, leaves);
}

void AppendLeafShardings(const Sharding& sharding, std::vector<Sharding>& leaves) {
  if (!sharding.IsTuple()) {
    leaves.push_back(sharding);
    return;
  }
  for (const Sharding& element : sharding.tuple_elements()) AppendLeafShardings(element, leaves);
}

// One sharding per array leaf of `shape`: a tuple sharding lists them (nested tuples
// flattened); any other sharding applies to every leaf.
std::vector<Sharding> LeafShardings(const Sharding& sharding, const Shape& shape, const std::string& what) {
  std::vector<Shape> shapes;
  AppendLeafShapes(shape, shapes);
  if (!sharding.IsTuple()) return std::vector<Sharding>(shapes.size(), sharding);
  std::vector<Sharding> leaves;
  AppendLeafShardings(sharding, leaves);
  if (leaves.size() != shapes.size())
    GSPMD_USER_ERROR(what, ": sharding ", sharding.ToString(), " has ", leaves.size(),
                     " leaf shardings but the shape ", shape.ToString(false), " has ", shapes.size(), " arrays");
  return leaves;
}

// How the devices map to the program's partitions / replicas.
void ChooseDeviceLayout(const Module& module, const SpmdRunOptions& options, SpmdPlan& plan) {
  const int64_t partitions = module.num_partitions();
  const int64_t replicas = module.replica_count();
  if (partitions > 1 && replicas > 1)
    GSPMD_USER_ERROR("module ", module.name(), " has num_partitions=", partitions, " and replica_count=", replicas,
                     "; the SPMD runtime simulates partitions or replicas, not both");
  plan.devices_are_replicas = partitions == 1 && replicas > 1;
  const int64_t declared = plan.devices_are_replicas ? replicas : partitions;
  plan.num_devices = options.num_devices > 0 ? options.num_devices : declared;
  if (declared > 1 && plan.num_devices != declared)
    GSPMD_USER_ERROR("module ", module.name(), " is compiled for ", declared,
                     plan.devices_are_replicas ? " replicas" : " partitions", " but ", plan.num_devices,
                     " devices were requested");
  if (plan.num_devices < 1) GSPMD_USER_ERROR("the SPMD runtime needs at least one device, got ", plan.num_devices);
}

// A sharding usable on `num_devices` devices for an array of `shape`.
void CheckShardingFits(const Sharding& sharding, const Shape& shape, int64_t num_devices, const std::string& what) {
  if (sharding.IsMaximal() && (sharding.maximal_device() < 0 || sharding.maximal_device() >= num_devices))
    GSPMD_USER_ERROR(what, ": sharding ", sharding.ToString(), " names device ", sharding.maximal_device(),
                     " but there are ", num_devices, " devices");
  if (!sharding.IsTiled()) return;
  const TileAssignment& tiles = sharding.tile_assignment();
  if (sharding.RequiredDeviceCount() > num_devices || tiles.num_elements() != num_devices)
    GSPMD_USER_ERROR(what, ": sharding ", sharding.ToString(), " uses ", tiles.num_elements(),
                     " tiles with device ids up to ", sharding.RequiredDeviceCount() - 1,
                     ", but the program runs on ", num_devices, " devices");
  if (sharding.TiledDataRank() != shape.rank())
    GSPMD_USER_ERROR(what, ": sharding ", sharding.ToString(), " splits ", sharding.TiledDataRank(),
                     " dimensions but the value ", shape.ToString(false), " has rank ", shape.rank());
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i > 0 ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

std::string ParameterName(const Instruction& parameter) {
  return StrCat("parameter ", parameter.parameter_number, " (%", parameter.name(), ")");
}

// The leaves of one global argument, checked against the per-device parameter shape.
std::vector<SpmdLeaf> PlanArgument(const Instruction& parameter, const GlobalArgument& argument,
                                   const Sharding& sharding, int64_t num_devices) {
  const std::string what = ParameterName(parameter);
  if (argument.shape.IsTuple() != parameter.shape().IsTuple())
    GSPMD_USER_ERROR(what, ": expected a value of shape ", parameter.shape().ToString(false), " (per device), got ",
                     argument.shape.ToString(false));
  std::vector<Shape> local_shapes;
  AppendLeafShapes(parameter.shape(), local_shapes);
  std::vector<Shape> global_shapes;
  AppendLeafShapes(argument.shape, global_shapes);
  if (global_shapes.size() != local_shapes.size())
    GSPMD_USER_ERROR(what, ": expected ", local_shapes.size(), " arrays, got ", global_shapes.size());
  GSPMD_CHECK(argument.leaves.size() == global_shapes.size(), "argument with ", argument.leaves.size(),
              " sources for ", global_shapes.size(), " leaves");
  const std::vector<Sharding> shardings = LeafShardings(sharding, parameter.shape(), what);
  std::vector<SpmdLeaf> leaves;
  for (size_t i = 0; i < global_shapes.size(); ++i) {
    const Shape& global = global_shapes[i];
    const Shape& local = local_shapes[i];
    CheckShardingFits(shardings[i], global, num_devices, what);
    std::vector<int64_t> shard_dims = global.dims();
    if (shardings[i].IsTiled()) shard_dims = shardings[i].ShardDims(global.dims());
    if (global.element_type() != local.element_type() || shard_dims != local.dims())
      GSPMD_USER_ERROR(what, ": the global argument ", global.ToString(false), " split by ", shardings[i].ToString(),
                       " gives ", ElementTypeName(global.element_type()), DimsText(shard_dims),
                       " per device, but the per-device program expects ", local.ToString(false));
    leaves.push_back({shardings[i], Shape(global.element_type(), global.dims()), Shape(local.element_type(), local.dims())});
  }
  return leaves;
}

// The global shape of a root leaf: given, or the per-device dims times the tile counts.
Shape GlobalLeafShape(const Shape& local, const Sharding& sharding, const Shape* given, const std::string& what) {
  if (given != nullptr) {
    if (given->IsTuple() || given->element_type() != local.element_type())
      GSPMD_USER_ERROR(what, ": the global result shape ", given->ToString(false), " does not match the per-device ",
                       local.ToString(false));
    std::vector<int64_t> shard_dims = given->dims();
    if (sharding.IsTiled()) shard_dims = sharding.ShardDims(given->dims());
    if (shard_dims != local.dims())
      GSPMD_USER_ERROR(what, ": the global result shape ", given->ToString(false), " split by ", sharding.ToString(),
                       " does not give the per-device shape ", local.ToString(false));
    return Shape(given->element_type(), given->dims());
  }
  Shape global(local.element_type(), local.dims());
  if (!sharding.IsTiled()) return global;
  for (int64_t k = 0; k < local.rank(); ++k) global.set_dim(k, local.dim(k) * sharding.tile_assignment().dim(k));
  return global;
}

bool HoldsWholeValue(const Sharding& sharding) {
  return sharding.IsReplicated() || sharding.IsManual() || sharding.IsMaximal() || sharding.IsUnknown();
}

int64_t LeafBytes(const std::vector<SpmdLeaf>& leaves) {
  int64_t bytes = 0;
  for (const SpmdLeaf& leaf : leaves) bytes += leaf.local.element_count() * ElementByteSize(leaf.local.element_type());
  return bytes;
}

}  // namespace

int64_t SpmdPlan::ArgumentBytes() const {
  int64_t bytes = 0;
  for (const std::vector<SpmdLeaf>& leaves : arguments) bytes += LeafBytes(leaves);
  return bytes;
}

int64_t SpmdPlan::ResultBytes() const { return LeafBytes(results); }

void AppendLeafLiterals(Literal value, std::vector<Literal>& leaves) {
  if (!value.shape().IsTuple()) {
    leaves.push_back(std::move(value));
    return;
  }
  for (Literal& element : value.tuple_elements()) AppendLeafLiterals(std::move(element), leaves);
}

SpmdPlan PlanSpmdRun(const Module& module, std::span<const GlobalArgument> arguments, const SpmdRunOptions& options) {
  const Computation* entry = module.entry();
  if (entry == nullptr) GSPMD_USER_ERROR("module ", module.name(), " has no entry computation");
  SpmdPlan plan;
  ChooseDeviceLayout(module, options, plan);
  const int64_t n = plan.num_devices;

  const int64_t num_parameters = entry->num_parameters();
  if (static_cast<int64_t>(arguments.size()) != num_parameters)
    GSPMD_USER_ERROR("entry computation %", entry->name(), " takes ", num_parameters, " parameters, got ",
                     arguments.size(), " arguments");
  if (!options.parameter_shardings.empty() &&
      static_cast<int64_t>(options.parameter_shardings.size()) != num_parameters)
    GSPMD_USER_ERROR("got ", options.parameter_shardings.size(), " parameter shardings for ", num_parameters,
                     " entry parameters");
  for (int64_t p = 0; p < num_parameters; ++p) {
    const Instruction& parameter = *entry->parameter(p);
    Sharding sharding = Sharding::Replicated();
    if (!options.parameter_shardings.empty()) sharding = options.parameter_shardings[static_cast<size_t>(p)];
    else if (parameter.sharding().has_value()) sharding = *parameter.sharding();
    plan.parameter_shapes.push_back(parameter.shape());
    plan.arguments.push_back(PlanArgument(parameter, arguments[static_cast<size_t>(p)], sharding, n));
  }

  // The root's leaf shardings and global shapes.
  const Instruction& root = *entry->root();
  Sharding root_sharding = Sharding::Replicated();
  if (options.root_sharding.has_value()) root_sharding = *options.root_sharding;
  else if (root.sharding().has_value()) root_sharding = *root.sharding();
  const std::string root_what = StrCat("the root %", root.name());
  const std::vector<Sharding> leaf_shardings = LeafShardings(root_sharding, root.shape(), root_what);
  std::vector<Shape> local_leaf_shapes;
  AppendLeafShapes(root.shape(), local_leaf_shapes);
  if (!options.global_result_shapes.empty() && options.global_result_shapes.size() != local_leaf_shapes.size())
    GSPMD_USER_ERROR(root_what, ": ", options.global_result_shapes.size(), " global result shapes given for ",
                     local_leaf_shapes.size(), " result arrays");
  for (size_t i = 0; i < local_leaf_shapes.size(); ++i) {
    const std::string what = StrCat(root_what, " (result ", i, ")");
    const Shape* given = options.global_result_shapes.empty() ? nullptr : &options.global_result_shapes[i];
    SpmdLeaf leaf;
    leaf.sharding = leaf_shardings[i];
    leaf.global = GlobalLeafShape(local_leaf_shapes[i], leaf_shardings[i], given, what);
    leaf.local = Shape(local_leaf_shapes[i].element_type(), local_leaf_shapes[i].dims());
    CheckShardingFits(leaf.sharding, leaf.global, n, what);
    plan.results.push_back(std::move(leaf));
  }
  return plan;
}

DeviceContext ContextForDevice(const SpmdPlan& plan, int64_t device, Communicator* communicator) {
  DeviceContext context;
  context.communicator = communicator;
  if (plan.devices_are_replicas) {
    context.replica_id = device;
    context.num_partitions = 1;
  } else {
    context.partition_id = device;
    context.num_partitions = plan.num_devices;
  }
  return context;
}

Sharding::ShardRegion ShardRegionOf(const SpmdLeaf& leaf, int64_t device) {
  if (HoldsWholeValue(leaf.sharding)) {
    const std::vector<int64_t>& dims = leaf.global.dims();
    return Sharding::ShardRegion{std::vector<int64_t>(dims.size(), 0), dims, dims};
  }
  return leaf.sharding.RegionForDevice(leaf.global, device);
}

Literal ReadShard(const ArraySource& source, const Sharding& sharding, int64_t device) {
  SpmdLeaf leaf{sharding, source.shape(), source.shape()};
  const Sharding::ShardRegion region = ShardRegionOf(leaf, device);
  Literal shard(Shape(source.shape().element_type(), region.padded_sizes));
  source.ReadBox(Box{region.offsets, region.sizes}, shard.raw(), region.padded_sizes,
                 std::vector<int64_t>(region.offsets.size(), 0));
  return shard;
}

namespace {

Literal RebuildTuple(const Shape& shape, std::vector<Literal>& leaves, size_t& next) {
  if (!shape.IsTuple()) return std::move(leaves[next++]);
  std::vector<Literal> elements;
  for (const Shape& element : shape.tuple_shapes()) elements.push_back(RebuildTuple(element, leaves, next));
  return Literal::Tuple(std::move(elements));
}

}  // namespace

std::vector<Literal> ReadDeviceArguments(const SpmdPlan& plan, std::span<const GlobalArgument> arguments,
                                         int64_t device) {
  std::vector<Literal> values;
  for (size_t p = 0; p < plan.arguments.size(); ++p) {
    std::vector<Literal> leaves;
    for (size_t i = 0; i < plan.arguments[p].size(); ++i) {
      const ArraySource& source = *arguments[p].leaves[i];
      try {
        leaves.push_back(ReadShard(source, plan.arguments[p][i].sharding, device));
      } catch (const UserError& error) {
        // Errors of the file name it; one that does not (memory running out) says what it read
        // (unless there is no memory left to say it).
        if (error.HasLocation()) throw;
        try {
          throw error.Reworded(StrCat(error.what(), " (the device's shard of parameter ", p, ", ", source.name(), ")"));
        } catch (const std::bad_alloc&) {
          throw error;
        }
      }
    }
    size_t next = 0;
    values.push_back(RebuildTuple(plan.parameter_shapes[p], leaves, next));
  }
  return values;
}

std::vector<int64_t> DistinctShardOwners(const SpmdLeaf& leaf, int64_t num_devices) {
  if (leaf.sharding.IsMaximal()) return {leaf.sharding.maximal_device()};
  if (HoldsWholeValue(leaf.sharding)) return {0};
  std::vector<int64_t> owners;
  std::set<std::vector<int64_t>> seen;  // tiles by their offsets
  for (int64_t device = 0; device < num_devices; ++device) {
    if (seen.insert(leaf.sharding.RegionForDevice(leaf.global, device).offsets).second) owners.push_back(device);
  }
  return owners;
}

}  // namespace gspmd
