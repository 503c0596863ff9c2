// The fuzz targets' bodies (fuzz_targets.h).
#include "fuzz_targets.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "api/pipeline.h"
#include "io/npy.h"
#include "support/diagnostic.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd::fuzz {
namespace {

[[noreturn]] void Fail(const std::string& what, std::string_view input) {
  std::fprintf(stderr, "fuzz target invariant broken: %s\ninput:\n%.*s\n", what.c_str(), static_cast<int>(input.size()),
               input.data());
  std::abort();
}

}  // namespace

void FuzzHloText(std::string_view text) {
  std::unique_ptr<Module> module;
  try {
    module = ParseModule(text, "fuzz.hlo");
  } catch (const UserError&) {
    return;
  }
  std::string printed = PrintModule(*module);
  std::unique_ptr<Module> reparsed;
  try {
    reparsed = ParseModule(printed, "printed.hlo");
  } catch (const UserError& error) {
    Fail(std::string("the printed module does not parse back: ") + error.what(), printed);
  }
  if (PrintModule(*reparsed) != printed) Fail("printing the reparsed module gives other text", printed);
}

void FuzzNpyBytes(const uint8_t* data, size_t size) {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/gspmd_fuzz_" + std::to_string(getpid()) +
           ".npy";
  }();
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) Fail("cannot write " + path, {});
  if (size > 0 && std::fwrite(data, 1, size, file) != size) Fail("cannot write " + path, {});
  std::fclose(file);
  try {
    ReadNpy(path);
  } catch (const UserError&) {
  }
  std::remove(path.c_str());
}

void FuzzPartitionText(std::string_view text) {
  std::unique_ptr<Module> module;
  try {
    module = ParseModule(text, "fuzz.hlo");
  } catch (const UserError&) {
    return;
  }
  if (module->num_partitions() > kMaxFuzzDevices) return;
  try {
    api::CompiledPartition result = api::PartitionGlobal(*module, "fuzz.hlo", 0);
    if (result.num_devices > kMaxFuzzDevices) return;
    PrintModule(*result.partitioned.module);
  } catch (const UserError&) {
  }
}

}  // namespace gspmd::fuzz
