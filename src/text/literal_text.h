// Reading constant literals from HLO text ("0.5", "{1, 2}", "{ {1, 2}, {3, 4} }", "true",
// "-inf", tuples "(1, {2, 3})") and XLA-style number formatting.
#pragma once

#include <string>

#include "ir/literal.h"
#include "text/scanner.h"

namespace gspmd::hlo_text {

// Parses the literal of a constant of the given shape (the text inside "constant(...)").
Literal ParseLiteral(Scanner& scanner, const Shape& shape);

// One element as XLA prints it: the shortest of %.{digits10}g / %.{max_digits10}g that
// reads back exactly (0.797884583, 1e-05, -inf, nan), integers in decimal, true/false.
std::string FormatElement(const Literal& literal, int64_t linear_index);

}  // namespace gspmd::hlo_text
