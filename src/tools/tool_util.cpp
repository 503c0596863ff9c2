// Helpers shared by the CLI subcommands: writing text, reading --devices, the boundary options
// (reading inputs and checking them live in api/cli_files.cpp).
#include "tools/tool_util.h"

#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "support/diagnostic.h"

namespace gspmd::tools {

void WriteText(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  // Written beside the target and renamed into place, so a failure leaves no partial file.
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary);
    if (out) out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (out) out.close();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      ThrowUserErrorAt(SourceLocation{path, 0, 0}, "cannot write the output file (expected a writable path)");
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    ThrowUserErrorAt(SourceLocation{path, 0, 0}, "cannot write the output file (expected a writable path)");
  }
}

int64_t ParseDeviceCount(const std::string& text, const std::string& command) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  const bool is_whole_number = error == std::errc() && ptr == end;
  if (!is_whole_number || value < 1 || value > kMaxDevices)
    GSPMD_USER_ERROR("gspmd ", command, ": error: --devices '", text,
                     "' is not a valid device count (expected an integer from 1 to ", kMaxDevices, ")");
  return value;
}

void AddBoundaryOptions(CLI::App& command, BoundaryFlags& flags) {
  command
      .add_option("--propagate-to-parameters", flags.to_parameters,
                  "whether propagation may choose the entry parameters' shardings: true, false, or one value per "
                  "parameter (default: propagate into unannotated parameters, keep annotated ones)")
      ->type_name("BOOL[,BOOL...]");
  command
      .add_option("--propagate-to-outputs", flags.to_outputs,
                  "whether propagation may choose the result's shardings: true, false, or one value per result "
                  "element (default: propagate into unannotated results, keep annotated ones)")
      ->type_name("BOOL[,BOOL...]");
}

}  // namespace gspmd::tools
