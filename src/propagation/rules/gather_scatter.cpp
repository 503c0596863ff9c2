// Propagation rules for gather and scatter: operand pass-through dims (whole slices) line up
// with the result's offset dims, index pass-through dims with its batch dims, and explicit
// batching dims line up everywhere. The embedding pattern (a vocab-split table) thus gives a
// result replicated over the vocab axis.
#include <algorithm>

#include "propagation/rules/rules.h"
#include "propagation/sharding_algebra.h"

namespace gspmd::propagation::rules {
namespace {

bool Contains(const std::vector<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// The dims of an index array other than its index vector dim, in order.
std::vector<int64_t> IndexBatchDims(int64_t indices_rank, int64_t index_vector_dim) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < indices_rank; ++d)
    if (d != index_vector_dim) dims.push_back(d);
  return dims;
}

// The dims of `rank` not listed in `window_dims`, in order (gather output batch dims,
// scatter update scatter dims).
std::vector<int64_t> NonWindowDims(int64_t rank, const std::vector<int64_t>& window_dims) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d)
    if (!Contains(window_dims, d)) dims.push_back(d);
  return dims;
}

// Operand dims that appear as window dims (not collapsed/inserted, not batching), in order.
std::vector<int64_t> OperandWindowDims(int64_t operand_rank, const std::vector<int64_t>& collapsed,
                                       const std::vector<int64_t>& batching) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < operand_rank; ++d)
    if (!Contains(collapsed, d) && !Contains(batching, d)) dims.push_back(d);
  return dims;
}

// Everything about one gather or scatter needed to map dims, in the gather's terms: the
// "operand", the "indices", and the "window value" (gather result / scatter updates).
struct IndexedDims {
  int64_t operand_rank = 0, indices_rank = 0, value_rank = 0;
  // Pairs (operand dim, value dim) for window dims whose slice covers the whole operand dim.
  std::vector<std::pair<int64_t, int64_t>> passthrough;
  // Pairs (indices dim, value dim) for the index batch dims.
  std::vector<std::pair<int64_t, int64_t>> index_batch;
  // Triples (operand dim, indices dim, value dim) for explicit batching dims.
  struct Batching {
    int64_t operand, indices, value;
  };
  std::vector<Batching> batching;
};

IndexedDims BuildIndexedDims(const Shape& operand, const Shape& indices, const Shape& value,
                             const std::vector<int64_t>& window_dims,
                             const std::vector<int64_t>& collapsed,
                             const std::vector<int64_t>& operand_batching,
                             const std::vector<int64_t>& indices_batching,
                             int64_t index_vector_dim, const std::vector<int64_t>& window_sizes) {
  IndexedDims dims;
  dims.operand_rank = operand.rank();
  dims.indices_rank = indices.rank();
  dims.value_rank = value.rank();
  std::vector<int64_t> operand_window = OperandWindowDims(operand.rank(), collapsed, operand_batching);
  std::vector<int64_t> sorted_window = window_dims;
  std::sort(sorted_window.begin(), sorted_window.end());
  for (size_t k = 0; k < operand_window.size() && k < sorted_window.size(); ++k) {
    const int64_t op_dim = operand_window[k];
    const int64_t value_dim = sorted_window[k];
    if (value_dim >= value.rank()) continue;
    const int64_t size = window_sizes.empty() ? value.dim(value_dim) : window_sizes.at(op_dim);
    if (size == operand.dim(op_dim)) dims.passthrough.push_back({op_dim, value_dim});
  }
  std::vector<int64_t> index_dims = IndexBatchDims(indices.rank(), index_vector_dim);
  std::vector<int64_t> value_batch = NonWindowDims(value.rank(), sorted_window);
  for (size_t k = 0; k < index_dims.size() && k < value_batch.size(); ++k)
    dims.index_batch.push_back({index_dims[k], value_batch[k]});
  for (size_t k = 0; k < operand_batching.size() && k < indices_batching.size(); ++k) {
    int64_t value_dim = -1;
    for (const auto& [i, v] : dims.index_batch)
      if (i == indices_batching[k]) value_dim = v;
    dims.batching.push_back({operand_batching[k], indices_batching[k], value_dim});
  }
  return dims;
}

// The dim along which an integer value counts 0, 1, 2, ... (an iota, possibly broadcast,
// converted, copied or reshaped by adding/removing size-1 dims), or -1.
int64_t IotaDim(const Instruction& value, int depth = 0) {
  if (depth > 8 || !value.shape().IsArray()) return -1;
  switch (value.opcode()) {
    case Opcode::kIota:
      return value.iota_dimension;
    case Opcode::kBroadcast: {
      const int64_t d = IotaDim(*value.operand(0), depth + 1);
      return d >= 0 && d < static_cast<int64_t>(value.dimensions.size()) ? value.dimensions[d] : -1;
    }
    case Opcode::kConvert: case Opcode::kCopy:
      return IotaDim(*value.operand(0), depth + 1);
    case Opcode::kReshape: {
      const int64_t d = IotaDim(*value.operand(0), depth + 1);
      if (d < 0) return -1;
      // Only size-1 dims may come or go: the counting dim keeps its size and position among
      // the non-trivial dims.
      const Shape& in = value.operand(0)->shape();
      int64_t ordinal = 0;
      for (int64_t k = 0; k < d; ++k) ordinal += in.dim(k) != 1;
      int64_t seen = 0;
      for (int64_t k = 0; k < value.shape().rank(); ++k) {
        if (value.shape().dim(k) == 1) continue;
        if (seen++ == ordinal) return value.shape().dim(k) == in.dim(d) ? k : -1;
      }
      return -1;
    }
    default:
      return -1;
  }
}

// Index vector components that are iotas along an indices dim make that indices dim and the
// indexed operand dim (sliced to size 1) parallel, like explicit batching dims: XLA's
// "parallel batch dims" of gathers/scatters written with iota-concatenated indices.
void AddIotaParallelDims(IndexedDims& dims, const Instruction& indices, int64_t index_vector_dim,
                         const std::vector<int64_t>& index_map, const Shape& operand,
                         const std::vector<bool>& operand_dim_is_unit_slice) {
  std::vector<int64_t> component_dim(index_map.size(), -1);
  auto components_in = [&](const Instruction& piece) -> int64_t {
    return index_vector_dim < piece.shape().rank() ? piece.shape().dim(index_vector_dim) : 1;
  };
  if (indices.opcode() == Opcode::kConcatenate && indices.dimensions.size() == 1 &&
      indices.dimensions[0] == index_vector_dim) {
    int64_t next = 0;
    for (const Instruction* piece : indices.operands()) {
      const int64_t count = components_in(*piece);
      const int64_t d = IotaDim(*piece);
      for (int64_t j = 0; j < count && next + j < static_cast<int64_t>(component_dim.size()); ++j)
        if (d >= 0 && d != index_vector_dim) component_dim[next + j] = d;
      next += count;
    }
  } else {
    const int64_t d = IotaDim(indices);
    if (d >= 0 && d != index_vector_dim) component_dim.assign(component_dim.size(), d);
  }
  std::vector<int64_t> used;
  for (size_t k = 0; k < index_map.size(); ++k) {
    const int64_t indices_dim = component_dim[k];
    const int64_t operand_dim = index_map[k];
    if (indices_dim < 0 || operand_dim < 0 || operand_dim >= operand.rank()) continue;
    if (!operand_dim_is_unit_slice[operand_dim]) continue;
    if (Contains(used, indices_dim)) return;  // one indices dim feeding two components: give up
    if (operand.dim(operand_dim) != indices.shape().dim(indices_dim)) continue;
    bool already = false;
    for (const auto& b : dims.batching) already |= b.operand == operand_dim || b.indices == indices_dim;
    if (already) continue;
    used.push_back(indices_dim);
    int64_t value_dim = -1;
    for (const auto& [i, v] : dims.index_batch)
      if (i == indices_dim) value_dim = v;
    dims.batching.push_back({operand_dim, indices_dim, value_dim});
  }
}

IndexedDims GatherDims(const Instruction& gather) {
  const GatherDimensionNumbers& g = gather.gather_dims();
  IndexedDims dims = BuildIndexedDims(gather.operand(0)->shape(), gather.operand(1)->shape(),
                                      gather.shape(), g.offset_dims, g.collapsed_slice_dims,
                                      g.operand_batching_dims, g.start_indices_batching_dims,
                                      g.index_vector_dim, gather.gather_slice_sizes());
  const Shape& operand = gather.operand(0)->shape();
  std::vector<bool> unit(operand.rank(), false);
  for (int64_t d = 0; d < operand.rank(); ++d)
    unit[d] = d < static_cast<int64_t>(gather.gather_slice_sizes().size()) && gather.gather_slice_sizes()[d] == 1;
  AddIotaParallelDims(dims, *gather.operand(1), g.index_vector_dim, g.start_index_map, operand, unit);
  return dims;
}

int64_t ScatterCount(const Instruction& scatter) { return (scatter.operand_count() - 1) / 2; }

IndexedDims ScatterDims(const Instruction& scatter) {
  const ScatterDimensionNumbers& s = scatter.scatter_dims();
  const int64_t n = ScatterCount(scatter);
  IndexedDims dims = BuildIndexedDims(scatter.operand(0)->shape(), scatter.operand(n)->shape(),
                                      scatter.operand(n + 1)->shape(), s.update_window_dims,
                                      s.inserted_window_dims, s.input_batching_dims,
                                      s.scatter_indices_batching_dims, s.index_vector_dim, {});
  const Shape& operand = scatter.operand(0)->shape();
  std::vector<bool> unit(operand.rank(), false);
  for (int64_t d : s.inserted_window_dims)
    if (d >= 0 && d < operand.rank()) unit[d] = true;
  AddIotaParallelDims(dims, *scatter.operand(n), s.index_vector_dim, s.scatter_dims_to_operand_dims,
                      operand, unit);
  return dims;
}

enum class Role { kOperand, kIndices, kValue };

// The sharding of `to` implied by the sharding of `from` through the dim correspondences.
std::optional<Sharding> Project(const IndexedDims& dims, Role from, Role to, const Sharding& s,
                                bool with_passthrough = true, bool with_index_batch = true) {
  if (!IsUsable(s) || s.IsMaximal()) return std::nullopt;
  auto rank_of = [&](Role role) {
    return role == Role::kOperand ? dims.operand_rank
           : role == Role::kIndices ? dims.indices_rank
                                    : dims.value_rank;
  };
  std::vector<int64_t> src_to_tgt(rank_of(from), -1);
  auto link = [&](int64_t a, int64_t b) {
    if (a >= 0 && b >= 0 && src_to_tgt[a] < 0) src_to_tgt[a] = b;
  };
  auto pick = [&](Role role, int64_t operand, int64_t indices, int64_t value) {
    return role == Role::kOperand ? operand : role == Role::kIndices ? indices : value;
  };
  for (const auto& b : dims.batching)
    link(pick(from, b.operand, b.indices, b.value), pick(to, b.operand, b.indices, b.value));
  if (with_passthrough) {
    for (const auto& [op, value] : dims.passthrough)
      link(pick(from, op, -1, value), pick(to, op, -1, value));
  }
  if (with_index_batch) {
    for (const auto& [index, value] : dims.index_batch)
      link(pick(from, -1, index, value), pick(to, -1, index, value));
  }
  return MapDims(s, src_to_tgt, rank_of(to));
}

const Sharding* UsableAt(const Operands& operands, int64_t i) {
  if (i < 0 || i >= static_cast<int64_t>(operands.size())) return nullptr;
  const Sharding* s = operands[i];
  return s != nullptr && IsUsable(*s) ? s : nullptr;
}

std::optional<Sharding> MergeInOrder(const std::vector<std::optional<Sharding>>& proposals,
                                     const Shape& shape) {
  std::vector<Sharding> candidates;
  for (const auto& p : proposals)
    if (p) candidates.push_back(*p);
  return MergeAll(candidates, shape);
}

// Folds `proposals` in order: a later one refines the result where it is compatible and is
// dropped where it is not, so an incompatible split, however many tiles it has, does not
// displace an earlier one (XLA improves a scatter result one source at a time this way).
std::optional<Sharding> RefineInOrder(const std::vector<std::optional<Sharding>>& proposals, const Shape& shape) {
  std::optional<Sharding> result;
  for (const auto& p : proposals) {
    if (!p) continue;
    if (!result) {
      result = *p;
      continue;
    }
    if (std::optional<Sharding> merged = MergeShardings(*result, *p, shape)) result = std::move(*merged);
  }
  return result;
}

}  // namespace

// ---- gather(operand, indices) ----

std::optional<Proposal> GatherForward(const Instruction& instruction, const Operands& operands,
                                      const ShardingLookup& lookup) {
  if (!IsArray(instruction) || instruction.operand_count() < 2) return std::nullopt;
  const IndexedDims dims = GatherDims(instruction);
  std::vector<std::optional<Sharding>> proposals;
  if (const Sharding* indices = UsableAt(operands, 1))
    proposals.push_back(Project(dims, Role::kIndices, Role::kValue, *indices));
  if (const Sharding* operand = UsableAt(operands, 0))
    proposals.push_back(Project(dims, Role::kOperand, Role::kValue, *operand));
  std::optional<Sharding> merged = MergeInOrder(proposals, instruction.shape());
  if (!merged) return std::nullopt;
  return Named(std::move(*merged), "gather", true);
}

std::optional<Proposal> GatherBackward(const Instruction& user, int64_t operand_index,
                                       const Sharding& user_sharding, const Operands& operands,
                                       const ShardingLookup& lookup) {
  if (operand_index > 1 || !IsUsable(user_sharding)) return std::nullopt;
  const IndexedDims dims = GatherDims(user);
  const Role to = operand_index == 0 ? Role::kOperand : Role::kIndices;
  std::optional<Sharding> sharding = Project(dims, Role::kValue, to, user_sharding);
  if (!sharding) return std::nullopt;
  return Named(std::move(*sharding), "gather", false);
}

// ---- scatter(operands..., indices, updates...) ----

// Result i of a variadic scatter follows its own operand i, then its updates i, then the
// indices (shared by all); as in XLA, one result's sharding does not flow into another's, and
// a split the indices bring later does not displace the one the updates gave.
std::optional<Proposal> ScatterForward(const Instruction& instruction, const Operands& operands,
                                       const ShardingLookup& lookup) {
  const int64_t n = ScatterCount(instruction);
  if (n < 1) return std::nullopt;
  const IndexedDims dims = ScatterDims(instruction);
  const Shape& element_shape = instruction.operand(0)->shape();
  std::optional<Sharding> from_indices;
  if (const Sharding* indices = UsableAt(operands, n)) {
    from_indices = Project(dims, Role::kIndices, Role::kOperand, *indices,
                           /*with_passthrough=*/false, /*with_index_batch=*/false);
  }
  std::vector<Sharding> results;
  bool any = false;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<std::optional<Sharding>> proposals;
    if (const Sharding* s = UsableAt(operands, i)) proposals.push_back(*s);
    if (const Sharding* update = UsableAt(operands, n + 1 + i))
      proposals.push_back(Project(dims, Role::kValue, Role::kOperand, *update));
    proposals.push_back(from_indices);
    std::optional<Sharding> merged = RefineInOrder(proposals, element_shape);
    any |= merged.has_value();
    results.push_back(merged ? std::move(*merged) : Sharding::Unknown());  // unknown: no proposal
  }
  if (!any) return std::nullopt;
  Sharding result = instruction.shape().IsTuple() ? Sharding::Tuple(std::move(results)) : std::move(results[0]);
  return Named(std::move(result), "scatter", true);
}

std::optional<Proposal> ScatterBackward(const Instruction& user, int64_t operand_index,
                                        const Sharding& user_sharding, const Operands& operands,
                                        const ShardingLookup& lookup) {
  const int64_t n = ScatterCount(user);
  if (n < 1) return std::nullopt;
  const IndexedDims dims = ScatterDims(user);
  auto element = [&](int64_t i) -> const Sharding* {
    if (!user_sharding.IsTuple()) return &user_sharding;
    if (i >= static_cast<int64_t>(user_sharding.tuple_elements().size())) return nullptr;
    return &user_sharding.tuple_elements()[i];
  };
  if (operand_index < n) {
    const Sharding* s = element(operand_index);
    if (s == nullptr || !IsUsable(*s)) return std::nullopt;
    return Named(*s, "scatter", false);
  }
  if (operand_index == n) {  // indices: from the updates' index batch dims
    std::vector<std::optional<Sharding>> proposals;
    for (int64_t i = 0; i < n; ++i) {
      if (const Sharding* update = UsableAt(operands, n + 1 + i)) {
        if (!IsSpatiallyPartitioned(*update)) continue;
        proposals.push_back(Project(dims, Role::kValue, Role::kIndices, *update));
      }
    }
    std::optional<Sharding> merged = MergeInOrder(proposals, user.operand(n)->shape());
    if (!merged) return std::nullopt;
    return Named(std::move(*merged), "scatter", false);
  }
  const int64_t update = operand_index - n - 1;
  if (update >= n) return std::nullopt;
  std::vector<std::optional<Sharding>> proposals;
  if (const Sharding* s = element(update); s != nullptr && IsUsable(*s))
    proposals.push_back(Project(dims, Role::kOperand, Role::kValue, *s));
  if (const Sharding* indices = UsableAt(operands, n); indices != nullptr)
    proposals.push_back(Project(dims, Role::kIndices, Role::kValue, *indices));
  std::optional<Sharding> merged = MergeInOrder(proposals, user.operand(operand_index)->shape());
  if (!merged) return std::nullopt;
  return Named(std::move(*merged), "scatter", false);
}

}  // namespace gspmd::propagation::rules
