// Propagation rules for convolution. A convolution whose spatial dims are all trivial (window
// 1, or a window covering the whole input) is a dot in disguise and uses the dot rules; one
// with real spatial windows takes the input's batch/spatial tiling when the kernel is small.
#include "propagation/rules/dot_dims.h"
#include "propagation/rules/rules.h"
#include "propagation/sharding_algebra.h"

namespace gspmd::propagation::rules {
namespace {

struct ConvDims {
  DotDims dot;
  std::vector<DimTriple> spatial;  // real windowed dims (lhs, rhs, output)
};

ConvDims ParseConvDims(const Instruction& conv) {
  const ConvDimensionNumbers& cd = conv.conv_dims();
  const Shape& lhs = conv.operand(0)->shape();
  const Shape& rhs = conv.operand(1)->shape();
  ConvDims dims;
  dims.dot.output_rank = conv.shape().rank();
  dims.dot.lhs_non_contracting.push_back({cd.input_batch_dim, -1, cd.output_batch_dim});
  dims.dot.rhs_non_contracting.push_back({-1, cd.kernel_output_feature_dim, cd.output_feature_dim});
  dims.dot.contracting.push_back({cd.input_feature_dim, cd.kernel_input_feature_dim, -1});
  for (size_t i = 0; i < cd.input_spatial_dims.size(); ++i) {
    const int64_t l = cd.input_spatial_dims[i], r = cd.kernel_spatial_dims.at(i),
                  o = cd.output_spatial_dims.at(i);
    const int64_t lhs_size = lhs.dim(l), rhs_size = rhs.dim(r);
    const WindowDim wd = i < conv.window().size() ? conv.window()[i] : WindowDim{};
    const bool no_pad = wd.padding_low == 0 && wd.padding_high == 0;
    const DimTriple triple{l, r, o};
    if (lhs_size == wd.size && std::max<int64_t>(1, lhs_size - 1) == wd.stride &&
        lhs_size == wd.base_dilation && wd.window_dilation == 1 && no_pad && !wd.reversal) {
      dims.dot.batch.push_back(triple);
    } else if (lhs_size == wd.size && wd.base_dilation == 1 && wd.window_dilation == 1 && no_pad &&
               !wd.reversal) {
      dims.dot.contracting.push_back(triple);
    } else if (wd.stride == 1 && wd.window_dilation == 1 && wd.base_dilation == 1 &&
               rhs_size == 1 && wd.size == 1 && no_pad && !wd.reversal) {
      dims.dot.lhs_non_contracting.push_back(triple);
    } else if (wd.stride == 1 && wd.window_dilation == 1 && wd.base_dilation == 1 &&
               lhs_size == 1 && wd.size == rhs_size && wd.padding_low == rhs_size - 1 &&
               wd.padding_high == rhs_size - 1 && wd.reversal) {
      dims.dot.rhs_non_contracting.push_back(triple);
    } else {
      dims.spatial.push_back(triple);
    }
  }
  return dims;
}

int64_t SpatialTiles(const Sharding* sharding, const std::vector<DimTriple>& spatial, bool lhs) {
  if (sharding == nullptr || !sharding->IsTiled()) return 1;
  int64_t tiles = 1;
  for (const DimTriple& t : spatial) tiles *= DimTiles(*sharding, lhs ? t.lhs : t.rhs);
  return tiles;
}

// The kernel is smaller than the output along every spatial dim (a forward conv, not a
// weight-gradient one): then the output can be tiled like the input.
bool IsKernelSmall(const Instruction& conv) {
  const ConvDimensionNumbers& cd = conv.conv_dims();
  int64_t kernel_product = 1, output_product = 1;
  for (size_t i = 0; i < cd.input_spatial_dims.size(); ++i) {
    const int64_t kernel = conv.operand(1)->shape().dim(cd.kernel_spatial_dims[i]);
    const int64_t output = conv.shape().dim(cd.output_spatial_dims[i]);
    kernel_product *= kernel;
    output_product *= output;
    if (kernel >= output && (i < 2 || kernel > 3 || kernel_product >= output_product)) return false;
  }
  return true;
}

const Sharding* Usable(const Operands& operands, int64_t i) {
  if (i >= static_cast<int64_t>(operands.size())) return nullptr;
  const Sharding* s = operands[i];
  return s != nullptr && IsUsable(*s) && !s->IsMaximal() ? s : nullptr;
}

}  // namespace

std::optional<Proposal> ConvolutionForward(const Instruction& instruction,
                                           const Operands& operands,
                                           const ShardingLookup& lookup) {
  if (!IsArray(instruction) || instruction.operand_count() < 2) return std::nullopt;
  const ConvDims dims = ParseConvDims(instruction);
  const Sharding* lhs = Usable(operands, 0);
  const Sharding* rhs = Usable(operands, 1);
  const bool dot_like =
      dims.spatial.empty() ||
      (SpatialTiles(lhs, dims.spatial, true) == 1 && SpatialTiles(rhs, dims.spatial, false) == 1 &&
       instruction.feature_group_count == 1 && instruction.batch_group_count == 1);
  if (dot_like) {
    std::optional<Sharding> from_lhs, from_rhs;
    if (lhs) from_lhs = DotResultFromOperand(dims.dot, 0, *lhs, instruction.operand(0)->shape().rank());
    if (rhs) from_rhs = DotResultFromOperand(dims.dot, 1, *rhs, instruction.operand(1)->shape().rank());
    std::optional<Sharding> combined = CombineOperandProposals(instruction, from_lhs, from_rhs, lookup);
    if (!combined) return std::nullopt;
    return Named(std::move(*combined), "convolution", true);
  }
  if (lhs == nullptr) return std::nullopt;
  const ConvDimensionNumbers& cd = instruction.conv_dims();
  if (!IsKernelSmall(instruction)) {
    // A large kernel (a weight gradient, or a depthwise window as big as the input): only the
    // batch split carries over to the result; the other dims' devices replicate it.
    const int64_t rank = instruction.operand(0)->shape().rank();
    std::vector<int64_t> batch_only(rank, -1);
    if (instruction.batch_group_count == 1) batch_only[cd.input_batch_dim] = cd.output_batch_dim;
    std::optional<Sharding> mapped = MapDims(*lhs, batch_only, instruction.shape().rank());
    if (!mapped) return std::nullopt;
    return Named(std::move(*mapped), "convolution", true);
  }
  if (DimTiles(*lhs, cd.input_feature_dim) > 1) return std::nullopt;
  std::vector<int64_t> src_to_tgt(instruction.operand(0)->shape().rank(), -1);
  src_to_tgt[cd.input_batch_dim] = cd.output_batch_dim;
  src_to_tgt[cd.input_feature_dim] = cd.output_feature_dim;
  for (size_t i = 0; i < cd.input_spatial_dims.size(); ++i)
    src_to_tgt[cd.input_spatial_dims[i]] = cd.output_spatial_dims[i];
  std::optional<Sharding> mapped = MapDims(*lhs, src_to_tgt, instruction.shape().rank());
  if (!mapped) return std::nullopt;
  return Named(std::move(*mapped), "convolution", true);
}

std::optional<Proposal> ConvolutionBackward(const Instruction& user, int64_t operand_index,
                                            const Sharding& user_sharding,
                                            const Operands& operands,
                                            const ShardingLookup& lookup) {
  if (operand_index > 1 || !IsUsable(user_sharding)) return std::nullopt;
  const ConvDims dims = ParseConvDims(user);
  // Through real spatial windows the operand tiling is not determined by the result alone.
  if (!dims.spatial.empty()) return std::nullopt;
  const int64_t other = 1 - operand_index;
  const Sharding* other_sharding =
      other < static_cast<int64_t>(operands.size()) ? operands[other] : nullptr;
  std::optional<Sharding> sharding =
      DotLikeOperandSharding(dims.dot, operand_index, user_sharding, other_sharding, user);
  if (!sharding) return std::nullopt;
  return Named(std::move(*sharding), "convolution", false);
}

}  // namespace gspmd::propagation::rules
