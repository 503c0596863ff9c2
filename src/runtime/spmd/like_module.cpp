// OptionsFromLikeModule: shardings and global result shapes from the program a per-device
// program was partitioned from.
#include "runtime/spmd/like_module.h"

#include "ir/computation.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

void AppendLeafShapes(const Shape& shape, std::vector<Shape>& leaves) {
  if (!shape.IsTuple()) {
    leaves.push_back(Shape(shape.element_type(), shape.dims()));
    return;
  }
  for (const Shape& element : shape.tuple_shapes()) AppendLeafShapes(element, leaves);
}

const Computation& EntryOf(const Module& module) {
  if (module.entry() == nullptr) GSPMD_USER_ERROR("module ", module.name(), " has no entry computation");
  return *module.entry();
}

}  // namespace

SpmdRunOptions OptionsFromLikeModule(const Module& per_device, const Module* like) {
  const Computation& entry = EntryOf(per_device);
  SpmdRunOptions options;
  const Computation* like_entry = like != nullptr ? &EntryOf(*like) : nullptr;
  if (like_entry != nullptr && like_entry->num_parameters() != entry.num_parameters())
    GSPMD_USER_ERROR("the like module ", like->name(), " has ", like_entry->num_parameters(),
                     " entry parameters but the per-device module ", per_device.name(), " has ",
                     entry.num_parameters());

  for (int64_t p = 0; p < entry.num_parameters(); ++p) {
    const Instruction& parameter = *entry.parameter(p);
    if (parameter.sharding().has_value()) {
      options.parameter_shardings.push_back(*parameter.sharding());
    } else if (like_entry != nullptr && like_entry->parameter(p)->sharding().has_value()) {
      options.parameter_shardings.push_back(*like_entry->parameter(p)->sharding());
    } else {
      options.parameter_shardings.push_back(Sharding::Replicated());
    }
  }

  const Instruction& root = *entry.root();
  if (root.sharding().has_value()) options.root_sharding = *root.sharding();
  else if (like_entry != nullptr && like_entry->root()->sharding().has_value())
    options.root_sharding = *like_entry->root()->sharding();

  if (like_entry != nullptr) {
    AppendLeafShapes(like_entry->root()->shape(), options.global_result_shapes);
    std::vector<Shape> local;
    AppendLeafShapes(root.shape(), local);
    if (local.size() != options.global_result_shapes.size())
      GSPMD_USER_ERROR("the like module ", like->name(), " returns ",
                       options.global_result_shapes.size(), " arrays but the per-device module ",
                       per_device.name(), " returns ", local.size());
  }
  return options;
}

}  // namespace gspmd
