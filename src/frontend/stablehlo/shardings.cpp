// Sharding attributes of StableHLO text: GSPMD strings, Shardy attributes, frontend attributes.
#include "frontend/stablehlo/shardings.h"

#include "ir/tuple_sharding.h"
#include "ir/verifier.h"
#include "partitioner/sdy_attributes.h"
#include "sharding/sharding_text.h"

namespace gspmd::stablehlo {
namespace {

std::string Escape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (char c : text) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return escaped;
}

std::vector<const Shape*> Leaves(const Shape& shape) {
  if (!shape.IsTuple()) return {&shape};
  std::vector<const Shape*> leaves;
  for (const Shape& element : shape.tuple_shapes())
    for (const Shape* leaf : Leaves(element)) leaves.push_back(leaf);
  return leaves;
}

// Checks Shardy views for the leaves of `shape`; Shardy's own errors become errors at `pos`.
void CheckSdyViews(ModuleReader& reader, const std::string& text, size_t pos, const Shape& shape, bool per_value) {
  std::vector<NamedShardingView> views;
  try {
    if (per_value) {
      views = ParseSdyShardingPerValue(text, reader.meshes(), "sharding");
    } else {
      views.push_back(ParseSdySharding(text, reader.meshes(), "sharding"));
    }
  } catch (const UserError& error) {
    reader.Error(pos, error.what());
  }
  std::vector<const Shape*> leaves = Leaves(shape);
  if (!per_value && leaves.size() != 1) leaves = {&shape};
  if (views.size() != leaves.size())
    reader.Error(pos, StrCat("the Shardy sharding lists ", views.size(), " shardings for ", leaves.size(),
                             " values (expected one per result)"));
  for (size_t i = 0; i < views.size(); ++i) {
    const Shape& leaf = *leaves[i];
    if (!leaf.IsArray()) continue;
    if (views[i].form == NamedShardingView::Form::kDims && static_cast<int64_t>(views[i].dim_axes.size()) != leaf.rank())
      reader.Error(pos, StrCat("the Shardy sharding of value ", i, " has ", views[i].dim_axes.size(),
                               " dimension shardings but the value is ", leaf.ToString(false), " (rank ", leaf.rank(), ")"));
    try {
      ShardingFromSdyView(views[i], "sharding");
    } catch (const UserError& error) {
      reader.Error(pos, error.what());
    }
  }
}

}  // namespace

Sharding GspmdSharding(ModuleReader& reader, const Attr& attr, const Shape& shape) {
  const std::string& text = AttrString(reader.cursor(), attr, "mhlo.sharding");
  if (text.empty()) return Sharding::Replicated();
  if (text[0] != '{')
    reader.Error(attr.pos, "mhlo.sharding is not in XLA's text form (a serialized OpSharding proto?): expected "
                           "text such as \"{devices=[2,1]<=[2]}\"");
  Sharding sharding;
  auto cached = reader.sharding_cache().find(text);
  if (cached != reader.sharding_cache().end()) {
    sharding = cached->second;
  } else try {
    sharding = ParseSharding(text);
    reader.sharding_cache().emplace(text, sharding);
  } catch (const ShardingSyntaxError& error) {
    reader.Error(attr.pos, StrCat("bad mhlo.sharding \"", text, "\" at offset ", error.offset, ": ", error.what()));
  } catch (const std::exception& error) {
    reader.Error(attr.pos, StrCat("bad mhlo.sharding \"", text, "\": ", error.what()));
  }
  // XLA's text lists a tuple sharding per leaf; the IR nests it like the shape.
  std::optional<Sharding> nested = NestTupleSharding(sharding, shape);
  if (!nested)
    reader.Error(attr.pos, StrCat("mhlo.sharding \"", text, "\" has ", FlattenTupleSharding(sharding).tuple_elements().size(),
                                  " shardings for the ", CountShapeLeaves(shape), " values of ", shape.ToString(false)));
  sharding = std::move(*nested);
  std::string problem = CheckSharding(sharding, shape, 0);
  if (!problem.empty()) reader.Error(attr.pos, StrCat("mhlo.sharding \"", text, "\" does not fit ", shape.ToString(false), ": ", problem));
  return sharding;
}

std::string SdyShardingText(ModuleReader& reader, const Attr& attr, const Shape& shape) {
  if (attr.kind != Attr::Kind::kDialect || (attr.str != "sdy.sharding" && attr.str != "sdy.sharding_per_value"))
    reader.Error(attr.pos, "sdy.sharding: expected #sdy.sharding<...> or #sdy.sharding_per_value<...>");
  std::string text = StrCat("#", attr.str, "<", attr.body, ">");
  CheckSdyViews(reader, text, attr.pos, shape, attr.str == "sdy.sharding_per_value");
  return text;
}

std::string SdyStrippedShardingText(ModuleReader& reader, std::string_view stripped, size_t pos, const Shape& shape) {
  std::string text = StrCat("#sdy.sharding", stripped);
  CheckSdyViews(reader, text, pos, shape, /*per_value=*/false);
  return text;
}

void AddFrontendAttribute(Instruction& instruction, std::string_view key, std::string_view value) {
  std::string& text = instruction.frontend_attributes;
  if (!text.empty()) text += ',';
  text += StrCat(key, "=\"", Escape(value), "\"");
}

std::string FrontendAttributesText(ModuleReader& reader, const Attr& dict) {
  if (dict.kind != Attr::Kind::kDict) reader.Error(dict.pos, "mhlo.frontend_attributes: expected a dictionary {key = \"value\"}");
  std::string text;
  for (const NamedAttr& field : dict.fields) {
    if (!text.empty()) text += ',';
    std::string value;
    if (field.value.kind == Attr::Kind::kString) {
      value = field.value.str;
    } else if (field.value.kind == Attr::Kind::kInt) {
      value = std::to_string(field.value.integer);
    } else if (field.value.kind == Attr::Kind::kBool) {
      value = field.value.boolean ? "true" : "false";
    } else {
      reader.Error(field.pos, StrCat("frontend attribute ", field.name, ": expected a string value"));
    }
    text += StrCat(field.name, "=\"", Escape(value), "\"");
  }
  return text;
}

void AddFrontendAttributes(ModuleReader& reader, Instruction& instruction, const Attr& dict) {
  std::string text = FrontendAttributesText(reader, dict);
  if (text.empty()) return;
  if (!instruction.frontend_attributes.empty()) instruction.frontend_attributes += ',';
  instruction.frontend_attributes += text;
}

}  // namespace gspmd::stablehlo
