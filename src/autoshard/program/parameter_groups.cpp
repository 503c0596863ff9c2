// GroupParameters and CandidateSpecs: the decision variables of the program-level search.
#include "autoshard/program/parameter_groups.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>

#include "ir/computation.h"

namespace gspmd::autoshard {
namespace {

// "l12.w1" -> "l#.w1": runs of digits become '#'.
std::string WithoutNumbers(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) {
      out += name[i];
      continue;
    }
    out += '#';
    while (i + 1 < name.size() && std::isdigit(static_cast<unsigned char>(name[i + 1]))) ++i;
  }
  return out;
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string out;
  for (int64_t d : dims) out += std::to_string(d) + ",";
  return out;
}

// How `value` is used: each use as "opcode#operand:shape" (a dot's dims too), sorted, so that
// the same role in two layers reads the same. One level only: the last layer's users differ
// from the others' two levels down (the head instead of the next layer).
std::string UseSignature(const Instruction& value) {
  std::vector<std::string> uses;
  for (const Instruction* user : value.users()) {
    // A tuple (the step's outputs) says nothing of the role, and its positions differ per layer.
    if (user->opcode() == Opcode::kTuple) {
      uses.push_back("tuple");
      continue;
    }
    for (int64_t i = 0; i < user->operand_count(); ++i) {
      if (user->operand(i) != &value) continue;
      std::string use = std::string(OpcodeName(user->opcode())) + "#" + std::to_string(i) + ":" +
                        user->shape().ToString(false);
      if (user->opcode() == Opcode::kDot) {
        const DotDimensionNumbers& dims = user->dot_dims();
        use += "{" + DimsText(dims.lhs_batch_dims) + "|" + DimsText(dims.rhs_batch_dims) + "|" +
               DimsText(dims.lhs_contracting_dims) + "|" + DimsText(dims.rhs_contracting_dims) + "}";
      }
      uses.push_back(use);
    }
  }
  std::sort(uses.begin(), uses.end());
  uses.erase(std::unique(uses.begin(), uses.end()), uses.end());
  std::string out;
  for (const std::string& use : uses) out += use + ";";
  return out;
}

}  // namespace

std::vector<ParameterGroup> GroupParameters(const Module& module, const std::vector<int64_t>& searched) {
  const Computation& entry = *module.entry();
  std::map<std::string, size_t> group_of_key;
  std::vector<ParameterGroup> groups;
  for (int64_t number : searched) {
    const Instruction& parameter = *entry.parameter(number);
    if (!parameter.shape().IsArray()) continue;
    const std::string base = WithoutNumbers(parameter.name());
    const std::string key = base + "|" + parameter.shape().ToString(false) + "|" + UseSignature(parameter);
    auto [it, fresh] = group_of_key.emplace(key, groups.size());
    if (fresh) {
      ParameterGroup group;
      group.dims = parameter.shape().dims();
      groups.push_back(group);
    }
    ParameterGroup& group = groups[it->second];
    group.parameters.push_back(number);
    group.bytes += parameter.shape().byte_size();
  }
  // Leaders: a parameter named like the end of another one's name after a '.', of the same dims.
  std::map<std::string, int> group_of_name;
  for (size_t g = 0; g < groups.size(); ++g)
    for (int64_t number : groups[g].parameters) group_of_name[entry.parameter(number)->name()] = static_cast<int>(g);
  for (size_t g = 0; g < groups.size(); ++g) {
    ParameterGroup& group = groups[g];
    const Instruction& first = *entry.parameter(group.parameters[0]);
    group.role = first.FrontendAttribute("gspmd.role");
    const std::string& name = first.name();
    for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1)) {
      auto it = group_of_name.find(name.substr(dot + 1));
      if (it == group_of_name.end() || it->second == static_cast<int>(g) || groups[it->second].dims != group.dims) continue;
      group.leader = it->second;
      break;
    }
  }
  for (ParameterGroup& group : groups) {
    group.label = entry.parameter(group.parameters[0])->name();
    if (group.parameters.size() > 1) group.label += " x" + std::to_string(group.parameters.size());
  }
  return groups;
}

std::vector<PartitionSpec> CandidateSpecs(const std::vector<int64_t>& dims, const Mesh& mesh) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  const size_t axes = mesh.axes.size();
  std::vector<PartitionSpec> out;
  // target[a] in [-1, rank): the dim axis a splits (-1: none); counted like an odometer whose
  // first axis turns slowest, so that the replicated spec comes first.
  std::vector<int64_t> target(axes, -1);
  while (true) {
    PartitionSpec spec(static_cast<size_t>(rank));
    std::vector<int64_t> ways(static_cast<size_t>(rank), 1);
    for (size_t a = 0; a < axes; ++a) {
      if (target[a] < 0) continue;
      spec[target[a]].push_back(mesh.axes[a].name);
      ways[target[a]] *= mesh.axes[a].size;
    }
    bool even = true;
    for (int64_t d = 0; d < rank; ++d) even = even && dims[d] % ways[d] == 0;
    if (even) {
      while (!spec.empty() && spec.back().empty()) spec.pop_back();
      out.push_back(std::move(spec));
    }
    size_t a = axes;
    while (a > 0) {
      --a;
      // An axis of size 1 splits nothing: it stays unused (no duplicate candidates).
      if (mesh.axes[a].size > 1 && ++target[a] < rank) break;
      target[a] = -1;
      if (a == 0) return out;
    }
    if (axes == 0) return out;
  }
}

}  // namespace gspmd::autoshard
