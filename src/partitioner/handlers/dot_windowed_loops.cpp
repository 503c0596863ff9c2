// The while loops of windowed einsum (dot_windowed_loops.h) and the ring they use.
//
// The ring. The N devices of a subgroup (axis index a = 0..N-1 along the windowed axes) sit on
// a folded ring: ring position p holds axis index R[p], where R = 0, 2, 4, ..., (last even),
// (last odd), ..., 5, 3, 1. Ring neighbours are at most 2 axis positions apart, so on a line
// of chips (a mesh without wraparound) or a torus alike every permute of the loop travels at
// most 2 hops, where the ring in axis order would close with a pair spanning the whole axis.
// Each device computes its ring position p from its axis index, and the window (chunk) index
// k it works on from ring positions: k = R[(p + shift) mod N].
//
// All-gather windows (GatherLoop). Trip i on ring position p holds the shard ring position
// p + i started with, window k = R[(p + i) mod N] of the gathered operand X, and passes it to
// ring position p - 1 (so it receives from p + 1):
//   X's dim is a batch or free dim:  result[k-th chunk of that dim] = dot(window, Y')
//   X's dim is contracting:          result += dot(window, Y')
// where Y' is the other operand as placed, or for batch and contracting dims its k-th chunk
// along the paired dim (dynamic-slice). Free and batch windows compute exactly the numbers of
// the one local dot; contracting windows sum the same products in another order.
// Bidirectional: the own window's partial dot is peeled before the loop, while the own window
// leaves both ways (to p - 1 and to p + 1); trip i then works on window R[p + 1 + i] (passed
// on to p - 1) and window R[p - 1 - i] (passed on to p + 1); for even N the window R[p + N/2]
// that arrives after the last trip is dotted after the loop. A contracting sum starts from
// the own partial; free and batch chunks are all written into the loop's result buffer (the
// peeled ones after the loop, in place).
//
// Reduce-scatter accumulators (ScatterLoop). Trip i on ring position p adds the dot of output
// chunk R[(p + i + 1) mod N] to the accumulator it just received from p + 1, so after N trips
// it holds the whole sum of chunk R[p], its own. Bidirectional: one accumulator of each target
// chunk runs down the ring from p + T (+ 1 for even N, its first partial computed before the
// loop) and one up from p - T, T = ceil(N/2) - 1 trips, both arriving after the loop at their
// owner, which adds them to its own chunk's partial dot.
//
// Unrolled (unidirectional only): each trip runs two of the plain loop's ring steps, the second
// permute passing on what the first brought; floor(N/2) trips, the step left over for odd N
// outside the loop (WindowedEinsumUnroll).
#include "partitioner/handlers/dot_windowed_loops.h"

#include <optional>
#include <string>
#include <utility>

#include "partitioner/handlers/dot_windowed.h"
#include "support/diagnostic.h"

namespace gspmd::windowed {
namespace {

std::vector<SourceTargetPair> RingStep(const std::vector<std::vector<int64_t>>& rings, bool to_previous) {
  std::vector<SourceTargetPair> pairs;
  for (const std::vector<int64_t>& ring : rings) {
    const int64_t n = static_cast<int64_t>(ring.size());
    for (int64_t j = 0; j < n; ++j) {
      int64_t next = ring[(j + 1) % n];
      pairs.push_back(to_previous ? SourceTargetPair{next, ring[j]} : SourceTargetPair{ring[j], next});
    }
  }
  return pairs;
}

// s32 start indices: zero everywhere but `dim`.
std::vector<Instruction*> StartsAt(HloBuilder& b, int64_t rank, int64_t dim, Instruction* start) {
  std::vector<Instruction*> starts(rank, nullptr);
  for (int64_t d = 0; d < rank; ++d) starts[d] = d == dim ? start : b.S32Constant(0);
  return starts;
}

// The ring position and window indices, as s32 scalars computed from partition-id.
class RingIndex {
 public:
  RingIndex(HloBuilder& b, const std::vector<DeviceAxis>& axes, int64_t n, int64_t num_devices) : b_(b), n_(n) {
    Instruction* a = AxisOffset(b, axes, 1, num_devices);
    if (n <= 2) {
      position_ = a;  // the ring is the axis order
      return;
    }
    // p = a / 2 for even a, N - 1 - a / 2 for odd a.
    Instruction* half = Binary(Opcode::kDivide, a, 2);
    Instruction* even = b.Compare(Binary(Opcode::kRemainder, a, 2), b.S32Constant(0), ComparisonDirection::kEq);
    position_ = b.Select(even, half, b.Binary(Opcode::kSubtract, b.S32Constant(n - 1), half));
  }

  // R[(p + shift + sign * trip) mod N] (trip may be null: 0); trip < N.
  Instruction* WindowAt(int64_t shift, Instruction* trip = nullptr, int sign = 1) {
    shift = ((shift % n_) + n_) % n_;
    if (trip != nullptr && sign < 0) shift += n_;  // keeps the sum non-negative
    Instruction* q = shift == 0 ? position_ : Binary(Opcode::kAdd, position_, shift);
    if (trip != nullptr) q = b_.Binary(sign < 0 ? Opcode::kSubtract : Opcode::kAdd, q, trip);
    if (shift != 0 || trip != nullptr) q = Binary(Opcode::kRemainder, q, n_);
    if (n_ <= 2) return q;
    // R[q] = 2q for q < ceil(N/2), else 2N - 1 - 2q.
    Instruction* twice = Binary(Opcode::kMultiply, q, 2);
    Instruction* evens = b_.Compare(q, b_.S32Constant((n_ + 1) / 2), ComparisonDirection::kLt);
    return b_.Select(evens, twice, b_.Binary(Opcode::kSubtract, b_.S32Constant(2 * n_ - 1), twice));
  }

 private:
  Instruction* Binary(Opcode opcode, Instruction* x, int64_t constant) {
    return b_.Binary(opcode, x, b_.S32Constant(constant));
  }

  HloBuilder& b_;
  int64_t n_;
  Instruction* position_ = nullptr;
};

// What both loops build: computations named after the dot, the trip condition, the local dots,
// the ring's permutes.
class LoopBuilder {
 protected:
  LoopBuilder(OpContext& op, const std::vector<DeviceAxis>& axes, int64_t n)
      : op_(op), context_(op.spmd()), dot_(op.instruction()), axes_(axes), n_(n),
        rings_(RingsOverAxes(axes, context_.num_devices())) {}

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

  RingIndex Ring(HloBuilder& b) { return RingIndex(b, axes_, n_, context_.num_devices()); }

  // `value` passed one ring step: to the previous ring position (received from the next), or
  // to the next.
  Instruction* Pass(HloBuilder& b, Instruction* value, bool to_previous) {
    return context_.collectives().CollectivePermute(b, value, RingStep(rings_, to_previous));
  }

  // The loop state's trip counter (last element) < trips.
  Computation* EmitCondition(const Shape& state, int64_t trips) {
    Computation* condition = NewComputation(".windowed_condition");
    HloBuilder b = BuilderFor(condition);
    Instruction* trip = b.GetTupleElement(b.Parameter(0, state, "state"), state.tuple_size() - 1);
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

  // while (state) with `init` as its first state and `body`.
  Instruction* EmitLoop(const Shape& state, Instruction* init, Computation* condition, Computation* body) {
    Instruction* loop = op_.builder().AddOp(Opcode::kWhile, state, {init});
    loop->set_called_computations({condition, body});
    return loop;
  }

  static Shape StateShape(std::vector<Shape> elements) {
    elements.push_back(Shape(ElementType::kS32, {}));
    return Shape::Tuple(std::move(elements));
  }

  OpContext& op_;
  SpmdContext& context_;
  const Instruction& dot_;
  const std::vector<DeviceAxis>& axes_;
  int64_t n_;
  std::vector<std::vector<int64_t>> rings_;
};

class GatherLoop : LoopBuilder {
 public:
  GatherLoop(OpContext& op, const DotRoles& roles, const GatheredWindow& window)
      : LoopBuilder(op, window.axes, window.trips), roles_(roles), window_(window) {}

  Instruction* Emit(Instruction* held, Instruction* other, const Shape& local_shape, bool bidirectional,
                    bool unrolled) {
    HloBuilder& b = op_.builder();
    chunk_ = held->shape().dim(window_.dim);
    const int64_t covered = chunk_ * n_;  // the windows' extent, padding included
    // The result (and the other operand's paired dim) padded to what the windows cover.
    buffer_ = local_shape;
    partial_shape_ = local_shape;
    if (!Contracting()) {
      GSPMD_CHECK(local_shape.dim(window_.slot) <= covered, "windowed dot: result dim exceeds the gathered windows");
      buffer_.set_dim(window_.slot, covered);
      partial_shape_.set_dim(window_.slot, chunk_);
    }
    if (window_.paired_dim >= 0 && other->shape().dim(window_.paired_dim) < covered) {
      std::vector<int64_t> padded = other->shape().dims();
      padded[window_.paired_dim] = covered;
      other = b.PadToSize(other, padded, b.ScalarConstant(other->shape().element_type(), 0));
    }
    Instruction* result = bidirectional ? EmitBidirectional(held, other) : EmitSteps(held, other, unrolled ? 2 : 1);
    if (buffer_.dims() == local_shape.dims()) return result;
    return b.SliceToSize(result, local_shape.dims());
  }

 private:
  bool Contracting() const { return roles_.IsContractingSlot(window_.slot); }

  // The result buffer, zeros.
  Instruction* Zeros(HloBuilder& b) {
    return b.BroadcastScalar(b.ScalarConstant(buffer_.element_type(), 0), buffer_.dims());
  }

  // The partial dot of `window` (window index k).
  Instruction* Partial(HloBuilder& b, Instruction* window, Instruction* other, Instruction* k) {
    Instruction* paired = other;
    if (window_.paired_dim >= 0) {
      std::vector<int64_t> sizes = other->shape().dims();
      GSPMD_CHECK(sizes[window_.paired_dim] == chunk_ * n_,
                  "windowed dot: the paired dim does not match the gathered windows (after padding)");
      sizes[window_.paired_dim] = chunk_;
      paired = b.DynamicSlice(other, StartsAt(b, other->shape().rank(), window_.paired_dim, Offset(b, k)), sizes);
    }
    return window_.operand == 0 ? LocalDot(b, partial_shape_, window, paired)
                                : LocalDot(b, partial_shape_, paired, window);
  }

  Instruction* Offset(HloBuilder& b, Instruction* k) { return b.Binary(Opcode::kMultiply, k, b.S32Constant(chunk_)); }

  // `result` with `partial` (of window k) written into its chunk, or added.
  Instruction* Place(HloBuilder& b, Instruction* result, Instruction* partial, Instruction* k) {
    if (Contracting()) return b.Binary(Opcode::kAdd, result, partial);
    return b.DynamicUpdateSlice(result, partial, StartsAt(b, partial_shape_.rank(), window_.slot, Offset(b, k)));
  }

  Instruction* Accumulate(HloBuilder& b, Instruction* result, Instruction* window, Instruction* other,
                          Instruction* k) {
    return Place(b, result, Partial(b, window, other, k), k);
  }

  // State (window, other, result, trip); floor(N / steps) trips of `steps` ring steps (1, or 2
  // unrolled): trip j dots the window it holds (ring step steps * j) and passes it on, then
  // (unrolled) dots the one that brought and passes that on. For odd N unrolled, the last
  // window, R[p + N - 1], arrives with the last trip and is dotted after the loop.
  Instruction* EmitSteps(Instruction* held, Instruction* other, int64_t steps) {
    HloBuilder& b = op_.builder();
    Shape state = StateShape({held->shape(), other->shape(), buffer_});
    Computation* body = NewComputation(".windowed_body");
    {
      HloBuilder bb = BuilderFor(body);
      Instruction* parameter = bb.Parameter(0, state, "state");
      Instruction* window = bb.GetTupleElement(parameter, 0);
      Instruction* other_in = bb.GetTupleElement(parameter, 1);
      Instruction* updated = bb.GetTupleElement(parameter, 2);
      Instruction* trip = bb.GetTupleElement(parameter, 3);
      RingIndex body_ring = Ring(bb);
      Instruction* step = steps == 1 ? trip : bb.Binary(Opcode::kMultiply, trip, bb.S32Constant(steps));
      for (int64_t s = 0; s < steps; ++s) {
        updated = Accumulate(bb, updated, window, other_in, body_ring.WindowAt(s, step));
        window = Pass(bb, window, /*to_previous=*/true);
      }
      Instruction* next = bb.Binary(Opcode::kAdd, trip, bb.S32Constant(1));
      body->set_root(bb.Tuple({window, other_in, updated, next}));
    }
    Instruction* init = b.Tuple({held, other, Zeros(b), b.S32Constant(0)});
    Instruction* loop = EmitLoop(state, init, EmitCondition(state, n_ / steps), body);
    Instruction* result = b.GetTupleElement(loop, 2);
    if (n_ % steps == 0) return result;
    return Accumulate(b, result, b.GetTupleElement(loop, 0), b.GetTupleElement(loop, 1), Ring(b).WindowAt(n_ - 1));
  }

  // State (forward window, backward window, other, result, trip); ceil(N/2) - 1 trips, with the
  // own window's dot before the loop and, for even N, the last window's after it. A contracting
  // loop starts from the own window's partial sum; a free or batch one from zeros, as the
  // unidirectional loop does, and writes the own window's chunk after the loop (into the
  // loop's buffer, in place, instead of into a copy of the zeros before it).
  Instruction* EmitBidirectional(Instruction* held, Instruction* other) {
    HloBuilder& b = op_.builder();
    const int64_t trips = (n_ + 1) / 2 - 1;
    RingIndex ring = Ring(b);
    Instruction* k_own = ring.WindowAt(0);
    Instruction* own = Partial(b, held, other, k_own);
    Instruction* forward = Pass(b, held, /*to_previous=*/true);    // now R[p + 1]
    Instruction* backward = Pass(b, held, /*to_previous=*/false);  // now R[p - 1]

    Shape state = StateShape({held->shape(), held->shape(), other->shape(), buffer_});
    Computation* body = NewComputation(".windowed_body");
    {
      HloBuilder bb = BuilderFor(body);
      Instruction* parameter = bb.Parameter(0, state, "state");
      Instruction* f = bb.GetTupleElement(parameter, 0);
      Instruction* r = bb.GetTupleElement(parameter, 1);
      Instruction* other_in = bb.GetTupleElement(parameter, 2);
      Instruction* result = bb.GetTupleElement(parameter, 3);
      Instruction* trip = bb.GetTupleElement(parameter, 4);
      RingIndex body_ring = Ring(bb);
      Instruction* k_forward = body_ring.WindowAt(1, trip);       // R[p + 1 + i]
      Instruction* k_backward = body_ring.WindowAt(-1, trip, -1);  // R[p - 1 - i]
      Instruction* updated = Accumulate(bb, result, f, other_in, k_forward);
      updated = Accumulate(bb, updated, r, other_in, k_backward);
      Instruction* f_passed = Pass(bb, f, /*to_previous=*/true);
      Instruction* r_passed = Pass(bb, r, /*to_previous=*/false);
      Instruction* next = bb.Binary(Opcode::kAdd, trip, bb.S32Constant(1));
      body->set_root(bb.Tuple({f_passed, r_passed, other_in, updated, next}));
    }
    Instruction* init = b.Tuple({forward, backward, other, Contracting() ? own : Zeros(b), b.S32Constant(0)});
    Instruction* loop = EmitLoop(state, init, EmitCondition(state, trips), body);
    // For even N the forward window now holds R[p + 1 + trips] = R[p + N/2], the one window
    // left; its partial dot reads the loop's windows before the result is updated in place.
    Instruction* last = nullptr;
    Instruction* k_last = nullptr;
    if (n_ % 2 == 0) {
      k_last = ring.WindowAt(n_ / 2);
      last = Partial(b, b.GetTupleElement(loop, 0), b.GetTupleElement(loop, 2), k_last);
    }
    Instruction* result = b.GetTupleElement(loop, 3);
    if (!Contracting()) result = Place(b, result, own, k_own);
    return last == nullptr ? result : Place(b, result, last, k_last);
  }

  const DotRoles& roles_;
  const GatheredWindow& window_;
  int64_t chunk_ = 0;
  Shape buffer_;  // the result, padded to what the windows cover
  Shape partial_shape_;
};

class ScatterLoop : LoopBuilder {
 public:
  ScatterLoop(OpContext& op, const DotRoles& roles, const ScatteredResult& scatter)
      : LoopBuilder(op, scatter.axes, scatter.trips), roles_(roles), scatter_(scatter) {}

  Instruction* Emit(Instruction* lhs, Instruction* rhs, const Shape& local_shape, bool bidirectional, bool unrolled) {
    HloBuilder& b = op_.builder();
    GSPMD_CHECK(local_shape.dim(scatter_.dim) % n_ == 0, "windowed dot: uneven scatter");
    chunk_ = local_shape.dim(scatter_.dim) / n_;
    accumulator_ = local_shape;
    accumulator_.set_dim(scatter_.dim, chunk_);
    Instruction* zeros = b.BroadcastScalar(b.ScalarConstant(accumulator_.element_type(), 0), accumulator_.dims());
    if (bidirectional) return EmitBidirectional(lhs, rhs, zeros);
    return EmitSteps(lhs, rhs, zeros, unrolled ? 2 : 1);
  }

 private:
  // `operand` cut to the chunk at `offset` along `dim` (as it is when dim is -1).
  Instruction* Chunk(HloBuilder& b, Instruction* operand, int64_t dim, Instruction* offset) {
    if (dim < 0) return operand;
    std::vector<int64_t> sizes = operand->shape().dims();
    GSPMD_CHECK(sizes[dim] == chunk_ * n_, "windowed dot: operand dim does not match the result's");
    sizes[dim] = chunk_;
    return b.DynamicSlice(operand, StartsAt(b, operand->shape().rank(), dim, offset), sizes);
  }

  // The partial dot of output chunk k.
  Instruction* PartialDot(HloBuilder& b, Instruction* lhs, Instruction* rhs, Instruction* k) {
    Instruction* offset = b.Binary(Opcode::kMultiply, k, b.S32Constant(chunk_));
    Instruction* lhs_chunk = Chunk(b, lhs, roles_.LhsDimOfSlot(scatter_.dim), offset);
    Instruction* rhs_chunk = Chunk(b, rhs, roles_.RhsDimOfSlot(scatter_.dim), offset);
    return LocalDot(b, accumulator_, lhs_chunk, rhs_chunk);
  }

  // State (lhs, rhs, accumulator, trip); floor(N / steps) trips of `steps` ring steps (1, or 2
  // unrolled: the plain loop's trips i and i + 1). Each step passes the accumulator on and adds
  // the partial dot of chunk R[p + i + 1]. For odd N unrolled, the first step comes before the
  // loop: the accumulator starts as the partial dot of chunk R[p + 1] (where the plain loop adds
  // it to zeros that went round one step).
  Instruction* EmitSteps(Instruction* lhs, Instruction* rhs, Instruction* zeros, int64_t steps) {
    HloBuilder& b = op_.builder();
    const int64_t first = n_ % steps;  // ring steps before the loop
    Instruction* start = first == 1 ? PartialDot(b, lhs, rhs, Ring(b).WindowAt(1)) : zeros;
    Shape state = StateShape({lhs->shape(), rhs->shape(), accumulator_});
    Computation* body = NewComputation(".windowed_body");
    {
      HloBuilder bb = BuilderFor(body);
      Instruction* parameter = bb.Parameter(0, state, "state");
      Instruction* lhs_in = bb.GetTupleElement(parameter, 0);
      Instruction* rhs_in = bb.GetTupleElement(parameter, 1);
      Instruction* sum = bb.GetTupleElement(parameter, 2);
      Instruction* trip = bb.GetTupleElement(parameter, 3);
      std::optional<RingIndex> body_ring;
      Instruction* step = trip;  // i = steps * j + first
      for (int64_t s = 0; s < steps; ++s) {
        Instruction* received = Pass(bb, sum, /*to_previous=*/true);
        if (!body_ring) {
          body_ring.emplace(Ring(bb));
          if (steps > 1) step = bb.Binary(Opcode::kMultiply, trip, bb.S32Constant(steps));
          if (first != 0) step = bb.Binary(Opcode::kAdd, step, bb.S32Constant(first));
        }
        sum = bb.Binary(Opcode::kAdd, received, PartialDot(bb, lhs_in, rhs_in, body_ring->WindowAt(1 + s, step)));
      }
      Instruction* next = bb.Binary(Opcode::kAdd, trip, bb.S32Constant(1));
      body->set_root(bb.Tuple({lhs_in, rhs_in, sum, next}));
    }
    Instruction* init = b.Tuple({lhs, rhs, start, b.S32Constant(0)});
    Instruction* loop = EmitLoop(state, init, EmitCondition(state, n_ / steps), body);
    return b.GetTupleElement(loop, 2);
  }

  // State (lhs, rhs, forward accumulator, backward accumulator, trip); T = ceil(N/2) - 1 trips.
  // After step s (s = 0 before the loop, trip i is step i + 1) ring position p holds the
  // forward accumulator of target chunk R[p - (T + 1 - s)] and the backward one of
  // R[p + (T + 1 - s)]; after the loop both move one more step, onto their owner.
  Instruction* EmitBidirectional(Instruction* lhs, Instruction* rhs, Instruction* zeros) {
    HloBuilder& b = op_.builder();
    const int64_t trips = (n_ + 1) / 2 - 1;
    RingIndex ring = Ring(b);
    // For even N the forward accumulators take one contribution more: their first, from the
    // position N/2 round the ring from the owner.
    Instruction* forward = n_ % 2 == 0 ? PartialDot(b, lhs, rhs, ring.WindowAt(n_ / 2)) : zeros;

    Shape state = StateShape({lhs->shape(), rhs->shape(), accumulator_, accumulator_});
    Computation* body = NewComputation(".windowed_body");
    {
      HloBuilder bb = BuilderFor(body);
      Instruction* parameter = bb.Parameter(0, state, "state");
      Instruction* lhs_in = bb.GetTupleElement(parameter, 0);
      Instruction* rhs_in = bb.GetTupleElement(parameter, 1);
      Instruction* f = bb.GetTupleElement(parameter, 2);
      Instruction* r = bb.GetTupleElement(parameter, 3);
      Instruction* trip = bb.GetTupleElement(parameter, 4);
      Instruction* f_received = Pass(bb, f, /*to_previous=*/true);
      Instruction* r_received = Pass(bb, r, /*to_previous=*/false);
      RingIndex body_ring = Ring(bb);
      Instruction* k_forward = body_ring.WindowAt(-trips, trip);      // R[p - (T - i)]
      Instruction* k_backward = body_ring.WindowAt(trips, trip, -1);  // R[p + T - i]
      Instruction* f_sum = bb.Binary(Opcode::kAdd, f_received, PartialDot(bb, lhs_in, rhs_in, k_forward));
      Instruction* r_sum = bb.Binary(Opcode::kAdd, r_received, PartialDot(bb, lhs_in, rhs_in, k_backward));
      Instruction* next = bb.Binary(Opcode::kAdd, trip, bb.S32Constant(1));
      body->set_root(bb.Tuple({lhs_in, rhs_in, f_sum, r_sum, next}));
    }
    Instruction* init = b.Tuple({lhs, rhs, forward, zeros, b.S32Constant(0)});
    Instruction* loop = EmitLoop(state, init, EmitCondition(state, trips), body);
    Instruction* f_arrived = Pass(b, b.GetTupleElement(loop, 2), /*to_previous=*/true);
    Instruction* r_arrived = Pass(b, b.GetTupleElement(loop, 3), /*to_previous=*/false);
    Instruction* own = PartialDot(b, b.GetTupleElement(loop, 0), b.GetTupleElement(loop, 1), ring.WindowAt(0));
    return b.Binary(Opcode::kAdd, b.Binary(Opcode::kAdd, f_arrived, r_arrived), own);
  }

  const DotRoles& roles_;
  const ScatteredResult& scatter_;
  int64_t chunk_ = 0;
  Shape accumulator_;
};

}  // namespace

std::vector<std::vector<int64_t>> RingsOverAxes(const std::vector<DeviceAxis>& axes, int64_t num_devices) {
  std::vector<std::vector<int64_t>> rings;
  for (const std::vector<int64_t>& group : GroupsOverAxes(axes, num_devices)) {
    std::vector<int64_t> ring;
    for (int64_t a : FoldedRing(static_cast<int64_t>(group.size()))) ring.push_back(group[a]);
    rings.push_back(std::move(ring));
  }
  return rings;
}

Instruction* EmitGatherLoop(OpContext& op, const DotRoles& roles, const GatheredWindow& window, Instruction* held,
                            Instruction* other, const Shape& local_shape, bool bidirectional, bool unrolled) {
  return GatherLoop(op, roles, window).Emit(held, other, local_shape, bidirectional, unrolled);
}

Instruction* EmitScatterLoop(OpContext& op, const DotRoles& roles, const ScatteredResult& scatter, Instruction* lhs,
                             Instruction* rhs, const Shape& local_shape, bool bidirectional, bool unrolled) {
  return ScatterLoop(op, roles, scatter).Emit(lhs, rhs, local_shape, bidirectional, unrolled);
}

}  // namespace gspmd::windowed
