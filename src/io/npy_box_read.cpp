// ReadNpyBox: reads one box of a .npy file with pread, merging nearby short runs into one read
// through a bounded buffer so that a column slice does not cost one system call per element.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "io/npy.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// Runs at least this long are read straight into their destination.
constexpr int64_t kDirectReadBytes = 256 * 1024;
// Shorter runs are gathered into one read of at most this many bytes...
constexpr int64_t kMergeWindowBytes = 4 * 1024 * 1024;
// ...as long as the gap to the next run is at most this (reading the gap is cheaper than a seek).
constexpr int64_t kMaxMergeGapBytes = 64 * 1024;

[[noreturn]] void Fail(const std::string& path, const std::string& message) {
  ThrowUserErrorAt(SourceLocation{path, 0, 0}, message);
}

class FileDescriptor {
 public:
  explicit FileDescriptor(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) Fail(path, std::string("cannot open file: ") + std::strerror(errno) + " (expected a readable .npy file)");
  }
  ~FileDescriptor() { ::close(fd_); }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

void ReadAt(int fd, const std::string& path, uint8_t* dst, int64_t size, int64_t offset) {
  while (size > 0) {
    const ssize_t got = ::pread(fd, dst, static_cast<size_t>(std::min<int64_t>(size, 1 << 30)), offset);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      Fail(path, got == 0 ? "file ended early (was it changed while being read?)"
                          : std::string("read failed: ") + std::strerror(errno));
    dst += got;
    size -= got;
    offset += got;
  }
}

struct Run {
  int64_t file_offset = 0;  // bytes
  uint8_t* dst = nullptr;
  int64_t bytes = 0;
};

}  // namespace

void ReadNpyBox(const std::string& path, const NpyHeader& header, const Box& box, uint8_t* dst,
                const std::vector<int64_t>& dst_dims, const std::vector<int64_t>& dst_offsets) {
  GSPMD_CHECK(box.offsets.size() == header.dims.size(), "box rank ", box.offsets.size(), " for a rank-",
              header.dims.size(), " array");
  if (box.num_elements() == 0) return;
  const int64_t element_size = ElementByteSize(header.type);
  FileDescriptor file(path);
  std::vector<uint8_t> window;
  std::vector<Run> pending;  // short runs gathered for one read
  auto flush = [&] {
    if (pending.empty()) return;
    const int64_t begin = pending.front().file_offset;
    const int64_t end = pending.back().file_offset + pending.back().bytes;
    window.resize(static_cast<size_t>(end - begin));
    ReadAt(file.get(), path, window.data(), end - begin, begin);
    for (const Run& run : pending) {
      std::memcpy(run.dst, window.data() + (run.file_offset - begin), static_cast<size_t>(run.bytes));
      NormalizeNpyElements(header, run.dst, run.bytes / element_size);
    }
    pending.clear();
  };
  ForEachBoxRun(header.dims, box.offsets, dst_dims, dst_offsets, box.sizes,
                [&](int64_t src_element, int64_t dst_element, int64_t elements) {
                  const Run run{header.data_offset + src_element * element_size, dst + dst_element * element_size,
                                elements * element_size};
                  if (run.bytes >= kDirectReadBytes) {
                    flush();
                    ReadAt(file.get(), path, run.dst, run.bytes, run.file_offset);
                    NormalizeNpyElements(header, run.dst, elements);
                    return;
                  }
                  if (!pending.empty()) {
                    const int64_t begin = pending.front().file_offset;
                    const int64_t end = pending.back().file_offset + pending.back().bytes;
                    if (run.file_offset - end > kMaxMergeGapBytes ||
                        run.file_offset + run.bytes - begin > kMergeWindowBytes)
                      flush();
                  }
                  pending.push_back(run);
                });
  flush();
}

}  // namespace gspmd
