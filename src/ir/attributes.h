// Typed attributes of HLO instructions: windows, padding, slicing, dimension numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gspmd {

// One dimension of a window (reduce-window, convolution, select-and-scatter).
// Text: window={size=3x3 stride=2x1 pad=0_0x1_1 lhs_dilate=1x2 rhs_dilate=1x1 rhs_reversal=0x1}
struct WindowDim {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t window_dilation = 1;  // rhs_dilate
  int64_t base_dilation = 1;    // lhs_dilate
  bool reversal = false;        // rhs_reversal
  bool operator==(const WindowDim&) const = default;
};
using Window = std::vector<WindowDim>;

// One dimension of a pad: padding=1_2_0x0_0 (low_high[_interior]); low/high may be negative.
struct PaddingDim {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
  bool operator==(const PaddingDim&) const = default;
};
using PaddingConfig = std::vector<PaddingDim>;

// One dimension of a slice: slice={[0:2], [3:4:2]}.
struct SliceDim {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  bool operator==(const SliceDim&) const = default;
};

struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batch_dims;
  std::vector<int64_t> rhs_batch_dims;
  std::vector<int64_t> lhs_contracting_dims;
  std::vector<int64_t> rhs_contracting_dims;
  bool operator==(const DotDimensionNumbers&) const = default;
};

// Convolution dimension numbers; text dim_labels=b01f_01io->b01f.
struct ConvDimensionNumbers {
  int64_t input_batch_dim = 0;
  int64_t input_feature_dim = 0;
  std::vector<int64_t> input_spatial_dims;
  int64_t kernel_input_feature_dim = 0;
  int64_t kernel_output_feature_dim = 0;
  std::vector<int64_t> kernel_spatial_dims;
  int64_t output_batch_dim = 0;
  int64_t output_feature_dim = 0;
  std::vector<int64_t> output_spatial_dims;
  bool operator==(const ConvDimensionNumbers&) const = default;
};

struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> start_index_map;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const GatherDimensionNumbers&) const = default;
};

struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const ScatterDimensionNumbers&) const = default;
};

enum class ComparisonDirection { kEq, kNe, kLt, kLe, kGt, kGe };
// compare's type=: the default for the operand type, or an explicit one.
enum class ComparisonType { kDefault, kFloat, kTotalOrder, kSigned, kUnsigned };

struct SourceTargetPair {
  int64_t source = 0;
  int64_t target = 0;
  bool operator==(const SourceTargetPair&) const = default;
};

}  // namespace gspmd
