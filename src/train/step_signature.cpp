// Step signatures: input roles from parameter attributes, the carry from the module, a flag
// or the trailing outputs, and its checks.
#include "train/step_signature.h"

#include <charconv>
#include <set>

#include "models/step_attributes.h"
#include "runtime/spmd/like_module.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

namespace attr = step_attributes;

bool ParseIndex(const std::string& text, int64_t& value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size() && value >= 0;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    items.push_back(text.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return items;
}

std::vector<CarryPair> ParseCarry(const std::string& text, const std::string& what) {
  std::vector<CarryPair> pairs;
  for (const std::string& item : SplitList(text)) {
    const size_t colon = item.find(':');
    CarryPair pair{};
    if (colon == std::string::npos || !ParseIndex(item.substr(0, colon), pair.output) ||
        !ParseIndex(item.substr(colon + 1), pair.input))
      GSPMD_USER_ERROR(what, " '", item, "': expected OUT:IN (an output index, a colon, an input index)");
    pairs.push_back(pair);
  }
  return pairs;
}

// The sharding of result leaf `i` (nullopt when the root has none).
std::optional<Sharding> OutputSharding(const Instruction& root, size_t i) {
  if (!root.sharding()) return std::nullopt;
  const Sharding& sharding = *root.sharding();
  if (!sharding.IsTuple()) return sharding;
  if (i >= sharding.tuple_elements().size()) return std::nullopt;
  return sharding.tuple_elements()[i];
}

bool SameSharding(const std::optional<Sharding>& a, const std::optional<Sharding>& b) {
  if (!a.has_value() || !b.has_value()) return a.has_value() == b.has_value();
  return *a == *b;
}

// The longest run of outputs, from the last backwards, that match the inputs from the last
// backwards in shape and sharding.
std::vector<CarryPair> InferCarry(const Module& module, const StepSignature& s) {
  const Instruction& root = *module.entry()->root();
  std::vector<CarryPair> pairs;
  int64_t out = static_cast<int64_t>(s.outputs.size()) - 1;
  int64_t in = static_cast<int64_t>(s.inputs.size()) - 1;
  for (; out >= 0 && in >= 0; --out, --in) {
    const Instruction& parameter = *module.entry()->parameter(in);
    if (!s.outputs[out].Compatible(s.inputs[in].shape)) break;
    if (!SameSharding(OutputSharding(root, static_cast<size_t>(out)), parameter.sharding())) break;
    pairs.insert(pairs.begin(), CarryPair{out, in});
  }
  return pairs;
}

void CheckCarry(const StepSignature& s, const std::string& what) {
  std::set<int64_t> fed;
  for (const CarryPair& pair : s.carry) {
    if (pair.output >= static_cast<int64_t>(s.outputs.size()))
      GSPMD_USER_ERROR(what, " ", pair.output, ":", pair.input, ": the step has ", s.outputs.size(),
                       " outputs (expected OUT in 0..", s.outputs.size() - 1, ")");
    if (pair.input >= static_cast<int64_t>(s.inputs.size()))
      GSPMD_USER_ERROR(what, " ", pair.output, ":", pair.input, ": the step has ", s.inputs.size(),
                       " inputs (expected IN in 0..", s.inputs.size() - 1, ")");
    if (!fed.insert(pair.input).second)
      GSPMD_USER_ERROR(what, ": input ", pair.input, " (%", s.inputs[pair.input].name, ") is fed by two outputs");
    const Shape& from = s.outputs[pair.output];
    const Shape& to = s.inputs[pair.input].shape;
    if (!from.Compatible(to))
      GSPMD_USER_ERROR(what, " ", pair.output, ":", pair.input, ": output ", pair.output, " is ", from.ToString(false),
                       " but input ", pair.input, " (%", s.inputs[pair.input].name, ") is ", to.ToString(false),
                       " (expected the same shape and element type)");
  }
}

}  // namespace

bool StepSignature::SelfInitializing() const {
  for (const StepInput& input : inputs)
    if (input.init.empty()) return false;
  return !inputs.empty();
}

bool StepSignature::IsCarried(int64_t input) const {
  for (const CarryPair& pair : carry)
    if (pair.input == input) return true;
  return false;
}

std::string StepSignature::CarryText() const {
  std::string text;
  for (const CarryPair& pair : carry) text += StrCat(text.empty() ? "" : ",", pair.output, ":", pair.input);
  return text;
}

StepSignature ReadStepSignature(const Module& module, const std::string& carry_flag) {
  const Computation* entry = module.entry();
  GSPMD_CHECK(entry != nullptr, "module without an entry computation");
  StepSignature s;
  for (const Instruction* parameter : entry->parameters()) {
    if (!parameter->shape().IsArray())
      GSPMD_USER_ERROR("parameter %", parameter->name(), " has shape ", parameter->shape().ToString(false),
                       "; a training step takes arrays only");
    s.inputs.push_back({parameter->name(), parameter->FrontendAttribute(attr::kRole),
                        parameter->FrontendAttribute(attr::kInit), parameter->shape()});
  }
  s.outputs = LeafShapes(entry->root()->shape());
  const std::string metrics = ModuleFrontendAttribute(module, attr::kMetrics);
  if (!metrics.empty()) s.metrics = SplitList(metrics);
  s.task = ModuleFrontendAttribute(module, attr::kTask);
  const std::string vocab = ModuleFrontendAttribute(module, attr::kVocab);
  if (!vocab.empty() && (!ParseIndex(vocab, s.vocab) || s.vocab < 1))
    GSPMD_USER_ERROR("module attribute ", attr::kVocab, "=\"", vocab, "\": expected a positive integer");

  const std::string recorded = ModuleFrontendAttribute(module, attr::kCarry);
  if (!carry_flag.empty()) {
    s.carry = ParseCarry(carry_flag, "--carry");
    s.carry_source = StepSignature::CarrySource::kFlag;
    CheckCarry(s, "--carry");
  } else if (!recorded.empty()) {
    s.carry = ParseCarry(recorded, StrCat("module attribute ", attr::kCarry));
    s.carry_source = StepSignature::CarrySource::kModule;
    CheckCarry(s, StrCat("module attribute ", attr::kCarry));
  } else {
    s.carry = InferCarry(module, s);
    s.carry_source = StepSignature::CarrySource::kInferred;
  }
  return s;
}

}  // namespace gspmd
