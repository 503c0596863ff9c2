// Reading shapes from HLO text: f32[16,32]{1,0}, (s32[], f32[2]), token[], bf16[<=8],
// layouts with tiling kept verbatim ({1,0:T(8,128)}).
#pragma once

#include "ir/shape.h"
#include "text/scanner.h"

namespace gspmd::hlo_text {

// Parses one shape at the scanner position. A layout is taken only when '{' follows the
// closing ']' directly (so "-> f32[] {" opens a computation body, not a layout).
Shape ParseShape(Scanner& scanner);

// Whether a shape (not a name) starts at the scanner position: '(' or an element type
// name followed by '['.
bool AtShape(Scanner& scanner);
// Looser: '(' or any word directly followed by '[' (so a misspelled element type such as
// f33[2] is reported as one rather than as an unknown opcode).
bool AtShapeSyntax(Scanner& scanner);

}  // namespace gspmd::hlo_text
