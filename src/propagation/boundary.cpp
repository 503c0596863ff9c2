// Boundary policies for propagation: parsing the per-leaf flags, reading XLA's module
// attributes, and the even-split rule for propagated parameters and results.
#include "propagation/boundary.h"

#include <algorithm>
#include <cctype>

#include "propagation/control_flow.h"
#include "support/diagnostic.h"

namespace gspmd::propagation {
namespace {

std::string Trimmed(const std::string& text) {
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

// Expands `flags` (one for all, or one per group) over groups of the given leaf counts.
std::vector<std::vector<BoundaryPolicy>> PerLeaf(const std::vector<bool>& flags,
                                                 const std::vector<int64_t>& leaves_per_group) {
  std::vector<std::vector<BoundaryPolicy>> policies;
  for (size_t g = 0; g < leaves_per_group.size(); ++g) {
    BoundaryPolicy policy = BoundaryPolicy::kUnannotated;
    if (!flags.empty()) {
      bool allow = flags.size() == 1 ? flags[0] : flags[g];
      policy = allow ? BoundaryPolicy::kAllow : BoundaryPolicy::kForbid;
    }
    policies.emplace_back(static_cast<size_t>(leaves_per_group[g]), policy);
  }
  return policies;
}

std::vector<bool> FlagsFromAttribute(const Module& module, const std::string& key) {
  std::string text = module.Attribute(key);
  if (text.empty()) return {};
  return ParseBoundaryFlags(text, "module attribute " + key);
}

}  // namespace

std::vector<bool> ParseBoundaryFlags(const std::string& text, const std::string& what) {
  std::string body = Trimmed(text);
  if (!body.empty() && body.front() == '{' && body.back() == '}') body = body.substr(1, body.size() - 2);
  std::vector<bool> flags;
  size_t start = 0;
  while (true) {
    size_t comma = body.find(',', start);
    std::string word = Trimmed(body.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
    if (word == "true" || word == "1") {
      flags.push_back(true);
    } else if (word == "false" || word == "0") {
      flags.push_back(false);
    } else {
      GSPMD_USER_ERROR(what, ": expected true, false or a comma-separated list of them, got \"", text, "\"");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return flags;
}

BoundaryPolicies ResolveBoundaryPolicies(const Module& module, const std::vector<bool>& to_parameters,
                                         const std::vector<bool>& to_outputs) {
  const Computation* entry = module.entry();
  GSPMD_CHECK(entry != nullptr, "module without an entry computation");
  std::vector<bool> parameter_flags =
      to_parameters.empty() ? FlagsFromAttribute(module, "allow_spmd_sharding_propagation_to_parameters")
                            : to_parameters;
  std::vector<bool> output_flags =
      to_outputs.empty() ? FlagsFromAttribute(module, "allow_spmd_sharding_propagation_to_output") : to_outputs;

  BoundaryPolicies result;
  const int64_t parameter_count = entry->num_parameters();
  std::vector<int64_t> leaves;
  for (int64_t i = 0; i < parameter_count; ++i) leaves.push_back(LeafCount(entry->parameter(i)->shape()));
  const bool one_tuple_parameter = parameter_count == 1 && entry->parameter(0)->shape().IsTuple();
  const int64_t per_element = one_tuple_parameter ? entry->parameter(0)->shape().tuple_size() : -1;
  if (parameter_flags.size() > 1 && static_cast<int64_t>(parameter_flags.size()) == per_element &&
      per_element != parameter_count) {
    // One flag per element of the single tuple parameter.
    std::vector<int64_t> element_leaves;
    for (const Shape& element : entry->parameter(0)->shape().tuple_shapes()) element_leaves.push_back(LeafCount(element));
    std::vector<BoundaryPolicy> flat;
    for (const auto& group : PerLeaf(parameter_flags, element_leaves)) flat.insert(flat.end(), group.begin(), group.end());
    result.parameters.push_back(std::move(flat));
  } else {
    if (parameter_flags.size() > 1 && static_cast<int64_t>(parameter_flags.size()) != parameter_count) {
      GSPMD_USER_ERROR("--propagate-to-parameters lists ", parameter_flags.size(), " values but the entry computation has ",
                       parameter_count, " parameters (give one value, or one per parameter)");
    }
    result.parameters = PerLeaf(parameter_flags, leaves);
  }

  const Shape& root_shape = entry->root()->shape();
  std::vector<int64_t> root_leaves;
  if (root_shape.IsTuple() && output_flags.size() > 1) {
    if (static_cast<int64_t>(output_flags.size()) != root_shape.tuple_size()) {
      GSPMD_USER_ERROR("--propagate-to-outputs lists ", output_flags.size(), " values but the result has ",
                       root_shape.tuple_size(), " elements (give one value, or one per result element)");
    }
    for (const Shape& element : root_shape.tuple_shapes()) root_leaves.push_back(LeafCount(element));
  } else {
    if (output_flags.size() > 1) {
      GSPMD_USER_ERROR("--propagate-to-outputs lists ", output_flags.size(),
                       " values but the result is not a tuple (give one value)");
    }
    root_leaves.push_back(LeafCount(root_shape));
  }
  for (const auto& group : PerLeaf(output_flags, root_leaves)) result.root.insert(result.root.end(), group.begin(), group.end());
  return result;
}

bool SplitsEvenly(const Shape& shape, const Sharding& sharding) {
  if (sharding.IsTuple()) {
    if (!shape.IsTuple() || shape.tuple_size() != static_cast<int64_t>(sharding.tuple_elements().size())) return true;
    for (int64_t i = 0; i < shape.tuple_size(); ++i)
      if (!SplitsEvenly(shape.tuple_shape(i), sharding.tuple_elements()[i])) return false;
    return true;
  }
  if (!sharding.IsTiled() || !shape.IsArray() || sharding.TiledDataRank() != shape.rank()) return true;
  for (int64_t d = 0; d < shape.rank(); ++d)
    if (shape.dim(d) % sharding.tile_assignment().dim(d) != 0) return false;
  return true;
}

}  // namespace gspmd::propagation
