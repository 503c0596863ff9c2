// Instruction: operand/user bookkeeping and attribute helpers.
#include "ir/instruction.h"

#include <algorithm>

#include "ir/computation.h"
#include "support/diagnostic.h"

namespace gspmd {

Instruction::Instruction(Opcode opcode, Shape shape, std::string name)
    : opcode_(opcode), shape_(std::move(shape)), name_(std::move(name)) {}

std::unique_ptr<Instruction> Instruction::CloneWithNewOperands(
    Shape shape, const std::vector<Instruction*>& operands) const {
  auto clone = std::unique_ptr<Instruction>(new Instruction(*this));
  clone->shape_ = std::move(shape);
  clone->parent_ = nullptr;
  clone->unique_id_ = -1;
  clone->operands_.clear();
  clone->users_.clear();
  for (Instruction* operand : operands) clone->AppendOperand(operand);
  return clone;
}

void Instruction::AppendOperand(Instruction* operand) {
  GSPMD_CHECK(operand != nullptr, "null operand for ", name_);
  operands_.push_back(operand);
  operand->users_.push_back(this);
}

void Instruction::ReplaceOperand(int64_t i, Instruction* new_operand) {
  Instruction* old = operands_.at(i);
  auto it = std::find(old->users_.begin(), old->users_.end(), this);
  GSPMD_CHECK(it != old->users_.end(), "user list out of sync for ", old->name());
  old->users_.erase(it);
  operands_[i] = new_operand;
  new_operand->users_.push_back(this);
}

void Instruction::ReplaceAllUsesWith(Instruction* replacement) {
  std::vector<Instruction*> users = users_;
  for (Instruction* user : users)
    for (int64_t i = 0; i < user->operand_count(); ++i)
      if (user->operands_[i] == this) user->ReplaceOperand(i, replacement);
  if (parent_ && parent_->root() == this) parent_->set_root(replacement);
}

const Instruction::OutOfLineAttributes& Instruction::attributes() const {
  static const OutOfLineAttributes defaults;
  return attributes_ ? *attributes_ : defaults;
}

Instruction::OutOfLineAttributes& Instruction::MutableAttributes() {
  if (!attributes_) {
    attributes_ = std::make_shared<OutOfLineAttributes>();
  } else if (attributes_.use_count() > 1) {
    attributes_ = std::make_shared<OutOfLineAttributes>(*attributes_);  // shared with a clone
  }
  return const_cast<OutOfLineAttributes&>(*attributes_);
}

Computation* Instruction::to_apply() const {
  GSPMD_CHECK(called_.size() == 1, name_, " has ", called_.size(), " called computations, not 1");
  return called_[0];
}

std::string Instruction::FrontendAttribute(const std::string& key) const {
  // frontend_attributes text: key="value",key2="value2" (values are quoted strings).
  size_t pos = 0;
  const std::string& text = frontend_attributes;
  while (pos < text.size()) {
    size_t eq = text.find('=', pos);
    if (eq == std::string::npos) return "";
    std::string name = text.substr(pos, eq - pos);
    size_t value_start = eq + 1;
    size_t value_end = value_start;
    std::string value;
    if (value_start < text.size() && text[value_start] == '"') {
      value_end = value_start + 1;
      while (value_end < text.size() && text[value_end] != '"') {
        if (text[value_end] == '\\' && value_end + 1 < text.size()) ++value_end;
        value += text[value_end];
        ++value_end;
      }
      ++value_end;
    } else {
      value_end = text.find(',', value_start);
      if (value_end == std::string::npos) value_end = text.size();
      value = text.substr(value_start, value_end - value_start);
    }
    if (name == key) return value;
    pos = value_end;
    if (pos < text.size() && text[pos] == ',') ++pos;
  }
  return "";
}

}  // namespace gspmd
