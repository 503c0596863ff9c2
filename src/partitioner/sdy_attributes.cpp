// A small reader for the Shardy attribute texts JAX leaves in frontend_attributes.
#include "partitioner/sdy_attributes.h"

#include <algorithm>
#include <cctype>

#include "sharding/mesh_parts.h"
#include "sharding/partition_spec.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

// Reads tokens of one attribute text; errors name `where` and the offending position.
class SdyReader {
 public:
  SdyReader(const std::string& text, const std::string& where) : text_(text), where_(where) {}

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
  }
  char Peek() {
    SkipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool TryConsume(const std::string& token) {
    SkipSpace();
    if (text_.compare(pos_, token.size(), token) != 0) return false;
    pos_ += token.size();
    return true;
  }
  void Expect(const std::string& token) {
    if (!TryConsume(token)) Fail(StrCat("expected '", token, "'"));
  }
  // "name" with \" escapes undone (the frontend attribute may still carry them).
  std::string QuotedString() {
    SkipSpace();
    if (TryConsume("\\\"")) return RestOfQuoted(true);
    if (!TryConsume("\"")) Fail("expected a quoted axis name");
    return RestOfQuoted(false);
  }
  int64_t Integer() {
    SkipSpace();
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (start == pos_) Fail("expected an integer");
    return std::stoll(text_.substr(start, pos_ - start));
  }
  std::string Identifier() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '_' || text_[pos_] == '.' || text_[pos_] == '-' ||
                                   text_[pos_] == '$'))
      ++pos_;
    if (start == pos_) Fail("expected a name");
    return text_.substr(start, pos_ - start);
  }
  [[noreturn]] void Fail(const std::string& what) {
    GSPMD_USER_ERROR(where_, ": bad Shardy attribute \"", text_, "\" at offset ", pos_, ": ", what);
  }

 private:
  std::string RestOfQuoted(bool escaped) {
    std::string value;
    while (pos_ < text_.size()) {
      if (escaped && text_.compare(pos_, 2, "\\\"") == 0) {
        pos_ += 2;
        return value;
      }
      if (!escaped && text_[pos_] == '"') {
        ++pos_;
        return value;
      }
      value += text_[pos_++];
    }
    Fail("unterminated quoted name");
  }

  const std::string& text_;
  const std::string& where_;
  size_t pos_ = 0;
};

// ["a"=2, "b"=4] [, device_ids=[...]] after "#sdy.mesh<" or "mesh<".
Mesh ReadMeshBody(SdyReader& reader) {
  Mesh mesh;
  reader.Expect("[");
  if (!reader.TryConsume("]")) {
    do {
      Mesh::Axis axis;
      axis.name = reader.QuotedString();
      reader.Expect("=");
      axis.size = reader.Integer();
      if (axis.size < 1) reader.Fail("mesh axis sizes must be positive");
      mesh.axes.push_back(std::move(axis));
    } while (reader.TryConsume(","));
    reader.Expect("]");
  }
  if (reader.TryConsume(",")) {
    reader.Expect("device_ids");
    reader.Expect("=");
    reader.Expect("[");
    if (!reader.TryConsume("]")) {
      do mesh.device_ids.push_back(reader.Integer());
      while (reader.TryConsume(","));
      reader.Expect("]");
    }
  }
  reader.Expect(">");
  if (!mesh.device_ids.empty() && !mesh.is_maximal() &&
      static_cast<int64_t>(mesh.device_ids.size()) != mesh.num_devices())
    reader.Fail("device_ids must list one id per device of the mesh");
  return mesh;
}

// "a" or "a":(2)4.
AxisRef ReadAxisRef(SdyReader& reader) {
  AxisRef ref;
  ref.name = reader.QuotedString();
  if (reader.TryConsume(":")) {
    reader.Expect("(");
    ref.pre_size = reader.Integer();
    reader.Expect(")");
    ref.size = reader.Integer();
  }
  return ref;
}

// {"a", "b":(2)2} or {"a", ?} or {?}; an optional priority p<N> follows.
std::vector<AxisRef> ReadAxisList(SdyReader& reader) {
  std::vector<AxisRef> axes;
  reader.Expect("{");
  if (!reader.TryConsume("}")) {
    do {
      if (reader.TryConsume("?")) continue;
      axes.push_back(ReadAxisRef(reader));
    } while (reader.TryConsume(","));
    reader.Expect("}");
  }
  if (reader.Peek() == 'p') {
    reader.Expect("p");
    reader.Integer();
  }
  return axes;
}

// <@mesh, [{...}, ...] [, replicated={...}] [, unreduced={...}]> (the leading '<' consumed).
NamedShardingView ReadShardingBody(SdyReader& reader, const std::map<std::string, Mesh>& meshes) {
  NamedShardingView view;
  view.form = NamedShardingView::Form::kDims;
  if (reader.TryConsume("@")) {
    std::string name = reader.Identifier();
    auto it = meshes.find(name);
    if (it == meshes.end()) reader.Fail(StrCat("unknown mesh @", name, " (not in xla.sdy.meshes)"));
    view.mesh = it->second;
  } else if (reader.TryConsume("#sdy.mesh<") || reader.TryConsume("mesh<")) {
    view.mesh = ReadMeshBody(reader);
  } else {
    reader.Fail("expected @mesh_name or an inline mesh<...>");
  }
  reader.Expect(",");
  reader.Expect("[");
  if (!reader.TryConsume("]")) {
    do view.dim_axes.push_back(ReadAxisList(reader));
    while (reader.TryConsume(","));
    reader.Expect("]");
  }
  while (reader.TryConsume(",")) {
    std::string key = reader.Identifier();
    reader.Expect("=");
    std::vector<AxisRef> axes = ReadAxisList(reader);
    if (key == "replicated") {
      view.replicated_axes = std::move(axes);
    } else if (key == "unreduced") {
      view.unreduced_axes = std::move(axes);
    } else {
      reader.Fail(StrCat("unknown sharding field ", key));
    }
  }
  reader.Expect(">");
  if (view.mesh.is_maximal()) view.form = NamedShardingView::Form::kMaximal;
  return view;
}

// The text of key=VALUE inside a frontend-attributes body (quoted, or a balanced {...}).
std::string FindAttributeValue(const std::string& text, const std::string& key) {
  size_t pos = 0;
  while ((pos = text.find(key, pos)) != std::string::npos) {
    bool starts_key = pos == 0 || text[pos - 1] == '{' || text[pos - 1] == ',' || text[pos - 1] == ' ';
    size_t eq = pos + key.size();
    while (eq < text.size() && text[eq] == ' ') ++eq;
    if (!starts_key || eq >= text.size() || text[eq] != '=') {
      pos += key.size();
      continue;
    }
    size_t start = eq + 1;
    while (start < text.size() && text[start] == ' ') ++start;
    if (start >= text.size()) return "";
    if (text[start] == '"') {
      std::string value;
      for (size_t i = start + 1; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) {
          value += text[++i];
          continue;
        }
        if (text[i] == '"') return value;
        value += text[i];
      }
      return value;
    }
    if (text[start] == '{') {
      int depth = 0;
      for (size_t i = start; i < text.size(); ++i) {
        if (text[i] == '{') ++depth;
        if (text[i] == '}' && --depth == 0) return text.substr(start, i - start + 1);
      }
      return text.substr(start);
    }
    size_t end = text.find(',', start);
    return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
  }
  return "";
}

}  // namespace

Mesh ParseSdyMesh(const std::string& text, const std::string& where) {
  SdyReader reader(text, where);
  if (!reader.TryConsume("#sdy.mesh<")) reader.Expect("mesh<");
  Mesh mesh = ReadMeshBody(reader);
  if (!reader.AtEnd()) reader.Fail("unexpected text after the mesh");
  return mesh;
}

std::map<std::string, Mesh> SdyMeshesOf(const Module& module) {
  std::map<std::string, Mesh> meshes;
  std::string attributes = module.Attribute("frontend_attributes");
  if (attributes.empty()) return meshes;
  std::string value = FindAttributeValue(attributes, "xla.sdy.meshes");
  if (value.empty()) return meshes;
  const std::string where = StrCat("module ", module.name(), " xla.sdy.meshes");
  SdyReader reader(value, where);
  reader.Expect("{");
  if (reader.TryConsume("}")) return meshes;
  do {
    std::string name = reader.Identifier();
    reader.Expect("=");
    if (!reader.TryConsume("#sdy.mesh<")) reader.Expect("mesh<");
    meshes[name] = ReadMeshBody(reader);
  } while (reader.TryConsume(","));
  reader.Expect("}");
  return meshes;
}

std::optional<Mesh> NamedMeshOf(const Module& module) {
  std::map<std::string, Mesh> meshes = SdyMeshesOf(module);
  std::erase_if(meshes, [](const auto& entry) { return entry.second.axes.empty(); });
  if (meshes.empty()) return std::nullopt;
  if (meshes.size() == 1) return meshes.begin()->second;
  std::map<std::string, int64_t> uses;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      for (const char* key : {"xla.sdy.sharding", "xla.sdy.in_shardings", "xla.sdy.out_shardings"}) {
        const std::string text = instruction->FrontendAttribute(key);
        for (const auto& [name, mesh] : meshes) {
          const std::string reference = "@" + name;
          for (size_t pos = text.find(reference); pos != std::string::npos; pos = text.find(reference, pos + 1)) {
            const size_t end = pos + reference.size();
            if (end == text.size() || !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_'))
              ++uses[name];
          }
        }
      }
    }
  }
  auto best = meshes.begin();
  for (auto it = meshes.begin(); it != meshes.end(); ++it)
    if (uses[it->first] > uses[best->first]) best = it;
  return best->second;
}

void SetNamedMesh(Module& module, const Mesh& mesh, const std::string& what) {
  const std::string flag = MeshFlagText(mesh);
  if (std::optional<Mesh> own = NamedMeshOf(module)) {
    if (own->axes == mesh.axes) return;
    GSPMD_USER_ERROR(what, " ", flag, " contradicts the program's own mesh ", own->ToString(),
                     " (expected the same axes and sizes, or no --mesh)");
  }
  int64_t devices = module.Attribute("num_partitions").empty() ? 0 : module.num_partitions();
  if (devices == 0) {
    for (const auto& computation : module.computations())
      for (const auto& instruction : computation->instructions())
        if (instruction->sharding()) devices = std::max(devices, instruction->sharding()->RequiredDeviceCount());
  }
  if (devices > 0 && mesh.num_devices() != devices)
    GSPMD_USER_ERROR(what, " ", flag, " has ", mesh.num_devices(), " devices but the program has ", devices,
                     " (expected axis sizes whose product is ", devices, ")");
  std::string body = "mesh = #sdy.mesh<[";
  for (size_t i = 0; i < mesh.axes.size(); ++i)
    body += StrCat(i ? ", " : "", "\"", mesh.axes[i].name, "\"=", mesh.axes[i].size);
  body += "]>";
  std::string attributes = module.Attribute("frontend_attributes");
  const std::string entry = "xla.sdy.meshes={" + body + "}";
  if (attributes.size() >= 2) {
    attributes.insert(attributes.size() - 1, attributes.size() > 2 ? "," + entry : entry);
  } else {
    attributes = "{" + entry + "}";
  }
  module.SetAttribute("frontend_attributes", attributes);
}

NamedShardingView ParseSdySharding(const std::string& text, const std::map<std::string, Mesh>& meshes,
                                   const std::string& where) {
  SdyReader reader(text, where);
  reader.Expect("#sdy.sharding<");
  NamedShardingView view = ReadShardingBody(reader, meshes);
  if (!reader.AtEnd()) reader.Fail("unexpected text after the sharding");
  return view;
}

std::vector<NamedShardingView> ParseSdyShardingPerValue(const std::string& text,
                                                        const std::map<std::string, Mesh>& meshes,
                                                        const std::string& where) {
  SdyReader reader(text, where);
  reader.Expect("#sdy.sharding_per_value<");
  reader.Expect("[");
  std::vector<NamedShardingView> views;
  if (!reader.TryConsume("]")) {
    do {
      reader.Expect("<");
      views.push_back(ReadShardingBody(reader, meshes));
    } while (reader.TryConsume(","));
    reader.Expect("]");
  }
  reader.Expect(">");
  if (!reader.AtEnd()) reader.Fail("unexpected text after the shardings");
  return views;
}

std::vector<std::string> ParseSdyManualAxes(const std::string& text, const std::string& where) {
  SdyReader reader(text, where);
  reader.Expect("#sdy<");
  reader.Expect("manual_axes");
  reader.Expect("{");
  std::vector<std::string> axes;
  if (!reader.TryConsume("}")) {
    do axes.push_back(reader.QuotedString());
    while (reader.TryConsume(","));
    reader.Expect("}");
  }
  reader.Expect(">");
  if (!reader.AtEnd()) reader.Fail("unexpected text after the manual axes");
  return axes;
}

Sharding ShardingFromSdyView(const NamedShardingView& view, const std::string& where) {
  std::vector<AxisRef> all;
  for (const auto& dim : view.dim_axes) all.insert(all.end(), dim.begin(), dim.end());
  for (const auto* list : {&view.replicated_axes, &view.unreduced_axes, &view.manual_axes})
    all.insert(all.end(), list->begin(), list->end());
  for (const AxisRef& ref : all) {
    std::string problem = CheckAxisRef(view.mesh, ref);
    if (!problem.empty()) GSPMD_USER_ERROR(where, ": sharding ", view.ToString(), ": ", problem);
  }
  if (FirstOverlappingAxisRef(view.mesh, all) >= 0)
    GSPMD_USER_ERROR(where, ": sharding ", view.ToString(), " uses a mesh axis twice");
  MeshParts parts;
  std::string problem = parts.Build(view.mesh, all);
  if (!problem.empty()) GSPMD_USER_ERROR(where, ": sharding ", view.ToString(), ": ", problem);
  return Sharding::FromNamedView(view);
}

}  // namespace gspmd
