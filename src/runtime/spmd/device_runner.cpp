// RunDevicesOnThreads: one thread (from a pool kept across runs) and Evaluator per device, errors collected and reported once.
#include "runtime/spmd/device_runner.h"

#include <cstdio>
#include <mutex>
#include <new>
#include <string>

#include "runtime/interp/evaluator.h"
#include "runtime/spmd/device_thread_pool.h"
#include "support/allocation.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// Keeps the first real error of the device threads (an abort caused by another device's
// error is not one).
class ErrorCollector {
 public:
  // Returns true for the first error.
  bool Record(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (first_) return false;
    first_ = error;
    return true;
  }
  void RethrowIfAny() {
    if (!first_) return;
    try {
      std::rethrow_exception(first_);
    } catch (const OutOfMemory& failure) {
      // A device that found no memory even for its message: now that every device has
      // stopped, there is memory for the UserError its text makes.
      throw UserError(failure.what(), UserErrorKind::kResource);
    }
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_;
};

// The error device d reports for what it threw: a UserError prefixed "device d: " (memory
// running out outside an instruction too), anything else (a bug) as it is. With no memory
// left for a message, an OutOfMemory (which carries its text in itself) is prefixed instead.
std::exception_ptr DeviceError(int64_t d, std::exception_ptr thrown) {
  char prefix[48];
  std::snprintf(prefix, sizeof(prefix), "device %lld: ", static_cast<long long>(d));
  try {
    try {
      std::rethrow_exception(thrown);
    } catch (const std::bad_alloc& failure) {
      ThrowOutOfMemory(failure, "outside its program's instructions");
    }
  } catch (const UserError& error) {
    try {
      return std::make_exception_ptr(error.Reworded(prefix + std::string(error.what())));
    } catch (const std::bad_alloc&) {
      return std::make_exception_ptr(error);  // as it is (copying it allocates nothing)
    }
  } catch (const OutOfMemory& failure) {
    return std::make_exception_ptr(failure.Prefixed(prefix));
  } catch (...) {
    return std::current_exception();
  }
}

}  // namespace

std::vector<std::vector<Literal>> RunDevicesOnThreads(const Module& module, const SpmdPlan& plan,
                                                      Communicator& communicator, std::span<const int64_t> devices,
                                                      const DeviceRunHooks& hooks) {
  ErrorCollector errors;
  std::vector<std::vector<Literal>> results(devices.size());
  // Never throws (it runs in a device thread's last catch): the other devices are released
  // whatever happens to the report.
  auto fail = [&](std::exception_ptr error) noexcept {
    try {
      if (errors.Record(error) && hooks.on_first_error) hooks.on_first_error(error);
    } catch (...) {
    }
    communicator.Abort();
  };
  auto run_device = [&](size_t index) {
    const int64_t d = devices[index];
    try {
      std::vector<Literal> arguments =
          ReportingOutOfMemory("while reading its arguments", [&] { return hooks.arguments(d); });
      Evaluator evaluator(module, ContextForDevice(plan, d, &communicator));
      Literal value = evaluator.Run(arguments);
      communicator.DeviceFinished(d);
      AppendLeafLiterals(std::move(value), results[index]);
      GSPMD_CHECK(results[index].size() == plan.results.size(), "device ", d, " returned ", results[index].size(),
                  " leaves, the plan has ", plan.results.size());
    } catch (const CommunicatorAborted&) {
      // Another device failed first; its error is the one reported.
    } catch (...) {
      fail(DeviceError(d, std::current_exception()));
    }
  };
  if (devices.size() == 1) {
    // No thread needed (the caller's thread is the device's).
    run_device(0);
  } else {
    // Threads kept from run to run, with their allocator heaps and kernel streams warm.
    DeviceThreadPool::Shared().Run(devices.size(), run_device);
  }
  errors.RethrowIfAny();
  return results;
}

}  // namespace gspmd
