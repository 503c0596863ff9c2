// Windowed einsum: the dot handler's all-gather of one operand, or the reduce-scatter of its
// partial sums, turned into a while loop of partial dots over the devices of those axes (see
// dot_windowed.h; the reduce-scatter loop is described at ScatteredLoop).
//
// Trip i on the device at index a along the gathered axes A (N devices) holds window
// k = (a + i) mod N of the gathered operand X (the shard device k of its subgroup started
// with), and passes it on to device a - 1 of the subgroup with a collective-permute:
//   X's dim is a batch or free dim:  result[k-th chunk of that dim] = dot(window, Y')
//   X's dim is contracting:          result += dot(window, Y')
// where Y' is the other operand as placed, or for batch and contracting dims its k-th chunk
// along the paired dim (dynamic-slice). Free and batch windows compute exactly the numbers of
// the one local dot; contracting windows sum the same products in another order.
#include "partitioner/handlers/dot_windowed.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "support/diagnostic.h"

namespace gspmd {
namespace {

// One operand's all-gather as the placement asks for it.
struct GatheredWindow {
  int64_t operand = 0;           // the gathered operand: 0 lhs, 1 rhs
  int64_t dim = 0;               // its gathered dim
  int64_t slot = 0;              // that dim's role slot (DotRoles)
  int64_t paired_dim = -1;       // the other operand's dim of the same slot (batch, contracting)
  std::vector<DeviceAxis> axes;  // the axes gathered over, major first
  int64_t trips = 1;             // devices along `axes`
  AxisSharding held;             // the operand's layout as it is: the placement's plus `axes` on `dim`
  int64_t gathered_bytes = 0;    // per device, after the all-gather the loop replaces
};

std::vector<DeviceAxis> Sorted(std::vector<DeviceAxis> axes) {
  std::sort(axes.begin(), axes.end());
  return axes;
}

int64_t ElementCount(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

// The window when operand `i` goes from its layout to the placement's by gathering the minor
// axes of one dim and nothing else (evenly, or making the dim whole); nullopt otherwise.
std::optional<GatheredWindow> FindWindow(const DotProblem& problem, const DotPlacement& placement, int64_t i) {
  const AxisSharding& source = i == 0 ? problem.lhs : problem.rhs;
  const AxisSharding& target = i == 0 ? placement.lhs : placement.rhs;
  const std::vector<int64_t>& dims = i == 0 ? problem.lhs_dims : problem.rhs_dims;
  std::optional<std::pair<AxisSharding, AxisSharding>> refined = RefineToCommonAxes(source, target);
  if (!refined) return std::nullopt;
  const AxisSharding& from = refined->first;
  const AxisSharding& to = refined->second;
  bool plain = from.unreduced.empty() && to.unreduced.empty() && Sorted(from.manual) == Sorted(to.manual);
  if (!plain || from.rank() != to.rank()) return std::nullopt;

  GatheredWindow window;
  window.operand = i;
  window.dim = -1;
  for (int64_t d = 0; d < from.rank(); ++d) {
    if (from.dims[d] == to.dims[d]) continue;
    if (window.dim >= 0) return std::nullopt;  // more than one dim changes
    window.dim = d;
  }
  if (window.dim < 0) return std::nullopt;
  const std::vector<DeviceAxis>& before = from.dims[window.dim];
  const std::vector<DeviceAxis>& after = to.dims[window.dim];
  bool gathers_minor_axes = after.size() < before.size() && std::equal(after.begin(), after.end(), before.begin());
  if (!gathers_minor_axes) return std::nullopt;
  window.axes.assign(before.begin() + static_cast<int64_t>(after.size()), before.end());
  std::vector<DeviceAxis> now_replicated = from.replicated;
  now_replicated.insert(now_replicated.end(), window.axes.begin(), window.axes.end());
  if (Sorted(now_replicated) != Sorted(to.replicated)) return std::nullopt;

  for (const DeviceAxis& axis : window.axes) window.trips *= axis.size;
  // Uneven windows only when the gather makes the dim whole: the windows then cover a padded
  // copy of it, whose padding the loop cuts off (free, batch) or zeroes (contracting).
  bool even = dims[window.dim] % from.TileCount(window.dim) == 0;
  if (window.trips < 2 || (!even && !after.empty())) return std::nullopt;
  const DotRoles& roles = problem.roles;
  window.slot = i == 0 ? roles.lhs_slot[window.dim] : roles.rhs_slot[window.dim];
  window.paired_dim = i == 0 ? roles.RhsDimOfSlot(window.slot) : roles.LhsDimOfSlot(window.slot);
  window.held = from;
  std::vector<int64_t> gathered = ShardDimsOf(to.ToSharding(), dims);
  window.gathered_bytes = ElementCount(gathered) * (i == 0 ? problem.lhs_element_bytes : problem.rhs_element_bytes);
  return window;
}

// Whether the options window a collective of `bytes` per device over `trips` devices.
bool Wanted(const WindowedEinsumOptions& options, int64_t bytes, int64_t trips) {
  switch (options.mode) {
    case WindowedEinsumMode::kOff:
      return false;
    case WindowedEinsumMode::kAlways:
      return true;
    case WindowedEinsumMode::kAuto:
      return bytes >= options.threshold_bytes && trips <= options.max_trips;
  }
  return false;
}

// The operand to window: the one with more bytes to gather, among those the options allow.
std::optional<GatheredWindow> ChooseWindow(const WindowedEinsumOptions& options, const DotProblem& problem,
                                           const DotPlacement& placement) {
  std::optional<GatheredWindow> best;
  for (int64_t i = 0; i < 2; ++i) {
    std::optional<GatheredWindow> window = FindWindow(problem, placement, i);
    if (!window || !Wanted(options, window->gathered_bytes, window->trips)) continue;
    if (!best || window->gathered_bytes > best->gathered_bytes) best = std::move(window);
  }
  return best;
}

// Devices pass what they hold to the previous member of their subgroup: the device at index a
// receives from a + 1 (mod N), so trip i finds window (a + i) mod N there.
std::vector<SourceTargetPair> PassToPrevious(const std::vector<DeviceAxis>& axes, int64_t num_devices) {
  std::vector<SourceTargetPair> pairs;
  for (const std::vector<int64_t>& group : GroupsOverAxes(axes, num_devices)) {
    const int64_t n = static_cast<int64_t>(group.size());
    for (int64_t a = 0; a < n; ++a) pairs.push_back({group[(a + 1) % n], group[a]});
  }
  return pairs;
}

// s32 start indices: zero everywhere but `dim`.
std::vector<Instruction*> StartsAt(HloBuilder& b, int64_t rank, int64_t dim, Instruction* start) {
  std::vector<Instruction*> starts(rank, nullptr);
  for (int64_t d = 0; d < rank; ++d) starts[d] = d == dim ? start : b.S32Constant(0);
  return starts;
}

// The loop state: (window, other operand, result, trip).
enum StateIndex : int64_t { kWindow = 0, kOther = 1, kResult = 2, kTrip = 3 };

// What both loops build: computations named after the dot, the trip condition, the local dots.
class LoopBuilder {
 protected:
  explicit LoopBuilder(OpContext& op) : op_(op), context_(op.spmd()), dot_(op.instruction()) {}

  Computation* NewComputation(const char* suffix) {
    std::string name = context_.names().Unique(StrCat(dot_.name(), suffix));
    return context_.output()->AddComputationFront(std::make_unique<Computation>(name));
  }

  HloBuilder BuilderFor(Computation* computation) {
    HloBuilder b(computation, &context_.names());
    b.set_source_instruction(&dot_);
    b.set_op_name(op_.builder().op_name());
    return b;
  }

  // trip < trips
  Computation* EmitCondition(const Shape& state, int64_t trips) {
    Computation* condition = NewComputation(".windowed_condition");
    HloBuilder b = BuilderFor(condition);
    Instruction* trip = b.GetTupleElement(b.Parameter(0, state, "state"), kTrip);
    condition->set_root(b.Compare(trip, b.S32Constant(trips), ComparisonDirection::kLt));
    return condition;
  }

  // The dot of the original program on other operands, giving `shape`.
  Instruction* LocalDot(HloBuilder& b, const Shape& shape, Instruction* lhs, Instruction* rhs) {
    auto clone = dot_.CloneWithNewOperands(shape, {lhs, rhs});
    clone->set_sharding(std::nullopt);
    clone->set_name(dot_.name());
    return b.Add(std::move(clone));
  }

  // while (state) with `init` as its first state and `body`; returns the result element.
  Instruction* EmitLoop(const Shape& state, Instruction* init, Computation* condition, Computation* body) {
    Instruction* loop = op_.builder().AddOp(Opcode::kWhile, state, {init});
    loop->set_called_computations({condition, body});
    return op_.builder().GetTupleElement(loop, kResult);
  }

  OpContext& op_;
  SpmdContext& context_;
  const Instruction& dot_;
};

class WindowedLoop : LoopBuilder {
 public:
  WindowedLoop(OpContext& op, const DotProblem& problem, const GatheredWindow& window)
      : LoopBuilder(op), roles_(problem.roles), window_(window) {}

  Instruction* Emit(Instruction* held, Instruction* other, const Shape& local_shape) {
    HloBuilder& b = op_.builder();
    const int64_t chunk = held->shape().dim(window_.dim);
    const int64_t covered = chunk * window_.trips;  // the windows' extent, padding included
    // The result (and the other operand's paired dim) padded to what the windows cover.
    Shape buffer = local_shape;
    Shape partial_shape = local_shape;
    if (!Contracting()) {
      GSPMD_CHECK(local_shape.dim(window_.slot) <= covered, "windowed dot: result dim exceeds the gathered windows");
      buffer.set_dim(window_.slot, covered);
      partial_shape.set_dim(window_.slot, chunk);
    }
    if (window_.paired_dim >= 0 && other->shape().dim(window_.paired_dim) < covered) {
      std::vector<int64_t> padded = other->shape().dims();
      padded[window_.paired_dim] = covered;
      other = b.PadToSize(other, padded, b.ScalarConstant(other->shape().element_type(), 0));
    }
    Shape state = Shape::Tuple({held->shape(), other->shape(), buffer, Shape(ElementType::kS32, {})});
    Instruction* zero = b.ScalarConstant(buffer.element_type(), 0);
    Instruction* init = b.Tuple({held, other, b.BroadcastScalar(zero, buffer.dims()), b.S32Constant(0)});
    Computation* condition = EmitCondition(state, window_.trips);
    Computation* body = EmitBody(state, partial_shape, chunk);
    Instruction* result = EmitLoop(state, init, condition, body);
    if (buffer.dims() == local_shape.dims()) return result;
    return b.SliceToSize(result, local_shape.dims());
  }

 private:
  bool Contracting() const { return roles_.IsContractingSlot(window_.slot); }

  Computation* EmitBody(const Shape& state, const Shape& partial_shape, int64_t chunk) {
    Computation* body = NewComputation(".windowed_body");
    HloBuilder b = BuilderFor(body);
    Instruction* parameter = b.Parameter(0, state, "state");
    Instruction* held = b.GetTupleElement(parameter, kWindow);
    Instruction* other = b.GetTupleElement(parameter, kOther);
    Instruction* result = b.GetTupleElement(parameter, kResult);
    Instruction* trip = b.GetTupleElement(parameter, kTrip);

    // k = (a + trip) mod N, and its offset along the gathered dim.
    Instruction* index = AxisOffset(b, window_.axes, 1, context_.num_devices());
    Instruction* k = b.Binary(Opcode::kRemainder, b.Binary(Opcode::kAdd, index, trip), b.S32Constant(window_.trips));
    Instruction* offset = b.Binary(Opcode::kMultiply, k, b.S32Constant(chunk));

    Instruction* paired = other;
    if (window_.paired_dim >= 0) {
      std::vector<int64_t> sizes = other->shape().dims();
      GSPMD_CHECK(sizes[window_.paired_dim] == chunk * window_.trips,
                  "windowed dot: the paired dim does not match the gathered windows (after padding)");
      sizes[window_.paired_dim] = chunk;
      paired = b.DynamicSlice(other, StartsAt(b, other->shape().rank(), window_.paired_dim, offset), sizes);
    }
    Instruction* partial = window_.operand == 0 ? LocalDot(b, partial_shape, held, paired)
                                                : LocalDot(b, partial_shape, paired, held);

    Instruction* updated =
        Contracting() ? b.Binary(Opcode::kAdd, result, partial)
                      : b.DynamicUpdateSlice(result, partial, StartsAt(b, partial_shape.rank(), window_.slot, offset));
    Instruction* passed =
        context_.collectives().CollectivePermute(b, held, PassToPrevious(window_.axes, context_.num_devices()));
    Instruction* next = b.Binary(Opcode::kAdd, trip, b.S32Constant(1));
    body->set_root(b.Tuple({passed, other, updated, next}));
    return body;
  }

  const DotRoles& roles_;
  const GatheredWindow& window_;
};

// The placement's partial sums resolved by a reduce-scatter onto one output dim: the partial
// axes become the minor axes of that dim in the wanted result.
struct ScatteredResult {
  int64_t dim = 0;               // the output dim scattered
  std::vector<DeviceAxis> axes;  // the axes splitting it after the scatter, major first
  int64_t trips = 1;             // devices along `axes`
  int64_t bytes = 0;             // of the local result before the scatter, per device
};

bool Within(const DeviceAxis& inner, const DeviceAxis& outer) {
  return inner.stride >= outer.stride && inner.stride * inner.size <= outer.stride * outer.size;
}

std::optional<ScatteredResult> FindScatter(SpmdContext& context, const DotProblem& problem,
                                           const DotPlacement& placement, const Sharding& wanted) {
  if (placement.partial.empty() || context.kept_partial() || wanted.HasUnreduced()) return std::nullopt;
  std::optional<std::pair<AxisSharding, AxisSharding>> refined = RefineToCommonAxes(placement.out, problem.out);
  if (!refined) return std::nullopt;
  const AxisSharding& from = refined->first;
  const AxisSharding& to = refined->second;
  bool plain = from.unreduced.empty() && to.unreduced.empty() && Sorted(from.manual) == Sorted(to.manual);
  if (!plain || from.rank() != to.rank()) return std::nullopt;

  ScatteredResult scatter;
  scatter.dim = -1;
  for (int64_t d = 0; d < from.rank(); ++d) {
    if (from.dims[d] == to.dims[d]) continue;
    if (scatter.dim >= 0) return std::nullopt;
    scatter.dim = d;
  }
  if (scatter.dim < 0) return std::nullopt;
  const std::vector<DeviceAxis>& before = from.dims[scatter.dim];
  const std::vector<DeviceAxis>& after = to.dims[scatter.dim];
  bool adds_minor_axes = before.size() < after.size() && std::equal(before.begin(), before.end(), after.begin());
  if (!adds_minor_axes) return std::nullopt;
  scatter.axes.assign(after.begin() + static_cast<int64_t>(before.size()), after.end());
  int64_t partial_devices = 1;
  for (const DeviceAxis& axis : placement.partial) partial_devices *= axis.size;
  for (const DeviceAxis& axis : scatter.axes) {
    scatter.trips *= axis.size;
    auto inside = [&](const DeviceAxis& partial) { return Within(axis, partial); };
    if (std::none_of(placement.partial.begin(), placement.partial.end(), inside)) return std::nullopt;
  }
  if (scatter.trips != partial_devices || scatter.trips < 2) return std::nullopt;  // not all of the sum
  std::vector<DeviceAxis> replicated = to.replicated;
  replicated.insert(replicated.end(), scatter.axes.begin(), scatter.axes.end());
  if (Sorted(replicated) != Sorted(from.replicated)) return std::nullopt;
  if (problem.out_dims[scatter.dim] % to.TileCount(scatter.dim) != 0) return std::nullopt;  // uneven
  scatter.bytes = ElementCount(ShardDimsOf(placement.out.ToSharding(), problem.out_dims)) * problem.out_element_bytes;
  return scatter;
}

// The reduce-scatter as a loop: trip i on the device at index a along the axes adds the dot of
// its output chunk (a + i + 1) mod N to the accumulator it just received from a + 1, so after N
// trips the accumulator it holds is the whole sum of chunk a. The operands stay in place; the
// ones with the scattered dim are dynamic-sliced to the chunk.
class ScatteredLoop : LoopBuilder {
 public:
  ScatteredLoop(OpContext& op, const DotProblem& problem, const ScatteredResult& scatter)
      : LoopBuilder(op), roles_(problem.roles), scatter_(scatter) {}

  Instruction* Emit(Instruction* lhs, Instruction* rhs, const Shape& local_shape) {
    HloBuilder& b = op_.builder();
    GSPMD_CHECK(local_shape.dim(scatter_.dim) % scatter_.trips == 0, "windowed dot: uneven scatter");
    const int64_t chunk = local_shape.dim(scatter_.dim) / scatter_.trips;
    Shape accumulator = local_shape;
    accumulator.set_dim(scatter_.dim, chunk);
    Shape state = Shape::Tuple({lhs->shape(), rhs->shape(), accumulator, Shape(ElementType::kS32, {})});
    Instruction* zero = b.ScalarConstant(accumulator.element_type(), 0);
    Instruction* init = b.Tuple({lhs, rhs, b.BroadcastScalar(zero, accumulator.dims()), b.S32Constant(0)});
    Computation* condition = EmitCondition(state, scatter_.trips);
    Computation* body = EmitBody(state, accumulator, chunk);
    return EmitLoop(state, init, condition, body);
  }

 private:
  // `operand` cut to the chunk at `offset` along `dim` (as it is when dim is -1).
  Instruction* Chunk(HloBuilder& b, Instruction* operand, int64_t dim, Instruction* offset, int64_t chunk) {
    if (dim < 0) return operand;
    std::vector<int64_t> sizes = operand->shape().dims();
    GSPMD_CHECK(sizes[dim] == chunk * scatter_.trips, "windowed dot: operand dim does not match the result's");
    sizes[dim] = chunk;
    return b.DynamicSlice(operand, StartsAt(b, operand->shape().rank(), dim, offset), sizes);
  }

  Computation* EmitBody(const Shape& state, const Shape& accumulator, int64_t chunk) {
    Computation* body = NewComputation(".windowed_body");
    HloBuilder b = BuilderFor(body);
    Instruction* parameter = b.Parameter(0, state, "state");
    Instruction* lhs = b.GetTupleElement(parameter, 0);
    Instruction* rhs = b.GetTupleElement(parameter, 1);
    Instruction* sum = b.GetTupleElement(parameter, kResult);
    Instruction* trip = b.GetTupleElement(parameter, kTrip);

    Instruction* received =
        context_.collectives().CollectivePermute(b, sum, PassToPrevious(scatter_.axes, context_.num_devices()));
    // k = (a + trip + 1) mod N, and its offset along the scattered dim.
    Instruction* index = AxisOffset(b, scatter_.axes, 1, context_.num_devices());
    Instruction* next = b.Binary(Opcode::kAdd, trip, b.S32Constant(1));
    Instruction* k = b.Binary(Opcode::kRemainder, b.Binary(Opcode::kAdd, index, next), b.S32Constant(scatter_.trips));
    Instruction* offset = b.Binary(Opcode::kMultiply, k, b.S32Constant(chunk));
    Instruction* lhs_chunk = Chunk(b, lhs, roles_.LhsDimOfSlot(scatter_.dim), offset, chunk);
    Instruction* rhs_chunk = Chunk(b, rhs, roles_.RhsDimOfSlot(scatter_.dim), offset, chunk);
    Instruction* partial = LocalDot(b, accumulator, lhs_chunk, rhs_chunk);
    body->set_root(b.Tuple({lhs, rhs, b.Binary(Opcode::kAdd, received, partial), next}));
    return body;
  }

  const DotRoles& roles_;
  const ScatteredResult& scatter_;
};

}  // namespace

std::optional<PartitionedValue> WindowedScatteredDot(OpContext& op, const DotProblem& problem,
                                                     const DotPlacement& placement, const PrepareDotOperand& prepare) {
  const WindowedEinsumOptions& options = op.spmd().windowed_einsum();
  if (options.mode == WindowedEinsumMode::kOff) return std::nullopt;
  std::optional<ScatteredResult> scatter = FindScatter(op.spmd(), problem, placement, op.sharding());
  if (!scatter || !Wanted(options, scatter->bytes, scatter->trips)) return std::nullopt;
  Instruction* lhs = prepare(0, placement.lhs);
  Instruction* rhs = prepare(1, placement.rhs);
  Shape local_shape = ShardShapeOf(placement.out.ToSharding(), op.instruction().shape());
  Instruction* result = ScatteredLoop(op, problem, *scatter).Emit(lhs, rhs, local_shape);
  return PartitionedValue{result, op.instruction().shape(), op.sharding()};
}

Instruction* WindowedLocalDot(OpContext& op, const DotProblem& problem, const DotPlacement& placement,
                              const PrepareDotOperand& prepare) {
  const WindowedEinsumOptions& options = op.spmd().windowed_einsum();
  if (options.mode == WindowedEinsumMode::kOff) return nullptr;
  std::optional<GatheredWindow> window = ChooseWindow(options, problem, placement);
  if (!window) return nullptr;
  const AxisSharding& other_layout = window->operand == 0 ? placement.rhs : placement.lhs;
  Instruction* held = prepare(window->operand, window->held);
  Instruction* other = prepare(1 - window->operand, other_layout);
  Shape local_shape = ShardShapeOf(placement.out.ToSharding(), op.instruction().shape());
  return WindowedLoop(op, problem, *window).Emit(held, other, local_shape);
}

}  // namespace gspmd
