// --explain: the propagated module in XLA's text with a comment per instruction saying where
// its sharding came from.
#include <map>
#include <sstream>

#include "partitioner/sdy_attributes.h"
#include "propagation/propagation.h"
#include "sharding/partition_spec.h"
#include "text/printer.h"

namespace gspmd {
namespace {

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// "%name (a: f32[]) -> f32[] {" / "ENTRY %name ... {" / "name {": the computation's name.
std::string ComputationNameOf(std::string line) {
  if (StartsWith(line, "ENTRY ")) line = line.substr(6);
  if (StartsWith(line, "%")) line = line.substr(1);
  size_t end = line.find_first_of(" (");
  return line.substr(0, end);
}

// "  ROOT %x.1 = f32[] ..." -> "x.1" ("" when the line is not an instruction).
std::string InstructionNameOf(const std::string& line) {
  size_t start = line.find_first_not_of(' ');
  if (start == std::string::npos) return "";
  std::string rest = line.substr(start);
  if (StartsWith(rest, "ROOT ")) rest = rest.substr(5);
  if (StartsWith(rest, "%")) rest = rest.substr(1);
  size_t equals = rest.find(" = ");
  if (equals == std::string::npos) return "";
  return rest.substr(0, equals);
}

// "P('data', None); " for an array instruction whose sharding has a PartitionSpec over the
// module's named mesh ("" without names or without a spec). `by_name`: "computation/name".
std::string SpecPrefix(const std::map<std::string, const Instruction*>& by_name, const Mesh* mesh,
                       const std::string& key) {
  if (mesh == nullptr) return "";
  auto it = by_name.find(key);
  const Instruction* instruction = it == by_name.end() ? nullptr : it->second;
  if (instruction == nullptr || !instruction->sharding() || !instruction->shape().IsArray()) return "";
  std::optional<std::string> spec = PartitionSpecOf(*instruction->sharding(), instruction->shape().rank(), *mesh);
  return spec ? *spec + "; " : "";
}

}  // namespace

std::string DescribeOrigin(const ShardingOrigin& origin) {
  if (origin.user) return origin.rule.empty() ? "user annotation" : origin.rule;
  if (origin.source.empty()) return origin.rule.empty() ? "default (replicated)" : origin.rule;
  return "from %" + origin.source + " (user) via " + origin.rule;
}

std::string PrintModuleWithOrigins(const Module& module, const PropagationResult& result) {
  const std::optional<Mesh> mesh = NamedMeshOf(module);
  std::map<std::string, const Instruction*> by_name;
  if (mesh)
    for (const auto& owner : module.computations())
      for (const auto& instruction : owner->instructions())
        by_name[owner->name() + "/" + instruction->name()] = instruction.get();
  std::istringstream in(PrintModule(module));
  std::ostringstream out;
  std::string line;
  std::string computation;
  bool inside = false;
  while (std::getline(in, line)) {
    out << line;
    bool is_header = !line.empty() && line[0] != ' ' && line.back() == '{';
    if (is_header) {
      computation = ComputationNameOf(line);
      inside = true;
    } else if (line == "}") {
      inside = false;
    } else if (inside) {
      const std::string key = computation + "/" + InstructionNameOf(line);
      auto it = result.origins.find(key);
      if (it != result.origins.end())
        out << " /* " << SpecPrefix(by_name, mesh ? &*mesh : nullptr, key) << DescribeOrigin(it->second) << " */";
    }
    out << '\n';
  }
  return out.str();
}

}  // namespace gspmd
