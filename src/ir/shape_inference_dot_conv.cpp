// Shape inference for dot (dense and sparse), ragged-dot, scaled-dot and convolution.
#include <charconv>

#include "ir/shape_inference_util.h"
#include "support/allocation.h"

namespace gspmd::shape_rules {
namespace {

// One entry of a sparse dot's sparsity=L.1@2:4_R.0@2:4: operand `side` (0 lhs, 1 rhs) stores
// `n` of every `m` elements of dimension `dim`.
struct SparsityDescriptor {
  int side = 0;
  int64_t dim = 0;
  int64_t n = 0;
  int64_t m = 0;
};

bool ReadNumber(std::string_view& text, int64_t& value) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr == text.data()) return false;
  text.remove_prefix(static_cast<size_t>(ptr - text.data()));
  return true;
}

std::optional<std::vector<SparsityDescriptor>> ParseSparsity(std::string_view text) {
  std::vector<SparsityDescriptor> descriptors;
  while (!text.empty()) {
    SparsityDescriptor d;
    if (text[0] != 'L' && text[0] != 'R') return std::nullopt;
    d.side = text[0] == 'L' ? 0 : 1;
    text.remove_prefix(1);
    if (text.empty() || text[0] != '.') return std::nullopt;
    text.remove_prefix(1);
    if (!ReadNumber(text, d.dim) || text.empty() || text[0] != '@') return std::nullopt;
    text.remove_prefix(1);
    if (!ReadNumber(text, d.n) || text.empty() || text[0] != ':') return std::nullopt;
    text.remove_prefix(1);
    if (!ReadNumber(text, d.m)) return std::nullopt;
    if (d.n <= 0 || d.m <= 0 || d.n > d.m) return std::nullopt;
    descriptors.push_back(d);
    if (!text.empty()) {
      if (text[0] != '_') return std::nullopt;
      text.remove_prefix(1);
    }
  }
  return descriptors;
}

std::string_view ExtraAttribute(const Instruction& instruction, std::string_view name) {
  for (const auto& [key, value] : instruction.extra_attributes())
    if (key == name) return value;
  return {};
}

// The logical size of dimension `dim` of operand `side`: a sparse dimension stores n of m.
int64_t LogicalSize(const Shape& shape, int side, int64_t dim, const std::vector<SparsityDescriptor>& sparsity) {
  for (const SparsityDescriptor& d : sparsity)
    if (d.side == side && d.dim == dim) return shape.dim(dim) / d.n * d.m;
  return shape.dim(dim);
}

InferredShape InferDenseOrSparseDot(const Instruction& instruction) {
  const Shape& lhs = OperandShape(instruction, 0);
  const Shape& rhs = OperandShape(instruction, 1);
  if (!lhs.IsArray()) return Fail(OperandError(instruction, 0, "an array"));
  if (!rhs.IsArray()) return Fail(OperandError(instruction, 1, "an array"));
  std::vector<SparsityDescriptor> sparsity;
  std::string_view sparsity_text = ExtraAttribute(instruction, "sparsity");
  if (!sparsity_text.empty()) {
    std::optional<std::vector<SparsityDescriptor>> parsed = ParseSparsity(sparsity_text);
    if (!parsed || parsed->empty() || parsed->size() > 2)
      return Fail(StrCat("dot sparsity=", sparsity_text, " is not a sparsity descriptor, expected e.g. L.1@2:4"));
    sparsity = *parsed;
  }
  if (instruction.operand_count() != 2 + static_cast<int64_t>(sparsity.size()))
    return Fail(StrCat("dot has ", instruction.operand_count(), " operands, expected ", 2 + sparsity.size(),
                       sparsity.empty() ? " (lhs and rhs)" : " (lhs, rhs and one metadata operand per sparse side)"));
  for (const SparsityDescriptor& d : sparsity) {
    const Shape& sparse = d.side == 0 ? lhs : rhs;
    if (d.dim < 0 || d.dim >= sparse.rank() || sparse.dim(d.dim) % d.n != 0)
      return Fail(StrCat("dot sparsity=", sparsity_text, ": dimension ", d.dim, " of ", Text(sparse),
                         " cannot hold ", d.n, " of every ", d.m, " elements"));
  }
  if (!SameTypeIgnoringFpPrecision(lhs.element_type(), rhs.element_type()) &&
      !(IsInteger(lhs.element_type()) && IsInteger(rhs.element_type())))
    return Fail(OperandError(instruction, 1, StrCat("element type ", ElementTypeName(lhs.element_type()),
                                                    " like the lhs")));
  const DotDimensionNumbers& dims = instruction.dot_dims();
  auto check_side = [&](const Shape& shape, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting,
                        std::string_view side) -> std::string {
    std::vector<int64_t> all = batch;
    all.insert(all.end(), contracting.begin(), contracting.end());
    return CheckDimensionList(StrCat("dot ", side, "_batch_dims and ", side, "_contracting_dims"), all, shape.rank(),
                              true, shape);
  };
  if (std::string error = check_side(lhs, dims.lhs_batch_dims, dims.lhs_contracting_dims, "lhs"); !error.empty())
    return Fail(error);
  if (std::string error = check_side(rhs, dims.rhs_batch_dims, dims.rhs_contracting_dims, "rhs"); !error.empty())
    return Fail(error);
  auto check_pairs = [&](const std::vector<int64_t>& l, const std::vector<int64_t>& r,
                         std::string_view kind) -> std::string {
    if (l.size() != r.size())
      return StrCat("dot has ", l.size(), " lhs and ", r.size(), " rhs ", kind, " dimensions, expected as many");
    for (size_t i = 0; i < l.size(); ++i) {
      int64_t lsize = LogicalSize(lhs, 0, l[i], sparsity), rsize = LogicalSize(rhs, 1, r[i], sparsity);
      if (lsize != rsize)
        return StrCat("dot ", kind, " dimensions have sizes ", lsize, " (lhs dimension ", l[i], " of ", Text(lhs),
                      ") and ", rsize, " (rhs dimension ", r[i], " of ", Text(rhs), "), expected equal sizes");
    }
    return "";
  };
  if (std::string error = check_pairs(dims.lhs_batch_dims, dims.rhs_batch_dims, "batch"); !error.empty())
    return Fail(error);
  if (std::string error = check_pairs(dims.lhs_contracting_dims, dims.rhs_contracting_dims, "contracting");
      !error.empty())
    return Fail(error);
  std::vector<int64_t> result;
  for (int64_t d : dims.lhs_batch_dims) result.push_back(lhs.dim(d));
  for (int64_t d = 0; d < lhs.rank(); ++d)
    if (!Contains(dims.lhs_batch_dims, d) && !Contains(dims.lhs_contracting_dims, d))
      result.push_back(LogicalSize(lhs, 0, d, sparsity));
  for (int64_t d = 0; d < rhs.rank(); ++d)
    if (!Contains(dims.rhs_batch_dims, d) && !Contains(dims.rhs_contracting_dims, d))
      result.push_back(LogicalSize(rhs, 1, d, sparsity));
  return Ok(Shape(lhs.element_type(), result));
}

// Labels of one convolution side: the batch/feature dims and the spatial dims are distinct
// dims of a rank-(2 + spatial) array.
std::string CheckConvLabels(std::string_view side, int64_t a, int64_t b, const std::vector<int64_t>& spatial,
                            const Shape& shape) {
  std::vector<int64_t> all = {a, b};
  all.insert(all.end(), spatial.begin(), spatial.end());
  if (static_cast<int64_t>(all.size()) != shape.rank())
    return StrCat("convolution dim_labels give the ", side, " ", all.size(), " dimensions, but it is ", Text(shape));
  return CheckDimensionList(StrCat("convolution dim_labels of the ", side), all, shape.rank(), true, shape);
}

}  // namespace

InferredShape InferDot(const Instruction& instruction) {
  if (instruction.opcode() == Opcode::kDot) return InferDenseOrSparseDot(instruction);
  int64_t expected = instruction.opcode() == Opcode::kRaggedDot ? 3 : 4;
  if (instruction.operand_count() != expected)
    return Fail(StrCat(Name(instruction), " has ", instruction.operand_count(), " operands, expected ", expected));
  for (int64_t i = 0; i < expected; ++i)
    if (!OperandShape(instruction, i).IsArray()) return Fail(OperandError(instruction, i, "an array"));
  return MustBeWritten();
}

InferredShape InferConvolution(const Instruction& instruction) {
  const Shape& input = OperandShape(instruction, 0);
  const Shape& kernel = OperandShape(instruction, 1);
  if (!input.IsArray()) return Fail(OperandError(instruction, 0, "an array"));
  if (!kernel.IsArray()) return Fail(OperandError(instruction, 1, "an array"));
  if (!SameTypeIgnoringFpPrecision(input.element_type(), kernel.element_type()) &&
      !(IsInteger(input.element_type()) && IsInteger(kernel.element_type())))
    return Fail(OperandError(instruction, 1, StrCat("element type ", ElementTypeName(input.element_type()),
                                                    " like the input")));
  const ConvDimensionNumbers& d = instruction.conv_dims();
  const size_t spatial = d.input_spatial_dims.size();
  if (d.kernel_spatial_dims.size() != spatial || d.output_spatial_dims.size() != spatial)
    return Fail("convolution dim_labels name different numbers of spatial dimensions for input, kernel and output");
  if (std::string error = CheckConvLabels("input", d.input_batch_dim, d.input_feature_dim, d.input_spatial_dims, input);
      !error.empty())
    return Fail(error);
  if (std::string error = CheckConvLabels("kernel", d.kernel_input_feature_dim, d.kernel_output_feature_dim,
                                          d.kernel_spatial_dims, kernel);
      !error.empty())
    return Fail(error);
  Shape output_rank_probe(input.element_type(), std::vector<int64_t>(spatial + 2, 1));
  if (std::string error = CheckConvLabels("output", d.output_batch_dim, d.output_feature_dim, d.output_spatial_dims,
                                          output_rank_probe);
      !error.empty())
    return Fail(error);
  const Window& window = instruction.window();
  if (window.size() != spatial)
    return Fail(StrCat("convolution window has ", window.size(), " dimensions, expected one per spatial dimension (",
                       spatial, ")"));
  int64_t features = instruction.feature_group_count, batches = instruction.batch_group_count;
  if (features <= 0 || batches <= 0 || (features > 1 && batches > 1))
    return Fail(StrCat("convolution has feature_group_count=", features, " batch_group_count=", batches,
                       ", expected positive counts, at most one of them above 1"));
  int64_t input_features = input.dim(d.input_feature_dim);
  int64_t kernel_in = kernel.dim(d.kernel_input_feature_dim), kernel_out = kernel.dim(d.kernel_output_feature_dim);
  std::optional<int64_t> grouped_in = CheckedMul(kernel_in, features);
  if (!grouped_in || input_features != *grouped_in)
    return Fail(StrCat("convolution input has ", input_features, " features, expected kernel input features (",
                       kernel_in, ") x feature_group_count (", features, ")"));
  if (kernel_out % features != 0 || kernel_out % batches != 0)
    return Fail(StrCat("convolution kernel has ", kernel_out, " output features, expected a multiple of ",
                       features > 1 ? "feature_group_count " : "batch_group_count ", std::max(features, batches)));
  int64_t input_batch = input.dim(d.input_batch_dim);
  if (input_batch % batches != 0)
    return Fail(StrCat("convolution input batch ", input_batch, " is not a multiple of batch_group_count ", batches));
  std::vector<int64_t> output(spatial + 2, 0);
  output[static_cast<size_t>(d.output_batch_dim)] = input_batch / batches;
  output[static_cast<size_t>(d.output_feature_dim)] = kernel_out;
  for (size_t i = 0; i < spatial; ++i) {
    const WindowDim& w = window[i];
    int64_t kernel_size = kernel.dim(d.kernel_spatial_dims[i]);
    if (w.size != kernel_size)
      return Fail(StrCat("convolution window size ", w.size, " of spatial dimension ", i,
                         " does not match the kernel's ", kernel_size, " (dimension ", d.kernel_spatial_dims[i],
                         " of ", Text(kernel), ")"));
    std::string error;
    std::optional<int64_t> size = WindowedSize(input.dim(d.input_spatial_dims[i]), w, error);
    if (!size) return Fail(StrCat("convolution spatial dimension ", i, ": ", error));
    output[static_cast<size_t>(d.output_spatial_dims[i])] = *size;
  }
  return Ok(Shape(input.element_type(), output));
}

}  // namespace gspmd::shape_rules
