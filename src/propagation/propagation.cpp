// PropagateShardings: chooses the device count, splits constants shared with manual regions,
// and runs the driver (driver.h).
#include "propagation/propagation.h"

#include <algorithm>

#include "propagation/annotations.h"
#include "propagation/constant_splitter.h"
#include "propagation/driver.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace propagation {
namespace {

int64_t ChooseDeviceCount(const Module& module, const PropagationOptions& options) {
  if (options.num_partitions > 0) return options.num_partitions;
  int64_t count = RequiredDeviceCount(module);
  if (!module.Attribute("num_partitions").empty()) count = std::max(count, module.num_partitions());
  return std::max<int64_t>(count, 1);
}

}  // namespace
}  // namespace propagation

PropagationResult PropagateShardings(Module& module, const PropagationOptions& options) {
  if (module.entry() == nullptr) GSPMD_USER_ERROR("module ", module.name(), " has no ENTRY computation");
  int64_t num_devices = propagation::ChooseDeviceCount(module, options);
  module.set_num_partitions(num_devices);
  propagation::SplitConstantsAtManualBoundaries(module);
  return propagation::driver::Driver(module, num_devices, options).Run();
}

}  // namespace gspmd
