// api::Program: reading a program from a file or text (HLO or StableHLO), printing it, and
// fresh copies of its module for the passes that change one in place.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "api/error_kinds.h"
#include "api/gspmd.h"
#include "api/pipeline.h"
#include "frontend/stablehlo/reader.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd::api {
namespace {

Format Resolve(Format format, const std::string& name) {
  if (format != Format::kAuto) return format;
  return std::filesystem::path(name).extension() == ".mlir" ? Format::kStableHlo : Format::kHlo;
}

std::string ReadWholeFile(const std::string& path, Format format) {
  const char* what = format == Format::kStableHlo ? "a readable StableHLO text file" : "a readable HLO text file";
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    GSPMD_USER_ERROR(path, ": error: is a directory (expected ", what, ")");
  std::ifstream in(path, std::ios::binary);
  if (!in) GSPMD_USER_ERROR(path, ": error: cannot read the file (expected ", what, ")");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::unique_ptr<Module> ParseText(const std::string& text, const std::string& name, Format format) {
  return WithErrorKind(UserErrorKind::kParse, [&] {
    return format == Format::kStableHlo ? ParseStableHlo(text, name) : ParseModule(text, name);
  });
}

}  // namespace

struct Program::State {
  std::unique_ptr<Module> module;
  std::string name;
  // The text it was read from (HLO or StableHLO), read again for copies; empty for FromModule.
  std::string text;
  Format format = Format::kHlo;
};

Program::Program(std::shared_ptr<State> state) : state_(std::move(state)) {}

Program Program::Load(const std::string& path, Format format) {
  const Format resolved = Resolve(format, path);
  std::string text = ReadWholeFile(path, resolved);
  std::unique_ptr<Module> module = ParseText(text, path, resolved);
  return Program(std::make_shared<State>(State{std::move(module), path, std::move(text), resolved}));
}

Program Program::FromText(std::string text, const std::string& name, Format format) {
  const Format resolved = Resolve(format, name);
  std::unique_ptr<Module> module = ParseText(text, name, resolved);
  return Program(std::make_shared<State>(State{std::move(module), name, std::move(text), resolved}));
}

Program Program::FromModule(std::unique_ptr<Module> module, const std::string& name) {
  GSPMD_CHECK(module != nullptr, "Program::FromModule of no module");
  return Program(std::make_shared<State>(State{std::move(module), name, "", Format::kHlo}));
}

const Module& Program::module() const {
  GSPMD_CHECK(state_ != nullptr && state_->module != nullptr, "use of a Program whose module was taken");
  return *state_->module;
}

const std::string& Program::name() const {
  GSPMD_CHECK(state_ != nullptr, "use of a Program whose module was taken");
  return state_->name;
}

std::string Program::Text() const { return PrintModule(module()); }

std::unique_ptr<Module> Program::CopyModule() const {
  if (!state_->text.empty()) return ParseText(state_->text, state_->name, state_->format);
  return ParseText(PrintModule(module()), state_->name, Format::kHlo);
}

std::unique_ptr<Module> Program::TakeModule() && {
  if (state_.use_count() != 1) return CopyModule();
  std::unique_ptr<Module> module = std::move(state_->module);
  state_.reset();
  return module;
}

bool Program::IsPerDevice() const { return IsPerDeviceProgram(module()); }

bool Program::NeedsPropagation() const { return api::NeedsPropagation(module()); }

}  // namespace gspmd::api
