// Helpers shared by the op families: reading the common pieces of the pretty syntax
// (keyword attributes, type signatures) and reading attributes and checking operands and
// types in the converters, with errors that name the op and point at the text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/stablehlo/module_reader.h"

namespace gspmd::stablehlo {

// ---- Pretty syntax ----

// ": T" (every operand and the result have type T) or ": (T1, T2) -> T3".
void ReadSameOperandsAndResultType(ModuleReader& reader, OpSyntax& op);
// ": (T1, T2) -> T3" or ": (T1) -> (T2, T3)".
void ReadFunctionSignature(ModuleReader& reader, OpSyntax& op);
// ": T1, T2 -> R" (CHLO style), ": (T1, T2) -> R", or ": T" for ops whose result type is T.
void ReadLooseSignature(ModuleReader& reader, OpSyntax& op);
// "KEYWORD = [1, 2]" stored as attribute `attr_name` (a list of integers).
void ReadKeywordInts(ModuleReader& reader, OpSyntax& op, std::string_view keyword, std::string_view attr_name);
// "KEYWORD = 3" stored as attribute `attr_name`.
void ReadKeywordInt(ModuleReader& reader, OpSyntax& op, std::string_view keyword, std::string_view attr_name);
// ", KEYWORD = WORD" (an enum) when present.
bool ReadOptionalKeywordEnum(ModuleReader& reader, OpSyntax& op, std::string_view keyword, std::string_view attr_name);
// "precision = [DEFAULT, HIGH]" when the keyword is next.
bool ReadOptionalPrecision(ModuleReader& reader, OpSyntax& op);

// ---- Converters ----

std::string OpLabel(const OpSyntax& op);  // "stablehlo.add"
const Attr& RequiredAttr(ModuleReader& reader, const OpSyntax& op, std::string_view name);
const Attr* OptionalAttr(const OpSyntax& op, std::string_view name);
std::vector<int64_t> IntsAttr(ModuleReader& reader, const OpSyntax& op, std::string_view name);
std::vector<int64_t> IntsAttrOr(ModuleReader& reader, const OpSyntax& op, std::string_view name,
                                std::vector<int64_t> fallback);
int64_t IntAttr(ModuleReader& reader, const OpSyntax& op, std::string_view name);
int64_t IntAttrOr(ModuleReader& reader, const OpSyntax& op, std::string_view name, int64_t fallback);
bool BoolAttrOr(ModuleReader& reader, const OpSyntax& op, std::string_view name, bool fallback);
std::string_view EnumAttr(ModuleReader& reader, const OpSyntax& op, std::string_view name);

// The op must have exactly `n` operands (at least `n` when `at_least`).
void ExpectOperandCount(ModuleReader& reader, const OpSyntax& op, size_t n, bool at_least = false);
// The result type (the op must write exactly one).
const Shape& SingleResultType(ModuleReader& reader, const OpSyntax& op);
// The result type moved out of `op` (for the instruction that has it; read it no more).
Shape TakeResultType(ModuleReader& reader, OpSyntax& op);
// Each written operand type matches the operand's shape, and the counts agree.
void CheckOperandTypes(ModuleReader& reader, const OpSyntax& op);
// The op must have exactly `n` regions.
void ExpectRegionCount(ModuleReader& reader, const OpSyntax& op, size_t n);

// Stages `instruction`, checks it with the IR's rules (errors at the op) and returns it.
Instruction* AddChecked(ModuleReader& reader, const OpSyntax& op, std::unique_ptr<Instruction> instruction);
// A new instruction of `opcode` with the op's single result type and its operands.
std::unique_ptr<Instruction> MakeInstruction(Opcode opcode, Shape shape, const std::vector<Instruction*>& operands);
// The HLO opcode of a binary elementwise op name ("stablehlo.add" -> add), for reduce's
// compact `applies stablehlo.add` form.
std::optional<Opcode> BinaryOpcodeFor(std::string_view name);

// The HLO shape of an op's results: the one result, or a tuple of them.
Shape ResultShapeOf(const std::vector<Shape>& results);

// The result of a single-result op.
Converted Single(Instruction* instruction);

}  // namespace gspmd::stablehlo
