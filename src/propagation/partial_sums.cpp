// The partial-sum plan: candidate values grown forward from the producers through the ops
// that are linear in them, then a minimum cut between "computed partial" and "computed whole".
//
// The cut graph, per candidate value v (an array leaf of an instruction):
//   n(v)       on the source side when v is computed partial
//   r(v)       on the sink side when v's whole value is needed
//   n(v) -> r(v)   the all-reduce of v's shard (cut when v is partial and needed whole)
//   S -> n(v)      a producer: the same all-reduce when it is computed whole (reduced at once),
//                  or less when the partitioner would gather its operands instead
//   r(v) -> n(u)   a candidate consumer u computed whole needs v whole
//   r(v) -> T      a consumer that always needs v whole
//   n(v) <-> n(w)  the leaves of one while loop's carry (body parameter and root, condition
//                  parameter, result) are one value
// The cut closest to the source is taken, so on a tie a value is reduced as early as possible.
#include "propagation/partial_sums.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>

#include "ir/known_custom_calls.h"
#include "partitioner/computation_partitioner.h"
#include "partitioner/device_axes.h"
#include "partitioner/partial_sums.h"
#include "propagation/min_cut.h"
#include "propagation/partial_sum_graph.h"

namespace gspmd {
namespace {

using Reduction = Sharding::Reduction;
using partial_sums::kNone;
using partial_sums::Use;
using partial_sums::UseKind;
using partial_sums::Value;
using partial_sums::ValueGraph;
using propagation::MinCut;

// The device axes a partial sum is pending over, and how its pieces combine.
struct Color {
  std::vector<DeviceAxis> axes;  // JoinAdjacentAxes form
  Reduction reduction = Reduction::kSum;
  bool operator==(const Color&) const = default;
};

constexpr int32_t kBlocked = -2;  // a value's color when reached by two colors, or it cannot be partial: whole

bool IsPlumbing(Opcode opcode) {
  return opcode == Opcode::kTuple || opcode == Opcode::kGetTupleElement || opcode == Opcode::kWhile ||
         opcode == Opcode::kCall || opcode == Opcode::kParameter;
}

int64_t GroupSize(const std::vector<DeviceAxis>& axes) {
  int64_t size = 1;
  for (const DeviceAxis& axis : axes) size *= axis.size;
  return size;
}

// The pieces of `axes` (after cutting `sharding` at their bounds) that `sharding` replicates.
// `axes` are in JoinAdjacentAxes form, so cutting a replicated axis at their bounds and keeping
// the pieces inside one of them leaves exactly its overlap with each.
std::vector<DeviceAxis> ReplicatedPart(const AxisSharding& sharding, const std::vector<DeviceAxis>& axes) {
  std::vector<DeviceAxis> part;
  for (const DeviceAxis& replicated : sharding.replicated) {
    for (const DeviceAxis& axis : axes) {
      const int64_t from = std::max(replicated.stride, axis.stride);
      const int64_t to = std::min(replicated.stride * replicated.size, axis.stride * axis.size);
      if (from < to) part.push_back({from, to / from});
    }
  }
  return JoinAdjacentAxes(std::move(part));
}

class Planner {
 public:
  Planner(const Module& module, int64_t num_devices, const DotChoiceOracle& oracle)
      : graph_(module, num_devices), num_devices_(num_devices), oracle_(oracle) {}

  PartialSumPlan Run() {
    FindProducers();
    PriceGatheredProducers();
    Grow();
    return Cut();
  }

 private:
  int32_t ColorId(const Color& color) {
    for (size_t c = 0; c < colors_.size(); ++c)
      if (colors_[c] == color) return static_cast<int32_t>(c);
    colors_.push_back(color);
    return static_cast<int32_t>(colors_.size()) - 1;
  }

  const AxisSharding* AxesOf(const Instruction* instruction) {
    int32_t id = graph_.IdOf(instruction, -1);
    return id >= 0 ? graph_.value(id).axes : nullptr;
  }

  // The axes a dot or convolution sums over: those splitting a contracting dim the same way on
  // both operands. Empty when none do.
  std::vector<DeviceAxis> ContractedAxes(const Instruction& instruction) {
    const AxisSharding* lhs = AxesOf(instruction.operand(0));
    const AxisSharding* rhs = AxesOf(instruction.operand(1));
    if (lhs == nullptr || rhs == nullptr) return {};
    std::vector<std::pair<int64_t, int64_t>> pairs;
    if (instruction.opcode() == Opcode::kDot) {
      const DotDimensionNumbers& dims = instruction.dot_dims();
      for (size_t k = 0; k < dims.lhs_contracting_dims.size() && k < dims.rhs_contracting_dims.size(); ++k)
        pairs.emplace_back(dims.lhs_contracting_dims[k], dims.rhs_contracting_dims[k]);
    } else {
      if (instruction.feature_group_count != 1 || instruction.batch_group_count != 1) return {};
      const ConvDimensionNumbers& dims = instruction.conv_dims();
      pairs.emplace_back(dims.input_feature_dim, dims.kernel_input_feature_dim);
    }
    std::vector<DeviceAxis> axes;
    for (const auto& [l, r] : pairs) {
      if (l >= lhs->rank() || r >= rhs->rank()) return {};
      if (JoinAdjacentAxes(lhs->dims[l]) != JoinAdjacentAxes(rhs->dims[r])) continue;
      axes.insert(axes.end(), lhs->dims[l].begin(), lhs->dims[l].end());
    }
    return axes;
  }

  // The values partial from the start: those with a sharding already unreduced, and the dots,
  // convolutions, reduces and scatter-adds that sum over axes their result is replicated
  // over. In program order, which is the order colors are numbered and growing starts in.
  void FindProducers() {
    for (int32_t c = 0; c < graph_.computation_count(); ++c) {
      for (const Instruction* instruction : graph_.PostOrder(c)) {
        const std::optional<Sharding>& own = instruction->sharding();
        // Without its own sharding a get-tuple-element takes its element's, which may be unreduced.
        if (own ? own->HasUnreduced() : instruction->opcode() == Opcode::kGetTupleElement) {
          const int64_t leaves = instruction->shape().IsTuple() ? instruction->shape().tuple_size() : 0;
          bool fixed = false;
          for (int64_t leaf = leaves > 0 ? 0 : -1; leaf < leaves; ++leaf) {
            const int32_t v = graph_.IdOf(instruction, leaf);
            if (v < 0 || !graph_.value(v).fixed) continue;
            fixed = true;
            FixedProducer(v);
          }
          if (fixed) continue;
        }
        if (!ProducesPartialSums(*instruction)) continue;
        const int32_t v = graph_.IdOf(instruction, -1);
        if (v >= 0 && !graph_.value(v).fixed) SummingProducer(v);
      }
    }
  }

  void FixedProducer(int32_t v) {
    Value& value = graph_.value(v);
    std::optional<AxisSharding> axes = DecomposeSharding(*value.fixed, value.shape->rank(), num_devices_);
    if (!axes || !value.axes) return;
    MakeProducer(v, Color{JoinAdjacentAxes(axes->unreduced), axes->reduction});
  }

  void SummingProducer(int32_t v) {
    if (!graph_.value(v).axes) return;
    const Instruction& instruction = *graph_.value(v).instruction;
    std::vector<DeviceAxis> summed;
    Reduction reduction = Reduction::kSum;
    if (instruction.opcode() == Opcode::kDot || instruction.opcode() == Opcode::kConvolution) {
      if (instruction.operand_count() != 2) return;
      // Nothing can be pending over axes the result is split over.
      if (graph_.value(v).axes->replicated.empty()) return;
      std::optional<DotChoice> choice;
      if (oracle_ && instruction.opcode() == Opcode::kDot) choice = oracle_(instruction, nullptr);
      summed = choice ? choice->pending : ContractedAxes(instruction);
      if (choice && choice->pending.empty()) {
        // The handler gathers: offer the sum the operands' layouts leave pending anyway,
        // priced once the colors are known (PriceGatheredProducers).
        summed = ContractedAxes(instruction);
        if (!summed.empty()) gathered_.emplace_back(v, choice->cost_bytes);
      }
    } else if (instruction.opcode() == Opcode::kScatter) {
      // A scatter-add with its updates split over their scatter dims adds each device's
      // updates into its own copy of the result (the handler's index batch slot).
      const AxisSharding* updates = AxesOf(instruction.operand(2));
      if (updates == nullptr) return;
      const std::vector<int64_t>& window = instruction.scatter_dims().update_window_dims;
      for (int64_t d = 0; d < updates->rank(); ++d)
        if (std::find(window.begin(), window.end(), d) == window.end())
          summed.insert(summed.end(), updates->dims[d].begin(), updates->dims[d].end());
      reduction = *ReductionOfScatter(instruction);
    } else {
      const AxisSharding* operand = AxesOf(instruction.operand(0));
      if (operand == nullptr) return;
      for (int64_t d : instruction.dimensions)
        if (d < operand->rank()) summed.insert(summed.end(), operand->dims[d].begin(), operand->dims[d].end());
      if (summed.empty()) return;
      std::optional<Reduction> reducer = ReductionOfReduce(instruction);
      if (!reducer) return;
      reduction = *reducer;
    }
    if (summed.empty()) return;
    std::vector<DeviceAxis> pending = ReplicatedPart(*graph_.value(v).axes, JoinAdjacentAxes(summed));
    if (pending.empty()) return;
    MakeProducer(v, Color{pending, reduction});
  }

  void MakeProducer(int32_t v, const Color& color) {
    if (color.axes.empty()) return;
    Value& value = graph_.value(v);
    value.producer = true;
    value.color = ColorId(color);
    producers_.push_back(v);
  }

  // A dot the handler would gather (gathered_) costs, computed whole, its gathers minus what
  // computing it partial costs the handler: the planner keeps it partial only where that beats
  // reducing later. A dot the handler cannot compute partial is no producer after all.
  void PriceGatheredProducers() {
    std::vector<int32_t> dropped;
    for (const auto& [v, gather_bytes] : gathered_) {
      Value& value = graph_.value(v);
      if (!value.producer) continue;  // nothing left pending over replicated axes
      std::optional<Layout> layout = ComputePartialLayout(v, value.color, /*allow_scatter=*/false);
      std::optional<DotChoice> partial;
      if (layout) partial = oracle_(*value.instruction, &layout->partial);
      if (!partial) {
        value.producer = false;
        value.color = kNone;
        dropped.push_back(v);
        continue;
      }
      value.whole_cost =
          std::max(0.0, gather_bytes - partial->cost_bytes) * graph_.Weight(value.instruction->parent());
    }
    if (dropped.empty()) return;
    std::erase_if(producers_, [&](int32_t v) { return std::find(dropped.begin(), dropped.end(), v) != dropped.end(); });
  }

  // The layout `value` is computed in when partial in `color`: its sharding with the color's
  // axes unreduced, or, when it splits a dim over them and `allow_scatter`, with them gathered
  // first (a scatter value). nullopt when neither applies.
  struct Layout {
    Sharding partial;
    bool scatter = false;
  };
  // Memoized: values and colors do not change once found, and growing asks again and again.
  // Unless the value must be a scatter value, its layout is the same whether scatter is allowed
  // or not, and one entry serves both. The layout is a function of the value's sharding, rank
  // and color, so values with one sharding_id share it (fixed values, rare, are their own).
  const std::optional<Layout>& PartialLayout(int32_t v, int32_t color, bool allow_scatter) const {
    const Value& value = graph_.value(v);
    if (value.fixed) {
      auto [it, added] = fixed_layouts_.try_emplace({v, color});
      if (added) it->second = ComputePartialLayout(v, color, false);
      return it->second;
    }
    if (value.axes == nullptr) return no_layout_;
    const bool scatters = !ReplicatesColorAxes(v, color);
    if (scatters && !allow_scatter) return no_layout_;
    const size_t slot = 2 * MemoSlot(value.sharding_id, color) + (scatters ? 1 : 0);
    if (layouts_.size() <= slot) {
      layouts_.resize(2 * MemoSlot(graph_.sharding_count(), 0));
      layout_known_.resize(layouts_.size(), 0);
    }
    if (!layout_known_[slot]) {
      layouts_[slot] = ComputePartialLayout(v, color, scatters);
      layout_known_[slot] = 1;
    }
    return layouts_[slot];
  }
  // The index of (sharding_id, color) in the memo tables (the colors are all known before
  // growing).
  size_t MemoSlot(int32_t sharding_id, int32_t color) const {
    return static_cast<size_t>(sharding_id) * colors_.size() + static_cast<size_t>(color);
  }
  std::optional<Layout> ComputePartialLayout(int32_t v, int32_t color, bool allow_scatter) const {
    const Value& value = graph_.value(v);
    if (value.fixed) return Layout{*value.fixed, false};
    if (!value.axes) return std::nullopt;
    const Color& c = colors_[color];
    Sharding base = value.whole;
    bool scatter = false;
    if (!ReplicatesColorAxes(v, color)) {
      if (!allow_scatter) return std::nullopt;
      std::optional<Sharding> spread = ReplicatingAxes(value.whole, value.shape->rank(), num_devices_, c.axes);
      if (!spread) return std::nullopt;
      base = *spread;
      scatter = true;
    }
    std::optional<Sharding> partial = MoveAxesBetweenSubgroups(base, value.shape->rank(), num_devices_, c.axes,
                                                               Sharding::SubgroupType::kReplicated,
                                                               Sharding::SubgroupType::kUnreduced, c.reduction);
    if (!partial) return std::nullopt;
    return Layout{*partial, scatter};
  }

  // Whether `value` (with axes) replicates all of `color`'s axes. Memoized by sharding.
  bool ReplicatesColorAxes(int32_t v, int32_t color) const {
    const size_t slot = MemoSlot(graph_.value(v).sharding_id, color);
    if (replicates_.size() <= slot) replicates_.resize(MemoSlot(graph_.sharding_count(), 0), -1);
    if (replicates_[slot] < 0)
      replicates_[slot] = ReplicatedPart(*graph_.value(v).axes, colors_[color].axes) == colors_[color].axes ? 1 : 0;
    return replicates_[slot] == 1;
  }

  bool ReplicatesColor(const Instruction* operand, int32_t color) {
    int32_t id = graph_.IdOf(operand, -1);
    if (id < 0 || !graph_.value(id).axes) return operand->shape().IsArray() && operand->shape().rank() == 0;
    return ReplicatesColorAxes(id, color);
  }

  // The color `v` is partial in for its users (a scatter value is whole for them).
  int32_t PartialColor(int32_t v) const {
    if (v < 0 || graph_.value(v).scatter) return kNone;
    return graph_.value(v).color;
  }
  bool InColor(int32_t v, int32_t color) const { return PartialColor(v) == color; }

  // Whether op value `u` can be computed partial in `color` given the colors of its operands:
  // its colored operands are all of that color and used linearly, the others are whole and
  // replicated over the color's axes (so running on the pieces needs no extra data).
  bool CanRunOnPieces(int32_t u, int32_t color) {
    const Value& value = graph_.value(u);
    const Instruction& instruction = *value.instruction;
    if (value.leaf >= 0 || IsPlumbing(instruction.opcode()) || instruction.opcode() == Opcode::kCustomCall)
      return false;
    if (value.producer && !value.fixed) return false;
    std::vector<bool> partial(instruction.operand_count(), false);
    for (int64_t i = 0; i < instruction.operand_count(); ++i) {
      int32_t operand = graph_.IdOf(instruction.operand(i), -1);
      if (PartialColor(operand) >= 0 && PartialColor(operand) != color) return false;
      partial[i] = InColor(operand, color);
    }
    std::optional<LinearRoles> roles = LinearRolesOf(instruction, partial, colors_[color].reduction);
    if (!roles) return false;
    for (int64_t i = 0; i < instruction.operand_count(); ++i) {
      if (partial[i]) {
        if (std::find(roles->linear.begin(), roles->linear.end(), i) == roles->linear.end()) return false;
      } else if (!ReplicatesColor(instruction.operand(i), color)) {
        return false;
      }
    }
    return PartialLayout(u, color, /*allow_scatter=*/true).has_value();
  }

  // Colors `v` (and what is tied to it) when it can take that color. Only an op (not
  // plumbing) may be a scatter value, and its color goes no further.
  void Offer(int32_t v, int32_t color, bool op, std::deque<int32_t>& queue) {
    Value& value = graph_.value(v);
    if (value.color == color || value.color == kBlocked) return;
    if (value.color >= 0) {
      Block(v, queue);
      return;
    }
    const std::optional<Layout>& layout = PartialLayout(v, color, op);
    if (!layout) return;
    value.color = color;
    value.scatter = layout->scatter;
    if (value.scatter) return;
    queue.push_back(v);
    for (const auto& [a, b] : graph_.ties()) {
      if (a == v && b >= 0) Offer(b, color, false, queue);
      if (b == v && a >= 0) Offer(a, color, false, queue);
    }
  }

  void Block(int32_t v, std::deque<int32_t>& queue) {
    Value& value = graph_.value(v);
    if (value.color == kBlocked || value.fixed) return;
    value.color = kBlocked;
    queue.push_back(v);
    for (const auto& [a, b] : graph_.ties()) {
      if (a == v && b >= 0) Block(b, queue);
      if (b == v && a >= 0) Block(a, queue);
    }
  }

  void Grow() {
    std::deque<int32_t> queue(producers_.begin(), producers_.end());
    // Forward: a colored value offers its color to its users; a user that cannot run on the
    // pieces stays whole. Blocking is final, and re-examines the users (they may have relied
    // on the blocked value being partial).
    while (!queue.empty()) {
      int32_t v = queue.front();
      queue.pop_front();
      const int32_t color = graph_.value(v).color;
      for (const Use& use : graph_.UsesOf(v)) {
        if (use.kind == UseKind::kSink) continue;
        Value& user = graph_.value(use.to);
        if (color == kBlocked) {
          if (user.color >= 0 && !user.producer && use.kind == UseKind::kOperand && !CanRunOnPieces(use.to, user.color))
            Block(use.to, queue);
          continue;
        }
        if (use.kind == UseKind::kIdentity) {
          Offer(use.to, color, false, queue);
          continue;
        }
        if (user.color == color) {
          // Colored through another operand first: with this one partial too it may no longer
          // run on the pieces (a dot of two values of one partial sum is no partial of their
          // product: oracle seed 114392, a dot of a partial vector and its broadcast, planned
          // partial and reduced at the end, which needed both operands reduced, 1344 B).
          if (!user.producer && use.kind == UseKind::kOperand && !CanRunOnPieces(use.to, color)) Block(use.to, queue);
          continue;
        }
        if (user.color >= 0 || user.color == kBlocked) {
          if (user.color >= 0 && !user.producer) Block(use.to, queue);
          continue;
        }
        if (CanRunOnPieces(use.to, color)) Offer(use.to, color, true, queue);
      }
    }
  }

  // Whether consumer value `u` (not partial) takes `v` split over v's color's axes: the same
  // dims, laid out with those axes splitting them. Reducing `v` for it is a reduce-scatter.
  bool TakesItScattered(const Value& v, const Value& u) const {
    if (u.leaf >= 0 || !u.axes || u.shape->dims() != v.shape->dims()) return false;
    const Color& c = colors_[v.color];
    if (!ReplicatedPart(*u.axes, c.axes).empty()) return false;
    for (const DeviceAxis& axis : u.axes->manual)
      for (const DeviceAxis& pending : c.axes)
        if (axis.stride < pending.stride * pending.size && pending.stride < axis.stride * axis.size) return false;
    return true;
  }

  // The bytes of a value's shard in its partial layout.
  double ShardBytes(const Value& value) const {
    const Shape& shape = *value.shape;
    double bytes = static_cast<double>(ElementByteSize(shape.element_type()));
    // Unreduced axes are subgroup dims, not data dims: unless scattered, the shard is the
    // whole value's, whose tiles are its axes.
    if (!value.scatter && value.axes != nullptr && value.axes->rank() == shape.rank()) {
      for (int64_t d = 0; d < shape.rank(); ++d) {
        const int64_t tiles = value.axes->TileCount(d);
        bytes *= static_cast<double>((shape.dims()[d] + tiles - 1) / tiles);
      }
      return bytes;
    }
    for (int64_t d : ShardDimsOf(*value.partial, shape.dims())) bytes *= static_cast<double>(d);
    return bytes;
  }

  PartialSumPlan Cut() {
    PartialSumPlan plan;
    MinCut cut;
    // The colored values in program order: the cut graph, and so the plan, then do not depend
    // on the order values were looked at.
    struct Placed {
      int32_t computation, position;
      int64_t leaf;
      int32_t v;
    };
    std::vector<Placed> colored;
    for (int32_t v = 0; v < graph_.size(); ++v) {
      const Value& value = graph_.value(v);
      if (value.color >= 0) colored.push_back({value.order.computation, value.order.position, value.leaf, v});
    }
    std::sort(colored.begin(), colored.end(), [](const Placed& a, const Placed& b) {
      return std::tie(a.computation, a.position, a.leaf) < std::tie(b.computation, b.position, b.leaf);
    });
    std::vector<int32_t> candidates;
    for (const Placed& placed : colored) {
      const int32_t v = placed.v;
      Value& value = graph_.value(v);
      const std::optional<Layout>& layout = PartialLayout(v, value.color, value.scatter);
      if (!layout) {
        value.color = kBlocked;
        continue;
      }
      value.partial = layout->partial;
      const int64_t group = GroupSize(colors_[value.color].axes);
      const double bytes = ShardBytes(value);
      value.cost = group <= 1 ? 0
                              : 2.0 * static_cast<double>(group - 1) / static_cast<double>(group) * bytes *
                                    graph_.Weight(value.instruction->parent());
      value.scatter_cost = value.cost / 2;
      value.n = cut.AddNode();
      value.r = cut.AddNode();
      // Costless values (one device per group) still need their edges; keep a token weight so
      // that reducing them is not free when something downstream is not.
      if (value.scatter) {
        cut.AddEdge(value.n, MinCut::kSink, std::max(value.scatter_cost, 1e-6));
      } else {
        cut.AddEdge(value.n, value.r, std::max(value.cost, 1e-6));
      }
      candidates.push_back(v);
    }
    if (candidates.empty()) return plan;
    double producer_total = 0;
    for (int32_t v : candidates) {
      const Value& value = graph_.value(v);
      if (value.fixed) {
        cut.AddEdge(MinCut::kSource, value.n, 1e30);
      } else if (value.producer) {
        const double whole = value.whole_cost ? std::min(*value.whole_cost, value.cost) : value.cost;
        cut.AddEdge(MinCut::kSource, value.n, std::max(whole, 1e-6));
        producer_total += whole;
      }
      if (value.scatter) continue;
      bool scattered = false;
      for (const Use& use : graph_.UsesOf(v)) {
        const bool candidate_user = use.kind != UseKind::kSink && graph_.value(use.to).color == value.color;
        if (candidate_user) {
          cut.AddEdge(value.r, graph_.value(use.to).n, MinCut::kInfinite);
        } else if (use.kind == UseKind::kOperand && TakesItScattered(value, graph_.value(use.to))) {
          scattered = true;
        } else {
          cut.AddEdge(value.r, MinCut::kSink, MinCut::kInfinite);
        }
      }
      if (scattered) cut.AddEdge(value.n, MinCut::kSink, std::max(value.scatter_cost, 1e-6));
    }
    for (const auto& [a, b] : graph_.ties()) {
      if (a < 0 || b < 0 || graph_.value(a).color < 0 || graph_.value(a).color != graph_.value(b).color) continue;
      cut.AddEdge(graph_.value(a).n, graph_.value(b).n, MinCut::kInfinite);
      cut.AddEdge(graph_.value(b).n, graph_.value(a).n, MinCut::kInfinite);
    }
    const double total = cut.Solve();
    plan.saved_bytes = std::max(0.0, producer_total - total);
    BuildIncoming(candidates);
    partial_.assign(static_cast<size_t>(graph_.size()), 0);
    for (int32_t v : candidates)
      if (cut.OnSourceSide(graph_.value(v).n)) partial_[v] = 1;
    // A partial value none of whose operands is partial and that is not a producer gains
    // nothing (it would only mask whole values): keep it whole. Repeat until nothing changes.
    bool changed = true;
    while (changed) {
      changed = false;
      for (int32_t v : candidates) {
        if (!partial_[v] || Feeds(v)) continue;
        partial_[v] = 0;
        changed = true;
      }
    }
    for (int32_t v : candidates)
      if (partial_[v]) Record(v, plan);
    return plan;
  }

  // Whether partial value `v` has a partial source: it is a producer, or some value whose
  // partial sum flows into it is partial.
  bool Feeds(int32_t v) const {
    const Value& value = graph_.value(v);
    if (value.producer || value.fixed) return true;
    for (int32_t from : incoming_[v])
      if (partial_[from]) return true;
    return false;
  }

  // Per value, the candidates whose uses reach it (its operands, tuple sources, tied carry
  // leaves), in program order: only candidates can be partial.
  void BuildIncoming(const std::vector<int32_t>& candidates) {
    for (int32_t from : candidates) graph_.UsesOf(from);  // first: finding uses may add values
    incoming_.assign(static_cast<size_t>(graph_.size()), {});
    for (int32_t from : candidates)
      for (const Use& use : graph_.UsesOf(from))
        if (use.kind != UseKind::kSink) incoming_[use.to].push_back(from);
    for (const auto& [a, b] : graph_.ties()) {
      if (a < 0 || b < 0) continue;
      incoming_[a].push_back(b);
      incoming_[b].push_back(a);
    }
  }

  void Record(int32_t v, PartialSumPlan& plan) {
    const Value& value = graph_.value(v);
    const Instruction* instruction = value.instruction;
    const Sharding& sharding = *value.partial;
    if (value.scatter) {
      plan.computed_as[instruction] = sharding;
    } else if (value.leaf < 0) {
      plan.shardings[instruction] = sharding;
      if (value.producer && value.whole_cost) plan.instead_of_gathering.insert(instruction);
    } else {
      auto it = plan.shardings.find(instruction);
      if (it == plan.shardings.end()) {
        Sharding tuple = EffectiveSharding(*instruction);
        if (!tuple.IsTuple()) {
          std::vector<Sharding> leaves(instruction->shape().tuple_size(), tuple);
          tuple = Sharding::Tuple(std::move(leaves));
        }
        it = plan.shardings.emplace(instruction, tuple).first;
      }
      it->second.mutable_tuple_elements().at(value.leaf) = sharding;
    }
    PartialSumPlan::Note& note = plan.notes[instruction];
    note.scattered = value.scatter;
    // Sources: the producers reached backward through partial values.
    std::set<int32_t> seen{v};
    std::vector<int32_t> stack{v};
    while (!stack.empty()) {
      int32_t w = stack.back();
      stack.pop_back();
      const Value& source = graph_.value(w);
      if (source.producer || source.fixed) {
        if (std::find(note.sources.begin(), note.sources.end(), source.instruction) == note.sources.end())
          note.sources.push_back(source.instruction);
        continue;
      }
      for (int32_t from : incoming_[w])
        if (partial_[from] && seen.insert(from).second) stack.push_back(from);
    }
    if (value.scatter) {
      note.reduced_at.push_back(instruction);
      return;
    }
    for (const Use& use : graph_.UsesOf(v)) {
      const bool stays = use.kind != UseKind::kSink && partial_[use.to];
      if (stays) continue;
      const Instruction* consumer = use.kind == UseKind::kSink ? nullptr : graph_.value(use.to).instruction;
      if (consumer == nullptr) {
        for (const Instruction* user : instruction->users())
          if (std::find(note.reduced_at.begin(), note.reduced_at.end(), user) == note.reduced_at.end() &&
              !(user->opcode() == Opcode::kTuple || user->opcode() == Opcode::kGetTupleElement))
            note.reduced_at.push_back(user);
        if (instruction->parent()->root() == instruction &&
            std::find(note.reduced_at.begin(), note.reduced_at.end(), instruction) == note.reduced_at.end())
          note.reduced_at.push_back(instruction);
        continue;
      }
      if (std::find(note.reduced_at.begin(), note.reduced_at.end(), consumer) == note.reduced_at.end())
        note.reduced_at.push_back(consumer);
    }
  }

  ValueGraph graph_;
  int64_t num_devices_;
  const DotChoiceOracle& oracle_;
  std::vector<int32_t> producers_;  // in program order
  // Producers the dot handler would gather, with the bytes of its gathering placement.
  std::vector<std::pair<int32_t, double>> gathered_;
  std::vector<Color> colors_;
  std::vector<char> partial_;                    // by value, after the cut
  std::vector<std::vector<int32_t>> incoming_;  // by value, after the cut
  // Memos by (sharding_id, color); layouts two per pair (not scattered, scattered). Deques:
  // references handed out stay valid as they grow.
  mutable std::deque<std::optional<Layout>> layouts_;
  mutable std::deque<char> layout_known_;
  mutable std::map<std::pair<int32_t, int32_t>, std::optional<Layout>> fixed_layouts_;  // by (value, color)
  mutable std::vector<int8_t> replicates_;  // -1: not known yet
  const std::optional<Layout> no_layout_;
};

}  // namespace

PartialSumPlan PlanPartialSums(const Module& module, int64_t num_devices, const DotChoiceOracle& oracle) {
  return Planner(module, num_devices, oracle).Run();
}

std::string DescribePartialSum(const PartialSumPlan& plan, const Instruction& instruction) {
  auto it = plan.notes.find(&instruction);
  if (it == plan.notes.end()) return "";
  std::string text = "partial sum";
  const PartialSumPlan::Note& note = it->second;
  for (size_t i = 0; i < note.sources.size(); ++i) {
    text += i == 0 ? " since %" : ", %";
    text += note.sources[i] == &instruction ? std::string("itself") : note.sources[i]->name();
  }
  if (!note.sources.empty() && note.sources.front() == &instruction) text = "partial sum (computed so)";
  if (note.scattered) return text + "; reduce-scattered into its own sharding here";
  if (note.reduced_at.empty()) return text + "; stays partial";
  text += "; whole at ";
  for (size_t i = 0; i < note.reduced_at.size(); ++i) {
    if (i > 0) text += ", ";
    text += "%" + note.reduced_at[i]->name();
  }
  return text;
}

}  // namespace gspmd
