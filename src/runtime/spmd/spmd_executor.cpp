// RunSpmd: splits global arguments into shards, runs every simulated device on its own
// thread with a shared LocalCommunicator, and assembles the global results.
#include "runtime/spmd/spmd_executor.h"

#include <exception>
#include <mutex>
#include <thread>

#include "ir/computation.h"
#include "runtime/comm/local_communicator.h"
#include "runtime/interp/evaluator.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// How the simulated devices map to the program's partitions / replicas.
struct DeviceLayout {
  int64_t num_devices = 1;
  bool devices_are_replicas = false;  // a replicated (pmap-style) program: one partition
};

DeviceLayout ChooseDeviceLayout(const Module& module, const SpmdRunOptions& options) {
  DeviceLayout layout;
  const int64_t partitions = module.num_partitions();
  const int64_t replicas = module.replica_count();
  if (partitions > 1 && replicas > 1)
    GSPMD_USER_ERROR("module ", module.name(), " has num_partitions=", partitions,
                     " and replica_count=", replicas,
                     "; the SPMD runtime simulates partitions or replicas, not both");
  layout.devices_are_replicas = partitions == 1 && replicas > 1;
  const int64_t declared = layout.devices_are_replicas ? replicas : partitions;
  layout.num_devices = options.num_devices > 0 ? options.num_devices : declared;
  if (declared > 1 && layout.num_devices != declared)
    GSPMD_USER_ERROR("module ", module.name(), " is compiled for ", declared,
                     layout.devices_are_replicas ? " replicas" : " partitions", " but ",
                     layout.num_devices, " devices were requested");
  return layout;
}

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
std::vector<Sharding> LeafShardings(const Sharding& sharding, const Shape& shape,
                                    const std::string& what) {
  std::vector<Shape> shapes;
  AppendLeafShapes(shape, shapes);
  if (!sharding.IsTuple()) return std::vector<Sharding>(shapes.size(), sharding);
  std::vector<Sharding> leaves;
  AppendLeafShardings(sharding, leaves);
  if (leaves.size() != shapes.size())
    GSPMD_USER_ERROR(what, ": sharding ", sharding.ToString(), " has ", leaves.size(),
                     " leaf shardings but the shape ", shape.ToString(false), " has ",
                     shapes.size(), " arrays");
  return leaves;
}

void AppendLeafLiterals(Literal value, std::vector<Literal>& leaves) {
  if (!value.shape().IsTuple()) {
    leaves.push_back(std::move(value));
    return;
  }
  for (Literal& element : value.tuple_elements()) AppendLeafLiterals(std::move(element), leaves);
}

Literal RebuildTuple(const Shape& shape, std::vector<Literal>& leaves, size_t& next) {
  if (!shape.IsTuple()) return std::move(leaves[next++]);
  std::vector<Literal> elements;
  for (const Shape& element : shape.tuple_shapes()) elements.push_back(RebuildTuple(element, leaves, next));
  return Literal::Tuple(std::move(elements));
}

// A sharding usable on `num_devices` devices for an array of `shape`.
void CheckShardingFits(const Sharding& sharding, const Shape& shape, int64_t num_devices,
                       const std::string& what) {
  if (sharding.IsMaximal() &&
      (sharding.maximal_device() < 0 || sharding.maximal_device() >= num_devices))
    GSPMD_USER_ERROR(what, ": sharding ", sharding.ToString(), " names device ",
                     sharding.maximal_device(), " but there are ", num_devices, " devices");
  if (!sharding.IsTiled()) return;
  const TileAssignment& tiles = sharding.tile_assignment();
  if (sharding.RequiredDeviceCount() > num_devices || tiles.num_elements() != num_devices)
    GSPMD_USER_ERROR(what, ": sharding ", sharding.ToString(), " uses ", tiles.num_elements(),
                     " tiles with device ids up to ", sharding.RequiredDeviceCount() - 1,
                     ", but the program runs on ", num_devices, " devices");
  if (sharding.TiledDataRank() != shape.rank())
    GSPMD_USER_ERROR(what, ": sharding ", sharding.ToString(), " splits ",
                     sharding.TiledDataRank(), " dimensions but the value ",
                     shape.ToString(false), " has rank ", shape.rank());
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i > 0 ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

std::string ParameterName(const Instruction& parameter) {
  return StrCat("parameter ", parameter.parameter_number, " (%", parameter.name(), ")");
}

// Splits one global argument into per-device values, checking it against the per-device
// parameter shape. Appends device d's value to per_device[d].
void SplitArgument(const Instruction& parameter, const Literal& global, const Sharding& sharding,
                   int64_t num_devices, std::vector<std::vector<Literal>>& per_device) {
  const std::string what = ParameterName(parameter);
  if (global.shape().IsTuple() != parameter.shape().IsTuple())
    GSPMD_USER_ERROR(what, ": expected a value of shape ", parameter.shape().ToString(false),
                     " (per device), got ", global.shape().ToString(false));
  std::vector<Shape> local_shapes;
  AppendLeafShapes(parameter.shape(), local_shapes);
  std::vector<Literal> global_leaves;
  AppendLeafLiterals(global, global_leaves);
  if (global_leaves.size() != local_shapes.size())
    GSPMD_USER_ERROR(what, ": expected ", local_shapes.size(), " arrays, got ", global_leaves.size());
  const std::vector<Sharding> shardings = LeafShardings(sharding, parameter.shape(), what);

  std::vector<std::vector<Literal>> device_leaves(static_cast<size_t>(num_devices));
  for (size_t i = 0; i < global_leaves.size(); ++i) {
    const Literal& leaf = global_leaves[i];
    const Shape& local = local_shapes[i];
    CheckShardingFits(shardings[i], leaf.shape(), num_devices, what);
    std::vector<int64_t> shard_dims = leaf.shape().dims();
    if (shardings[i].IsTiled()) shard_dims = shardings[i].ShardDims(leaf.shape().dims());
    if (leaf.element_type() != local.element_type() || shard_dims != local.dims())
      GSPMD_USER_ERROR(what, ": the global argument ", leaf.shape().ToString(false), " split by ",
                       shardings[i].ToString(), " gives ", ElementTypeName(leaf.element_type()),
                       DimsText(shard_dims),
                       " per device, but the per-device program expects ",
                       local.ToString(false));
    for (int64_t d = 0; d < num_devices; ++d)
      device_leaves[static_cast<size_t>(d)].push_back(ShardOfGlobal(leaf, shardings[i], d));
  }
  for (int64_t d = 0; d < num_devices; ++d) {
    size_t next = 0;
    per_device[static_cast<size_t>(d)].push_back(
        RebuildTuple(parameter.shape(), device_leaves[static_cast<size_t>(d)], next));
  }
}

// The global shape of a root leaf: given, or the per-device dims times the tile counts.
Shape GlobalLeafShape(const Shape& local, const Sharding& sharding, const Shape* given,
                      const std::string& what) {
  if (given != nullptr) {
    if (given->IsTuple() || given->element_type() != local.element_type())
      GSPMD_USER_ERROR(what, ": the global result shape ", given->ToString(false),
                       " does not match the per-device ", local.ToString(false));
    std::vector<int64_t> shard_dims = given->dims();
    if (sharding.IsTiled()) shard_dims = sharding.ShardDims(given->dims());
    if (shard_dims != local.dims())
      GSPMD_USER_ERROR(what, ": the global result shape ", given->ToString(false), " split by ",
                       sharding.ToString(), " does not give the per-device shape ",
                       local.ToString(false));
    return Shape(given->element_type(), given->dims());
  }
  Shape global(local.element_type(), local.dims());
  if (!sharding.IsTiled()) return global;
  for (int64_t k = 0; k < local.rank(); ++k)
    global.set_dim(k, local.dim(k) * sharding.tile_assignment().dim(k));
  return global;
}

// Collects the first real error of the device threads (an abort caused by another device's
// error is not one).
class ErrorCollector {
 public:
  void Record(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!first_) first_ = error;
  }
  void RethrowIfAny() {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_;
};

}  // namespace

std::vector<Literal> RunSpmd(const Module& module, std::span<const Literal> global_arguments,
                             const SpmdRunOptions& options) {
  const Computation* entry = module.entry();
  if (entry == nullptr) GSPMD_USER_ERROR("module ", module.name(), " has no entry computation");
  const DeviceLayout layout = ChooseDeviceLayout(module, options);
  const int64_t n = layout.num_devices;
  if (n < 1) GSPMD_USER_ERROR("the SPMD runtime needs at least one device, got ", n);

  // Split the arguments.
  const int64_t num_parameters = entry->num_parameters();
  if (static_cast<int64_t>(global_arguments.size()) != num_parameters)
    GSPMD_USER_ERROR("entry computation %", entry->name(), " takes ", num_parameters,
                     " parameters, got ", global_arguments.size(), " arguments");
  if (!options.parameter_shardings.empty() &&
      static_cast<int64_t>(options.parameter_shardings.size()) != num_parameters)
    GSPMD_USER_ERROR("got ", options.parameter_shardings.size(), " parameter shardings for ",
                     num_parameters, " entry parameters");
  std::vector<std::vector<Literal>> arguments(static_cast<size_t>(n));
  for (int64_t p = 0; p < num_parameters; ++p) {
    const Instruction& parameter = *entry->parameter(p);
    Sharding sharding = Sharding::Replicated();
    if (!options.parameter_shardings.empty()) sharding = options.parameter_shardings[static_cast<size_t>(p)];
    else if (parameter.sharding().has_value()) sharding = *parameter.sharding();
    SplitArgument(parameter, global_arguments[static_cast<size_t>(p)], sharding, n, arguments);
  }

  // The root's leaf shardings and global shapes, checked before running.
  const Instruction& root = *entry->root();
  Sharding root_sharding = Sharding::Replicated();
  if (options.root_sharding.has_value()) root_sharding = *options.root_sharding;
  else if (root.sharding().has_value()) root_sharding = *root.sharding();
  const std::string root_what = StrCat("the root %", root.name());
  const std::vector<Sharding> leaf_shardings = LeafShardings(root_sharding, root.shape(), root_what);
  std::vector<Shape> local_leaf_shapes;
  AppendLeafShapes(root.shape(), local_leaf_shapes);
  if (!options.global_result_shapes.empty() &&
      options.global_result_shapes.size() != local_leaf_shapes.size())
    GSPMD_USER_ERROR(root_what, ": ", options.global_result_shapes.size(),
                     " global result shapes given for ", local_leaf_shapes.size(), " result arrays");
  std::vector<Shape> global_leaf_shapes;
  for (size_t i = 0; i < local_leaf_shapes.size(); ++i) {
    const std::string what = StrCat(root_what, " (result ", i, ")");
    const Shape* given = options.global_result_shapes.empty() ? nullptr : &options.global_result_shapes[i];
    global_leaf_shapes.push_back(GlobalLeafShape(local_leaf_shapes[i], leaf_shardings[i], given, what));
    CheckShardingFits(leaf_shardings[i], global_leaf_shapes.back(), n, what);
  }

  // Run every device.
  LocalCommunicator communicator(n);
  ErrorCollector errors;
  std::vector<std::vector<Literal>> results(static_cast<size_t>(n));
  auto run_device = [&](int64_t d) {
    try {
      DeviceContext context;
      context.communicator = &communicator;
      if (layout.devices_are_replicas) {
        context.replica_id = d;
        context.num_partitions = 1;
      } else {
        context.partition_id = d;
        context.num_partitions = n;
      }
      Evaluator evaluator(module, context);
      Literal value = evaluator.Run(arguments[static_cast<size_t>(d)]);
      communicator.DeviceFinished(d);
      AppendLeafLiterals(std::move(value), results[static_cast<size_t>(d)]);
    } catch (const CommunicatorAborted&) {
      // Another device failed first; its error is the one reported.
    } catch (const UserError& error) {
      errors.Record(std::make_exception_ptr(
          UserError(StrCat("device ", d, ": ", error.what()))));
      communicator.Abort();
    } catch (...) {
      errors.Record(std::current_exception());
      communicator.Abort();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(n));
  for (int64_t d = 0; d < n; ++d) threads.emplace_back(run_device, d);
  for (std::thread& thread : threads) thread.join();
  errors.RethrowIfAny();

  // Assemble the global results.
  std::vector<Literal> outputs;
  for (size_t i = 0; i < local_leaf_shapes.size(); ++i) {
    std::vector<const Literal*> shards;
    for (int64_t d = 0; d < n; ++d) {
      const std::vector<Literal>& leaves = results[static_cast<size_t>(d)];
      GSPMD_CHECK(leaves.size() == local_leaf_shapes.size(), "device ", d, " returned ",
                  leaves.size(), " leaves");
      shards.push_back(&leaves[i]);
    }
    outputs.push_back(AssembleGlobal(shards, leaf_shardings[i], global_leaf_shapes[i]));
  }
  return outputs;
}

}  // namespace gspmd
