// The StableHLO reader's entry points.
#include "frontend/stablehlo/reader.h"

#include <fstream>
#include <sstream>

#include "frontend/stablehlo/module_reader.h"

namespace gspmd {

std::unique_ptr<Module> ParseStableHlo(std::string_view text, const std::string& filename) {
  stablehlo::ModuleReader reader(text, filename);
  return reader.Read();
}

std::unique_ptr<Module> ParseStableHloFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) GSPMD_USER_ERROR(path, ": error: cannot read the file (expected a readable StableHLO text file)");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  return ParseStableHlo(text, path);
}

}  // namespace gspmd
