// RunDevicesOnThreads: one thread (from a pool kept across runs) and Evaluator per device, errors collected and reported once.
#include "runtime/spmd/device_runner.h"

#include <mutex>

#include "runtime/interp/evaluator.h"
#include "runtime/spmd/device_thread_pool.h"
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
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_;
};

}  // namespace

std::vector<std::vector<Literal>> RunDevicesOnThreads(const Module& module, const SpmdPlan& plan,
                                                      Communicator& communicator, std::span<const int64_t> devices,
                                                      const DeviceRunHooks& hooks) {
  ErrorCollector errors;
  std::vector<std::vector<Literal>> results(devices.size());
  auto fail = [&](std::exception_ptr error) {
    if (errors.Record(error) && hooks.on_first_error) hooks.on_first_error(error);
    communicator.Abort();
  };
  auto run_device = [&](size_t index) {
    const int64_t d = devices[index];
    try {
      std::vector<Literal> arguments = hooks.arguments(d);
      Evaluator evaluator(module, ContextForDevice(plan, d, &communicator));
      Literal value = evaluator.Run(arguments);
      communicator.DeviceFinished(d);
      AppendLeafLiterals(std::move(value), results[index]);
      GSPMD_CHECK(results[index].size() == plan.results.size(), "device ", d, " returned ", results[index].size(),
                  " leaves, the plan has ", plan.results.size());
    } catch (const CommunicatorAborted&) {
      // Another device failed first; its error is the one reported.
    } catch (const UserError& error) {
      fail(std::make_exception_ptr(UserError(StrCat("device ", d, ": ", error.what()))));
    } catch (...) {
      fail(std::current_exception());
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
