// The convolution handler: places device axes on the batch, output-feature, input-feature
// (partial sums) and spatial dims (halo exchange) by estimated bytes, reshards the operands
// there and runs the local convolution with a per-shard window.
//
//   batch       lhs batch + result batch                 local
//   out feature kernel out-feature + result feature       local (with feature/batch groups
//               (+ lhs feature when feature_group_count > 1, + lhs batch when
//               batch_group_count > 1: whole groups per device)
//   in feature  lhs feature + kernel in-feature           partial sums, all-reduce
//   spatial i   lhs spatial i + result spatial i          halo exchange (or windows sliced
//                                                         from a whole lhs dim)
//   window i    lhs spatial i + kernel spatial i          halo exchange, partial sums over
//               (backward-filter convolutions, where the  the taps
//               "kernel" is the output gradient)
// A kernel spatial dim is split only in the window mode (not with window reversal). Taps split
// unevenly are convolved tap-exactly (TapExactConvolution): a padded tap never meets real
// input, which may hold inf.
#include <algorithm>

#include "partitioner/halo_exchange.h"
#include "partitioner/handlers/slot_placement.h"
#include "partitioner/op_context.h"
#include "support/diagnostic.h"

namespace gspmd {
namespace {

constexpr int64_t kBatchSlot = 0;
constexpr int64_t kOutFeatureSlot = 1;
constexpr int64_t kInFeatureSlot = 2;
constexpr int64_t kFirstSpatialSlot = 3;

Sharding AsAxisSharding(const Sharding& sharding) {
  return sharding.IsMaximal() || sharding.IsUnknown() ? Sharding::Replicated() : sharding;
}

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

// Which dim of a spatial dim's triple a split follows: the result's (each device computes
// its outputs from a halo of the input) or the kernel's (each device applies its taps to a
// halo of the input, giving partial sums).
enum class SpatialMode { kOutput, kWindow };

// How one spatial dim is split: tile t reads input elements [start[t], start[t] + window),
// placed at dilated offset low[t] of a local padded input `needed` long, with a local window
// of `local_size` taps (so the local convolution needs no padding beyond low/high).
struct SpatialSplit {
  int64_t tiles = 1;
  int64_t local_size = 0;
  int64_t needed = 0;
  int64_t window = 0;
  std::vector<int64_t> start;
  std::vector<int64_t> low;
  bool uniform_low = true;
};

// A window dim (index `spatial`) whose taps split unevenly: each tile holds ceil(K/T) taps,
// but the partial tile holds only `partial` real ones (and tiles past it none); `full[p]`:
// device p's tile holds only real taps.
struct UnevenTaps {
  int64_t spatial = 0;
  int64_t partial = 0;
  std::vector<bool> full;
};

int64_t OutputSize(int64_t in, const WindowDim& w) {
  int64_t dilated = in == 0 ? 0 : (in - 1) * w.base_dilation + 1;
  int64_t padded = dilated + w.padding_low + w.padding_high;
  int64_t extent = (w.size - 1) * w.window_dilation + 1;
  if (padded < extent) return 0;
  return (padded - extent) / w.stride + 1;
}

// Tile t's first tap reads dilated, padded position t * step; `useful[t]` is false for tiles
// past the end, which compute only padding and read their own shard (no halo).
SpatialSplit MakeSplit(const WindowDim& w, int64_t in_size, int64_t tiles, int64_t step, int64_t needed,
                       int64_t local_size, const std::vector<bool>& useful) {
  SpatialSplit split;
  split.tiles = tiles;
  split.local_size = local_size;
  split.needed = needed;
  for (int64_t t = 0; t < tiles; ++t) {
    int64_t first = t * step;
    int64_t lo = CeilDiv(first - w.padding_low, w.base_dilation);
    int64_t hi = FloorDiv(first + needed - 1 - w.padding_low, w.base_dilation) + 1;
    split.start.push_back(lo);
    split.low.push_back(lo * w.base_dilation + w.padding_low - first);
    if (useful[t]) split.window = std::max(split.window, hi - lo);
  }
  split.window = std::max<int64_t>(split.window, 1);
  int64_t in_shard = ShardSize(in_size, tiles);
  for (int64_t t = 0; t < tiles; ++t) {
    if (useful[t]) continue;
    split.start[t] = std::min(t * in_shard, std::max<int64_t>(in_size - split.window, 0));
    split.low[t] = split.low[0];
  }
  split.uniform_low = std::all_of(split.low.begin(), split.low.end(), [&](int64_t l) { return l == split.low[0]; });
  return split;
}

// The result's dim split `tiles` ways: tile t computes outputs [t*O', (t+1)*O').
SpatialSplit SplitOutput(const WindowDim& w, int64_t in_size, int64_t out_size, int64_t tiles) {
  int64_t out_shard = ShardSize(out_size, tiles);
  int64_t extent = (w.size - 1) * w.window_dilation + 1;
  std::vector<bool> useful(tiles);
  for (int64_t t = 0; t < tiles; ++t) useful[t] = t * out_shard < out_size;
  return MakeSplit(w, in_size, tiles, out_shard * w.stride, (out_shard - 1) * w.stride + extent, w.size, useful);
}

// The window's taps split `tiles` ways: tile t applies taps [t*K', (t+1)*K') for all outputs.
SpatialSplit SplitWindow(const WindowDim& w, int64_t in_size, int64_t out_size, int64_t tiles) {
  int64_t taps = ShardSize(w.size, tiles);
  std::vector<bool> useful(tiles);
  for (int64_t t = 0; t < tiles; ++t) useful[t] = t * taps < w.size;
  return MakeSplit(w, in_size, tiles, taps * w.window_dilation,
                   (out_size - 1) * w.stride + (taps - 1) * w.window_dilation + 1, taps, useful);
}

SpatialSplit SplitFor(SpatialMode mode, const WindowDim& w, int64_t in_size, int64_t out_size, int64_t tiles) {
  return mode == SpatialMode::kOutput ? SplitOutput(w, in_size, out_size, tiles) : SplitWindow(w, in_size, out_size, tiles);
}

// Elements each device sends to build the windows of `split` from an input split the same
// number of ways (both sides, several hops when a halo is longer than a shard); padding
// outside the input is made locally.
int64_t HaloElements(const SpatialSplit& split, int64_t in_size) {
  int64_t shard = ShardSize(in_size, split.tiles);
  int64_t left = 0, right = 0;
  for (int64_t t = 0; t < split.tiles; ++t) {
    const HaloNeed need = RealHaloOf(split.start[t], split.window, t * shard, t * shard + shard, in_size);
    left = std::max(left, need.left);
    right = std::max(right, need.right);
  }
  int64_t limit = (split.tiles - 1) * shard;
  return std::min(left, limit) + std::min(right, limit);
}

struct ConvShapes {
  const Shape& lhs;
  const Shape& rhs;
  const Shape& out;
};

void CheckConvolution(const Instruction& conv, const ConvShapes& shapes) {
  const ConvDimensionNumbers& dn = conv.conv_dims();
  size_t spatial = dn.input_spatial_dims.size();
  if (conv.window().size() != spatial || dn.kernel_spatial_dims.size() != spatial ||
      dn.output_spatial_dims.size() != spatial)
    GSPMD_USER_ERROR("convolution %", conv.name(), " has ", conv.window().size(), " window dims for ", spatial,
                     " spatial dims");
  if (shapes.lhs.rank() != static_cast<int64_t>(spatial) + 2 || shapes.rhs.rank() != shapes.lhs.rank() ||
      shapes.out.rank() != shapes.lhs.rank())
    GSPMD_USER_ERROR("convolution %", conv.name(), " operands and result must have rank ", spatial + 2);
  if (conv.feature_group_count < 1 || conv.batch_group_count < 1)
    GSPMD_USER_ERROR("convolution %", conv.name(), " has a non-positive group count");
  std::vector<int64_t> labelled = {dn.input_batch_dim, dn.input_feature_dim, dn.kernel_input_feature_dim,
                                   dn.kernel_output_feature_dim, dn.output_batch_dim, dn.output_feature_dim};
  for (size_t i = 0; i < spatial; ++i) {
    labelled.insert(labelled.end(), {dn.input_spatial_dims[i], dn.kernel_spatial_dims[i], dn.output_spatial_dims[i]});
    const WindowDim& w = conv.window()[i];
    if (w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1)
      GSPMD_USER_ERROR("convolution %", conv.name(), " window dim ", i,
                       " needs a positive stride and dilations; got stride=", w.stride,
                       " lhs_dilate=", w.base_dilation, " rhs_dilate=", w.window_dilation);
  }
  for (int64_t d : labelled)
    if (d < 0 || d >= shapes.lhs.rank())
      GSPMD_USER_ERROR("convolution %", conv.name(), " dim_labels name dim ", d, " of a rank-", shapes.lhs.rank(),
                       " array");
}

int64_t SpatialSlot(int64_t spatial_count, SpatialMode mode, int64_t i) {
  return kFirstSpatialSlot + (mode == SpatialMode::kOutput ? 0 : spatial_count) + i;
}

// Slot of every dim of the input, kernel and result.
struct ConvSlots {
  std::vector<int64_t> lhs, rhs, out;
};

ConvSlots MakeSlots(const Instruction& conv, const ConvShapes& shapes, const std::vector<bool>& lhs_spatial_whole,
                    const std::vector<SpatialMode>& modes) {
  const ConvDimensionNumbers& dn = conv.conv_dims();
  bool feature_groups = conv.feature_group_count > 1;
  bool batch_groups = conv.batch_group_count > 1;
  ConvSlots slots;
  slots.lhs.assign(shapes.lhs.rank(), -1);
  slots.rhs.assign(shapes.rhs.rank(), -1);
  slots.out.assign(shapes.out.rank(), -1);
  slots.lhs[dn.input_batch_dim] = batch_groups ? kOutFeatureSlot : kBatchSlot;
  slots.lhs[dn.input_feature_dim] = feature_groups ? kOutFeatureSlot : kInFeatureSlot;
  slots.rhs[dn.kernel_input_feature_dim] = feature_groups ? -1 : kInFeatureSlot;
  slots.rhs[dn.kernel_output_feature_dim] = kOutFeatureSlot;
  slots.out[dn.output_batch_dim] = batch_groups ? -1 : kBatchSlot;
  slots.out[dn.output_feature_dim] = kOutFeatureSlot;
  int64_t spatial_count = static_cast<int64_t>(dn.input_spatial_dims.size());
  for (int64_t i = 0; i < spatial_count; ++i) {
    int64_t slot = SpatialSlot(spatial_count, modes[i], i);
    slots.lhs[dn.input_spatial_dims[i]] = lhs_spatial_whole[i] ? -1 : slot;
    if (modes[i] == SpatialMode::kOutput) slots.out[dn.output_spatial_dims[i]] = slot;
    if (modes[i] == SpatialMode::kWindow) slots.rhs[dn.kernel_spatial_dims[i]] = slot;
  }
  return slots;
}

// Per-device dims of `dims` when dim d is split TileCountOf(slot_axes[slots[d]]) ways.
std::vector<int64_t> LocalDims(const std::vector<int64_t>& dims, const std::vector<int64_t>& slots,
                               const std::vector<std::vector<DeviceAxis>>& slot_axes) {
  std::vector<int64_t> local = dims;
  for (size_t d = 0; d < dims.size(); ++d)
    if (slots[d] >= 0) local[d] = ShardSize(dims[d], TileCountOf(slot_axes[slots[d]]));
  return local;
}

// `layout` with only dim `dim` split (the other dims' axes become replicated), for masking
// the padding of that dim alone.
Sharding OnlyDim(AxisSharding layout, int64_t dim) {
  for (int64_t d = 0; d < layout.rank(); ++d) {
    if (d == dim) continue;
    layout.replicated.insert(layout.replicated.end(), layout.dims[d].begin(), layout.dims[d].end());
    layout.dims[d].clear();
  }
  std::sort(layout.replicated.begin(), layout.replicated.end());
  return layout.ToSharding();
}

class ConvolutionPartitioner {
 public:
  ConvolutionPartitioner(OpContext& op, const ConvShapes& shapes) : op_(op), conv_(op.instruction()), shapes_(shapes) {}

  bool Run() {
    SpmdContext& context = op_.spmd();
    const ConvDimensionNumbers& dn = conv_.conv_dims();
    const auto& lhs_axes = context.Axes(AsAxisSharding(op_.Operand(0).sharding), shapes_.lhs.rank());
    const auto& rhs_axes = context.Axes(AsAxisSharding(op_.Operand(1).sharding), shapes_.rhs.rank());
    const auto& out_axes = context.Axes(AsAxisSharding(op_.sharding()), shapes_.out.rank());
    if (!lhs_axes || !rhs_axes || !out_axes) return false;
    spatial_count_ = static_cast<int64_t>(dn.input_spatial_dims.size());
    std::vector<int64_t> windowable;
    for (int64_t i = 0; i < spatial_count_; ++i) {
      lhs_spatial_whole_.push_back(lhs_axes->dims[dn.input_spatial_dims[i]].empty());
      if (IsWindowable(*rhs_axes, i)) windowable.push_back(i);
    }
    // Every combination of modes over the dims whose kernel spatial dim is split.
    std::optional<SlotPlacement> best;
    std::vector<SpatialMode> best_modes;
    for (int64_t combo = 0; combo < (int64_t{1} << windowable.size()); ++combo) {
      modes_.assign(spatial_count_, SpatialMode::kOutput);
      for (size_t w = 0; w < windowable.size(); ++w)
        if (combo & (int64_t{1} << w)) modes_[windowable[w]] = SpatialMode::kWindow;
      std::optional<SlotPlacement> placement = Choose(*lhs_axes, *rhs_axes, *out_axes);
      if (!placement || (best && placement->cost_bytes >= best->cost_bytes - 1e-6)) continue;
      best = std::move(placement);
      best_modes = modes_;
    }
    if (!best) return false;
    modes_ = best_modes;
    slots_ = MakeSlots(conv_, shapes_, lhs_spatial_whole_, modes_);
    Emit(*best);
    return true;
  }

 private:
  static SlotTensor Tensor(const Shape& shape, const AxisSharding& layout, const std::vector<int64_t>& slots) {
    return SlotTensor{shape.dims(), ElementByteSize(shape.element_type()), layout, slots};
  }

  // The kernel's spatial dim i is split and its taps can be split too (a reversed window
  // would pair kernel tiles with the mirrored taps).
  bool IsWindowable(const AxisSharding& rhs, int64_t i) const {
    const ConvDimensionNumbers& dn = conv_.conv_dims();
    return !rhs.dims[dn.kernel_spatial_dims[i]].empty() && !conv_.window()[i].reversal &&
           shapes_.out.dim(dn.output_spatial_dims[i]) > 0;
  }

  std::optional<SlotPlacement> Choose(const AxisSharding& lhs, const AxisSharding& rhs, const AxisSharding& out) {
    const ConvDimensionNumbers& dn = conv_.conv_dims();
    slots_ = MakeSlots(conv_, shapes_, lhs_spatial_whole_, modes_);
    SlotProblem problem;
    problem.slot_count = kFirstSpatialSlot + 2 * spatial_count_;
    problem.slot_extent.assign(problem.slot_count, 1);
    problem.slot_extent[kBatchSlot] = shapes_.out.dim(dn.output_batch_dim);
    problem.slot_extent[kOutFeatureSlot] = shapes_.out.dim(dn.output_feature_dim);
    problem.slot_extent[kInFeatureSlot] = shapes_.rhs.dim(dn.kernel_input_feature_dim);
    for (int64_t i = 0; i < spatial_count_; ++i) {
      problem.slot_extent[SpatialSlot(spatial_count_, SpatialMode::kOutput, i)] = shapes_.out.dim(dn.output_spatial_dims[i]);
      problem.slot_extent[SpatialSlot(spatial_count_, SpatialMode::kWindow, i)] = shapes_.rhs.dim(dn.kernel_spatial_dims[i]);
    }
    problem.inputs.push_back(Tensor(shapes_.lhs, lhs, slots_.lhs));
    problem.inputs.push_back(Tensor(shapes_.rhs, rhs, slots_.rhs));
    problem.result = Tensor(shapes_.out, out, slots_.out);
    problem.extra_cost = [this](const std::vector<std::vector<DeviceAxis>>& slot_axes) { return ExtraCost(slot_axes); };
    return ChooseSlotPlacement(op_.spmd(), problem);
  }

  int64_t TilesOfSpatial(const std::vector<std::vector<DeviceAxis>>& slot_axes, int64_t i) const {
    return TileCountOf(slot_axes[SpatialSlot(spatial_count_, modes_[i], i)]);
  }

  // Group counts must stay whole per device; spatial splits cost their halos.
  std::optional<double> ExtraCost(const std::vector<std::vector<DeviceAxis>>& slot_axes) const {
    int64_t feature_tiles = TileCountOf(slot_axes[kOutFeatureSlot]);
    if (conv_.feature_group_count > 1 && conv_.feature_group_count % feature_tiles != 0) return std::nullopt;
    if (conv_.batch_group_count > 1 && conv_.batch_group_count % feature_tiles != 0) return std::nullopt;
    const ConvDimensionNumbers& dn = conv_.conv_dims();
    std::vector<int64_t> lhs_local = LocalDims(shapes_.lhs.dims(), slots_.lhs, slot_axes);
    double bytes = 0;
    for (int64_t i = 0; i < spatial_count_; ++i) {
      int64_t tiles = TilesOfSpatial(slot_axes, i);
      if (tiles == 1 || lhs_spatial_whole_[i]) continue;
      int64_t in_dim = dn.input_spatial_dims[i];
      SpatialSplit split = SplitFor(modes_[i], conv_.window()[i], shapes_.lhs.dim(in_dim),
                                    shapes_.out.dim(dn.output_spatial_dims[i]), tiles);
      double other = static_cast<double>(ElementByteSize(shapes_.lhs.element_type()));
      for (int64_t d = 0; d < shapes_.lhs.rank(); ++d)
        if (d != in_dim) other *= static_cast<double>(lhs_local[d]);
      bytes += other * static_cast<double>(HaloElements(split, shapes_.lhs.dim(in_dim)));
      lhs_local[in_dim] = split.window;
    }
    return bytes;
  }

  // Zeroes the uneven padding of dim `dim` of an operand (a contracted feature dim).
  Instruction* MaskDimPadding(Instruction* local, const Shape& global, const AxisSharding& layout, int64_t dim) {
    if (global.dim(dim) % layout.TileCount(dim) == 0) return local;
    HloBuilder& b = op_.builder();
    return MaskPadding(b, op_.spmd(), local, global, OnlyDim(layout, dim), b.ScalarConstant(global.element_type(), 0));
  }

  // Replaces spatial dim i of the local input by each device's window (device p is on tile
  // tile_of[p] of the split); returns the local window dim to convolve it with.
  WindowDim ApplySpatialSplit(Instruction*& lhs, const Sharding& lhs_sharding, const SpatialSplit& split, int64_t i,
                              const std::vector<int64_t>& tile_of) {
    const WindowDim& w = conv_.window()[i];
    int64_t in_dim = conv_.conv_dims().input_spatial_dims[i];
    SpmdContext& context = op_.spmd();
    HloBuilder& b = op_.builder();
    int64_t devices = context.num_devices();
    std::vector<int64_t> starts(devices);
    for (int64_t p = 0; p < devices; ++p) starts[p] = split.start[tile_of[p]];
    Instruction* zero = b.ScalarConstant(shapes_.lhs.element_type(), 0);
    HaloPlan plan = PlanWindows(lhs_sharding, shapes_.lhs.dims(), in_dim, std::move(starts), split.window, devices);
    lhs = WindowsAlongDim(b, context, lhs, lhs_sharding, shapes_.lhs, plan, zero);

    WindowDim local = w;
    local.size = split.local_size;
    if (split.uniform_low) {
      local.padding_low = split.low[0];
      local.padding_high = split.needed - split.low[0] - (split.window - 1) * w.base_dilation - 1;
      return local;
    }
    // The offset into the dilated input differs per tile: dilate explicitly, then slice.
    int64_t max_low = *std::max_element(split.low.begin(), split.low.end());
    int64_t min_low = *std::min_element(split.low.begin(), split.low.end());
    int64_t dilated = (split.window - 1) * w.base_dilation + 1;
    PaddingConfig padding(lhs->shape().rank());
    padding[in_dim] = {max_low, std::max<int64_t>(0, split.needed - min_low - dilated), w.base_dilation - 1};
    lhs = b.Pad(lhs, zero, std::move(padding));
    std::vector<int64_t> offsets(devices);
    for (int64_t p = 0; p < devices; ++p) offsets[p] = max_low - split.low[tile_of[p]];
    std::vector<Instruction*> starts_hlo(lhs->shape().rank(), b.S32Constant(0));
    starts_hlo[in_dim] = b.TableLookup(offsets);
    std::vector<int64_t> sizes = lhs->shape().dims();
    sizes[in_dim] = split.needed;
    lhs = b.DynamicSlice(lhs, starts_hlo, sizes);
    local.base_dilation = 1;
    local.padding_low = 0;
    local.padding_high = 0;
    return local;
  }

  // The convolution of `lhs` and `rhs` with `window`, giving `local_shape`, with the group
  // counts of the per-device operands.
  Instruction* LocalConvolution(Instruction* lhs, Instruction* rhs, Window window, const Shape& local_shape,
                                int64_t group_tiles) {
    const ConvDimensionNumbers& dn = conv_.conv_dims();
    Instruction* local = op_.Clone(local_shape, {lhs, rhs});
    local->mutable_window() = std::move(window);
    if (conv_.feature_group_count > 1) local->feature_group_count = conv_.feature_group_count / group_tiles;
    if (conv_.batch_group_count > 1) local->batch_group_count = conv_.batch_group_count / group_tiles;
    for (int64_t i = 0; i < spatial_count_; ++i) {
      int64_t out_dim = dn.output_spatial_dims[i];
      GSPMD_CHECK(OutputSize(lhs->shape().dim(dn.input_spatial_dims[i]), local->window()[i]) == local_shape.dim(out_dim),
                  "local convolution window of %", conv_.name(), " gives the wrong size");
    }
    return local;
  }

  // The local convolution restricted to local taps [0, partial) of every uneven window dim,
  // or to [partial, local size) of those in `rest_mask`: the kernel is sliced to those taps,
  // and the input window shifted to where they read (dropping input elements they never
  // reach instead of padding negatively). Null when the taps read only padding (a zero piece).
  Instruction* ConvolutionOfTaps(Instruction* lhs, Instruction* rhs, Window window, const Shape& local_shape,
                                 int64_t group_tiles, const std::vector<UnevenTaps>& uneven, int64_t rest_mask) {
    const ConvDimensionNumbers& dn = conv_.conv_dims();
    std::vector<SliceDim> lhs_slice, rhs_slice;
    for (int64_t d : lhs->shape().dims()) lhs_slice.push_back({0, d, 1});
    for (int64_t d : rhs->shape().dims()) rhs_slice.push_back({0, d, 1});
    bool lhs_sliced = false;
    for (size_t u = 0; u < uneven.size(); ++u) {
      int64_t i = uneven[u].spatial;
      WindowDim& w = window[i];
      bool rest = (rest_mask >> u) & 1;
      int64_t first = rest ? uneven[u].partial : 0;
      int64_t last = rest ? w.size : uneven[u].partial;
      rhs_slice[dn.kernel_spatial_dims[i]] = {first, last, 1};
      int64_t in_dim = dn.input_spatial_dims[i];
      int64_t in_size = lhs->shape().dim(in_dim);
      int64_t low = w.padding_low - first * w.window_dilation;
      int64_t high = w.padding_high - (w.size - last) * w.window_dilation;
      int64_t drop_low = low < 0 ? CeilDiv(-low, w.base_dilation) : 0;
      int64_t drop_high = high < 0 ? CeilDiv(-high, w.base_dilation) : 0;
      if (drop_low + drop_high >= in_size) return nullptr;
      lhs_slice[in_dim] = {drop_low, in_size - drop_high, 1};
      lhs_sliced = lhs_sliced || drop_low > 0 || drop_high > 0;
      w.size = last - first;
      w.padding_low = low + drop_low * w.base_dilation;
      w.padding_high = high + drop_high * w.base_dilation;
    }
    HloBuilder& b = op_.builder();
    Instruction* piece_lhs = lhs_sliced ? b.Slice(lhs, std::move(lhs_slice)) : lhs;
    Instruction* piece_rhs = b.Slice(rhs, std::move(rhs_slice));
    return LocalConvolution(piece_lhs, piece_rhs, std::move(window), local_shape, group_tiles);
  }

  // The local convolution when some window dims' taps split unevenly, without ever applying
  // a padded tap to real input (0 * inf would be NaN): every device convolves the taps that
  // the partial tile holds, and the devices whose tiles are full in a set of those dims add
  // the convolution of their remaining taps (selected by partition-id). Together the pieces
  // cost one convolution's arithmetic.
  Instruction* TapExactConvolution(Instruction* lhs, Instruction* rhs, const Window& window, const Shape& local_shape,
                                   int64_t group_tiles, const std::vector<UnevenTaps>& uneven) {
    HloBuilder& b = op_.builder();
    int64_t devices = op_.spmd().num_devices();
    Instruction* sum = nullptr;
    for (int64_t rest_mask = 0; rest_mask < (int64_t{1} << uneven.size()); ++rest_mask) {
      std::vector<int64_t> include(devices, 1);
      for (size_t u = 0; u < uneven.size(); ++u)
        for (int64_t p = 0; ((rest_mask >> u) & 1) && p < devices; ++p)
          if (!uneven[u].full[p]) include[p] = 0;
      bool none = std::all_of(include.begin(), include.end(), [](int64_t x) { return x == 0; });
      bool all = std::all_of(include.begin(), include.end(), [](int64_t x) { return x == 1; });
      if (none) continue;
      Instruction* piece = ConvolutionOfTaps(lhs, rhs, window, local_shape, group_tiles, uneven, rest_mask);
      if (piece == nullptr) continue;
      Instruction* with = sum == nullptr ? piece : b.Binary(Opcode::kAdd, sum, piece);
      if (all) {
        sum = with;
        continue;
      }
      Instruction* without = sum;
      if (without == nullptr)
        without = b.BroadcastScalar(b.ScalarConstant(local_shape.element_type(), 0), local_shape.dims());
      Instruction* keep = b.Compare(b.TableLookup(include), b.S32Constant(0), ComparisonDirection::kNe);
      sum = b.Select(b.BroadcastScalar(keep, local_shape.dims()), with, without);
    }
    if (sum != nullptr) return sum;
    return b.BroadcastScalar(b.ScalarConstant(local_shape.element_type(), 0), local_shape.dims());
  }

  void Emit(const SlotPlacement& placement) {
    const ConvDimensionNumbers& dn = conv_.conv_dims();
    const AxisSharding& lhs_layout = placement.inputs[0];
    const AxisSharding& rhs_layout = placement.inputs[1];
    Sharding lhs_sharding = lhs_layout.ToSharding();
    Instruction* lhs = op_.OperandWith(0, lhs_sharding);
    Instruction* rhs = op_.OperandWith(1, rhs_layout.ToSharding());
    if (conv_.feature_group_count == 1) {
      lhs = MaskDimPadding(lhs, shapes_.lhs, lhs_layout, dn.input_feature_dim);
      rhs = MaskDimPadding(rhs, shapes_.rhs, rhs_layout, dn.kernel_input_feature_dim);
    }
    Window window = conv_.window();
    int64_t devices = op_.spmd().num_devices();
    // Devices whose taps of some split window are all past its end (more tiles than taps).
    std::vector<int64_t> has_taps(devices, 1);
    bool some_without_taps = false;
    // Window dims with a partially padded tap tile. The kernel's padded taps are never
    // masked: no device applies them (TapExactConvolution), or its result is zeroed.
    std::vector<UnevenTaps> uneven;
    for (int64_t i = 0; i < spatial_count_; ++i) {
      int64_t tiles = TilesOfSpatial(placement.slot_axes, i);
      if (tiles == 1) continue;
      bool by_output = modes_[i] == SpatialMode::kOutput;
      const AxisSharding& layout = by_output ? placement.result : rhs_layout;
      int64_t tile_dim = by_output ? dn.output_spatial_dims[i] : dn.kernel_spatial_dims[i];
      std::vector<int64_t> tile_of(devices);
      for (int64_t p = 0; p < devices; ++p) tile_of[p] = layout.TileIndex(p)[tile_dim];
      int64_t size = conv_.window()[i].size;
      int64_t taps = ShardSize(size, tiles);
      for (int64_t p = 0; !by_output && p < devices; ++p) {
        if (tile_of[p] * taps < size) continue;
        has_taps[p] = 0;
        some_without_taps = true;
      }
      if (!by_output && size % taps != 0) {
        UnevenTaps u{i, size % taps, std::vector<bool>(devices)};
        for (int64_t p = 0; p < devices; ++p) u.full[p] = (tile_of[p] + 1) * taps <= size;
        uneven.push_back(std::move(u));
      }
      SpatialSplit split = SplitFor(modes_[i], conv_.window()[i], shapes_.lhs.dim(dn.input_spatial_dims[i]),
                                    shapes_.out.dim(dn.output_spatial_dims[i]), tiles);
      window[i] = ApplySpatialSplit(lhs, lhs_sharding, split, i, tile_of);
    }
    Sharding local_sharding = placement.result.ToSharding();
    Shape local_shape = ShardShapeOf(local_sharding, shapes_.out);
    int64_t group_tiles = TileCountOf(placement.slot_axes[kOutFeatureSlot]);
    Instruction* local = uneven.empty()
                             ? LocalConvolution(lhs, rhs, std::move(window), local_shape, group_tiles)
                             : TapExactConvolution(lhs, rhs, window, local_shape, group_tiles, uneven);
    if (some_without_taps) {
      // Their padded taps meet real input (0 * inf would be NaN): their partial sums are zero.
      HloBuilder& b = op_.builder();
      Instruction* keep = b.Compare(b.TableLookup(has_taps), b.S32Constant(0), ComparisonDirection::kNe);
      Instruction* zero = b.ScalarConstant(shapes_.out.element_type(), 0);
      local = b.Select(b.BroadcastScalar(keep, local_shape.dims()), local, b.BroadcastScalar(zero, local_shape.dims()));
    }
    if (placement.partial.empty()) {
      op_.SetResult(local, local_sharding);
      return;
    }
    op_.SetResult(ResolvePartialSums(op_.spmd(), op_.builder(), local, shapes_.out, local_sharding, placement.partial,
                                     Opcode::kAdd, op_.sharding()));
  }

  OpContext& op_;
  const Instruction& conv_;
  ConvShapes shapes_;
  int64_t spatial_count_ = 0;
  std::vector<bool> lhs_spatial_whole_;
  std::vector<SpatialMode> modes_;
  ConvSlots slots_;
};

}  // namespace

bool PartitionConvolution(OpContext& op) {
  const Instruction& conv = op.instruction();
  if (conv.opcode() != Opcode::kConvolution || conv.operand_count() != 2) return false;
  if (!conv.shape().IsArray() || op.sharding().IsTuple()) return false;
  const PartitionedValue& lhs = op.Operand(0);
  const PartitionedValue& rhs = op.Operand(1);
  if (!lhs.global_shape.IsArray() || !rhs.global_shape.IsArray()) return false;
  if (lhs.sharding.IsTuple() || rhs.sharding.IsTuple()) return false;
  ConvShapes shapes{lhs.global_shape, rhs.global_shape, conv.shape()};
  CheckConvolution(conv, shapes);
  if (conv.feature_group_count > 1 && conv.batch_group_count > 1) return false;
  // Empty windows (a zero-size kernel) are left to the fallback.
  for (const WindowDim& w : conv.window())
    if (w.size < 1) return false;
  ConvolutionPartitioner partitioner(op, shapes);
  return partitioner.Run();
}

}  // namespace gspmd
