// Storage-only element types: the sub-byte integers (s1, s2, s4, u1, u2, u4) and the 8- and
// 4-bit floats (f8e5m2, f8e4m3fn, ..., f4e2m1fn, f8e8m0fnu). They are parsed, printed,
// partitioned, moved and converted (through double); nothing computes on them directly.
// Each element takes one byte, as in XLA's literals.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/element_type.h"

namespace gspmd {

bool IsNarrowInteger(ElementType type);  // s1 s2 s4 u1 u2 u4
bool IsNarrowFloat(ElementType type);    // the f8 and f4 types
inline bool IsStorageOnly(ElementType type) { return IsNarrowInteger(type) || IsNarrowFloat(type); }

// The value range of a narrow integer type.
int64_t NarrowIntegerMin(ElementType type);
int64_t NarrowIntegerMax(ElementType type);

// A narrow float's byte as a double (NaN when the code is NaN).
double DecodeNarrowFloat(ElementType type, uint8_t code);
// The nearest code (ties to even). A finite value beyond the largest finite one becomes inf,
// or NaN for types without inf; `in_range` (when given) says whether it was finite and fit.
uint8_t EncodeNarrowFloat(ElementType type, double value, bool* in_range = nullptr);

// Element i of narrow-typed bytes as a double / from a double (integers saturate).
double NarrowToDouble(ElementType type, const uint8_t* bytes, int64_t i);
void NarrowFromDouble(ElementType type, uint8_t* bytes, int64_t i, double value);

// Shortest decimal text that reads back to the same code ("0.5", "-inf", "nan").
std::string FormatNarrowFloat(ElementType type, uint8_t code);

}  // namespace gspmd
