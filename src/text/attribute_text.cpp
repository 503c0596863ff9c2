// Typed attribute values of HLO instructions: parsing and XLA-style printing.
#include "text/attribute_text.h"

#include <algorithm>

namespace gspmd::hlo_text {
namespace {

bool NextIs(Scanner& scanner, char c) {
  std::string_view text = scanner.text();
  return scanner.pos() < text.size() && text[scanner.pos()] == c;
}

// Reads items separated by 'x' with no spaces in between: 3x3, 0_1x2_2.
template <typename ReadItem>
void ReadXSeparated(Scanner& scanner, ReadItem&& read_item) {
  read_item();
  while (NextIs(scanner, 'x')) {
    scanner.set_pos(scanner.pos() + 1);
    read_item();
  }
}

std::string JoinX(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += 'x';
    out += parts[i];
  }
  return out;
}

}  // namespace

std::vector<int64_t> ParseIntList(Scanner& scanner) {
  scanner.Expect('{', "'{' to start a list of integers");
  std::vector<int64_t> values;
  if (scanner.TryConsume('}')) return values;
  do {
    values.push_back(scanner.ReadInt("an integer"));
  } while (scanner.TryConsume(','));
  scanner.Expect('}', "',' or '}' in the list of integers");
  return values;
}

std::string IntListToString(const std::vector<int64_t>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(values[i]);
  }
  return out + "}";
}

Window ParseWindow(Scanner& scanner) {
  size_t start = scanner.pos();
  scanner.Expect('{', "'{' to start a window");
  std::vector<int64_t> size, stride, lhs_dilate, rhs_dilate, reversal;
  std::vector<std::pair<int64_t, int64_t>> pad;
  while (!scanner.TryConsume('}')) {
    scanner.SkipSpace();
    size_t key_pos = scanner.pos();
    std::string_view key = scanner.ReadWord();
    if (key.empty()) scanner.ErrorExpected("a window field (size, stride, pad, lhs_dilate, rhs_dilate, rhs_reversal) or '}'");
    scanner.Expect('=', What("'=' after window field ", key));
    auto read_ints = [&](std::vector<int64_t>& out) {
      ReadXSeparated(scanner, [&] { out.push_back(scanner.ReadInt(What("an integer in window ", key))); });
    };
    if (key == "size") {
      read_ints(size);
    } else if (key == "stride") {
      read_ints(stride);
    } else if (key == "lhs_dilate") {
      read_ints(lhs_dilate);
    } else if (key == "rhs_dilate") {
      read_ints(rhs_dilate);
    } else if (key == "rhs_reversal") {
      read_ints(reversal);
    } else if (key == "pad") {
      ReadXSeparated(scanner, [&] {
        int64_t low = scanner.ReadInt("the low padding (low_high) in window pad");
        if (!NextIs(scanner, '_')) scanner.ErrorExpected("'_' between low and high padding in window pad");
        scanner.set_pos(scanner.pos() + 1);
        int64_t high = scanner.ReadInt("the high padding (low_high) in window pad");
        pad.emplace_back(low, high);
      });
    } else {
      scanner.ErrorAt(key_pos, StrCat("unknown window field '", key,
                                      "': expected size, stride, pad, lhs_dilate, rhs_dilate or rhs_reversal"));
    }
  }
  Window window(size.size());
  auto check_rank = [&](size_t n, std::string_view field) {
    if (n != 0 && n != size.size())
      scanner.ErrorAt(start, StrCat("window ", field, " has ", n, " dimensions, expected ", size.size(),
                                    " (as many as size)"));
  };
  check_rank(stride.size(), "stride");
  check_rank(pad.size(), "pad");
  check_rank(lhs_dilate.size(), "lhs_dilate");
  check_rank(rhs_dilate.size(), "rhs_dilate");
  check_rank(reversal.size(), "rhs_reversal");
  for (size_t i = 0; i < size.size(); ++i) {
    WindowDim& dim = window[i];
    dim.size = size[i];
    if (!stride.empty()) dim.stride = stride[i];
    if (!pad.empty()) {
      dim.padding_low = pad[i].first;
      dim.padding_high = pad[i].second;
    }
    if (!lhs_dilate.empty()) dim.base_dilation = lhs_dilate[i];
    if (!rhs_dilate.empty()) dim.window_dilation = rhs_dilate[i];
    if (!reversal.empty()) dim.reversal = reversal[i] != 0;
  }
  return window;
}

std::string WindowToString(const Window& window) {
  if (window.empty()) return "{}";
  auto any = [&](auto predicate) { return std::any_of(window.begin(), window.end(), predicate); };
  auto field = [&](auto get) {
    std::vector<std::string> parts;
    for (const WindowDim& dim : window) parts.push_back(get(dim));
    return JoinX(parts);
  };
  std::string out = "{size=" + field([](const WindowDim& d) { return std::to_string(d.size); });
  if (any([](const WindowDim& d) { return d.stride != 1; }))
    out += " stride=" + field([](const WindowDim& d) { return std::to_string(d.stride); });
  if (any([](const WindowDim& d) { return d.padding_low != 0 || d.padding_high != 0; }))
    out += " pad=" + field([](const WindowDim& d) {
      return std::to_string(d.padding_low) + "_" + std::to_string(d.padding_high);
    });
  if (any([](const WindowDim& d) { return d.base_dilation != 1; }))
    out += " lhs_dilate=" + field([](const WindowDim& d) { return std::to_string(d.base_dilation); });
  if (any([](const WindowDim& d) { return d.window_dilation != 1; }))
    out += " rhs_dilate=" + field([](const WindowDim& d) { return std::to_string(d.window_dilation); });
  if (any([](const WindowDim& d) { return d.reversal; }))
    out += " rhs_reversal=" + field([](const WindowDim& d) { return std::string(d.reversal ? "1" : "0"); });
  return out + "}";
}

PaddingConfig ParsePadding(Scanner& scanner) {
  PaddingConfig padding;
  scanner.SkipSpace();
  ReadXSeparated(scanner, [&] {
    PaddingDim dim;
    dim.low = scanner.ReadInt("the low padding (low_high[_interior])");
    if (!NextIs(scanner, '_')) scanner.ErrorExpected("'_' between low and high padding (low_high[_interior])");
    scanner.set_pos(scanner.pos() + 1);
    dim.high = scanner.ReadInt("the high padding (low_high[_interior])");
    if (NextIs(scanner, '_')) {
      scanner.set_pos(scanner.pos() + 1);
      dim.interior = scanner.ReadInt("the interior padding (low_high_interior)");
    }
    padding.push_back(dim);
  });
  return padding;
}

std::string PaddingToString(const PaddingConfig& padding) {
  bool has_interior = std::any_of(padding.begin(), padding.end(),
                                  [](const PaddingDim& d) { return d.interior != 0; });
  std::vector<std::string> parts;
  for (const PaddingDim& dim : padding) {
    std::string part = std::to_string(dim.low) + "_" + std::to_string(dim.high);
    if (has_interior) part += "_" + std::to_string(dim.interior);
    parts.push_back(part);
  }
  return JoinX(parts);
}

std::vector<SliceDim> ParseSlice(Scanner& scanner) {
  scanner.Expect('{', "'{' to start the slice bounds");
  std::vector<SliceDim> slice;
  if (scanner.TryConsume('}')) return slice;
  do {
    scanner.Expect('[', "'[' to start a slice bound [start:limit(:stride)]");
    SliceDim dim;
    dim.start = scanner.ReadInt("the slice start");
    scanner.Expect(':', "':' after the slice start");
    dim.limit = scanner.ReadInt("the slice limit");
    if (scanner.TryConsume(':')) dim.stride = scanner.ReadInt("the slice stride");
    scanner.Expect(']', "']' to close the slice bound");
    slice.push_back(dim);
  } while (scanner.TryConsume(','));
  scanner.Expect('}', "',' or '}' in the slice bounds");
  return slice;
}

std::string SliceToString(const std::vector<SliceDim>& slice) {
  bool strided = std::any_of(slice.begin(), slice.end(), [](const SliceDim& d) { return d.stride != 1; });
  std::string out = "{";
  for (size_t i = 0; i < slice.size(); ++i) {
    if (i > 0) out += ", ";
    out += "[" + std::to_string(slice[i].start) + ":" + std::to_string(slice[i].limit);
    if (strided) out += ":" + std::to_string(slice[i].stride);
    out += "]";
  }
  return out + "}";
}

namespace {

// One label of dim_labels ("b01f"): the positions of the two named dims and of each spatial
// dim. Returns false when the label is malformed.
bool DecodeLabel(std::string_view label, char first, char second, int64_t& first_dim,
                 int64_t& second_dim, std::vector<int64_t>& spatial) {
  first_dim = second_dim = -1;
  int64_t rank = static_cast<int64_t>(label.size());
  if (rank < 2) return false;
  spatial.assign(rank - 2, -1);
  for (int64_t pos = 0; pos < rank; ++pos) {
    char c = label[pos];
    if (c == first && first_dim < 0) {
      first_dim = pos;
    } else if (c == second && second_dim < 0) {
      second_dim = pos;
    } else if (IsDigit(c) && c - '0' < rank - 2 && spatial[c - '0'] < 0) {
      spatial[c - '0'] = pos;
    } else {
      return false;
    }
  }
  return first_dim >= 0 && second_dim >= 0;
}

std::string EncodeLabel(char first, int64_t first_dim, char second, int64_t second_dim,
                        const std::vector<int64_t>& spatial) {
  std::string label(spatial.size() + 2, '?');
  auto put = [&](int64_t pos, char c) {
    if (pos >= 0 && pos < static_cast<int64_t>(label.size())) label[pos] = c;
  };
  put(first_dim, first);
  put(second_dim, second);
  for (size_t i = 0; i < spatial.size(); ++i) put(spatial[i], static_cast<char>('0' + i));
  return label;
}

}  // namespace

ConvDimensionNumbers ParseDimLabels(Scanner& scanner) {
  scanner.SkipSpace();
  size_t start = scanner.pos();
  std::string_view text = scanner.ReadRawValue("dim_labels such as b01f_01io->b01f");
  size_t underscore = text.find('_');
  size_t arrow = text.find("->");
  auto fail = [&](std::string_view what) -> void {
    scanner.ErrorAt(start, StrCat("bad dim_labels '", text, "': ", what));
  };
  if (underscore == std::string_view::npos || arrow == std::string_view::npos || arrow < underscore)
    fail("expected input_kernel->output labels such as b01f_01io->b01f");
  std::string_view input = text.substr(0, underscore);
  std::string_view kernel = text.substr(underscore + 1, arrow - underscore - 1);
  std::string_view output = text.substr(arrow + 2);
  ConvDimensionNumbers dims;
  if (!DecodeLabel(input, 'b', 'f', dims.input_batch_dim, dims.input_feature_dim, dims.input_spatial_dims))
    fail("expected the input label to name b, f and spatial dims 0..n-1 once each");
  if (!DecodeLabel(kernel, 'i', 'o', dims.kernel_input_feature_dim, dims.kernel_output_feature_dim,
                   dims.kernel_spatial_dims))
    fail("expected the kernel label to name i, o and spatial dims 0..n-1 once each");
  if (!DecodeLabel(output, 'b', 'f', dims.output_batch_dim, dims.output_feature_dim, dims.output_spatial_dims))
    fail("expected the output label to name b, f and spatial dims 0..n-1 once each");
  if (input.size() != kernel.size() || input.size() != output.size())
    fail("expected the input, kernel and output labels to have the same number of spatial dims");
  return dims;
}

std::string DimLabelsToString(const ConvDimensionNumbers& dims) {
  return EncodeLabel('b', dims.input_batch_dim, 'f', dims.input_feature_dim, dims.input_spatial_dims) + "_" +
         EncodeLabel('i', dims.kernel_input_feature_dim, 'o', dims.kernel_output_feature_dim,
                     dims.kernel_spatial_dims) +
         "->" + EncodeLabel('b', dims.output_batch_dim, 'f', dims.output_feature_dim, dims.output_spatial_dims);
}

namespace {

constexpr std::pair<ComparisonDirection, std::string_view> kDirections[] = {
    {ComparisonDirection::kEq, "EQ"}, {ComparisonDirection::kNe, "NE"}, {ComparisonDirection::kLt, "LT"},
    {ComparisonDirection::kLe, "LE"}, {ComparisonDirection::kGt, "GT"}, {ComparisonDirection::kGe, "GE"},
};

constexpr std::pair<ComparisonType, std::string_view> kComparisonTypes[] = {
    {ComparisonType::kFloat, "FLOAT"},
    {ComparisonType::kTotalOrder, "TOTALORDER"},
    {ComparisonType::kSigned, "SIGNED"},
    {ComparisonType::kUnsigned, "UNSIGNED"},
};

}  // namespace

ComparisonDirection ParseComparisonDirection(Scanner& scanner) {
  scanner.SkipSpace();
  size_t start = scanner.pos();
  std::string_view word = scanner.ReadWord();
  for (const auto& [direction, name] : kDirections)
    if (name == word) return direction;
  scanner.set_pos(start);
  scanner.ErrorExpected("a comparison direction (EQ, NE, LT, LE, GT, GE)");
}

std::string_view ComparisonDirectionName(ComparisonDirection direction) {
  for (const auto& [value, name] : kDirections)
    if (value == direction) return name;
  return "EQ";
}

ComparisonType ParseComparisonType(Scanner& scanner) {
  scanner.SkipSpace();
  size_t start = scanner.pos();
  std::string_view word = scanner.ReadWord();
  for (const auto& [type, name] : kComparisonTypes)
    if (name == word) return type;
  scanner.set_pos(start);
  scanner.ErrorExpected("a comparison type (FLOAT, TOTALORDER, SIGNED, UNSIGNED)");
}

std::string_view ComparisonTypeName(ComparisonType type) {
  for (const auto& [value, name] : kComparisonTypes)
    if (value == type) return name;
  return "";
}

std::vector<SourceTargetPair> ParseSourceTargetPairs(Scanner& scanner) {
  scanner.Expect('{', "'{' to start the source-target pairs");
  std::vector<SourceTargetPair> pairs;
  if (scanner.TryConsume('}')) return pairs;
  do {
    scanner.Expect('{', "'{' to start a {source,target} pair");
    SourceTargetPair pair;
    pair.source = scanner.ReadInt("the source device of the pair");
    scanner.Expect(',', "',' between source and target");
    pair.target = scanner.ReadInt("the target device of the pair");
    scanner.Expect('}', "'}' to close the {source,target} pair");
    pairs.push_back(pair);
  } while (scanner.TryConsume(','));
  scanner.Expect('}', "',' or '}' in the source-target pairs");
  return pairs;
}

std::string SourceTargetPairsToString(const std::vector<SourceTargetPair>& pairs) {
  std::string out = "{";
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (i > 0) out += ',';
    out += "{" + std::to_string(pairs[i].source) + "," + std::to_string(pairs[i].target) + "}";
  }
  return out + "}";
}

bool ParseBool(Scanner& scanner) {
  if (scanner.TryConsume("true")) return true;
  if (scanner.TryConsume("false")) return false;
  scanner.ErrorExpected("true or false");
}

}  // namespace gspmd::hlo_text
