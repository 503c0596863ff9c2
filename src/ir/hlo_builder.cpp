// HloBuilder: instruction construction with shape inference and unique names.
#include "ir/hlo_builder.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "ir/module.h"
#include "ir/partition_digits.h"
#include "support/diagnostic.h"

namespace gspmd {

uint64_t NameUniquer::Hash(std::string_view name) { return std::hash<std::string_view>{}(name); }

bool NameUniquer::HashSet::Insert(uint64_t hash) {
  if (hash == 0) hash = 1;
  if (2 * (size_ + 1) > slots_.size()) Grow(std::max<size_t>(64, 2 * slots_.size()));
  const size_t mask = slots_.size() - 1;
  for (size_t slot = hash & mask;; slot = (slot + 1) & mask) {
    if (slots_[slot] == hash) return false;
    if (slots_[slot] == 0) {
      slots_[slot] = hash;
      ++size_;
      return true;
    }
  }
}

void NameUniquer::HashSet::Reserve(size_t count) {
  size_t slot_count = std::max<size_t>(64, slots_.size());
  while (slot_count < 2 * (size_ + count)) slot_count *= 2;
  if (slot_count > slots_.size()) Grow(slot_count);
}

void NameUniquer::HashSet::Grow(size_t slot_count) {
  std::vector<uint64_t> old = std::move(slots_);
  slots_.assign(slot_count, 0);
  size_ = 0;
  for (uint64_t hash : old)
    if (hash != 0) Insert(hash);
}

NameUniquer::Base& NameUniquer::BaseTable::Find(uint64_t hash) {
  if (hash == 0) hash = 1;
  if (2 * (size_ + 1) > slots_.size()) {
    std::vector<Base> old = std::move(slots_);
    slots_.assign(std::max<size_t>(64, 2 * old.size()), Base{});
    size_ = 0;
    for (const Base& base : old)
      if (base.hash != 0) Slot(base.hash) = base;
  }
  return Slot(hash);
}

// The slot of `hash` (non-zero), claimed when it is not in the table; the table has room.
NameUniquer::Base& NameUniquer::BaseTable::Slot(uint64_t hash) {
  const size_t mask = slots_.size() - 1;
  for (size_t slot = hash & mask;; slot = (slot + 1) & mask) {
    if (slots_[slot].hash == hash) return slots_[slot];
    if (slots_[slot].hash == 0) {
      slots_[slot].hash = hash;
      ++size_;
      return slots_[slot];
    }
  }
}

void NameUniquer::ReserveAll(const Module& module) {
  size_t count = 0;
  for (const auto& computation : module.computations()) count += 1 + computation->instructions().size();
  used_.Reserve(count);
  for (const auto& computation : module.computations()) {
    Reserve(computation->name());
    for (const auto& instruction : computation->instructions()) Reserve(instruction->name());
  }
}

void NameUniquer::Reserve(const std::string& name) {
  if (!used_.Insert(Hash(name))) return;
  // base.N with N written as Unique writes it (digits, no leading zero).
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 >= name.size() || name.size() - dot > 19) return;
  if (name[dot + 1] == '0') return;
  int64_t suffix = 0;
  for (size_t i = dot + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return;
    suffix = suffix * 10 + (name[i] - '0');
  }
  Base& base = bases_.Find(Hash(std::string_view(name).substr(0, dot)));
  if (base.reserved < 0) {
    base.reserved = static_cast<int32_t>(reserved_.size());
    reserved_.emplace_back();
  }
  Reserved& reserved = reserved_[static_cast<size_t>(base.reserved)];
  if (!reserved.suffixes.empty() && reserved.suffixes.back() >= suffix) reserved.sorted = false;
  reserved.suffixes.push_back(suffix);
}

std::string NameUniquer::Unique(const std::string& base) {
  const uint64_t hash = Hash(base);
  if (used_.Insert(hash)) return base;
  Base& state = bases_.Find(hash);
  int64_t& suffix = state.last_suffix;
  const std::vector<int64_t>* reserved = nullptr;
  if (state.reserved >= 0) {
    Reserved& entry = reserved_[static_cast<size_t>(state.reserved)];
    if (!entry.sorted) {
      std::sort(entry.suffixes.begin(), entry.suffixes.end());
      entry.suffixes.erase(std::unique(entry.suffixes.begin(), entry.suffixes.end()), entry.suffixes.end());
      entry.sorted = true;
    }
    reserved = &entry.suffixes;
  }
  while (true) {
    ++suffix;
    // Skip the run of reserved suffixes starting here.
    if (reserved != nullptr)
      for (auto r = std::lower_bound(reserved->begin(), reserved->end(), suffix); r != reserved->end() && *r == suffix; ++r)
        ++suffix;
    std::string candidate = base + "." + std::to_string(suffix);
    if (used_.Insert(Hash(candidate))) return candidate;
  }
}

std::string DefaultName(const Instruction& instruction) {
  return instruction.name().empty() ? std::string(OpcodeName(instruction.opcode())) : instruction.name();
}

Instruction* HloBuilder::Add(std::unique_ptr<Instruction> instruction) {
  instruction->set_name(names_->Unique(DefaultName(*instruction)));
  if (instruction->source() == nullptr && source_instruction_ != nullptr) instruction->CopySourceFrom(*source_instruction_);
  if (instruction->metadata.empty() && !op_name_.empty()) instruction->metadata = "op_name=\"" + op_name_ + "\"";
  if (instruction->shape().IsArray() && !instruction->shape().layout()) instruction->mutable_shape().SetDefaultLayout();
  return computation_->AddInstruction(std::move(instruction));
}

Instruction* HloBuilder::AddOp(Opcode opcode, Shape shape, const std::vector<Instruction*>& operands) {
  auto instruction = std::make_unique<Instruction>(opcode, std::move(shape));
  for (Instruction* operand : operands) instruction->AppendOperand(operand);
  return Add(std::move(instruction));
}

Instruction* HloBuilder::Parameter(int64_t number, Shape shape, const std::string& name) {
  auto instruction = std::make_unique<Instruction>(Opcode::kParameter, std::move(shape), name);
  instruction->parameter_number = number;
  return Add(std::move(instruction));
}

Instruction* HloBuilder::Constant(Literal literal) {
  Shape shape = literal.shape();
  auto instruction = std::make_unique<Instruction>(Opcode::kConstant, shape);
  instruction->mutable_literal() = std::move(literal);
  return Add(std::move(instruction));
}

Instruction* HloBuilder::ScalarConstant(ElementType type, double value) {
  Literal literal(Shape(type, {}));
  literal.SetFromDouble(0, value);
  return Constant(std::move(literal));
}

Instruction* HloBuilder::PartitionId() {
  if (partition_id_ == nullptr) partition_id_ = AddOp(Opcode::kPartitionId, Shape(ElementType::kU32, {}), {});
  return partition_id_;
}

Instruction* HloBuilder::TableLookup(const std::vector<int64_t>& table) {
  // Arithmetic on the partition id when the table allows it: no table growing with the
  // device count.
  if (std::optional<PartitionDigitForm> form = FindDigitForm(table)) return EmitDigitForm(*this, *form);
  Shape table_shape(ElementType::kS32, {static_cast<int64_t>(table.size())});
  Instruction* constant = Constant(Literal::FromInts(table_shape, table));
  Instruction* element = DynamicSlice(constant, {PartitionId()}, {1});
  return Reshape(element, {});
}

Instruction* HloBuilder::Unary(Opcode opcode, Instruction* operand) {
  Shape shape = operand->shape();
  if (opcode == Opcode::kIsFinite) shape.set_element_type(ElementType::kPred);
  return AddOp(opcode, std::move(shape), {operand});
}

Instruction* HloBuilder::Binary(Opcode opcode, Instruction* lhs, Instruction* rhs) {
  GSPMD_CHECK(lhs->shape().Compatible(rhs->shape()), "binary operands differ: ",
              lhs->shape().ToString(), " vs ", rhs->shape().ToString());
  return AddOp(opcode, lhs->shape(), {lhs, rhs});
}

Instruction* HloBuilder::Compare(Instruction* lhs, Instruction* rhs, ComparisonDirection direction) {
  Shape shape(ElementType::kPred, lhs->shape().dims());
  Instruction* compare = AddOp(Opcode::kCompare, std::move(shape), {lhs, rhs});
  compare->comparison_direction = direction;
  return compare;
}

Instruction* HloBuilder::Select(Instruction* pred, Instruction* on_true, Instruction* on_false) {
  return AddOp(Opcode::kSelect, on_true->shape(), {pred, on_true, on_false});
}

Instruction* HloBuilder::Convert(Instruction* operand, ElementType type) {
  Shape shape(type, operand->shape().dims());
  return AddOp(Opcode::kConvert, std::move(shape), {operand});
}

Instruction* HloBuilder::Broadcast(Instruction* operand, std::vector<int64_t> result_dims,
                                   std::vector<int64_t> dimensions) {
  Shape shape(operand->shape().element_type(), std::move(result_dims));
  Instruction* broadcast = AddOp(Opcode::kBroadcast, std::move(shape), {operand});
  broadcast->dimensions = std::move(dimensions);
  return broadcast;
}

Instruction* HloBuilder::BroadcastScalar(Instruction* scalar, std::vector<int64_t> dims) {
  return Broadcast(scalar, std::move(dims), {});
}

Instruction* HloBuilder::Reshape(Instruction* operand, std::vector<int64_t> dims) {
  Shape shape(operand->shape().element_type(), std::move(dims));
  GSPMD_CHECK(shape.element_count() == operand->shape().element_count(), "reshape of ",
              operand->shape().ToString(), " to ", shape.ToString());
  return AddOp(Opcode::kReshape, std::move(shape), {operand});
}

Instruction* HloBuilder::Transpose(Instruction* operand, std::vector<int64_t> permutation) {
  std::vector<int64_t> dims;
  for (int64_t p : permutation) dims.push_back(operand->shape().dim(p));
  Instruction* transpose = AddOp(Opcode::kTranspose, Shape(operand->shape().element_type(), dims), {operand});
  transpose->dimensions = std::move(permutation);
  return transpose;
}

Instruction* HloBuilder::Slice(Instruction* operand, std::vector<SliceDim> slice) {
  std::vector<int64_t> dims;
  for (const SliceDim& s : slice) dims.push_back((s.limit - s.start + s.stride - 1) / s.stride);
  Instruction* instruction = AddOp(Opcode::kSlice, Shape(operand->shape().element_type(), dims), {operand});
  instruction->mutable_slice() = std::move(slice);
  return instruction;
}

Instruction* HloBuilder::SliceToSize(Instruction* operand, const std::vector<int64_t>& limits) {
  if (operand->shape().dims() == limits) return operand;
  std::vector<SliceDim> slice;
  for (int64_t limit : limits) slice.push_back({0, limit, 1});
  return Slice(operand, std::move(slice));
}

Instruction* HloBuilder::DynamicSlice(Instruction* operand, const std::vector<Instruction*>& starts,
                                      std::vector<int64_t> sizes) {
  std::vector<Instruction*> operands{operand};
  operands.insert(operands.end(), starts.begin(), starts.end());
  Instruction* instruction =
      AddOp(Opcode::kDynamicSlice, Shape(operand->shape().element_type(), sizes), operands);
  instruction->mutable_dynamic_slice_sizes() = std::move(sizes);
  return instruction;
}

Instruction* HloBuilder::DynamicUpdateSlice(Instruction* operand, Instruction* update,
                                            const std::vector<Instruction*>& starts) {
  std::vector<Instruction*> operands{operand, update};
  operands.insert(operands.end(), starts.begin(), starts.end());
  return AddOp(Opcode::kDynamicUpdateSlice, operand->shape(), operands);
}

Instruction* HloBuilder::Pad(Instruction* operand, Instruction* value, PaddingConfig padding) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < operand->shape().rank(); ++d) {
    int64_t size = operand->shape().dim(d);
    const PaddingDim& p = padding[d];
    dims.push_back(p.low + p.high + size + std::max<int64_t>(size - 1, 0) * p.interior);
  }
  Instruction* pad = AddOp(Opcode::kPad, Shape(operand->shape().element_type(), dims), {operand, value});
  pad->mutable_padding() = std::move(padding);
  return pad;
}

Instruction* HloBuilder::PadToSize(Instruction* operand, const std::vector<int64_t>& dims, Instruction* value) {
  if (operand->shape().dims() == dims) return operand;
  PaddingConfig padding;
  for (int64_t d = 0; d < operand->shape().rank(); ++d) padding.push_back({0, dims[d] - operand->shape().dim(d), 0});
  return Pad(operand, value, std::move(padding));
}

Instruction* HloBuilder::Concatenate(const std::vector<Instruction*>& operands, int64_t dimension) {
  std::vector<int64_t> dims = operands.at(0)->shape().dims();
  dims[dimension] = 0;
  for (Instruction* operand : operands) dims[dimension] += operand->shape().dim(dimension);
  Instruction* concat = AddOp(Opcode::kConcatenate, Shape(operands[0]->shape().element_type(), dims), operands);
  concat->dimensions = {dimension};
  return concat;
}

Instruction* HloBuilder::Iota(Shape shape, int64_t dimension) {
  Instruction* iota = AddOp(Opcode::kIota, std::move(shape), {});
  iota->iota_dimension = dimension;
  return iota;
}

Instruction* HloBuilder::Tuple(const std::vector<Instruction*>& elements) {
  std::vector<Shape> shapes;
  for (Instruction* element : elements) shapes.push_back(element->shape());
  return AddOp(Opcode::kTuple, Shape::Tuple(std::move(shapes)), elements);
}

Instruction* HloBuilder::GetTupleElement(Instruction* tuple, int64_t index) {
  Instruction* gte = AddOp(Opcode::kGetTupleElement, tuple->shape().tuple_shape(index), {tuple});
  gte->tuple_index = index;
  return gte;
}

}  // namespace gspmd
