// api::Program: reading a program from a file or text (HLO or StableHLO), printing it, and
// fresh copies of its module for the passes that change one in place.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <system_error>

#include "api/error_kinds.h"
#include "api/gspmd.h"
#include "api/pipeline.h"
#include "frontend/stablehlo/reader.h"
#include "partitioner/sdy_attributes.h"
#include "sharding/partition_spec.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd::api {
namespace {

// Whether text starts as MLIR does (`module @jit_f ...`, `func.func`, `#loc = ...`, the generic
// `"builtin.module"`), after blank lines and `//` comments. HLO text starts with `HloModule`.
bool StartsLikeMlir(std::string_view text) {
  size_t at = 0;
  while (at < text.size()) {
    at = text.find_first_not_of(" \t\r\n", at);
    if (at == std::string_view::npos) return false;
    if (text.substr(at, 2) != "//") break;
    at = text.find('\n', at);
  }
  if (at >= text.size()) return false;
  const std::string_view rest = text.substr(at);
  return rest.starts_with("module") || rest.starts_with("func.func") || rest.starts_with("#") ||
         rest.starts_with("\"builtin.module\"");
}

// kAuto: ".mlir" is StableHLO, and so is text that starts like MLIR whatever its file is called
// (JAX's lower().as_text() saved as .txt); the rest is HLO text.
Format Resolve(Format format, const std::string& name, std::string_view text) {
  if (format != Format::kAuto) return format;
  if (std::filesystem::path(name).extension() == ".mlir") return Format::kStableHlo;
  return StartsLikeMlir(text) ? Format::kStableHlo : Format::kHlo;
}

// What ReadWholeFile says it expected, before the text is read: by the name alone.
Format GuessByName(Format format, const std::string& name) {
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

// MLIR that was not recognised as such (a `stablehlo.` op below some other first line).
bool MentionsMlir(std::string_view text) {
  return text.find("stablehlo.") != std::string_view::npos || text.find("func.func") != std::string_view::npos;
}

std::unique_ptr<Module> ParseText(const std::string& text, const std::string& name, Format format) {
  return WithErrorKind(UserErrorKind::kParse, [&] {
    if (format == Format::kStableHlo) return ParseStableHlo(text, name);
    try {
      return ParseModule(text, name);
    } catch (const UserError& error) {
      if (!MentionsMlir(text)) throw;
      throw error.Reworded(StrCat(error.what(), " (the text looks like MLIR (StableHLO), not HLO: name the file .mlir)"));
    }
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
  std::string text = ReadWholeFile(path, GuessByName(format, path));
  const Format resolved = Resolve(format, path, text);
  std::unique_ptr<Module> module = ParseText(text, path, resolved);
  return Program(std::make_shared<State>(State{std::move(module), path, std::move(text), resolved}));
}

Program Program::FromText(std::string text, const std::string& name, Format format) {
  const Format resolved = Resolve(format, name, text);
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

bool Program::IsPerDevice() const { return per_device_.value_or(IsPerDeviceProgram(module())); }

bool Program::NeedsPropagation() const { return api::NeedsPropagation(module()); }

Format Program::format() const {
  GSPMD_CHECK(state_ != nullptr, "use of a Program whose module was taken");
  return state_->format;
}

Program Program::WithMesh(const std::string& mesh, const std::string& command) const {
  if (mesh.empty()) return *this;
  const std::string what = StrCat("gspmd ", command, ": error: --mesh");
  const Mesh named = ParseMeshFlag(mesh, what);
  if (std::optional<Mesh> own = NamedMeshOf(module()); own && own->axes == named.axes) return *this;
  std::unique_ptr<Module> copy = CopyModule();
  WithErrorKind(UserErrorKind::kSharding, [&] { SetNamedMesh(*copy, named, what); });
  Program named_program(std::make_shared<State>(State{std::move(copy), name(), "", format()}));
  named_program.per_device_ = per_device_;
  return named_program;
}

}  // namespace gspmd::api
