// Reading and writing the typed attribute values of HLO instructions: integer lists,
// windows, paddings, slices, convolution dim_labels, comparison directions, source-target
// pairs.
#pragma once

#include <string>
#include <vector>

#include "ir/attributes.h"
#include "text/scanner.h"

namespace gspmd::hlo_text {

// {1,2,3} or {}.
std::vector<int64_t> ParseIntList(Scanner& scanner);
std::string IntListToString(const std::vector<int64_t>& values);  // "{1,2,3}"

// {size=3x3 stride=2x1 pad=0_0x1_1 lhs_dilate=1x2 rhs_dilate=1x1 rhs_reversal=0x1}
Window ParseWindow(Scanner& scanner);
std::string WindowToString(const Window& window);  // with the braces

// 0_2x1_1_0 (low_high[_interior] per dimension; negative values allowed).
PaddingConfig ParsePadding(Scanner& scanner);
std::string PaddingToString(const PaddingConfig& padding);

// {[0:2], [3:4:2]}
std::vector<SliceDim> ParseSlice(Scanner& scanner);
std::string SliceToString(const std::vector<SliceDim>& slice);

// b01f_01io->b01f (any number of spatial dims, also bf_io->bf).
ConvDimensionNumbers ParseDimLabels(Scanner& scanner);
std::string DimLabelsToString(const ConvDimensionNumbers& dims);

// EQ NE LT LE GT GE / FLOAT TOTALORDER SIGNED UNSIGNED.
ComparisonDirection ParseComparisonDirection(Scanner& scanner);
std::string_view ComparisonDirectionName(ComparisonDirection direction);
ComparisonType ParseComparisonType(Scanner& scanner);
std::string_view ComparisonTypeName(ComparisonType type);

// {{0,1},{1,2}}
std::vector<SourceTargetPair> ParseSourceTargetPairs(Scanner& scanner);
std::string SourceTargetPairsToString(const std::vector<SourceTargetPair>& pairs);

// true / false.
bool ParseBool(Scanner& scanner);

}  // namespace gspmd::hlo_text
