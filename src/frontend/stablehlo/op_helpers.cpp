// Shared pretty-syntax readers and converter checks of the op families.
#include "frontend/stablehlo/op_helpers.h"

#include "frontend/stablehlo/types.h"

namespace gspmd::stablehlo {

void ReadSameOperandsAndResultType(ModuleReader& reader, OpSyntax& op) {
  Cursor& cursor = reader.cursor();
  cursor.Expect(':', Expected("':' and the type of ", op.name));
  if (cursor.Peek() == '(') {
    FunctionType type = ParseFunctionType(cursor, *reader.env().type_aliases);
    op.operand_types = std::move(type.inputs);
    op.result_types = std::move(type.results);
    return;
  }
  op.result_types.push_back(reader.ReadType());
  op.operands_like_result = true;
}

void ReadFunctionSignature(ModuleReader& reader, OpSyntax& op) {
  Cursor& cursor = reader.cursor();
  cursor.Expect(':', Expected("':' and the type of ", op.name, " such as (tensor<4xf32>) -> tensor<4xf32>"));
  // The operand types are checked against the operands as they are read (not kept).
  cursor.Expect('(', "'(' to start a function type such as (tensor<f32>) -> tensor<f32>");
  size_t count = 0;
  if (!cursor.TryConsume(')')) {
    do {
      cursor.SkipSpace();
      size_t pos = cursor.pos();
      if (count < op.operands.size() && MatchType(cursor, op.operands[count]->shape(), *reader.env().type_aliases)) {
        ++count;
        continue;
      }
      Shape written = reader.ReadType();
      if (count >= op.operands.size())
        reader.Error(pos, StrCat(op.name, " has ", op.operands.size(), " operands but its type lists more operand types"));
      reader.Error(op.operand_pos[count], StrCat("operand ", count, " of ", op.name, " has type ",
                                                 MlirTypeName(op.operands[count]->shape()), " but the op's type says ",
                                                 MlirTypeName(written)));
    } while (cursor.TryConsume(','));
    cursor.Expect(')', "',' or ')' in the operand types");
  }
  if (count != op.operands.size())
    reader.Error(op.pos, StrCat(op.name, " has ", op.operands.size(), " operands but its type lists ", count, " operand types"));
  op.operand_types_checked = true;
  cursor.Expect("->", "'->' and the result types");
  op.result_types = ParseResultTypes(cursor, *reader.env().type_aliases);
}

void ReadLooseSignature(ModuleReader& reader, OpSyntax& op) {
  Cursor& cursor = reader.cursor();
  cursor.Expect(':', Expected("':' and the type of ", op.name));
  if (cursor.Peek() == '(') {
    FunctionType type = ParseFunctionType(cursor, *reader.env().type_aliases);
    op.operand_types = std::move(type.inputs);
    op.result_types = std::move(type.results);
    return;
  }
  std::vector<Shape> types;
  do types.push_back(reader.ReadType());
  while (cursor.TryConsume(','));
  if (cursor.TryConsume("->")) {
    op.operand_types = std::move(types);
    op.result_types = ParseResultTypes(cursor, *reader.env().type_aliases);
    return;
  }
  op.operands_like_result = types.size() == 1;
  op.result_types = std::move(types);
}

void ReadKeywordInts(ModuleReader& reader, OpSyntax& op, std::string_view keyword, std::string_view attr_name) {
  Cursor& cursor = reader.cursor();
  cursor.SkipSpace();
  size_t pos = cursor.pos();
  cursor.ExpectKeyword(keyword, Expected("'", keyword, " = [...]' in ", op.name));
  cursor.Expect('=', Expected("'=' after ", keyword));
  Attr& attr = op.Add(attr_name, pos);
  attr.kind = Attr::Kind::kIntList;
  attr.ints = ParseIntList(cursor, keyword);
}

void ReadKeywordInt(ModuleReader& reader, OpSyntax& op, std::string_view keyword, std::string_view attr_name) {
  Cursor& cursor = reader.cursor();
  cursor.SkipSpace();
  size_t pos = cursor.pos();
  cursor.ExpectKeyword(keyword, Expected("'", keyword, " = N' in ", op.name));
  cursor.Expect('=', Expected("'=' after ", keyword));
  Attr& attr = op.Add(attr_name, pos);
  attr.kind = Attr::Kind::kInt;
  attr.integer = cursor.ReadInt(Expected("an integer after ", keyword, " ="));
}

bool ReadOptionalKeywordEnum(ModuleReader& reader, OpSyntax& op, std::string_view keyword, std::string_view attr_name) {
  Cursor& cursor = reader.cursor();
  size_t save = cursor.pos();
  if (!cursor.TryConsume(',')) return false;
  cursor.SkipSpace();
  size_t pos = cursor.pos();
  if (!cursor.TryKeyword(keyword)) {
    cursor.set_pos(save);
    return false;
  }
  cursor.Expect('=', Expected("'=' after ", keyword));
  Attr& attr = op.Add(attr_name, pos);
  attr.kind = Attr::Kind::kEnum;
  attr.str = std::string(cursor.ReadBareId(Expected("a value after ", keyword, " =")));
  return true;
}

bool ReadOptionalPrecision(ModuleReader& reader, OpSyntax& op) {
  Cursor& cursor = reader.cursor();
  cursor.SkipSpace();
  size_t pos = cursor.pos();
  if (!cursor.TryKeyword("precision")) return false;
  cursor.Expect('=', "'=' after precision");
  Attr& attr = op.Add("precision_config", pos);
  attr.kind = Attr::Kind::kArray;
  cursor.Expect('[', "'[' to start the precision list");
  if (cursor.TryConsume(']')) return true;
  do {
    Attr& word = attr.elements.emplace_back();
    word.kind = Attr::Kind::kEnum;
    word.pos = cursor.pos();
    word.str = std::string(cursor.ReadBareId("a precision (DEFAULT, HIGH or HIGHEST)"));
  } while (cursor.TryConsume(','));
  cursor.Expect(']', "',' or ']' in the precision list");
  return true;
}

std::string OpLabel(const OpSyntax& op) { return std::string(op.name); }

const Attr* OptionalAttr(const OpSyntax& op, std::string_view name) {
  const NamedAttr* attr = op.Find(name);
  return attr ? &attr->value : nullptr;
}

const Attr& RequiredAttr(ModuleReader& reader, const OpSyntax& op, std::string_view name) {
  const Attr* attr = OptionalAttr(op, name);
  if (attr == nullptr) reader.Error(op.pos, StrCat(op.name, " needs the attribute ", name));
  return *attr;
}

std::vector<int64_t> IntsAttr(ModuleReader& reader, const OpSyntax& op, std::string_view name) {
  return AttrInts(reader.cursor(), RequiredAttr(reader, op, name), name);
}

std::vector<int64_t> IntsAttrOr(ModuleReader& reader, const OpSyntax& op, std::string_view name,
                                std::vector<int64_t> fallback) {
  const Attr* attr = OptionalAttr(op, name);
  return attr ? AttrInts(reader.cursor(), *attr, name) : std::move(fallback);
}

int64_t IntAttr(ModuleReader& reader, const OpSyntax& op, std::string_view name) {
  return AttrInt(reader.cursor(), RequiredAttr(reader, op, name), name);
}

int64_t IntAttrOr(ModuleReader& reader, const OpSyntax& op, std::string_view name, int64_t fallback) {
  const Attr* attr = OptionalAttr(op, name);
  return attr ? AttrInt(reader.cursor(), *attr, name) : fallback;
}

bool BoolAttrOr(ModuleReader& reader, const OpSyntax& op, std::string_view name, bool fallback) {
  const Attr* attr = OptionalAttr(op, name);
  return attr ? AttrBool(reader.cursor(), *attr, name) : fallback;
}

std::string_view EnumAttr(ModuleReader& reader, const OpSyntax& op, std::string_view name) {
  return AttrEnum(reader.cursor(), RequiredAttr(reader, op, name), name);
}

void ExpectOperandCount(ModuleReader& reader, const OpSyntax& op, size_t n, bool at_least) {
  size_t got = op.operands.size();
  if (got == n || (at_least && got > n)) return;
  reader.Error(op.pos, StrCat(op.name, " takes ", at_least ? "at least " : "", n, n == 1 ? " operand" : " operands",
                              ", got ", got));
}

const Shape& SingleResultType(ModuleReader& reader, const OpSyntax& op) {
  if (op.result_types.size() != 1)
    reader.Error(op.pos, StrCat(op.name, " has ", op.result_types.size(), " result types, expected 1"));
  return op.result_types[0];
}

Shape TakeResultType(ModuleReader& reader, OpSyntax& op) {
  SingleResultType(reader, op);
  return std::move(op.result_types[0]);
}

void CheckOperandTypes(ModuleReader& reader, const OpSyntax& op) {
  if (op.operand_types_checked) return;
  if (op.operands_like_result) {
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const Shape& actual = op.operands[i]->shape();
      if (actual.Compatible(op.result_types[0])) continue;
      reader.Error(op.operand_pos[i], StrCat("operand ", i, " of ", op.name, " has type ", MlirTypeName(actual),
                                             " but the op's type says ", MlirTypeName(op.result_types[0])));
    }
    return;
  }
  if (op.operand_types.size() != op.operands.size())
    reader.Error(op.pos, StrCat(op.name, " has ", op.operands.size(), " operands but its type lists ",
                                op.operand_types.size(), " operand types"));
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const Shape& actual = op.operands[i]->shape();
    if (actual.Compatible(op.operand_types[i])) continue;
    size_t pos = i < op.operand_pos.size() ? op.operand_pos[i] : op.pos;
    reader.Error(pos, StrCat("operand ", i, " of ", op.name, " has type ", MlirTypeName(actual),
                             " but the op's type says ", MlirTypeName(op.operand_types[i])));
  }
}

void ExpectRegionCount(ModuleReader& reader, const OpSyntax& op, size_t n) {
  if (op.regions.size() == n) return;
  reader.Error(op.pos, StrCat(op.name, " has ", op.regions.size(), n == 1 ? " regions, expected 1" : " regions, expected ", n == 1 ? "" : std::to_string(n)));
}

std::unique_ptr<Instruction> MakeInstruction(Opcode opcode, Shape shape, const std::vector<Instruction*>& operands) {
  auto instruction = std::make_unique<Instruction>(opcode, std::move(shape));
  for (Instruction* operand : operands) instruction->AppendOperand(operand);
  return instruction;
}

Instruction* AddChecked(ModuleReader& reader, const OpSyntax& op, std::unique_ptr<Instruction> instruction) {
  reader.Verify(*instruction, op.pos);
  return reader.Add(std::move(instruction));
}

Shape ResultShapeOf(const std::vector<Shape>& results) {
  if (results.size() == 1) return results[0];
  return Shape::Tuple(results);
}

Converted Single(Instruction* instruction) { return Converted{{instruction}, instruction}; }

}  // namespace gspmd::stablehlo
