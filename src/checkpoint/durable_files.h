// Files that survive a crash once written: write-then-fsync, fsync of a directory (so a
// rename or a new entry in it is on disk), and the CRC-32C a checkpoint records for every file
// it writes (FNV-1a for short texts: program fingerprints).
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace gspmd {

// Creates (or replaces) `path` with `bytes` and fsyncs it before returning. Failures (a full
// disk, no permission) are UserErrors "PATH: error: cannot write (REASON)" of kind kResource.
void WriteFileDurably(const std::string& path, std::span<const uint8_t> bytes);
void WriteFileDurably(const std::string& path, const std::string& text);
// Writes without the fsync, for a writer of many files who then calls SyncFilesystem once
// (a checkpoint's hundreds of small files cost one flush, not a journal commit each).
void WriteFileUnsynced(const std::string& path, std::span<const uint8_t> bytes);
// The same, returning Crc32c(bytes) computed piece by piece just before each piece is written,
// while it is in the cache (one pass over memory instead of two).
uint32_t WriteFileUnsyncedWithCrc32c(const std::string& path, std::span<const uint8_t> bytes);
// syncfs(2) of the filesystem holding `path`: every file and directory entry written on it
// so far (by this machine) is on disk when it returns; errors are UserErrors naming `path`.
void SyncFilesystem(const std::string& path);

// fsyncs the directory `path` (its entries: files created or renamed in it).
void SyncDirectory(const std::string& path);

// Renames `from` to `to` (same filesystem) and fsyncs the parent of `to`.
void RenameDurably(const std::string& from, const std::string& to);

// FNV-1a, 64 bits, of `bytes`; printed as 16 lowercase hex digits.
uint64_t Fnv1a64(std::span<const uint8_t> bytes, uint64_t hash = 14695981039346656037ull);
std::string HexDigest(uint64_t hash);

// CRC-32C (Castagnoli, as iSCSI and TensorStore use it): the SSE4.2 instruction where the CPU
// has it (~8 bytes a cycle), else a table. Crc32c("123456789") == 0xe3069283. `crc` continues
// an earlier call's result.
uint32_t Crc32c(std::span<const uint8_t> bytes, uint32_t crc = 0);
std::string Hex32(uint32_t value);  // 8 lowercase hex digits

}  // namespace gspmd
