// Module: computation ownership, lookup and attributes.
#include "ir/module.h"

#include <set>

#include "support/diagnostic.h"

namespace gspmd {

Computation* Module::AddComputation(std::unique_ptr<Computation> computation, bool is_entry) {
  computation->parent_ = this;
  computation->is_entry = is_entry;
  Computation* raw = computation.get();
  computations_.push_back(std::move(computation));
  if (is_entry) entry_ = raw;
  return raw;
}

Computation* Module::AddComputationFront(std::unique_ptr<Computation> computation) {
  computation->parent_ = this;
  computation->is_entry = false;
  Computation* raw = computation.get();
  computations_.insert(computations_.begin(), std::move(computation));
  return raw;
}

Computation* Module::FindComputation(const std::string& name) const {
  for (const auto& computation : computations_)
    if (computation->name() == name) return computation.get();
  return nullptr;
}

void Module::RemoveUnusedComputations() {
  std::set<const Computation*> reachable;
  std::vector<const Computation*> stack;
  if (entry_) stack.push_back(entry_);
  while (!stack.empty()) {
    const Computation* computation = stack.back();
    stack.pop_back();
    if (!reachable.insert(computation).second) continue;
    for (const auto& instruction : computation->instructions())
      for (Computation* called : instruction->called_computations()) stack.push_back(called);
  }
  std::vector<std::unique_ptr<Computation>> kept;
  for (auto& computation : computations_)
    if (reachable.count(computation.get())) kept.push_back(std::move(computation));
  computations_ = std::move(kept);
}

std::string Module::Attribute(const std::string& key) const {
  for (const auto& [name, value] : attributes)
    if (name == key) return value;
  return "";
}

void Module::SetAttribute(const std::string& key, std::string value) {
  for (auto& [name, existing] : attributes) {
    if (name == key) {
      existing = std::move(value);
      return;
    }
  }
  attributes.emplace_back(key, std::move(value));
}

int64_t Module::num_partitions() const {
  std::string value = Attribute("num_partitions");
  return value.empty() ? 1 : std::stoll(value);
}

int64_t Module::replica_count() const {
  std::string value = Attribute("replica_count");
  return value.empty() ? 1 : std::stoll(value);
}

}  // namespace gspmd
