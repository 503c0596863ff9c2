// Names of the saved outputs of a training step, index.json, and writing them.
#include "train/saved_outputs.h"

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "io/npy.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

bool IsFileNameCharacter(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '-';
}

// "Arg_0.1" stays, "params/w 1" -> "params_w_1"; "", "." and ".." (not names of their own) -> "".
std::string FileStem(const std::string& name) {
  std::string stem = name;
  for (char& c : stem)
    if (!IsFileNameCharacter(c)) c = '_';
  if (stem == "." || stem == "..") return "";
  return stem;
}

}  // namespace

std::vector<SavedOutput> SavedOutputNames(const StepSignature& signature, const std::vector<std::string>& metrics) {
  const int64_t count = static_cast<int64_t>(signature.outputs.size());
  std::vector<SavedOutput> saved(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) saved[i].output = i;
  for (const CarryPair& pair : signature.carry) {
    saved[pair.output].input = pair.input;
    saved[pair.output].name = signature.inputs[pair.input].name;
  }
  for (size_t i = 0; i < metrics.size() && i < saved.size(); ++i)
    if (saved[i].name.empty()) saved[i].name = metrics[i];
  std::set<std::string> taken = {"index.json"};
  for (SavedOutput& output : saved) {
    const std::string fallback = StrCat("out", output.output);
    if (output.name.empty()) output.name = fallback;
    std::string stem = FileStem(output.name);
    if (stem.empty()) stem = fallback;
    std::string file = stem + ".npy";
    for (int extra = 0; taken.count(file) > 0; ++extra)
      file = StrCat(stem, "_", output.output, extra == 0 ? "" : StrCat("_", extra), ".npy");
    taken.insert(file);
    output.file = file;
  }
  return saved;
}

std::string SavedOutputsIndexJson(const std::vector<SavedOutput>& saved, const std::vector<Shape>& shapes) {
  nlohmann::json outputs = nlohmann::json::array();
  for (const SavedOutput& output : saved) {
    nlohmann::json entry = {{"output", output.output}, {"file", output.file}, {"name", output.name}};
    entry["shape"] = static_cast<size_t>(output.output) < shapes.size()
                         ? nlohmann::json(shapes[output.output].ToString(false))
                         : nlohmann::json(nullptr);
    entry["input"] = output.input >= 0 ? nlohmann::json(output.input) : nlohmann::json(nullptr);
    outputs.push_back(std::move(entry));
  }
  return nlohmann::json{{"outputs", std::move(outputs)}}.dump(2) + "\n";
}

void WriteSavedOutputs(const std::string& dir, const std::vector<Literal>& outputs,
                       const std::vector<SavedOutput>& saved) {
  GSPMD_CHECK(outputs.size() == saved.size(), outputs.size(), " outputs but ", saved.size(), " names");
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error)
    ThrowUserErrorAt(SourceLocation{dir, 0, 0},
                     "cannot create the output directory: " + error.message() + " (expected a writable path)");
  std::vector<Shape> shapes;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string path = (std::filesystem::path(dir) / saved[i].file).string();
    if (!outputs[i].shape().IsArray())
      ThrowUserErrorAt(SourceLocation{path, 0, 0},
                       StrCat("output ", i, " has shape ", outputs[i].shape().ToString(false),
                              ", which a .npy file cannot hold (expected an array)"));
    WriteNpy(path, outputs[i]);
    shapes.push_back(outputs[i].shape());
  }
  WriteSavedOutputsIndex(dir, saved, shapes);
}

void WriteSavedOutputsIndex(const std::string& dir, const std::vector<SavedOutput>& saved,
                            const std::vector<Shape>& shapes) {
  const std::filesystem::path path = std::filesystem::path(dir) / "index.json";
  const std::filesystem::path temporary = std::filesystem::path(dir) / ".index.json.tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << SavedOutputsIndexJson(saved, shapes);
    if (!out) ThrowUserErrorAt(SourceLocation{path.string(), 0, 0}, "cannot write the file (expected a writable path)");
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error)
    ThrowUserErrorAt(SourceLocation{path.string(), 0, 0},
                     "cannot write the file: " + error.message() + " (expected a writable path)");
}

}  // namespace gspmd
