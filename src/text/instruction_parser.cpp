// HLO text parser, instruction level: "[ROOT] %name = shape opcode(operands), attrs",
// operand resolution (including %tuple#i references) and per-instruction validation.
#include <string>
#include <utility>

#include "ir/shape_inference.h"
#include "ir/tuple_sharding.h"
#include "ir/verifier.h"
#include "text/literal_text.h"
#include "text/module_parser.h"
#include "text/shape_text.h"

namespace gspmd::hlo_text {
namespace {

// The layout XLA prints for an inferred shape: major-to-minor on arrays of rank >= 1,
// none on scalars and tokens.
void SetPrintedLayout(Shape& shape) {
  if (shape.IsTuple()) {
    for (Shape& element : shape.mutable_tuple_shapes()) SetPrintedLayout(element);
    return;
  }
  if (shape.IsArray() && shape.rank() > 0) shape.SetDefaultLayout();
}

}  // namespace

void ModuleParser::ParseInstruction(ComputationState& state) {
  scanner_.SkipSpace();
  size_t start = scanner_.pos();
  std::string_view name = scanner_.ReadName("an instruction name, ROOT or '}'");
  bool is_root = false;
  if (name == "ROOT" && scanner_.Peek() != '=') {
    is_root = true;
    scanner_.SkipSpace();
    start = scanner_.pos();
    name = scanner_.ReadName("an instruction name after ROOT");
  }
  if (state.names.count(name))
    scanner_.ErrorAt(start, StrCat("duplicate instruction name '", name, "' in computation ",
                                   state.computation->name(), ": expected a new name"));
  scanner_.Expect('=', What("'=' after instruction name ", name));
  Instruction* added = ParseInstructionRhs(state, std::string(name), start, 0);
  state.last = added;
  if (is_root) {
    if (state.root != nullptr)
      scanner_.ErrorAt(start, StrCat("second ROOT in computation ", state.computation->name(), ": ",
                                     state.root->name(), " is already the root"));
    state.root = added;
  }
}

// "[shape] opcode(operands), attributes" after "name =". Operands may themselves be written
// as instructions (XLA's nested form: add(f32[2] parameter(0), negate(...))); those, at
// depth > 0, take no attributes and are named "<opcode>.anon".
Instruction* ModuleParser::ParseInstructionRhs(ComputationState& state, std::string name, size_t start, int depth) {
  constexpr int kMaxNestedInstructions = 64;
  if (depth > kMaxNestedInstructions)
    scanner_.ErrorAt(start, StrCat("instructions nested too deeply as operands: expected at most ",
                                   kMaxNestedInstructions, " levels"));
  // XLA lets many opcodes leave out the result shape ("ROOT r = copy(%x)"); it is inferred
  // once the operands and attributes are known.
  std::optional<Shape> shape;
  if (AtShapeSyntax(scanner_)) shape = ParseShape(scanner_);
  scanner_.SkipSpace();
  size_t opcode_pos = scanner_.pos();
  if (!scanner_.AtName())
    scanner_.ErrorExpected(shape ? "an opcode such as add or dot" : "a result shape such as f32[2] or an opcode");
  std::string_view opcode_name = scanner_.ReadName("an opcode");
  std::optional<Opcode> opcode = ParseOpcode(opcode_name);
  std::string_view async_wrapped;  // "custom-call" of custom-call-start (XLA's async syntax)
  if (!opcode) {
    for (auto [suffix, async_opcode] : {std::pair{std::string_view("-start"), Opcode::kAsyncStart},
                                        std::pair{std::string_view("-update"), Opcode::kAsyncUpdate},
                                        std::pair{std::string_view("-done"), Opcode::kAsyncDone}}) {
      if (opcode_name.size() <= suffix.size() || !opcode_name.ends_with(suffix)) continue;
      std::string_view wrapped = opcode_name.substr(0, opcode_name.size() - suffix.size());
      if (!ParseOpcode(wrapped)) continue;
      opcode = async_opcode;
      async_wrapped = wrapped;
    }
  }
  if (!opcode) {
    if (!shape && ParseElementType(opcode_name))
      scanner_.ErrorAt(opcode_pos, StrCat("expected '[' after element type '", opcode_name,
                                          "' (a shape such as ", opcode_name, "[2])"));
    scanner_.ErrorAt(opcode_pos, StrCat("unknown opcode '", opcode_name, "'"));
  }
  if (!shape && (*opcode == Opcode::kConstant || *opcode == Opcode::kParameter))
    scanner_.ErrorAt(opcode_pos, StrCat(opcode_name, " needs its result shape written before the opcode, e.g. ",
                                        "'%x = f32[2] ", opcode_name, "(...)'"));
  if (name.empty()) {  // a nested instruction: "parameter.anon", "parameter.anon.1", ...
    std::string base = StrCat(opcode_name, ".anon");
    name = base;
    for (int suffix = 1; state.names.count(name); ++suffix) name = StrCat(base, ".", suffix);
  }

  auto instruction = std::make_unique<Instruction>(*opcode, shape.value_or(Shape()), name);
  if (!async_wrapped.empty()) instruction->mutable_async_wrapped_opcode() = std::string(async_wrapped);
  instruction->set_source(std::make_shared<const InstructionSource>(InstructionSource{scanner_.LocationAt(start), name}));
  scanner_.Expect('(', What("'(' after opcode ", opcode_name));
  if (*opcode == Opcode::kConstant) {
    if (scanner_.TryConsume("{...}")) {
      // XLA elides large constants; the value is unknown (eval reports it), the text round-trips.
    } else {
      instruction->mutable_literal() = ParseLiteral(scanner_, instruction->shape());
    }
    scanner_.Expect(')', "')' after the constant value");
  } else if (*opcode == Opcode::kParameter) {
    scanner_.SkipSpace();
    size_t number_pos = scanner_.pos();
    int64_t number = scanner_.ReadInt("the parameter number");
    if (number < 0 || number > (int64_t{1} << 20))
      scanner_.ErrorAt(number_pos, "bad parameter number: expected a small non-negative integer");
    if (static_cast<int64_t>(state.has_parameter.size()) <= number) state.has_parameter.resize(number + 1, false);
    if (state.has_parameter[number])
      scanner_.ErrorAt(number_pos, StrCat("duplicate parameter(", number, ") in computation ",
                                          state.computation->name(), ": expected each parameter number once"));
    state.has_parameter[number] = true;
    instruction->parameter_number = number;
    scanner_.Expect(')', "')' after the parameter number");
  } else {
    ParseOperands(state, *instruction, depth);
  }

  ParseAttributes(*instruction, opcode_pos, /*allow_attributes=*/depth == 0);

  if (depth == 0) {
    // The instruction must end here (the next one starts on a new line).
    scanner_.SkipSpaceInLine();
    std::string_view text = scanner_.text();
    size_t end = scanner_.pos();
    if (end < text.size() && text[end] != '\n' && text[end] != '\r' && text[end] != '}')
      scanner_.ErrorExpected("',' and another attribute, or the end of the instruction");
  }

  std::string error = CheckOperandCount(*instruction);
  if (error.empty()) error = CheckCalledComputations(*instruction);
  if (error.empty() && !shape) {
    InferredShape inferred = InferShape(*instruction, DeviceCounts{num_partitions_, replica_count_});
    if (!inferred.error.empty()) scanner_.ErrorAt(opcode_pos, StrCat("%", name, ": ", inferred.error));
    if (!inferred.shape)
      scanner_.ErrorAt(opcode_pos, StrCat("%", name, ": the result shape of ", opcode_name,
                                          " cannot be inferred: expected it written before the opcode"));
    instruction->set_shape(std::move(*inferred.shape));
    SetPrintedLayout(instruction->mutable_shape());
  }
  if (error.empty()) error = CheckInstruction(*instruction, DeviceCounts{num_partitions_, replica_count_});
  if (!error.empty()) scanner_.ErrorAt(opcode_pos, StrCat("%", name, ": ", error));
  if (instruction->sharding()) {
    // XLA writes a tuple sharding as one entry per leaf; the IR nests it like the shape. A
    // value without leaves (shape ()) still takes one entry, as in XLA; kept as the sharding
    // of every leaf it does not have.
    Sharding written = *instruction->sharding();
    if (CountShapeLeaves(instruction->shape()) == 0 && instruction->shape().IsTuple() && written.IsTuple() &&
        FlattenTupleSharding(written).tuple_elements().size() == 1)
      written = FlattenTupleSharding(written).tuple_elements().front();
    std::optional<Sharding> nested = NestTupleSharding(written, instruction->shape());
    if (!nested)
      scanner_.ErrorAt(sharding_pos_, StrCat("%", name, ": tuple sharding has ",
                                             FlattenTupleSharding(*instruction->sharding()).tuple_elements().size(),
                                             " element(s), expected ", CountShapeLeaves(instruction->shape()),
                                             " (one per leaf of ", instruction->shape().ToString(false), ")"));
    std::string sharding_error = CheckSharding(*nested, instruction->shape(), num_partitions_);
    if (!sharding_error.empty()) scanner_.ErrorAt(sharding_pos_, StrCat("%", name, ": ", sharding_error));
    instruction->set_sharding(std::move(*nested));
  }

  Instruction* added = state.computation->AddInstruction(std::move(instruction));
  state.names.emplace(added->name(), added);
  if (depth == 0 && !pending_unreduced_.empty())
    unreduced_instructions_.emplace_back(added, std::exchange(pending_unreduced_, {}));
  return added;
}

void ModuleParser::ParseOperands(ComputationState& state, Instruction& instruction, int depth) {
  if (scanner_.TryConsume(')')) return;
  do {
    scanner_.SkipSpace();
    size_t operand_start = scanner_.pos();
    // Older XLA text writes the operand shape first: add(f32[2] %a, f32[2] %b).
    std::optional<Shape> written;
    if (AtShape(scanner_)) written = ParseShape(scanner_);
    scanner_.SkipSpace();
    size_t pos = scanner_.pos();
    std::string_view name = scanner_.ReadName("an operand name");
    if (scanner_.Peek() == '(') {  // an instruction written in place of an operand
      scanner_.set_pos(operand_start);
      instruction.AppendOperand(ParseInstructionRhs(state, "", operand_start, depth + 1));
      continue;
    }
    Instruction* operand = ResolveOperand(state, name, pos);
    std::string_view text = scanner_.text();
    while (scanner_.pos() < text.size() && text[scanner_.pos()] == '#') {
      scanner_.set_pos(scanner_.pos() + 1);
      int64_t index = scanner_.ReadInt(What("a tuple index after '", name, "#'"));
      operand = TupleElementRef(state, operand, index, pos);
    }
    if (written && !written->Compatible(operand->shape()))
      scanner_.ErrorAt(operand_start, StrCat("%", instruction.name(), ": operand ", instruction.operand_count(), " (%",
                                             operand->name(), ") is written as ", written->ToString(false), ", but %",
                                             operand->name(), " is ", operand->shape().ToString(false)));
    instruction.AppendOperand(operand);
  } while (scanner_.TryConsume(','));
  scanner_.Expect(')', "',' or ')' after an operand");
}

Instruction* ModuleParser::ResolveOperand(ComputationState& state, std::string_view name, size_t pos) {
  auto it = state.names.find(name);
  if (it != state.names.end()) return it->second;
  scanner_.ErrorAt(pos, StrCat("undefined instruction '", name, "': expected an instruction defined earlier in computation ",
                               state.computation->name()));
}

Instruction* ModuleParser::TupleElementRef(ComputationState& state, Instruction* tuple, int64_t index, size_t pos) {
  const Shape& shape = tuple->shape();
  if (!shape.IsTuple())
    scanner_.ErrorAt(pos, StrCat("'", tuple->name(), "#", index, "' takes an element of a non-tuple value of shape ",
                                 shape.ToString(false), ": expected a tuple"));
  if (index < 0 || index >= shape.tuple_size())
    scanner_.ErrorAt(pos, StrCat("tuple index ", index, " out of range: ", tuple->name(), " has ",
                                 shape.tuple_size(), shape.tuple_size() == 1 ? " element" : " elements"));
  auto key = std::make_pair(static_cast<const Instruction*>(tuple), index);
  auto it = state.tuple_refs.find(key);
  if (it != state.tuple_refs.end()) return it->second;
  auto gte = std::make_unique<Instruction>(Opcode::kGetTupleElement, shape.tuple_shape(index));
  gte->tuple_index = index;
  gte->printed_as_tuple_ref = true;
  gte->AppendOperand(tuple);
  gte->set_source(std::make_shared<const InstructionSource>(
      InstructionSource{scanner_.LocationAt(pos), StrCat(tuple->name(), "#", index)}));
  Instruction* added = state.computation->AddInstruction(std::move(gte));
  state.tuple_refs.emplace(key, added);
  state.synthesized.push_back(added);
  return added;
}

}  // namespace gspmd::hlo_text
