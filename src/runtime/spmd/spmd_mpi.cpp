// RunSpmdOverMpi: local devices on threads, failures ending the job, and the two ways of
// writing results (rank 0 assembling global files window by window, or sharded files).
#include "runtime/spmd/spmd_mpi.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "io/npy.h"
#include "io/output_files.h"
#include "runtime/comm/mpi/mpi_communicator.h"
#include "runtime/comm/mpi/mpi_session.h"
#include "runtime/interp/kernel_dnnl.h"
#include "runtime/spmd/device_runner.h"
#include "runtime/spmd/result_files.h"
#include "support/allocation.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// A contiguous range of a global output file: the elements with index prefix `prefix` (dims
// before `dim`), indices [begin, end) along `dim`, and every index of the dims after it.
struct Window {
  Box box;
  int64_t file_offset = 0;  // bytes after the header
  int64_t bytes = 0;
};

// Splits an array into windows of at most about `limit` bytes, in file order.
std::vector<Window> FileWindows(const Shape& shape, int64_t limit) {
  const std::vector<int64_t>& dims = shape.dims();
  const int64_t element_size = ElementByteSize(shape.element_type());
  std::vector<Window> windows;
  if (shape.element_count() == 0) return windows;
  if (dims.empty()) return {Window{Box{{}, {}}, 0, element_size}};
  // The first dim whose trailing block fits the limit (the last dim at least).
  size_t dim = 0;
  int64_t trailing = element_size;  // bytes of one index of `dim`
  for (size_t k = 0; k < dims.size(); ++k) {
    int64_t after = element_size;
    for (size_t j = k + 1; j < dims.size(); ++j) after *= dims[j];
    dim = k;
    trailing = after;
    if (after <= limit) break;
  }
  const int64_t step = std::max<int64_t>(1, limit / trailing);
  std::vector<int64_t> prefix(dim, 0);
  while (true) {
    for (int64_t begin = 0; begin < dims[dim]; begin += step) {
      Window window;
      window.box.offsets = prefix;
      window.box.offsets.push_back(begin);
      window.box.sizes.assign(dim, 1);
      window.box.sizes.push_back(std::min(step, dims[dim] - begin));
      for (size_t j = dim + 1; j < dims.size(); ++j) {
        window.box.offsets.push_back(0);
        window.box.sizes.push_back(dims[j]);
      }
      int64_t linear = 0, stride = 1;
      for (size_t j = dims.size(); j-- > 0;) {
        linear += window.box.offsets[j] * stride;
        stride *= dims[j];
      }
      window.file_offset = linear * element_size;
      window.bytes = window.box.sizes[dim] * trailing;
      windows.push_back(std::move(window));
    }
    size_t k = dim;
    while (k > 0) {
      --k;
      if (++prefix[k] < dims[k]) break;
      prefix[k] = 0;
      if (k == 0) return windows;
    }
    if (dim == 0) return windows;
  }
}

void WriteAt(int fd, const std::string& path, const uint8_t* data, int64_t size, int64_t offset) {
  while (size > 0) {
    const ssize_t wrote = ::pwrite(fd, data, static_cast<size_t>(std::min<int64_t>(size, 1 << 30)), offset);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0)
      ThrowUserErrorAt(SourceLocation{path, 0, 0}, std::string("writing the output failed: ") + std::strerror(errno) +
                                                       " (expected enough disk space and a writable path)");
    data += wrote;
    size -= wrote;
    offset += wrote;
  }
}

class Runner {
 public:
  Runner(MpiSession& session, const Module& module, const SpmdPlan& plan, std::span<const GlobalArgument> arguments,
         const MpiRunOptions& options)
      : session_(session), module_(module), plan_(plan), arguments_(arguments), options_(options) {
    first_device_ = session.rank() * options.devices_per_rank;
    for (int64_t i = 0; i < options.devices_per_rank; ++i) devices_.push_back(first_device_ + i);
  }

  void Run() {
    MpiCommunicator communicator(session_, options_.devices_per_rank);
    DeviceRunHooks hooks;
    hooks.arguments = [&](int64_t device) { return ReadDeviceArguments(plan_, arguments_, device); };
    hooks.on_first_error = [&](std::exception_ptr error) { EndJob(error); };
    std::vector<std::vector<Literal>> results;
    try {
      results = RunDevicesOnThreads(module_, plan_, communicator, devices_, hooks);
    } catch (...) {
      // Not a device's error (those end the job from on_first_error): its threads could not
      // start. Ending the job here keeps the other ranks from waiting for this one.
      EndJob(std::current_exception());
    }
    Write(std::move(results));
  }

  // Writes this rank's devices' results (results[j] of devices_[j]).
  void Write(std::vector<std::vector<Literal>> results) {
    results_ = std::move(results);
    try {
      ReportingOutOfMemory("while writing the results", [&] {
        if (options_.sharded_output) WriteSharded();
        else WriteGlobal();
      });
    } catch (...) {
      files_.Discard();
      EndJob(std::current_exception());
    }
    if (options_.report_memory) ReportMemory();
  }

 private:
  // A device (or output) error on this rank: end the job, unless another rank reports it.
  [[noreturn]] void EndJob(std::exception_ptr error) {
    try {
      std::rethrow_exception(error);
    } catch (const ErrorReportedByAnotherRank& other) {
      // That rank aborts the job; if it does not within a while, do it from here.
      std::this_thread::sleep_for(std::chrono::seconds(10));
      session_.FailJob(StrCat("stopping: rank ", other.reporting_rank(), " reported an error but the job goes on"));
    } catch (const std::exception& failure) {
      session_.FailJob(failure.what());
    } catch (...) {
      session_.FailJob("unknown error");
    }
  }

  const std::vector<Literal>* LocalResults(int64_t device) const {
    if (device < first_device_ || device >= first_device_ + options_.devices_per_rank) return nullptr;
    return &results_[static_cast<size_t>(device - first_device_)];
  }
  int RankOf(int64_t device) const { return static_cast<int>(device / options_.devices_per_rank); }

  void WriteSharded() {
    GSPMD_CHECK(options_.result_files.empty(), "sharded outputs are named out<i>");
    CreateOutputDirectory(options_.out_dir);
    WriteOwnedShards(plan_, options_.out_dir, devices_, results_, files_);
    PendingFiles indexes;
    if (session_.rank() == 0) WriteResultIndexes(plan_, options_.out_dir, indexes);
    session_.Barrier("the barrier before committing the output shards");
    files_.Commit();
    session_.Barrier("the barrier before committing the shard indexes");
    if (session_.rank() != 0) return;
    indexes.Commit();
    PrintLines(true);
  }

  // Rank 0 writes each global file window by window; the owners of the tiles a window
  // overlaps send their parts in the same order.
  void WriteGlobal() {
    const bool writer = session_.rank() == 0;
    int tag = 0;
    for (size_t i = 0; i < plan_.results.size(); ++i) {
      const SpmdLeaf& leaf = plan_.results[i];
      const ResultShards shards = ShardsOfResult(plan_, i);
      const int64_t element_size = ElementByteSize(leaf.global.element_type());
      int fd = -1;
      std::string path, header;
      if (writer) {
        CreateOutputDirectory(options_.out_dir);
        // For messages; written under files_'s name.
        path = options_.result_files.empty()
                   ? GlobalResultPath(options_.out_dir, i)
                   : (std::filesystem::path(options_.out_dir) / options_.result_files.at(i)).string();
        fd = ::open(files_.Add(path).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) ThrowUserErrorAt(SourceLocation{path, 0, 0}, "cannot open the output for writing");
        header = NpyHeaderBytes(leaf.global.element_type(), leaf.global.dims());
        WriteAt(fd, path, reinterpret_cast<const uint8_t*>(header.data()), static_cast<int64_t>(header.size()), 0);
      }
      std::vector<uint8_t> window_bytes, piece;
      for (const Window& window : FileWindows(leaf.global, kOutputWindowBytes)) {
        if (writer) window_bytes = AllocateZeroed(static_cast<uint64_t>(window.bytes), StrCat("a window of ", path));
        for (size_t k = 0; k < shards.owners.size(); ++k) {
          const Box& tile = shards.index.shards[k].box;
          std::optional<Box> common = IntersectBoxes(window.box, tile);
          if (!common.has_value() && !tile.sizes.empty()) continue;
          if (tile.sizes.empty()) common = tile;  // a scalar
          const int64_t owner = shards.owners[k];
          const int owner_rank = RankOf(owner);
          const int piece_tag = (tag++ % (1 << 20)) + 16;
          if (!writer && owner_rank != session_.rank()) continue;
          // The part, in the owner's shard coordinates and in the window's.
          std::vector<int64_t> in_shard = common->offsets, in_window = common->offsets;
          for (size_t d = 0; d < in_shard.size(); ++d) {
            in_shard[d] -= tile.offsets[d];
            in_window[d] -= window.box.offsets[d];
          }
          if (owner_rank == session_.rank()) {
            const Literal& value = (*LocalResults(owner))[i];
            if (writer) {
              CopyBox(value.raw(), value.shape().dims(), in_shard, window_bytes.data(), window.box.sizes, in_window,
                      common->sizes, element_size);
              continue;
            }
            piece.resize(static_cast<size_t>(common->num_elements() * element_size));
            CopyBox(value.raw(), value.shape().dims(), in_shard, piece.data(), common->sizes,
                    std::vector<int64_t>(common->sizes.size(), 0), common->sizes, element_size);
            session_.Send(0, piece_tag, piece, StrCat("sending part of output ", i, " to rank 0"));
            continue;
          }
          piece.resize(static_cast<size_t>(common->num_elements() * element_size));
          session_.Recv(owner_rank, piece_tag, piece, StrCat("receiving part of output ", i, " from rank ", owner_rank));
          CopyBox(piece.data(), common->sizes, std::vector<int64_t>(common->sizes.size(), 0), window_bytes.data(),
                  window.box.sizes, in_window, common->sizes, element_size);
        }
        if (writer)
          WriteAt(fd, path, window_bytes.data(), window.bytes,
                  static_cast<int64_t>(header.size()) + window.file_offset);
      }
      if (writer && ::close(fd) != 0)
        ThrowUserErrorAt(SourceLocation{path, 0, 0}, "closing the output failed (expected enough disk space)");
    }
    session_.Barrier("the barrier before committing the outputs");
    if (!writer) return;
    files_.Commit();
    if (options_.print_files) PrintLines(false);
  }

  void PrintLines(bool sharded) const {
    for (const std::string& line : ResultLines(plan_, options_.out_dir, sharded)) std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }

  void ReportMemory() const {
    struct rusage usage {};
    ::getrusage(RUSAGE_SELF, &usage);
    const double mib = 1024.0 * 1024.0;
    const double peak = static_cast<double>(usage.ru_maxrss) * 1024.0;
    const double arguments = static_cast<double>(plan_.ArgumentBytes() * options_.devices_per_rank);
    const double results = static_cast<double>(plan_.ResultBytes() * options_.devices_per_rank);
    std::fprintf(stderr,
                 "gspmd: rank %d: peak RSS %.1f MiB; own shards %.1f MiB (arguments %.1f MiB, results %.1f MiB, "
                 "%lld device(s))\n",
                 session_.rank(), peak / mib, (arguments + results) / mib, arguments / mib, results / mib,
                 static_cast<long long>(options_.devices_per_rank));
    std::fflush(stderr);
  }

  MpiSession& session_;
  const Module& module_;
  const SpmdPlan& plan_;
  std::span<const GlobalArgument> arguments_;
  const MpiRunOptions& options_;
  int64_t first_device_ = 0;
  std::vector<int64_t> devices_;
  std::vector<std::vector<Literal>> results_;
  PendingFiles files_;
};

}  // namespace

void WriteResultsOverMpi(MpiSession& session, const Module& module, const SpmdPlan& plan,
                         std::vector<std::vector<Literal>> results, const MpiRunOptions& options) {
  GSPMD_CHECK(results.size() == static_cast<size_t>(options.devices_per_rank), results.size(),
              " device results for ", options.devices_per_rank, " devices per rank");
  Runner runner(session, module, plan, {}, options);
  runner.Write(std::move(results));
}

int ComputeThreadsPerRank(const MpiSession& session) {
  cpu_set_t cpus;
  const int cores = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus)
                                                                   : static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores / std::max(1, session.local_ranks()));
}

int AgreeAndReportFailure(MpiSession& session, const std::string& phase, const std::string& my_error) {
  const MpiSession::AgreedFailure agreed = session.AgreeOnFailure(phase, my_error);
  if (agreed.failed_rank >= 0 && session.rank() == agreed.failed_rank) {
    const bool located = agreed.message.find(": error: ") != std::string::npos;
    std::fflush(stdout);
    std::fprintf(stderr, "gspmd: rank %d: %s%s\n", agreed.failed_rank, located ? "" : "error: ", agreed.message.c_str());
    std::fflush(stderr);
  }
  return agreed.failed_rank;
}

void LimitKernelThreadsToRankShare(const MpiSession& session) {
  if (std::getenv("OMP_NUM_THREADS") == nullptr) kernel::SetKernelThreadLimit(ComputeThreadsPerRank(session));
}

void RunSpmdOverMpi(MpiSession& session, const Module& module, const SpmdPlan& plan,
                    std::span<const GlobalArgument> arguments, const MpiRunOptions& options) {
  // The ranks on a machine share its cores: each kernel call uses at most this rank's share
  // (OpenMP teams spin at barriers, so oversubscribing them costs more than it gives), unless
  // the user chose a team size with OMP_NUM_THREADS.
  LimitKernelThreadsToRankShare(session);
  GSPMD_CHECK(plan.num_devices == session.size() * options.devices_per_rank, "the plan has ", plan.num_devices,
              " devices for ", session.size(), " ranks of ", options.devices_per_rank);
  Runner runner(session, module, plan, arguments, options);
  runner.Run();
}

}  // namespace gspmd
