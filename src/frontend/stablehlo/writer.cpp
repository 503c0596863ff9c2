// Printing a Module as StableHLO text: the module, its functions, regions and value names
// (each opcode's syntax is in writer_ops.cpp).
#include "frontend/stablehlo/writer.h"

#include <map>

#include "frontend/stablehlo/types.h"
#include "frontend/stablehlo/writer_internal.h"
#include "partitioner/sdy_attributes.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace stablehlo {
namespace {

bool IsMultiResultCandidate(const Instruction& instruction) {
  if (instruction.opcode() == Opcode::kTopK) return instruction.largest;  // else written as a tuple
  const Opcode opcode = instruction.opcode();
  switch (opcode) {
    case Opcode::kSort: case Opcode::kReduce: case Opcode::kReduceWindow: case Opcode::kScatter:
    case Opcode::kRngBitGenerator: case Opcode::kCustomCall: case Opcode::kAllReduce:
      return true;
    default:
      return false;
  }
}

// key="value",key2={...} (an instruction's verbatim frontend attributes) as "key = \"value\"" parts.
std::vector<std::string> FrontendAttributeEntries(std::string_view text) {
  std::vector<std::string> entries;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eq = text.find('=', pos);
    if (eq == std::string_view::npos) break;
    std::string key(text.substr(pos, eq - pos));
    size_t start = eq + 1, end = start;
    std::string value;
    if (start < text.size() && text[start] == '"') {
      end = start + 1;
      while (end < text.size() && text[end] != '"') {
        if (text[end] == '\\' && end + 1 < text.size()) ++end;
        value += text[end++];
      }
      ++end;
    } else if (start < text.size() && text[start] == '{') {
      int depth = 0;
      for (end = start; end < text.size(); ++end) {
        if (text[end] == '{') ++depth;
        if (text[end] == '}' && --depth == 0) {
          ++end;
          break;
        }
      }
      value = std::string(text.substr(start, end - start));
    } else {
      end = text.find(',', start);
      if (end == std::string_view::npos) end = text.size();
      value = std::string(text.substr(start, end - start));
    }
    std::string quoted_key = key;
    for (char c : key)
      if (!IsIdChar(c)) quoted_key = QuoteText(key);
    entries.push_back(StrCat(quoted_key, " = ", QuoteText(value)));
    pos = end;
    while (pos < text.size() && (text[pos] == ',' || text[pos] == ' ')) ++pos;
  }
  return entries;
}

// op_name="..." source_file="..." source_line=N from metadata text.
std::string MetadataField(std::string_view metadata, std::string_view key) {
  std::string pattern = std::string(key) + "=";
  size_t pos = 0;
  while ((pos = metadata.find(pattern, pos)) != std::string_view::npos) {
    if (pos > 0 && metadata[pos - 1] != ' ') {
      pos += pattern.size();
      continue;
    }
    size_t start = pos + pattern.size();
    if (start < metadata.size() && metadata[start] == '"') {
      std::string value;
      for (size_t i = start + 1; i < metadata.size() && metadata[i] != '"'; ++i) {
        if (metadata[i] == '\\' && i + 1 < metadata.size()) ++i;
        value += metadata[i];
      }
      return value;
    }
    size_t end = metadata.find(' ', start);
    return std::string(metadata.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
  }
  return "";
}

std::string MeshText(const Mesh& mesh) {
  std::string text = "<[";
  for (size_t i = 0; i < mesh.axes.size(); ++i) text += StrCat(i ? ", " : "", QuoteText(mesh.axes[i].name), "=", mesh.axes[i].size);
  text += "]";
  if (!mesh.device_ids.empty()) text += ", device_ids=" + IntList(mesh.device_ids);
  return text + ">";
}

}  // namespace

std::string JoinText(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

std::string IntList(const std::vector<int64_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

std::string DenseArray(const std::vector<int64_t>& values) {
  std::string out = "array<i64";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : ": ") + std::to_string(values[i]);
  return out + ">";
}

std::string QuoteText(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string Indent(int indent) { return std::string(static_cast<size_t>(indent), ' '); }

std::string TypeList(const std::vector<Shape>& types) {
  std::vector<std::string> names;
  for (const Shape& type : types) names.push_back(MlirTypeName(type));
  return JoinText(names);
}

std::string FunctionTypeText(const std::vector<Shape>& inputs, const std::vector<Shape>& results) {
  std::string out = "(" + TypeList(inputs) + ") -> ";
  if (results.size() == 1 && !results[0].IsTuple()) return out + MlirTypeName(results[0]);
  return out + "(" + TypeList(results) + ")";
}

// ---------------- Names ----------------

std::string Writer::FreshName(std::string_view prefix) { return StrCat("%", prefix, next_value_++); }

std::string Writer::Ref(const Instruction* instruction) {
  auto it = names_.find(instruction);
  GSPMD_CHECK(it != names_.end(), "no StableHLO name for %", instruction->name());
  return it->second;
}

std::string Writer::Refs(const std::vector<Instruction*>& instructions) {
  std::vector<std::string> refs;
  for (const Instruction* instruction : instructions) refs.push_back(Ref(instruction));
  return JoinText(refs);
}

bool Writer::Flattens(const Instruction& instruction) {
  if (!instruction.shape().IsTuple()) return false;
  if (instruction.opcode() == Opcode::kCall) return ReturnsFlat(*instruction.to_apply());
  if (instruction.opcode() == Opcode::kConditional) return ReturnsFlat(*instruction.called_computations()[0]);
  return IsMultiResultCandidate(instruction);
}

bool Writer::ReturnsFlat(const Computation& computation) {
  const Instruction* root = computation.root();
  return root->opcode() == Opcode::kTuple || Flattens(*root);
}

int64_t Writer::ResultCount(const Instruction& instruction) {
  return Flattens(instruction) ? instruction.shape().tuple_size() : 1;
}

std::vector<std::string> Writer::ReturnedRefs(const Computation& computation, bool flatten_root) {
  const Instruction* root = computation.root();
  std::vector<std::string> refs;
  if (flatten_root && root->opcode() == Opcode::kTuple) {
    for (const Instruction* operand : root->operands()) refs.push_back(Ref(operand));
    return refs;
  }
  if (flatten_root && Flattens(*root)) {
    for (int64_t i = 0; i < root->shape().tuple_size(); ++i) refs.push_back(StrCat(multi_bases_.at(root), "#", i));
    return refs;
  }
  return {Ref(root)};
}

std::vector<Shape> Writer::ReturnedTypes(const Computation& computation, bool flatten_root) {
  const Instruction* root = computation.root();
  if (!flatten_root || !ReturnsFlat(computation)) return {root->shape()};
  return root->shape().tuple_shapes();
}

std::string Writer::FunctionName(const Computation& computation) { return function_names_.at(&computation); }

int64_t Writer::num_devices() const {
  return module_.Attribute("num_partitions").empty() ? 1 : module_.num_partitions();
}

// ---------------- Attributes ----------------

std::string Writer::AttrDict(const Instruction& instruction, const std::vector<std::string>& more) {
  std::vector<std::string> attrs = more;
  if (instruction.sharding()) attrs.push_back("mhlo.sharding = " + QuoteText(instruction.sharding()->ToString()));
  if (!instruction.frontend_attributes.empty())
    attrs.push_back("mhlo.frontend_attributes = {" + JoinText(FrontendAttributeEntries(instruction.frontend_attributes)) + "}");
  if (attrs.empty()) return "";
  return " {" + JoinText(attrs) + "}";
}

std::string Writer::Location(const Instruction& instruction) {
  if (!options_.locations || instruction.metadata.empty()) return "";
  std::string op_name = MetadataField(instruction.metadata, "op_name");
  std::string file = MetadataField(instruction.metadata, "source_file");
  std::string line = MetadataField(instruction.metadata, "source_line");
  std::string file_loc = file.empty() ? "" : StrCat(QuoteText(file), ":", line.empty() ? "0" : line, ":1");
  if (op_name.empty() && file_loc.empty()) return "";
  if (op_name.empty()) return " loc(" + file_loc + ")";
  if (file_loc.empty()) return " loc(" + QuoteText(op_name) + ")";
  return StrCat(" loc(", QuoteText(op_name), "(", file_loc, "))");
}

// ---------------- Regions, functions, the module ----------------

std::string Writer::WriteBody(const Computation& computation, int indent) {
  std::string out;
  for (const auto& owned : computation.instructions()) {
    const Instruction& instruction = *owned;
    if (instruction.opcode() == Opcode::kParameter) continue;
    if (instruction.opcode() == Opcode::kGetTupleElement && multi_bases_.count(instruction.operand(0))) {
      names_[&instruction] = StrCat(multi_bases_.at(instruction.operand(0)), "#", instruction.tuple_index);
      continue;
    }
    if (!Flattens(instruction)) {
      std::string name = FreshName();
      names_[&instruction] = name;
      out += WriteOp(instruction, name, indent);
      continue;
    }
    // An op with one result per tuple element: %5:2 = ..., its elements %5#0 and %5#1.
    const int64_t count = instruction.shape().tuple_size();
    std::string base = count == 0 ? "" : FreshName();
    multi_bases_[&instruction] = base;
    out += WriteOp(instruction, count <= 1 ? base : StrCat(base, ":", count), indent);
    bool whole_use = &instruction == computation.root();
    for (const Instruction* user : instruction.users()) whole_use = whole_use || user->opcode() != Opcode::kGetTupleElement;
    if (!whole_use) continue;
    std::string tuple = FreshName();
    std::vector<std::string> elements;
    for (int64_t i = 0; i < count; ++i) elements.push_back(StrCat(base, "#", i));
    out += StrCat(Indent(indent), tuple, " = stablehlo.tuple ", JoinText(elements), " : ", MlirTypeName(instruction.shape()), "\n");
    names_[&instruction] = tuple;
  }
  return out;
}

std::string Writer::Region(const Computation& computation, int indent, bool flatten_root,
                           const std::vector<std::string>& arg_names, const std::vector<std::string>* captured) {
  std::string header;
  if (captured != nullptr) {
    for (int64_t i = 0; i < computation.num_parameters(); ++i) names_[computation.parameter(i)] = captured->at(i);
  } else {
    std::vector<std::string> args;
    for (int64_t i = 0; i < computation.num_parameters(); ++i) {
      const Instruction* parameter = computation.parameter(i);
      std::string name = i < static_cast<int64_t>(arg_names.size()) ? arg_names[i] : FreshName("arg");
      names_[parameter] = name;
      args.push_back(name + ": " + MlirTypeName(parameter->shape()));
    }
    if (arg_names.empty()) header = StrCat(Indent(indent + 2), "^bb0(", JoinText(args), "):\n");
  }
  std::string body = WriteBody(computation, indent + 2);
  std::vector<std::string> returned = ReturnedRefs(computation, flatten_root);
  std::string terminator = StrCat(Indent(indent + 2), "stablehlo.return ", JoinText(returned), " : ",
                                  TypeList(ReturnedTypes(computation, flatten_root)), "\n");
  return "{\n" + header + body + terminator + Indent(indent) + "}";
}

void Writer::WriteFunction(const Computation& computation, bool is_entry, std::string& out) {
  names_.clear();
  multi_bases_.clear();
  next_value_ = 0;
  std::vector<std::string> args;
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    const Instruction* parameter = computation.parameter(i);
    std::string name = StrCat("%arg", i);
    names_[parameter] = name;
    args.push_back(name + ": " + MlirTypeName(parameter->shape()) + AttrDict(*parameter));
  }
  std::string body = WriteBody(computation, 4);
  std::vector<Shape> result_types = ReturnedTypes(computation, true);
  std::vector<std::string> results;
  const Instruction* root = computation.root();
  const bool flattened = ReturnsFlat(computation);
  for (size_t i = 0; i < result_types.size(); ++i) {
    std::string text = MlirTypeName(result_types[i]);
    std::optional<Sharding> sharding;
    if (root->sharding() && flattened && root->sharding()->IsTuple() && i < root->sharding()->tuple_elements().size())
      sharding = root->sharding()->tuple_elements()[i];
    if (root->sharding() && !flattened) sharding = *root->sharding();
    if (sharding) text += " {mhlo.sharding = " + QuoteText(sharding->ToString()) + "}";
    results.push_back(text);
  }
  out += StrCat("  func.func ", is_entry ? "public" : "private", " @", FunctionName(computation), "(", JoinText(args),
                ") -> (", JoinText(results), ") {\n");
  out += body;
  out += StrCat("    return ", JoinText(ReturnedRefs(computation, true)), " : ", TypeList(result_types), "\n  }\n");
}

std::string Writer::Write() {
  // Functions: the entry and every computation a call reaches; the rest are regions.
  std::vector<const Computation*> functions = {module_.entry()};
  function_names_[module_.entry()] = "main";
  std::map<std::string, int> used = {{"main", 1}};
  for (const auto& computation : module_.computations()) {
    for (const auto& instruction : computation->instructions()) {
      bool is_call = instruction->opcode() == Opcode::kCall || instruction->opcode() == Opcode::kCustomCall;
      if (!is_call) continue;
      for (const Computation* called : instruction->called_computations()) {
        if (function_names_.count(called)) continue;
        std::string name;
        for (char c : called->name()) name += IsValueNameChar(c) ? c : '_';
        if (used[name]++ > 0) name += StrCat("_", used[name]);
        function_names_[called] = name;
        functions.push_back(called);
      }
    }
  }
  std::string out = StrCat("module @", module_.name().empty() ? "main" : module_.name());
  std::vector<std::string> attrs;
  if (!module_.Attribute("num_partitions").empty()) attrs.push_back(StrCat("mhlo.num_partitions = ", module_.num_partitions(), " : i32"));
  if (!module_.Attribute("replica_count").empty()) attrs.push_back(StrCat("mhlo.num_replicas = ", module_.replica_count(), " : i32"));
  if (!attrs.empty()) out += " attributes {" + JoinText(attrs) + "}";
  out += " {\n";
  for (const auto& [name, mesh] : SdyMeshesOf(module_)) out += StrCat("  sdy.mesh @", name, " = ", MeshText(mesh), "\n");
  for (size_t i = 0; i < functions.size(); ++i) WriteFunction(*functions[i], i == 0, out);
  return out + "}\n";
}

}  // namespace stablehlo

std::string PrintStableHlo(const Module& module, const StableHloWriteOptions& options) {
  if (module.entry() == nullptr) GSPMD_USER_ERROR("module ", module.name(), " has no entry computation");
  return stablehlo::Writer(module, options).Write();
}

}  // namespace gspmd
