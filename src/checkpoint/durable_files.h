// Files that survive a crash once written: write-then-fsync, fsync of a directory (so a
// rename or a new entry in it is on disk), and the FNV-1a 64-bit checksum a checkpoint records
// for every file it writes.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace gspmd {

// Creates (or replaces) `path` with `bytes` and fsyncs it before returning. Failures (a full
// disk, no permission) are UserErrors "PATH: error: cannot write (REASON)" of kind kResource.
void WriteFileDurably(const std::string& path, std::span<const uint8_t> bytes);
void WriteFileDurably(const std::string& path, const std::string& text);

// fsyncs the directory `path` (its entries: files created or renamed in it).
void SyncDirectory(const std::string& path);

// Renames `from` to `to` (same filesystem) and fsyncs the parent of `to`.
void RenameDurably(const std::string& from, const std::string& to);

// FNV-1a, 64 bits, of `bytes`; printed as 16 lowercase hex digits.
uint64_t Fnv1a64(std::span<const uint8_t> bytes, uint64_t hash = 14695981039346656037ull);
std::string HexDigest(uint64_t hash);

}  // namespace gspmd
