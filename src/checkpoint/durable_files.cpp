// Durable writes with POSIX open/write/fsync/rename; FNV-1a and CRC-32C.
#include "checkpoint/durable_files.h"

#include <algorithm>
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

namespace {

int Create(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) Fail(path, "cannot create the file", errno);
  return fd;
}

// Writes bytes at the end of `fd` (closing it on failure).
void WriteAll(int fd, const std::string& path, std::span<const uint8_t> bytes) {
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
}

}  // namespace

void WriteFileUnsynced(const std::string& path, std::span<const uint8_t> bytes) {
  const int fd = Create(path);
  WriteAll(fd, path, bytes);
  if (::close(fd) != 0) Fail(path, "cannot close the file", errno);
}

uint32_t WriteFileUnsyncedWithCrc32c(const std::string& path, std::span<const uint8_t> bytes) {
  constexpr size_t kPiece = 1 << 20;
  const int fd = Create(path);
  uint32_t crc = 0;
  for (size_t at = 0; at < bytes.size(); at += kPiece) {
    const std::span<const uint8_t> piece = bytes.subspan(at, std::min(kPiece, bytes.size() - at));
    crc = Crc32c(piece, crc);
    WriteAll(fd, path, piece);
  }
  if (::close(fd) != 0) Fail(path, "cannot close the file", errno);
  return crc;
}

void SyncFilesystem(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Fail(path, "cannot open it to sync its filesystem", errno);
  const int result = ::syncfs(fd);
  const int error = errno;
  ::close(fd);
  if (result != 0) Fail(path, "cannot sync the files written to disk", error);
}

void WriteFileDurably(const std::string& path, std::span<const uint8_t> bytes) {
  const int fd = Create(path);
  WriteAll(fd, path, bytes);
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

namespace {

constexpr uint32_t kCastagnoli = 0x82F63B78u;  // reflected polynomial

struct CrcTable {
  uint32_t entries[256];
  CrcTable() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kCastagnoli : c >> 1;
      entries[i] = c;
    }
  }
};

uint32_t Crc32cTable(const uint8_t* data, size_t size, uint32_t crc) {
  static const CrcTable table;
  for (size_t i = 0; i < size; ++i) crc = table.entries[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(const uint8_t* data, size_t size, uint32_t crc) {
  uint64_t c = crc;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, data + i, 8);
    c = __builtin_ia32_crc32di(c, word);
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  for (; i < size; ++i) c32 = __builtin_ia32_crc32qi(c32, data[i]);
  return c32;
}
#endif

}  // namespace

uint32_t Crc32c(std::span<const uint8_t> bytes, uint32_t crc) {
  crc = ~crc;
#if defined(__x86_64__)
  static const bool hardware = __builtin_cpu_supports("sse4.2");
  if (hardware) return ~Crc32cSse42(bytes.data(), bytes.size(), crc);
#endif
  return ~Crc32cTable(bytes.data(), bytes.size(), crc);
}

std::string Hex32(uint32_t value) {
  char text[9];
  std::snprintf(text, sizeof text, "%08x", static_cast<unsigned>(value));
  return text;
}

std::string HexDigest(uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace gspmd
