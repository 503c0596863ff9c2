// Durable writes with POSIX open/write/fsync/rename, and FNV-1a.
#include "checkpoint/durable_files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

[[noreturn]] void Fail(const std::string& path, const std::string& what, int error) {
  ThrowUserErrorAt(SourceLocation{path, 0, 0}, StrCat(what, " (", std::strerror(error), ")"), UserErrorKind::kResource);
}

}  // namespace

void WriteFileDurably(const std::string& path, std::span<const uint8_t> bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) Fail(path, "cannot create the file", errno);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : ENOSPC;
      ::close(fd);
      Fail(path, StrCat("cannot write the file (", done, " of ", bytes.size(), " bytes written)"), error);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    Fail(path, "cannot sync the file to disk", error);
  }
  if (::close(fd) != 0) Fail(path, "cannot close the file", errno);
}

void WriteFileDurably(const std::string& path, const std::string& text) {
  WriteFileDurably(path, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

void SyncDirectory(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) Fail(path, "cannot open the directory to sync it", errno);
  const int result = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (result != 0 && error != EINVAL) Fail(path, "cannot sync the directory to disk", error);
}

void RenameDurably(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) Fail(to, StrCat("cannot rename ", from, " to it"), errno);
  std::filesystem::path parent = std::filesystem::path(to).parent_path();
  SyncDirectory(parent.empty() ? "." : parent.string());
}

uint64_t Fnv1a64(std::span<const uint8_t> bytes, uint64_t hash) {
  for (uint8_t b : bytes) hash = (hash ^ b) * 1099511628211ull;
  return hash;
}

std::string HexDigest(uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace gspmd
