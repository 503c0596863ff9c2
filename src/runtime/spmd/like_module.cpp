// OptionsFromLikeModule: shardings and global result shapes for running a per-device program,
// from the program it was partitioned from or from what the per-device module records.
#include "runtime/spmd/like_module.h"

#include <string_view>
#include <utility>

#include "ir/computation.h"
#include "support/diagnostic.h"
#include "text/scanner.h"
#include "text/shape_text.h"

namespace gspmd {
namespace {

void AppendLeafShapes(const Shape& shape, std::vector<Shape>& leaves) {
  if (!shape.IsTuple()) {
    leaves.push_back(Shape(shape.element_type(), shape.dims()));
    return;
  }
  for (const Shape& element : shape.tuple_shapes()) AppendLeafShapes(element, leaves);
}

const Computation& EntryOf(const Module& module) {
  if (module.entry() == nullptr) GSPMD_USER_ERROR("module ", module.name(), " has no entry computation");
  return *module.entry();
}

// One key=value entry of a frontend attribute list, with the value's raw text span.
struct AttributeEntry {
  std::string key;
  size_t value_begin = 0;
  size_t value_end = 0;
};

std::string Unquote(std::string_view text) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') return std::string(text);
  std::string out;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    if (text[i] == '\\' && i + 2 < text.size()) ++i;
    out += text[i];
  }
  return out;
}

std::string Quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The entries of `body`, the text between frontend_attributes={ and }.
std::vector<AttributeEntry> SplitAttributes(std::string_view body, const Module& module) {
  hlo_text::Scanner scanner(body, "frontend_attributes of module " + module.name());
  std::vector<AttributeEntry> entries;
  while (!scanner.AtEnd()) {
    AttributeEntry entry;
    if (scanner.Peek() == '"')
      entry.key = Unquote(scanner.ReadQuoted("a frontend attribute name"));
    else
      entry.key = std::string(scanner.ReadName("a frontend attribute name"));
    scanner.Expect('=', "'=' after a frontend attribute name");
    scanner.SkipSpace();
    entry.value_begin = scanner.pos();
    scanner.ReadRawValue("a frontend attribute value");
    entry.value_end = scanner.pos();
    entries.push_back(std::move(entry));
    if (!scanner.TryConsume(',') && !scanner.AtEnd()) scanner.ErrorExpected("',' between frontend attributes");
  }
  return entries;
}

// The module's frontend_attributes text without its outer braces ("" when absent).
std::string AttributeBody(const Module& module) {
  const std::string text = module.Attribute("frontend_attributes");
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return "";
  return text.substr(1, text.size() - 2);
}

std::vector<Shape> RecordedGlobalResultShapes(const Module& module) {
  const std::string text = ModuleFrontendAttribute(module, kGlobalResultShapesAttribute);
  if (text.empty()) return {};
  hlo_text::Scanner scanner(text, StrCat("the ", kGlobalResultShapesAttribute, " attribute of module ", module.name()));
  Shape shape = hlo_text::ParseShape(scanner);
  if (!scanner.AtEnd()) scanner.ErrorExpected("the end of the recorded global result shape");
  return LeafShapes(shape);
}

}  // namespace

std::vector<Shape> LeafShapes(const Shape& shape) {
  std::vector<Shape> leaves;
  AppendLeafShapes(shape, leaves);
  return leaves;
}

std::string ModuleFrontendAttribute(const Module& module, const std::string& key) {
  const std::string body = AttributeBody(module);
  for (const AttributeEntry& entry : SplitAttributes(body, module))
    if (entry.key == key)
      return Unquote(std::string_view(body).substr(entry.value_begin, entry.value_end - entry.value_begin));
  return "";
}

void SetModuleFrontendAttribute(Module& module, const std::string& key, const std::string& value) {
  const std::string body = AttributeBody(module);
  std::string kept;
  size_t previous_end = 0;
  for (const AttributeEntry& entry : SplitAttributes(body, module)) {
    // Keep every other entry verbatim (from the end of the previous entry's value).
    const size_t entry_begin = body.find_first_not_of(" ,\t\n", previous_end);
    previous_end = entry.value_end;
    if (entry.key == key) continue;
    if (!kept.empty()) kept += ",";
    kept += body.substr(entry_begin, entry.value_end - entry_begin);
  }
  if (!kept.empty()) kept += ",";
  kept += key + "=" + Quote(value);
  module.SetAttribute("frontend_attributes", "{" + kept + "}");
}

SpmdRunOptions OptionsFromLikeModule(const Module& per_device, const Module* like) {
  const Computation& entry = EntryOf(per_device);
  SpmdRunOptions options;
  const Computation* like_entry = like != nullptr ? &EntryOf(*like) : nullptr;
  if (like_entry != nullptr && like_entry->num_parameters() != entry.num_parameters())
    GSPMD_USER_ERROR("the like module ", like->name(), " has ", like_entry->num_parameters(),
                     " entry parameters but the per-device module ", per_device.name(), " has ",
                     entry.num_parameters());

  for (int64_t p = 0; p < entry.num_parameters(); ++p) {
    const Instruction& parameter = *entry.parameter(p);
    if (parameter.sharding().has_value()) {
      options.parameter_shardings.push_back(*parameter.sharding());
    } else if (like_entry != nullptr && like_entry->parameter(p)->sharding().has_value()) {
      options.parameter_shardings.push_back(*like_entry->parameter(p)->sharding());
    } else {
      options.parameter_shardings.push_back(Sharding::Replicated());
    }
  }

  const Instruction& root = *entry.root();
  if (root.sharding().has_value()) options.root_sharding = *root.sharding();
  else if (like_entry != nullptr && like_entry->root()->sharding().has_value())
    options.root_sharding = *like_entry->root()->sharding();

  const std::vector<Shape> local = LeafShapes(root.shape());
  if (like_entry != nullptr) {
    options.global_result_shapes = LeafShapes(like_entry->root()->shape());
    if (local.size() != options.global_result_shapes.size())
      GSPMD_USER_ERROR("the like module ", like->name(), " returns ", options.global_result_shapes.size(),
                       " arrays but the per-device module ", per_device.name(), " returns ", local.size());
    return options;
  }
  options.global_result_shapes = RecordedGlobalResultShapes(per_device);
  if (!options.global_result_shapes.empty() && options.global_result_shapes.size() != local.size())
    GSPMD_USER_ERROR("module ", per_device.name(), " records ", options.global_result_shapes.size(),
                     " global result shapes in ", kGlobalResultShapesAttribute, " but its entry returns ",
                     local.size(), " arrays");
  return options;
}

}  // namespace gspmd
