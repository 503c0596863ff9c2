// The partial-sum plan: candidate values grown forward from the producers through the ops
// that are linear in them, then a minimum cut between "computed partial" and "computed whole".
//
// The cut graph, per candidate value v (an array leaf of an instruction):
//   n(v)       on the source side when v is computed partial
//   r(v)       on the sink side when v's whole value is needed
//   n(v) -> r(v)   the all-reduce of v's shard (cut when v is partial and needed whole)
//   S -> n(v)      a producer: the same all-reduce when it is computed whole (reduced at once)
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
#include <unordered_map>

#include "ir/known_custom_calls.h"
#include "partitioner/computation_partitioner.h"
#include "partitioner/device_axes.h"
#include "partitioner/partial_sums.h"
#include "propagation/min_cut.h"

namespace gspmd {
namespace {

using Reduction = Sharding::Reduction;
using propagation::MinCut;

// The device axes a partial sum is pending over, and how its pieces combine.
struct Color {
  std::vector<DeviceAxis> axes;  // JoinAdjacentAxes form
  Reduction reduction = Reduction::kSum;
  bool operator==(const Color&) const = default;
};

// How many times a loop body is taken to run per run of its caller, for the costs of the
// reductions in it (trip counts are not analysed; any count above one favours reducing after
// the loop).
constexpr double kLoopWeight = 16;

constexpr int32_t kNone = -1;     // not a candidate
constexpr int32_t kBlocked = -2;  // reached by two colors, or cannot be partial: whole

// One array leaf of an instruction of the program.
struct Value {
  const Instruction* instruction = nullptr;
  int64_t leaf = -1;  // -1: the instruction is an array; else the tuple element
  const Shape* shape = nullptr;
  Sharding whole;  // its sharding without unreduced axes
  std::optional<Sharding> fixed;  // a sharding already unreduced, kept
  std::optional<AxisSharding> axes;
  int32_t color = kNone;
  bool producer = false;
  // Split over its color's axes: computed partial in `partial` (those axes gathered) and
  // reduce-scattered into its own layout at once; its users take it whole.
  bool scatter = false;
  std::optional<Sharding> partial;  // the layout it is computed in when partial
  double cost = 0;          // the all-reduce of its shard over its color's axes
  double scatter_cost = 0;  // the reduce-scatter of it
  int32_t n = -1, r = -1;  // cut nodes
};

// How value `from` is used.
enum class UseKind {
  kOperand,   // operand `position` of instruction `to`'s value
  kIdentity,  // `to` is the same data (tuple element, get-tuple-element, call parameter / result)
  kSink,      // needed whole
};

struct Use {
  UseKind kind;
  int32_t to = -1;
  int64_t position = 0;
};

bool IsPlumbing(Opcode opcode) {
  return opcode == Opcode::kTuple || opcode == Opcode::kGetTupleElement || opcode == Opcode::kWhile ||
         opcode == Opcode::kCall || opcode == Opcode::kParameter;
}

bool RunsAsControlFlow(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kWhile || instruction.opcode() == Opcode::kConditional ||
         instruction.opcode() == Opcode::kCall;
}

int64_t GroupSize(const std::vector<DeviceAxis>& axes) {
  int64_t size = 1;
  for (const DeviceAxis& axis : axes) size *= axis.size;
  return size;
}

// The pieces of `axes` (after cutting `sharding` at their bounds) that `sharding` replicates.
std::vector<DeviceAxis> ReplicatedPart(const AxisSharding& sharding, const std::vector<DeviceAxis>& axes) {
  std::vector<int64_t> bounds;
  for (const DeviceAxis& axis : axes) {
    bounds.push_back(axis.stride);
    bounds.push_back(axis.stride * axis.size);
  }
  AxisSharding cut = SplitAxesAt(sharding, bounds);
  std::vector<DeviceAxis> part;
  for (const DeviceAxis& piece : cut.replicated)
    for (const DeviceAxis& axis : axes)
      if (piece.stride >= axis.stride && piece.stride * piece.size <= axis.stride * axis.size) part.push_back(piece);
  return JoinAdjacentAxes(part);
}

class Planner {
 public:
  Planner(const Module& module, int64_t num_devices, const PendingAxesOracle& oracle)
      : module_(module), num_devices_(num_devices), oracle_(oracle) {}

  PartialSumPlan Run() {
    CollectComputations();
    for (const Computation* computation : computations_)
      for (const Instruction* instruction : computation->MakePostOrder()) AddValues(*instruction);
    for (const Computation* computation : computations_)
      for (const Instruction* instruction : computation->MakePostOrder()) AddUses(*instruction);
    FindProducers();
    Grow();
    return Cut();
  }

 private:
  // The entry and what it runs as control flow, each with how often it runs per run of the
  // entry: a loop body (and condition) kLoopWeight times its caller (trip counts are not
  // known), anything else as often as its caller.
  void CollectComputations() {
    std::vector<const Computation*> stack;
    if (module_.entry() != nullptr) {
      stack.push_back(module_.entry());
      weights_[module_.entry()] = 1;
    }
    std::set<const Computation*> seen;
    while (!stack.empty()) {
      const Computation* computation = stack.back();
      stack.pop_back();
      if (!seen.insert(computation).second) continue;
      computations_.push_back(computation);
      const double weight = weights_[computation];
      for (const auto& instruction : computation->instructions()) {
        if (!RunsAsControlFlow(*instruction)) continue;
        const double called_weight = instruction->opcode() == Opcode::kWhile ? weight * kLoopWeight : weight;
        for (const Computation* called : instruction->called_computations()) {
          double& w = weights_[called];
          w = std::max(w, called_weight);
          stack.push_back(called);
          callers_[called].push_back(instruction.get());
        }
      }
    }
  }

  // The instruction's sharding, for leaf `leaf` (-1: the array itself); nullopt when a tuple
  // sharding does not match the shape.
  std::optional<Sharding> LeafSharding(const Instruction& instruction, int64_t leaf) {
    Sharding sharding = EffectiveSharding(instruction);
    if (leaf < 0) return sharding.IsTuple() ? std::nullopt : std::optional<Sharding>(sharding);
    if (!sharding.IsTuple()) return sharding;
    if (leaf >= static_cast<int64_t>(sharding.tuple_elements().size())) return std::nullopt;
    const Sharding& element = sharding.tuple_elements()[leaf];
    if (element.IsTuple()) return std::nullopt;
    return element;
  }

  void AddValue(const Instruction& instruction, int64_t leaf, const Shape& shape) {
    std::optional<Sharding> sharding = LeafSharding(instruction, leaf);
    if (!sharding || !shape.IsArray()) return;
    Value value;
    value.instruction = &instruction;
    value.leaf = leaf;
    value.shape = &shape;
    value.whole = sharding->WithoutUnreduced();
    if (sharding->HasUnreduced()) value.fixed = *sharding;
    if (value.whole.IsTiled() || value.whole.IsReplicated())
      value.axes = DecomposeSharding(value.whole, shape.rank(), num_devices_);
    std::vector<int32_t>& ids = ids_[&instruction];
    const size_t slot = static_cast<size_t>(leaf + 1);
    if (ids.size() <= slot) ids.resize(slot + 1, kNone);
    ids[slot] = static_cast<int32_t>(values_.size());
    values_.push_back(std::move(value));
  }

  void AddValues(const Instruction& instruction) {
    const Shape& shape = instruction.shape();
    if (shape.IsArray()) {
      AddValue(instruction, -1, shape);
    } else if (shape.IsTuple()) {
      for (int64_t k = 0; k < shape.tuple_size(); ++k) AddValue(instruction, k, shape.tuple_shape(k));
    }
  }

  int32_t IdOf(const Instruction* instruction, int64_t leaf) const {
    auto it = ids_.find(instruction);
    if (it == ids_.end()) return kNone;
    const size_t slot = static_cast<size_t>(leaf + 1);
    return slot < it->second.size() ? it->second[slot] : kNone;
  }

  // The leaves of `instruction` as value ids (one for an array; kNone for nested leaves).
  std::vector<int32_t> LeavesOf(const Instruction* instruction) const {
    if (instruction->shape().IsArray()) return {IdOf(instruction, -1)};
    std::vector<int32_t> leaves;
    if (instruction->shape().IsTuple())
      for (int64_t k = 0; k < instruction->shape().tuple_size(); ++k) leaves.push_back(IdOf(instruction, k));
    return leaves;
  }

  void AddUse(int32_t from, Use use) {
    if (from < 0) return;
    uses_[from].push_back(use);
  }

  void SinkAll(const Instruction* instruction) {
    for (int32_t leaf : LeavesOf(instruction)) AddUse(leaf, {UseKind::kSink});
  }

  // `from`'s leaves are the same data as `to`'s (leaf by leaf).
  void Same(const Instruction* from, const Instruction* to) {
    std::vector<int32_t> a = LeavesOf(from), b = LeavesOf(to);
    if (a.size() != b.size()) {
      SinkAll(from);
      return;
    }
    for (size_t k = 0; k < a.size(); ++k) {
      if (b[k] < 0) {
        AddUse(a[k], {UseKind::kSink});
      } else {
        AddUse(a[k], {UseKind::kIdentity, b[k]});
      }
    }
  }

  void AddUses(const Instruction& instruction) {
    if (uses_.size() < values_.size()) uses_.resize(values_.size());
    const Computation* computation = instruction.parent();
    const bool is_root = computation->root() == &instruction;
    if (is_root && computation == module_.entry()) SinkAll(&instruction);
    if (is_root && computation != module_.entry()) {
      // A called computation's result: the caller's value (call), or the loop carry (while).
      auto callers = callers_.find(computation);
      if (callers != callers_.end()) {
        for (const Instruction* caller : callers->second) {
          if (caller->opcode() == Opcode::kCall || (caller->opcode() == Opcode::kWhile && caller->while_body() == computation)) {
            Same(&instruction, caller);
          } else {
            SinkAll(&instruction);
          }
        }
      }
    }
    switch (instruction.opcode()) {
      case Opcode::kTuple:
        for (int64_t k = 0; k < instruction.operand_count(); ++k) {
          const Instruction* operand = instruction.operand(k);
          int32_t to = IdOf(&instruction, k);
          if (!operand->shape().IsArray() || to < 0) {
            SinkAll(operand);
          } else {
            AddUse(IdOf(operand, -1), {UseKind::kIdentity, to});
          }
        }
        return;
      case Opcode::kGetTupleElement: {
        int32_t from = IdOf(instruction.operand(0), instruction.tuple_index);
        int32_t to = IdOf(&instruction, -1);
        if (to < 0) {
          AddUse(from, {UseKind::kSink});
        } else {
          AddUse(from, {UseKind::kIdentity, to});
        }
        return;
      }
      case Opcode::kWhile: {
        // init -> carry; the carry's leaves (body and condition parameters, body root, result)
        // are tied together below.
        const Instruction* init = instruction.operand(0);
        Same(init, &instruction);
        const Instruction* body_parameter = instruction.while_body()->parameter(0);
        const Instruction* condition_parameter = instruction.while_condition()->parameter(0);
        std::vector<int32_t> carry = LeavesOf(&instruction);
        std::vector<int32_t> body = LeavesOf(body_parameter), condition = LeavesOf(condition_parameter);
        if (body.size() != carry.size() || condition.size() != carry.size()) return;
        for (size_t k = 0; k < carry.size(); ++k) {
          if (carry[k] < 0) continue;
          ties_.push_back({carry[k], body[k]});
          ties_.push_back({carry[k], condition[k]});
        }
        return;
      }
      case Opcode::kCall: {
        const Computation* callee = instruction.to_apply();
        for (int64_t j = 0; j < instruction.operand_count() && j < callee->num_parameters(); ++j)
          Same(instruction.operand(j), callee->parameter(j));
        return;
      }
      default:
        break;
    }
    const bool annotation = instruction.opcode() == Opcode::kCustomCall;
    for (int64_t i = 0; i < instruction.operand_count(); ++i) {
      const Instruction* operand = instruction.operand(i);
      int32_t to = instruction.shape().IsArray() ? IdOf(&instruction, -1) : kNone;
      if (annotation || to < 0 || !operand->shape().IsArray()) {
        SinkAll(operand);
        continue;
      }
      AddUse(IdOf(operand, -1), {UseKind::kOperand, to, i});
    }
  }

  int32_t ColorId(const Color& color) {
    for (size_t c = 0; c < colors_.size(); ++c)
      if (colors_[c] == color) return static_cast<int32_t>(c);
    colors_.push_back(color);
    return static_cast<int32_t>(colors_.size()) - 1;
  }

  const AxisSharding* AxesOf(const Instruction* instruction) const {
    int32_t id = IdOf(instruction, -1);
    return id >= 0 && values_[id].axes ? &*values_[id].axes : nullptr;
  }

  // The axes a dot or convolution sums over: those splitting a contracting dim the same way on
  // both operands. Empty when none do.
  std::vector<DeviceAxis> ContractedAxes(const Instruction& instruction) const {
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

  void FindProducers() {
    for (size_t v = 0; v < values_.size(); ++v) {
      Value& value = values_[v];
      if (value.fixed) {
        std::optional<AxisSharding> axes = DecomposeSharding(*value.fixed, value.shape->rank(), num_devices_);
        if (!axes || !value.axes) continue;
        MakeProducer(static_cast<int32_t>(v), Color{JoinAdjacentAxes(axes->unreduced), axes->reduction});
        continue;
      }
      if (value.leaf >= 0 || !value.axes) continue;
      const Instruction& instruction = *value.instruction;
      std::vector<DeviceAxis> summed;
      Reduction reduction = Reduction::kSum;
      if (instruction.opcode() == Opcode::kDot || instruction.opcode() == Opcode::kConvolution) {
        if (instruction.operand_count() != 2) continue;
        std::optional<std::vector<DeviceAxis>> predicted;
        if (oracle_ && instruction.opcode() == Opcode::kDot) predicted = oracle_(instruction);
        summed = predicted ? *predicted : ContractedAxes(instruction);
      } else if (instruction.opcode() == Opcode::kReduce) {
        std::optional<Reduction> reducer = ReductionOfReduce(instruction);
        const AxisSharding* operand = AxesOf(instruction.operand(0));
        if (!reducer || operand == nullptr) continue;
        reduction = *reducer;
        for (int64_t d : instruction.dimensions)
          if (d < operand->rank()) summed.insert(summed.end(), operand->dims[d].begin(), operand->dims[d].end());
      } else {
        continue;
      }
      if (summed.empty()) continue;
      std::vector<DeviceAxis> pending = ReplicatedPart(*value.axes, JoinAdjacentAxes(summed));
      if (pending.empty()) continue;
      MakeProducer(static_cast<int32_t>(v), Color{pending, reduction});
    }
  }

  void MakeProducer(int32_t v, const Color& color) {
    if (color.axes.empty()) return;
    Value& value = values_[v];
    value.producer = true;
    value.color = ColorId(color);
  }

  // The layout `value` is computed in when partial in `color`: its sharding with the color's
  // axes unreduced, or, when it splits a dim over them and `allow_scatter`, with them gathered
  // first (a scatter value). nullopt when neither applies.
  struct Layout {
    Sharding partial;
    bool scatter = false;
  };
  // Memoized: values and colors do not change once found, and growing asks again and again.
  const std::optional<Layout>& PartialLayout(const Value& value, int32_t color, bool allow_scatter) const {
    const uint64_t key = (static_cast<uint64_t>(&value - values_.data()) << 32) |
                         (static_cast<uint64_t>(color) << 1) | (allow_scatter ? 1u : 0u);
    auto found = layouts_.find(key);
    if (found != layouts_.end()) return found->second;
    return layouts_.emplace(key, ComputePartialLayout(value, color, allow_scatter)).first->second;
  }
  std::optional<Layout> ComputePartialLayout(const Value& value, int32_t color, bool allow_scatter) const {
    if (value.fixed) return Layout{*value.fixed, false};
    if (!value.axes) return std::nullopt;
    const Color& c = colors_[color];
    Sharding base = value.whole;
    bool scatter = false;
    if (!ReplicatesColorAxes(value, color)) {
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

  // Whether `value` (with axes) replicates all of `color`'s axes. Memoized.
  bool ReplicatesColorAxes(const Value& value, int32_t color) const {
    const uint64_t key = (static_cast<uint64_t>(&value - values_.data()) << 32) | static_cast<uint64_t>(color);
    auto found = replicates_.find(key);
    if (found != replicates_.end()) return found->second;
    const bool replicates = ReplicatedPart(*value.axes, colors_[color].axes) == colors_[color].axes;
    replicates_.emplace(key, replicates);
    return replicates;
  }

  bool ReplicatesColor(const Instruction* operand, int32_t color) const {
    int32_t id = IdOf(operand, -1);
    if (id < 0 || !values_[id].axes) return operand->shape().IsArray() && operand->shape().rank() == 0;
    return ReplicatesColorAxes(values_[id], color);
  }

  // The color `v` is partial in for its users (a scatter value is whole for them).
  int32_t PartialColor(int32_t v) const {
    if (v < 0 || values_[v].scatter) return kNone;
    return values_[v].color;
  }
  bool InColor(int32_t v, int32_t color) const { return PartialColor(v) == color; }

  // Whether op value `u` can be computed partial in `color` given the colors of its operands:
  // its colored operands are all of that color and used linearly, the others are whole and
  // replicated over the color's axes (so running on the pieces needs no extra data).
  bool CanRunOnPieces(int32_t u, int32_t color) const {
    const Value& value = values_[u];
    const Instruction& instruction = *value.instruction;
    if (value.leaf >= 0 || IsPlumbing(instruction.opcode()) || instruction.opcode() == Opcode::kCustomCall)
      return false;
    if (value.producer && !value.fixed) return false;
    std::vector<bool> partial(instruction.operand_count(), false);
    for (int64_t i = 0; i < instruction.operand_count(); ++i) {
      int32_t operand = IdOf(instruction.operand(i), -1);
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
    return PartialLayout(value, color, /*allow_scatter=*/true).has_value();
  }

  // Colors `v` (and what is tied to it) when it can take that color. Only an op (not
  // plumbing) may be a scatter value, and its color goes no further.
  void Offer(int32_t v, int32_t color, bool op, std::deque<int32_t>& queue) {
    Value& value = values_[v];
    if (value.color == color || value.color == kBlocked) return;
    if (value.color >= 0) {
      Block(v, queue);
      return;
    }
    const std::optional<Layout>& layout = PartialLayout(value, color, op);
    if (!layout) return;
    value.color = color;
    value.scatter = layout->scatter;
    if (value.scatter) return;
    queue.push_back(v);
    for (const auto& [a, b] : ties_) {
      if (a == v && b >= 0) Offer(b, color, false, queue);
      if (b == v && a >= 0) Offer(a, color, false, queue);
    }
  }

  void Block(int32_t v, std::deque<int32_t>& queue) {
    Value& value = values_[v];
    if (value.color == kBlocked || value.fixed) return;
    value.color = kBlocked;
    queue.push_back(v);
    for (const auto& [a, b] : ties_) {
      if (a == v && b >= 0) Block(b, queue);
      if (b == v && a >= 0) Block(a, queue);
    }
  }

  void Grow() {
    std::deque<int32_t> queue;
    for (size_t v = 0; v < values_.size(); ++v)
      if (values_[v].producer) queue.push_back(static_cast<int32_t>(v));
    // Forward: a colored value offers its color to its users; a user that cannot run on the
    // pieces stays whole. Blocking is final, and re-examines the users (they may have relied
    // on the blocked value being partial).
    while (!queue.empty()) {
      int32_t v = queue.front();
      queue.pop_front();
      const int32_t color = values_[v].color;
      for (const Use& use : uses_[v]) {
        if (use.kind == UseKind::kSink) continue;
        Value& user = values_[use.to];
        if (color == kBlocked) {
          if (user.color >= 0 && !user.producer && use.kind == UseKind::kOperand && !CanRunOnPieces(use.to, user.color))
            Block(use.to, queue);
          continue;
        }
        if (use.kind == UseKind::kIdentity) {
          Offer(use.to, color, false, queue);
          continue;
        }
        if (user.color == color) continue;
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

  double ShardBytes(const Sharding& sharding, const Shape& shape) const {
    double bytes = static_cast<double>(ElementByteSize(shape.element_type()));
    // Unreduced axes are subgroup dims, not data dims: the shard is the same without them.
    for (int64_t d : ShardDimsOf(sharding, shape.dims())) bytes *= static_cast<double>(d);
    return bytes;
  }

  PartialSumPlan Cut() {
    PartialSumPlan plan;
    MinCut cut;
    std::vector<int32_t> candidates;
    for (size_t v = 0; v < values_.size(); ++v) {
      Value& value = values_[v];
      if (value.color < 0) continue;
      const std::optional<Layout>& layout = PartialLayout(value, value.color, value.scatter);
      if (!layout) {
        value.color = kBlocked;
        continue;
      }
      value.partial = layout->partial;
      const int64_t group = GroupSize(colors_[value.color].axes);
      const double bytes = ShardBytes(*value.partial, *value.shape);
      value.cost = group <= 1 ? 0
                              : 2.0 * static_cast<double>(group - 1) / static_cast<double>(group) * bytes *
                                    weights_[value.instruction->parent()];
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
      candidates.push_back(static_cast<int32_t>(v));
    }
    if (candidates.empty()) return plan;
    double producer_total = 0;
    for (int32_t v : candidates) {
      const Value& value = values_[v];
      if (value.fixed) {
        cut.AddEdge(MinCut::kSource, value.n, 1e30);
      } else if (value.producer) {
        cut.AddEdge(MinCut::kSource, value.n, std::max(value.cost, 1e-6));
        producer_total += value.cost;
      }
      if (value.scatter) continue;
      bool scattered = false;
      for (const Use& use : uses_[v]) {
        const bool candidate_user = use.kind != UseKind::kSink && values_[use.to].color == value.color;
        if (candidate_user) {
          cut.AddEdge(value.r, values_[use.to].n, MinCut::kInfinite);
        } else if (use.kind == UseKind::kOperand && TakesItScattered(value, values_[use.to])) {
          scattered = true;
        } else {
          cut.AddEdge(value.r, MinCut::kSink, MinCut::kInfinite);
        }
      }
      if (scattered) cut.AddEdge(value.n, MinCut::kSink, std::max(value.scatter_cost, 1e-6));
    }
    for (const auto& [a, b] : ties_) {
      if (a < 0 || b < 0 || values_[a].color < 0 || values_[a].color != values_[b].color) continue;
      cut.AddEdge(values_[a].n, values_[b].n, MinCut::kInfinite);
      cut.AddEdge(values_[b].n, values_[a].n, MinCut::kInfinite);
    }
    const double total = cut.Solve();
    plan.saved_bytes = std::max(0.0, producer_total - total);
    std::set<int32_t> partial;
    for (int32_t v : candidates)
      if (cut.OnSourceSide(values_[v].n)) partial.insert(v);
    // A partial value none of whose operands is partial and that is not a producer gains
    // nothing (it would only mask whole values): keep it whole. Repeat until nothing changes.
    bool changed = true;
    while (changed) {
      changed = false;
      for (auto it = partial.begin(); it != partial.end();) {
        if (Feeds(*it, partial)) {
          ++it;
          continue;
        }
        it = partial.erase(it);
        changed = true;
      }
    }
    for (int32_t v : partial) Record(v, partial, plan);
    return plan;
  }

  // Whether partial value `v` has a partial source: it is a producer, or some value whose
  // partial sum flows into it is partial.
  bool Feeds(int32_t v, const std::set<int32_t>& partial) const {
    const Value& value = values_[v];
    if (value.producer || value.fixed) return true;
    for (int32_t from : Incoming(v))
      if (partial.count(from)) return true;
    return false;
  }

  // The values whose uses reach `v` (its operands, tuple sources, tied carry leaves).
  const std::vector<int32_t>& Incoming(int32_t v) const {
    if (incoming_.empty()) {
      incoming_.resize(values_.size());
      for (size_t from = 0; from < uses_.size(); ++from)
        for (const Use& use : uses_[from])
          if (use.kind != UseKind::kSink) incoming_[use.to].push_back(static_cast<int32_t>(from));
      for (const auto& [a, b] : ties_) {
        if (a < 0 || b < 0) continue;
        incoming_[a].push_back(b);
        incoming_[b].push_back(a);
      }
    }
    return incoming_[v];
  }

  void Record(int32_t v, const std::set<int32_t>& partial, PartialSumPlan& plan) {
    const Value& value = values_[v];
    const Instruction* instruction = value.instruction;
    const Sharding& sharding = *value.partial;
    if (value.scatter) {
      plan.computed_as[instruction] = sharding;
    } else if (value.leaf < 0) {
      plan.shardings[instruction] = sharding;
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
      if (values_[w].producer || values_[w].fixed) {
        if (std::find(note.sources.begin(), note.sources.end(), values_[w].instruction) == note.sources.end())
          note.sources.push_back(values_[w].instruction);
        continue;
      }
      for (int32_t from : Incoming(w))
        if (partial.count(from) && seen.insert(from).second) stack.push_back(from);
    }
    if (value.scatter) {
      note.reduced_at.push_back(instruction);
      return;
    }
    for (const Use& use : uses_[v]) {
      const bool stays = use.kind != UseKind::kSink && partial.count(use.to);
      if (stays) continue;
      const Instruction* consumer = use.kind == UseKind::kSink ? nullptr : values_[use.to].instruction;
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

  const Module& module_;
  int64_t num_devices_;
  const PendingAxesOracle& oracle_;
  std::vector<const Computation*> computations_;
  std::map<const Computation*, std::vector<const Instruction*>> callers_;
  std::map<const Computation*, double> weights_;
  std::vector<Value> values_;
  // Value ids of an instruction's leaves: [0] the array itself, [k + 1] tuple element k.
  std::unordered_map<const Instruction*, std::vector<int32_t>> ids_;
  std::vector<std::vector<Use>> uses_;
  std::vector<std::pair<int32_t, int32_t>> ties_;
  std::vector<Color> colors_;
  mutable std::vector<std::vector<int32_t>> incoming_;
  mutable std::unordered_map<uint64_t, std::optional<Layout>> layouts_;
  mutable std::unordered_map<uint64_t, bool> replicates_;
};

}  // namespace

PartialSumPlan PlanPartialSums(const Module& module, int64_t num_devices, const PendingAxesOracle& oracle) {
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
