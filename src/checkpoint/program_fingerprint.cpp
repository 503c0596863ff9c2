// Program fingerprints: the printed module with its layout removed, hashed.
#include "checkpoint/program_fingerprint.h"

#include <span>

#include "checkpoint/durable_files.h"
#include "text/printer.h"

namespace gspmd {
namespace {

// Removes every `prefix` followed by a balanced {...} (prefix ends with '{').
std::string RemoveBraced(const std::string& text, const std::string& prefix) {
  std::string out;
  size_t at = 0;
  while (true) {
    const size_t found = text.find(prefix, at);
    if (found == std::string::npos) break;
    out.append(text, at, found - at);
    size_t i = found + prefix.size();
    int depth = 1;
    for (; i < text.size() && depth > 0; ++i) depth += text[i] == '{' ? 1 : text[i] == '}' ? -1 : 0;
    at = i;
  }
  out.append(text, at, std::string::npos);
  return out;
}

// Removes every `prefix` and what follows it up to (not including) a character in `stop`.
std::string RemoveUntil(const std::string& text, const std::string& prefix, const std::string& stop) {
  std::string out;
  size_t at = 0;
  while (true) {
    const size_t found = text.find(prefix, at);
    if (found == std::string::npos) break;
    out.append(text, at, found - at);
    at = text.find_first_of(stop, found + prefix.size());
    if (at == std::string::npos) return out;
  }
  out.append(text, at, std::string::npos);
  return out;
}

}  // namespace

std::string LayoutFreeText(const Module& module) {
  std::string text = RemoveBraced(PrintModule(module), ", sharding={");
  text = RemoveUntil(text, ", num_partitions=", ",\n");
  text = RemoveUntil(text, "gspmd.config=\"", "\"");
  return text;
}

std::string ProgramFingerprint(const Module& module) {
  const std::string text = LayoutFreeText(module);
  return HexDigest(Fnv1a64(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size())));
}

}  // namespace gspmd
