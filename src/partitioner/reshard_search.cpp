// Search over axis states for the cheapest reshard (bytes sent per device): a forward A* from
// the source over all-gather / all-to-all / slice / partial-sum moves that may, at any state,
// collective-permute into a state of the same tile counts reached by a bounded backward A*
// from the target.
#include "partitioner/reshard_search.h"

#include <algorithm>
#include <queue>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "support/diagnostic.h"

namespace gspmd::reshard_search {
namespace {

using Kind = ReshardStep::Kind;

// A search state packed into bytes: each dim's axes (major first) followed by kDimEnd, then
// the partial axes in the order they arose. Lists of axes are packed the same way (one byte
// per axis). Small states fit std::string's inline buffer, so generating a successor
// allocates nothing.
constexpr char kDimEnd = static_cast<char>(0xff);
using Packed = std::string;

int64_t AxisAt(std::string_view packed, size_t i) { return static_cast<unsigned char>(packed[i]); }

Packed PackAxes(const std::vector<int64_t>& axes) {
  Packed out;
  for (int64_t axis : axes) out.push_back(static_cast<char>(axis));
  return out;
}

std::vector<int64_t> UnpackAxes(std::string_view packed) {
  std::vector<int64_t> axes;
  for (size_t i = 0; i < packed.size(); ++i) axes.push_back(AxisAt(packed, i));
  return axes;
}

Packed Pack(const AxisState& state) {
  Packed packed;
  for (const auto& dim : state.dims) {
    packed += PackAxes(dim);
    packed.push_back(kDimEnd);
  }
  return packed + PackAxes(state.partial);
}

// The dims of a packed state without partial axes.
std::vector<std::vector<int64_t>> UnpackDims(std::string_view packed, int64_t rank) {
  std::vector<std::vector<int64_t>> dims(rank);
  size_t i = 0;
  for (int64_t d = 0; d < rank; ++d, ++i)
    for (; packed[i] != kDimEnd; ++i) dims[d].push_back(AxisAt(packed, i));
  return dims;
}

// The visited-map identity of a state: partial axes are a set.
Packed StateKey(const Packed& packed) {
  size_t partial_begin = packed.rfind(kDimEnd) + 1;  // 0 for rank 0 (npos + 1)
  if (packed.size() - partial_begin <= 1) return packed;
  Packed key = packed;
  std::sort(key.begin() + static_cast<std::ptrdiff_t>(partial_begin), key.end());
  return key;
}

// A packed state being expanded, with its dim boundaries and tile counts.
struct Expanded {
  std::string_view packed;
  std::vector<size_t> begin;  // begin[d]: first byte of dim d; begin[rank]: first partial byte
  std::vector<int64_t> tiles;

  size_t End(int64_t d) const { return begin[d + 1] - 1; }
  int64_t Count(int64_t d) const { return static_cast<int64_t>(End(d) - begin[d]); }
  std::string_view Dim(int64_t d) const { return packed.substr(begin[d], End(d) - begin[d]); }
  std::string_view Partial() const { return packed.substr(begin.back()); }
};

// A neighbour as an edit of an expanded state: dim cut_dim keeps its first cut_keep axes, `add`
// is appended to dim add_dim, and the partial axes become `partial` if replace_partial.
struct Edit {
  int64_t cut_dim = -1;
  int64_t cut_keep = 0;
  int64_t add_dim = -1;
  std::string_view add;
  bool replace_partial = false;
  std::string_view partial;
};

Packed Apply(const Expanded& x, const Edit& edit) {
  Packed out;
  out.reserve(x.packed.size() + edit.add.size());
  int64_t rank = static_cast<int64_t>(x.tiles.size());
  for (int64_t d = 0; d < rank; ++d) {
    std::string_view axes = x.Dim(d);
    if (d == edit.cut_dim) axes = axes.substr(0, static_cast<size_t>(edit.cut_keep));
    out.append(axes);
    if (d == edit.add_dim) out.append(edit.add);
    out.push_back(kDimEnd);
  }
  out.append(edit.replace_partial ? edit.partial : x.Partial());
  return out;
}

// A step of the search: a ReshardStep with its axes packed (no allocation).
struct Move {
  Kind kind = Kind::kAllGather;
  int64_t dim = -1;
  int64_t to_dim = -1;
  Packed axes;
  double cost_bytes = 0;
  int64_t latency = 0;  // sequential ring steps (see Latency)

  ReshardStep ToStep() const {
    ReshardStep step;
    step.kind = kind;
    step.dim = dim;
    step.to_dim = to_dim;
    step.axes = UnpackAxes(axes);
    step.cost_bytes = cost_bytes;
    return step;
  }
};

// Sequential steps of a collective of `kind` over groups of `n` devices on a ring: the
// tie-breaker between plans that send the same bytes.
int64_t Latency(Kind kind, int64_t n) {
  switch (kind) {
    case Kind::kDynamicSlice:
      return 0;
    case Kind::kAllReduce:
      return 2 * (n - 1);
    case Kind::kCollectivePermute:
      return 1;
    default:
      return n - 1;
  }
}

// A neighbour state and the move between them (from the state expanded to it when searching
// forward, from it to the state expanded when searching backward).
struct Neighbour {
  Packed state;
  Move move;
};

// The moves between axis states over one list of axes, with their costs.
class Moves {
 public:
  // `target` is the target state when it is written over the same axes (else null: only its
  // tile counts are known). `backward`: the moves are searched from the target, toward a source
  // of `source_tiles` (with partial axes if `source_partial`).
  Moves(const ReshardProblem& problem, const std::vector<DeviceAxis>& axes, std::vector<int64_t> target_tiles,
        const AxisState* target, bool backward, std::vector<int64_t> source_tiles, bool source_partial)
      : problem_(problem), axes_(axes), target_tiles_(std::move(target_tiles)), target_(target),
        backward_(backward), source_tiles_(std::move(source_tiles)), source_partial_(source_partial) {}

  int64_t Rank() const { return static_cast<int64_t>(problem_.global_dims.size()); }

  // Fills `x` (reusing its buffers) with the boundaries and tile counts of `packed`.
  void Expand(std::string_view packed, Expanded& x) const {
    x.packed = packed;
    x.begin.clear();
    x.tiles.clear();
    size_t i = 0;
    for (int64_t d = 0; d < Rank(); ++d) {
      x.begin.push_back(i);
      int64_t count = 1;
      for (; packed[i] != kDimEnd; ++i) count *= AxisSize(AxisAt(packed, i));
      x.tiles.push_back(count);
      ++i;
    }
    x.begin.push_back(i);
  }

  // Per-device bytes for tile counts `tiles`, with dim `dim` overridden to `override_size`
  // elements (if >= 0) and dim `scaled_dim` split `scale` times more.
  double DeviceBytes(const std::vector<int64_t>& tiles, int64_t dim = -1, int64_t override_size = -1,
                     int64_t scaled_dim = -1, int64_t scale = 1) const {
    double bytes = static_cast<double>(problem_.element_bytes);
    for (int64_t d = 0; d < Rank(); ++d) {
      int64_t t = d == scaled_dim ? tiles[d] * scale : tiles[d];
      int64_t size = d == dim ? override_size : ShardSize(DimSize(d), t);
      bytes *= static_cast<double>(size);
    }
    return bytes;
  }

  // The tile counts of a state, packed: states with equal signatures (and no partial axes) are
  // one collective-permute apart.
  static Packed Signature(const Expanded& x) {
    return Packed(reinterpret_cast<const char*>(x.tiles.data()), x.tiles.size() * sizeof(int64_t));
  }

  // Which device holds which tile in a state without partial axes, independent of how the
  // axes are cut: per dim, its axes as (stride, size) with each run of axes that continue one
  // another (the major one's stride is the minor one's stride times size) merged into one.
  // Two states with equal mappings need no communication between them.
  Packed Mapping(std::string_view packed) const {
    Packed out;
    size_t i = 0;
    for (int64_t d = 0; d < Rank(); ++d, ++i) {
      int64_t stride = 0, size = 0;  // the run being merged (major first)
      auto flush = [&] {
        if (size == 0) return;
        out.append(reinterpret_cast<const char*>(&stride), sizeof(stride));
        out.append(reinterpret_cast<const char*>(&size), sizeof(size));
      };
      for (; packed[i] != kDimEnd; ++i) {
        const DeviceAxis& axis = axes_[AxisAt(packed, i)];
        if (size > 0 && stride == axis.stride * axis.size) {
          stride = axis.stride;
          size *= axis.size;
          continue;
        }
        flush();
        stride = axis.stride;
        size = axis.size;
      }
      flush();
      out.push_back(kDimEnd);
    }
    return out;
  }

  // A lower bound on the bytes each device still has to send between `packed` and the end it
  // is searched toward (the target forward, the source backward): device 0 must receive the
  // part of its tile there that it does not hold here (all of it when partial sums are
  // pending), and collectives send as much per device as they deliver. Consistent: no move
  // lowers it by more than it costs, so A* settles states in order.
  double Heuristic(std::string_view packed) const {
    double want = 1, held = 1;
    size_t i = 0;
    for (int64_t d = 0; d < Rank(); ++d, ++i) {
      int64_t tiles = 1;
      for (; packed[i] != kDimEnd; ++i) tiles *= AxisSize(AxisAt(packed, i));
      int64_t here = ShardSize(DimSize(d), tiles);
      int64_t there = ShardSize(DimSize(d), backward_ ? source_tiles_[d] : target_tiles_[d]);
      want *= static_cast<double>(backward_ ? here : there);
      held *= static_cast<double>(std::min(here, there));
    }
    bool partial = backward_ ? source_partial_ : i < packed.size();
    double bytes = static_cast<double>(problem_.element_bytes);
    return bytes * (partial ? want : want - held);
  }

  // Appends the states one collective (or local slice) after `x`.
  void Successors(const Expanded& x, std::vector<Neighbour>& out) const;
  // Appends the states without partial axes one collective (or local slice) before `y`.
  void Predecessors(const Expanded& y, std::vector<Neighbour>& out) const;

 private:
  int64_t AxisSize(int64_t axis) const { return axes_[axis].size; }
  int64_t DimSize(int64_t dim) const { return problem_.global_dims[dim]; }

  int64_t TileCountOf(std::string_view axes) const {
    int64_t count = 1;
    for (size_t i = 0; i < axes.size(); ++i) count *= AxisSize(AxisAt(axes, i));
    return count;
  }

  // Can dim `dim` (split `tiles` ways) be split `n` ways more by slicing locally?
  bool SliceAligned(int64_t dim, int64_t tiles, int64_t n) const {
    if (tiles == 1) return true;
    return ShardSize(DimSize(dim), tiles) == n * ShardSize(DimSize(dim), tiles * n);
  }
  // Does gathering n of the `tiles` pieces of dim `dim` give the standard layout?
  bool GatherAligned(int64_t dim, int64_t tiles, int64_t n) const {
    if (tiles / n == 1) return true;
    return ShardSize(DimSize(dim), tiles / n) == n * ShardSize(DimSize(dim), tiles);
  }

  // The cost of a move that acts on `n` tiles' worth of axes at a state with tile counts
  // `tiles`; nullopt when the move would not give the standard layout of uneven dims.
  std::optional<double> MoveCost(const std::vector<int64_t>& tiles, Kind kind, int64_t dim, int64_t to_dim,
                                 int64_t n) const {
    int64_t t = tiles[dim];
    double fraction = static_cast<double>(n - 1) / static_cast<double>(n);
    switch (kind) {
      case Kind::kAllGather:
        if (!GatherAligned(dim, t, n)) return std::nullopt;
        [[fallthrough]];
      case Kind::kGatherDim:
        if (t == n && problem_.exact_sums && GatherByMaskedSum(DimSize(dim), n))
          return 2.0 * fraction * DeviceBytes(tiles, dim, DimSize(dim));
        return fraction * DeviceBytes(tiles, dim, n * ShardSize(DimSize(dim), t));
      case Kind::kAllToAll:
        if (!GatherAligned(dim, t, n) || !SliceAligned(to_dim, tiles[to_dim], n)) return std::nullopt;
        return fraction * DeviceBytes(tiles, dim, n * ShardSize(DimSize(dim), t), to_dim, n);
      case Kind::kDynamicSlice:
        if (!SliceAligned(dim, t, n)) return std::nullopt;
        return 0.0;
      default:
        GSPMD_CHECK(false, "no generic cost for ", static_cast<int>(kind));
    }
    return std::nullopt;
  }

  // Adds the neighbour `edit` makes of `from` by a move that starts at tile counts `tiles`, if
  // the move is valid there.
  void AddIfValid(std::vector<Neighbour>& out, const Expanded& from, const Edit& edit,
                  const std::vector<int64_t>& tiles, Kind kind, int64_t dim, int64_t to_dim,
                  std::string_view axes) const {
    int64_t n = TileCountOf(axes);
    std::optional<double> cost = MoveCost(tiles, kind, dim, to_dim, n);
    if (cost) out.push_back({Apply(from, edit), Move{kind, dim, to_dim, Packed(axes), *cost, Latency(kind, n)}});
  }

  // Axes neither splitting a dim nor partial, packed.
  Packed Replicated(const Expanded& x) const {
    std::vector<bool> used(axes_.size(), false);
    for (size_t i = 0; i < x.packed.size(); ++i)
      if (x.packed[i] != kDimEnd) used[AxisAt(x.packed, i)] = true;
    Packed replicated;
    for (size_t a = 0; a < axes_.size(); ++a)
      if (!used[a]) replicated.push_back(static_cast<char>(a));
    return replicated;
  }

  // Dim `dim` of `x` holds the first axes of the target's dim.
  bool IsTargetPrefix(const Expanded& x, int64_t dim, size_t length) const {
    const std::vector<int64_t>& want = target_->dims[dim];
    if (length > want.size()) return false;
    std::string_view have = x.Dim(dim);
    for (size_t i = 0; i < length; ++i)
      if (AxisAt(have, i) != want[i]) return false;
    return true;
  }

  void PartialSuccessors(const Expanded& x, std::vector<Neighbour>& out) const;
  void GatherDimPredecessors(const Expanded& y, int64_t dim, std::string_view replicated,
                             std::vector<int64_t>& tiles, std::vector<Neighbour>& out) const;

  const ReshardProblem& problem_;
  const std::vector<DeviceAxis>& axes_;
  std::vector<int64_t> target_tiles_;
  const AxisState* target_;
  bool backward_;
  std::vector<int64_t> source_tiles_;
  bool source_partial_;
};

void Moves::PartialSuccessors(const Expanded& x, std::vector<Neighbour>& out) const {
  int64_t rank = Rank();
  std::string_view partial = x.Partial();
  double bytes = DeviceBytes(x.tiles);
  int64_t n = TileCountOf(partial);
  auto add = [&](const Edit& edit, Kind kind, int64_t dim, std::string_view axes, double cost) {
    out.push_back({Apply(x, edit), Move{kind, dim, -1, Packed(axes), cost, Latency(kind, TileCountOf(axes))}});
  };
  {
    Edit edit;
    edit.replace_partial = true;
    add(edit, Kind::kAllReduce, -1, partial, 2.0 * static_cast<double>(n - 1) / static_cast<double>(n) * bytes);
  }
  auto scatter_cost = [&](int64_t d, int64_t size) {
    int64_t padded = size * ShardSize(DimSize(d), x.tiles[d] * size);
    return static_cast<double>(size - 1) / static_cast<double>(size) * DeviceBytes(x.tiles, d, padded);
  };
  for (size_t i = 0; i < partial.size(); ++i) {
    std::string_view axis = partial.substr(i, 1);
    int64_t size = AxisSize(AxisAt(axis, 0));
    Packed rest(partial);
    rest.erase(i, 1);
    for (int64_t d = 0; d < rank; ++d) {
      if (!SliceAligned(d, x.tiles[d], size)) continue;
      Edit edit;
      edit.add_dim = d;
      edit.add = axis;
      edit.replace_partial = true;
      edit.partial = rest;
      add(edit, Kind::kReduceScatter, d, axis, scatter_cost(d, size));
    }
  }
  // All partial axes at once onto one dim (one collective instead of one per axis).
  if (partial.size() <= 1) return;
  auto scatter_all = [&](int64_t d, std::string_view order) {
    if (!SliceAligned(d, x.tiles[d], n)) return;
    Edit edit;
    edit.add_dim = d;
    edit.add = order;
    edit.replace_partial = true;
    add(edit, Kind::kReduceScatter, d, order, scatter_cost(d, n));
  };
  auto less = [](char a, char b) { return static_cast<unsigned char>(a) < static_cast<unsigned char>(b); };
  Packed order(partial);
  std::sort(order.begin(), order.end(), less);
  if (order.size() <= 3) {
    do {
      for (int64_t d = 0; d < rank; ++d) scatter_all(d, order);
    } while (std::next_permutation(order.begin(), order.end(), less));
    return;
  }
  // Too many axes to try every order: the sorted one, and for each dim the order in which the
  // target lists them after what the dim already holds. A mesh axis cut into prime pieces
  // ({x: 16} as 2x2x2x2) is then reduce-scattered onto its target dim in one collective, as
  // XLA does, instead of one piece first and the rest after.
  for (int64_t d = 0; d < rank; ++d) scatter_all(d, order);
  if (target_ == nullptr) return;
  for (int64_t d = 0; d < rank; ++d) {
    const std::vector<int64_t>& want = target_->dims[d];
    const size_t held = static_cast<size_t>(x.Count(d));
    if (held + partial.size() > want.size() || !IsTargetPrefix(x, d, held)) continue;
    Packed target_order;
    for (size_t i = held; i < held + partial.size(); ++i) target_order.push_back(static_cast<char>(want[i]));
    Packed sorted_target = target_order;
    std::sort(sorted_target.begin(), sorted_target.end(), less);
    if (sorted_target != order || target_order == order) continue;  // other axes, or tried above
    scatter_all(d, target_order);
  }
}

void Moves::Successors(const Expanded& x, std::vector<Neighbour>& out) const {
  int64_t rank = Rank();
  if (!x.Partial().empty()) PartialSuccessors(x, out);

  for (int64_t d = 0; d < rank; ++d) {
    int64_t count = x.Count(d);
    if (count == 0) continue;
    std::string_view last = x.Dim(d).substr(static_cast<size_t>(count - 1));
    {
      Edit edit;
      edit.cut_dim = d;
      edit.cut_keep = count - 1;
      AddIfValid(out, x, edit, x.tiles, Kind::kAllGather, d, -1, last);
    }
    if (count > 1) {
      Edit edit;
      edit.cut_dim = d;
      edit.cut_keep = 0;
      AddIfValid(out, x, edit, x.tiles, Kind::kGatherDim, d, -1, x.Dim(d));
    }
    // The last k axes of dim d moved to another dim in one all-to-all (moving several at once
    // keeps their order, which moving them one by one would reverse).
    for (int64_t k = 1; k <= count; ++k) {
      std::string_view moved = x.Dim(d).substr(static_cast<size_t>(count - k));
      for (int64_t e = 0; e < rank; ++e) {
        if (e == d) continue;
        Edit edit;
        edit.cut_dim = d;
        edit.cut_keep = count - k;
        edit.add_dim = e;
        edit.add = moved;
        AddIfValid(out, x, edit, x.tiles, Kind::kAllToAll, d, e, moved);
      }
    }
  }

  Packed replicated = Replicated(x);
  for (size_t r = 0; r < replicated.size(); ++r) {
    std::string_view axis = std::string_view(replicated).substr(r, 1);
    for (int64_t d = 0; d < rank; ++d) {
      Edit edit;
      edit.add_dim = d;
      edit.add = axis;
      AddIfValid(out, x, edit, x.tiles, Kind::kDynamicSlice, d, -1, axis);
    }
  }
  // The next several target axes of a dim sliced at once, when they are all replicated here
  // (an uneven dim may allow slicing n ways in one step but not in smaller steps).
  if (!target_) return;
  for (int64_t d = 0; d < rank; ++d) {
    std::string_view have = x.Dim(d);
    const std::vector<int64_t>& want = target_->dims[d];
    if (have.size() + 2 > want.size() || !IsTargetPrefix(x, d, have.size())) continue;
    Packed sliced;
    for (size_t i = have.size(); i < want.size(); ++i) {
      if (replicated.find(static_cast<char>(want[i])) == Packed::npos) break;
      sliced.push_back(static_cast<char>(want[i]));
      if (i == have.size()) continue;
      Edit edit;
      edit.add_dim = d;
      edit.add = sliced;
      AddIfValid(out, x, edit, x.tiles, Kind::kDynamicSlice, d, -1, sliced);
    }
  }
}

// The gather-dim moves into `y`'s empty dim `dim`: two axes gathered at once, when gathering
// them one at a time would not be aligned (else the two all-gathers cost the same).
void Moves::GatherDimPredecessors(const Expanded& y, int64_t dim, std::string_view replicated,
                                  std::vector<int64_t>& tiles, std::vector<Neighbour>& out) const {
  size_t count = replicated.size();

  Packed sequence;
  auto stepwise_aligned = [&](const Packed& axes) {
    int64_t tiles = TileCountOf(axes);
    for (size_t i = axes.size(); i-- > 0;) {
      int64_t n = AxisSize(AxisAt(axes, i));
      if (!GatherAligned(dim, tiles, n)) return false;
      tiles /= n;
    }
    return true;
  };
  auto add = [&](const Packed& axes) {
    if (stepwise_aligned(axes)) return;
    Edit edit;
    edit.add_dim = dim;
    edit.add = axes;
    tiles = y.tiles;
    tiles[dim] = TileCountOf(axes);
    AddIfValid(out, y, edit, tiles, Kind::kGatherDim, dim, -1, axes);
  };
  for (size_t a = 0; a < count; ++a) {
    for (size_t b = 0; b < count; ++b) {
      if (b == a) continue;
      sequence = {replicated[a], replicated[b]};
      add(sequence);
    }
  }
}

void Moves::Predecessors(const Expanded& y, std::vector<Neighbour>& out) const {
  int64_t rank = Rank();
  Packed replicated = Replicated(y);
  // The tile counts before the move, edited from y's (the predecessor is built only when the
  // move is valid).
  std::vector<int64_t> tiles;
  auto add = [&](const Edit& edit, Kind kind, int64_t dim, int64_t to_dim, std::string_view axes) {
    int64_t n = TileCountOf(axes);
    tiles = y.tiles;
    if (edit.cut_dim >= 0) tiles[edit.cut_dim] /= n;
    if (edit.add_dim >= 0) tiles[edit.add_dim] *= n;
    AddIfValid(out, y, edit, tiles, kind, dim, to_dim, axes);
  };
  for (int64_t d = 0; d < rank; ++d) {
    // An all-gather of a now replicated axis that split dim d last.
    for (size_t r = 0; r < replicated.size(); ++r) {
      Edit edit;
      edit.add_dim = d;
      edit.add = std::string_view(replicated).substr(r, 1);
      add(edit, Kind::kAllGather, d, -1, edit.add);
    }
    int64_t count = y.Count(d);
    if (count == 0 && replicated.size() >= 2) GatherDimPredecessors(y, d, replicated, tiles, out);
    if (count == 0) continue;
    // A slice of the last axis of dim d (of the last several, for a prefix of the target's dim).
    for (int64_t k = 1; k <= count; ++k) {
      if (k >= 2 && !IsTargetPrefix(y, d, count)) break;
      Edit edit;
      edit.cut_dim = d;
      edit.cut_keep = count - k;
      add(edit, Kind::kDynamicSlice, d, -1, y.Dim(d).substr(count - k));
    }
    // An all-to-all that moved the last k axes of another dim to the end of dim d.
    for (int64_t k = 1; k <= count; ++k) {
      std::string_view moved = y.Dim(d).substr(static_cast<size_t>(count - k));
      for (int64_t from = 0; from < rank; ++from) {
        if (from == d) continue;
        Edit edit;
        edit.cut_dim = d;
        edit.cut_keep = count - k;
        edit.add_dim = from;
        edit.add = moved;
        add(edit, Kind::kAllToAll, from, d, moved);
      }
    }
  }
}

struct SearchNode {
  Packed state;
  double cost = 0;
  int64_t latency = 0;     // of the path to this node (see Latency)
  int64_t step_count = 0;  // collectives and slices on the path to this node
  int64_t parent = -1;  // forward: the previous node; backward: the next node (toward the target)
  Move move;            // the step between this node and its parent
};

// A* bookkeeping shared by both directions: queue entries are ordered by cost plus the
// heuristic of their state.
struct Frontier {
  // priority, latency, steps (the tie-breakers), node (< 0: a goal)
  using Entry = std::tuple<double, int64_t, int64_t, int64_t>;
  explicit Frontier(const Moves& moves) : moves(moves) {}

  const Moves& moves;
  std::vector<SearchNode> nodes;
  std::unordered_map<Packed, double> best_cost;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;

  void Start(Packed state) {
    best_cost.emplace(StateKey(state), 0.0);
    double priority = moves.Heuristic(state);
    nodes.push_back({std::move(state), 0, 0, 0, -1, Move{}});
    queue.emplace(priority, 0, 0, 0);
  }
  // Records `state` reached from node `from` by `move`, unless it is known at no higher cost.
  void Relax(int64_t from, Packed state, Move move) {
    double cost = nodes[from].cost + move.cost_bytes;
    auto [it, inserted] = best_cost.try_emplace(StateKey(state), cost);
    if (!inserted) {
      if (it->second <= cost) return;
      it->second = cost;
    }
    int64_t latency = nodes[from].latency + move.latency;
    int64_t steps = nodes[from].step_count + 1;
    double priority = cost + moves.Heuristic(state);
    nodes.push_back({std::move(state), cost, latency, steps, from, std::move(move)});
    queue.emplace(priority, latency, steps, static_cast<int64_t>(nodes.size()) - 1);
  }
  bool IsStale(int64_t index) const { return best_cost.find(StateKey(nodes[index].state))->second < nodes[index].cost; }
};

// A way to finish: forward node `forward`, then (if `permute`) a collective-permute, then the
// backward path from node `backward` to the target.
struct Goal {
  int64_t forward = -1;
  int64_t backward = -1;
  bool permute = false;
  double permute_bytes = 0;
  double cost = 0;
};

// Forward A* from the source and backward A* from the target, interleaved so that each side
// settles states in order of cost plus heuristic. They meet at two states with the same device
// mapping (no communication), or at two states of equal tile counts, a collective-permute
// apart. The forward queue also holds the ways to finish found so far ("goals"); the first
// goal popped while the backward side has nothing cheaper left to settle is the cheapest.
class Search {
 public:
  Search(const Moves& forward, const Moves& backward, const SearchLimits& limits)
      : forward_(forward), backward_(backward), limits_(limits), front_(forward),
        back_(backward) {}

  std::optional<Goal> Run(Packed source, Packed target) {
    front_.Start(std::move(source));
    back_.Start(std::move(target));
    while (true) {
      double front_top = front_.queue.empty() ? kInfinity : std::get<0>(front_.queue.top());
      double back_top = BackTop();
      // Past the bound, only a backward state meeting an already settled forward one could
      // still give a cheaper plan.
      bool backward_may_help = back_top < limits_.cost_bound && forward_explored_ > 0;
      if (front_top >= limits_.cost_bound && !backward_may_help) return std::nullopt;
      if (back_top < front_top) {
        SettleBackward();
        continue;
      }
      if (front_.queue.empty()) return std::nullopt;
      int64_t index = std::get<3>(front_.queue.top());
      front_.queue.pop();
      if (index < 0) return goals_[-index - 1];
      if (front_.IsStale(index)) continue;
      if (++forward_explored_ > limits_.forward_states) return std::nullopt;
      SettleForward(index);
    }
  }

  const Frontier& front() const { return front_; }
  const Frontier& back() const { return back_; }

 private:
  static constexpr double kInfinity = 1e300;

  // The cost of the next backward state to settle (dropping stale entries); infinite when
  // none is left or the backward budget is spent.
  double BackTop() {
    if (static_cast<int64_t>(back_settled_.size()) >= limits_.backward_states) return kInfinity;
    while (!back_.queue.empty()) {
      int64_t index = std::get<3>(back_.queue.top());
      if (!back_.IsStale(index) && !back_settled_.count(back_.nodes[index].state)) return std::get<0>(back_.queue.top());
      back_.queue.pop();
    }
    return kInfinity;
  }

  void AddGoal(int64_t forward, int64_t backward, double permute_bytes, bool permute) {
    const SearchNode& x = front_.nodes[forward];
    const SearchNode& y = back_.nodes[backward];
    int64_t latency = x.latency + (permute ? Latency(Kind::kCollectivePermute, 2) : 0) + y.latency;
    int64_t steps = x.step_count + (permute ? 1 : 0) + y.step_count;
    goals_.push_back({forward, backward, permute, permute_bytes, x.cost + permute_bytes + y.cost});
    front_.queue.emplace(goals_.back().cost, latency, steps, -static_cast<int64_t>(goals_.size()));
  }

  void SettleForward(int64_t index) {
    const Packed state = front_.nodes[index].state;
    forward_.Expand(state, x_);
    if (x_.Partial().empty()) {
      Packed signature = Moves::Signature(x_);
      Packed mapping = forward_.Mapping(state);
      if (auto met = back_by_mapping_.find(mapping); met != back_by_mapping_.end()) AddGoal(index, met->second, 0, false);
      auto it = back_by_signature_.find(signature);
      if (it != back_by_signature_.end() && backward_.Mapping(back_.nodes[it->second].state) != mapping)
        AddGoal(index, it->second, forward_.DeviceBytes(x_.tiles), true);
      front_by_mapping_.try_emplace(std::move(mapping), index);
      front_by_signature_.try_emplace(std::move(signature), index);
    }
    neighbours_.clear();
    forward_.Successors(x_, neighbours_);
    for (Neighbour& next : neighbours_) front_.Relax(index, std::move(next.state), std::move(next.move));
  }

  void SettleBackward() {
    int64_t index = std::get<3>(back_.queue.top());
    back_.queue.pop();
    const Packed state = back_.nodes[index].state;
    back_settled_.insert(state);
    backward_.Expand(state, x_);
    Packed signature = Moves::Signature(x_);
    Packed mapping = backward_.Mapping(state);
    if (auto met = front_by_mapping_.find(mapping); met != front_by_mapping_.end()) AddGoal(met->second, index, 0, false);
    auto it = front_by_signature_.find(signature);
    if (it != front_by_signature_.end() && forward_.Mapping(front_.nodes[it->second].state) != mapping)
      AddGoal(it->second, index, backward_.DeviceBytes(x_.tiles), true);
    back_by_mapping_.try_emplace(std::move(mapping), index);
    back_by_signature_.try_emplace(std::move(signature), index);
    neighbours_.clear();
    backward_.Predecessors(x_, neighbours_);
    for (Neighbour& next : neighbours_) back_.Relax(index, std::move(next.state), std::move(next.move));
  }

  const Moves& forward_;
  const Moves& backward_;
  const SearchLimits& limits_;
  Frontier front_, back_;
  std::unordered_set<Packed> back_settled_;
  // Device mapping (Moves::Mapping) and tile-count signature -> the cheapest settled node
  // (without partial axes) of that side.
  std::unordered_map<Packed, int64_t> front_by_mapping_, back_by_mapping_;
  std::unordered_map<Packed, int64_t> front_by_signature_, back_by_signature_;
  std::vector<Goal> goals_;
  int64_t forward_explored_ = 0;
  std::vector<Neighbour> neighbours_;
  Expanded x_;
};

// Every dim of `target` holds a prefix of the axes the dim has in `source`.
bool OnlyGathers(const AxisState& source, const AxisState& target) {
  for (size_t d = 0; d < target.dims.size(); ++d) {
    const std::vector<int64_t>& have = source.dims[d];
    const std::vector<int64_t>& want = target.dims[d];
    if (want.size() > have.size() || !std::equal(want.begin(), want.end(), have.begin())) return false;
  }
  return true;
}

}  // namespace

std::optional<ReshardPlan> SearchPlan(const ReshardProblem& problem, std::vector<DeviceAxis> source_axes,
                                      AxisState source, std::vector<DeviceAxis> target_axes, AxisState target,
                                      bool same_axes, const SearchLimits& limits) {
  int64_t rank = static_cast<int64_t>(problem.global_dims.size());
  GSPMD_CHECK(source_axes.size() < 255 && target_axes.size() < 255, "too many device axes to plan over");
  std::vector<int64_t> target_tiles;
  for (const auto& dim : target.dims) {
    int64_t tiles = 1;
    for (int64_t axis : dim) tiles *= target_axes[axis].size;
    target_tiles.push_back(tiles);
  }
  std::vector<int64_t> source_tiles;
  for (const auto& dim : source.dims) {
    int64_t tiles = 1;
    for (int64_t axis : dim) tiles *= source_axes[axis].size;
    source_tiles.push_back(tiles);
  }
  bool source_partial = !source.partial.empty();
  Moves backward_moves(problem, target_axes, target_tiles, &target, true, source_tiles, source_partial);
  Moves forward_moves(problem, source_axes, target_tiles, same_axes ? &target : nullptr, false, source_tiles,
                      source_partial);
  // When every dim of the target keeps a prefix of the source's axes, the plan only has to
  // gather (and reduce), and a collective-permute before the last gathers rarely pays (only
  // through the padding of uneven dims): the backward search, the costly part on big meshes,
  // then only holds the target.
  SearchLimits search_limits = limits;
  if (same_axes && OnlyGathers(source, target)) search_limits.backward_states = 1;
  Search search(forward_moves, backward_moves, search_limits);
  std::optional<Goal> found = search.Run(Pack(source), Pack(target));
  if (!found) return std::nullopt;
  const Frontier& front = search.front();
  const Frontier& back = search.back();

  ReshardPlan plan;
  plan.axes = std::move(source_axes);
  plan.target_axes = std::move(target_axes);
  plan.source = std::move(source);
  plan.target = std::move(target);
  for (int64_t i = found->forward; front.nodes[i].parent >= 0; i = front.nodes[i].parent)
    plan.steps.push_back(front.nodes[i].move.ToStep());
  std::reverse(plan.steps.begin(), plan.steps.end());
  // Between different axes a step marks the change even when the devices need not move (the
  // collective-permute is then the identity and emits nothing).
  if (found->permute || !same_axes) {
    ReshardStep step;
    step.kind = Kind::kCollectivePermute;
    step.cost_bytes = found->permute_bytes;
    step.permuted_to = UnpackDims(back.nodes[found->backward].state, rank);
    plan.steps.push_back(std::move(step));
  }
  for (int64_t i = found->backward; back.nodes[i].parent >= 0; i = back.nodes[i].parent)
    plan.steps.push_back(back.nodes[i].move.ToStep());
  plan.total_cost_bytes = found->cost;
  return plan;
}

}  // namespace gspmd::reshard_search
