// The value graph the partial-sum planner (partial_sums.cpp) colors and cuts, built on demand.
//
// A value is one array leaf of an instruction of the entry computation or of what it runs as
// control flow; its uses say where that data goes: into an op as an operand, on as the same
// data (tuple element, get-tuple-element, call parameter and result, loop carry), or into
// something that needs it whole. Only the values near a partial sum are ever looked at (a
// training step has tens of thousands of instructions and a few hundred partial values), so a
// value, its sharding's axes and its uses are made the first time the planner asks for them.
// The ids are handed out in the order values are asked for, which the planner's results must
// not depend on; a value's `order` (with its leaf) gives the program's order instead.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "ir/module.h"
#include "partitioner/device_axes.h"
#include "sharding/sharding.h"

namespace gspmd::partial_sums {

constexpr int32_t kNone = -1;  // no value (not an array leaf of a planned computation)

// How a value is used.
enum class UseKind {
  kOperand,   // operand `position` of value `to`'s instruction
  kIdentity,  // `to` is the same data (tuple element, get-tuple-element, call parameter / result)
  kSink,      // needed whole
};

struct Use {
  UseKind kind;
  int32_t to = kNone;
  int64_t position = 0;
};

// One array leaf, with what the planner decides about it.
struct Value {
  const Instruction* instruction = nullptr;
  int64_t leaf = -1;  // -1: the instruction is an array; else the tuple element
  const Shape* shape = nullptr;
  struct Order {
    int32_t computation = 0;  // index in the planned computations
    int32_t position = 0;     // in its computation's post order
  };
  Order order;
  Sharding whole;                  // its sharding without unreduced axes
  std::optional<Sharding> fixed;   // a sharding already unreduced, kept
  // `whole` as device axes (nullptr when it has none); shared by the values whose shardings
  // are copies of one sharding (the parser shares equal shardings).
  const AxisSharding* axes = nullptr;
  // Numbers the distinct (sharding, rank) pairs of `whole` (-1: neither tiled nor replicated),
  // for answers that depend only on those.
  int32_t sharding_id = -1;
  // The planner's state.
  int32_t color = kNone;
  bool producer = false;
  // Split over its color's axes: computed partial in `partial` (those axes gathered) and
  // reduce-scattered into its own layout at once; its users take it whole.
  bool scatter = false;
  std::optional<Sharding> partial;  // the layout it is computed in when partial
  double cost = 0;                  // the all-reduce of its shard over its color's axes
  // A producer the partitioner would compute whole without reducing (a dot it gathers): what
  // that costs beyond computing it partial, when less than `cost`.
  std::optional<double> whole_cost;
  double scatter_cost = 0;          // the reduce-scatter of it
  int32_t n = -1, r = -1;           // cut nodes
};

class ValueGraph {
 public:
  ValueGraph(const Module& module, int64_t num_devices);

  // The computations planned (the entry first), each with its instructions in post order.
  int32_t computation_count() const { return static_cast<int32_t>(computations_.size()); }
  const std::vector<const Instruction*>& PostOrder(int32_t computation) const {
    return computations_[computation].post_order;
  }
  // How often `computation` runs per run of the entry: a loop body (and condition) counts
  // kLoopWeight times its caller (trip counts are not analysed).
  double Weight(const Computation* computation) const;

  // The value of leaf `leaf` of `instruction` (-1: the array itself), made when first asked;
  // kNone when there is none.
  int32_t IdOf(const Instruction* instruction, int64_t leaf);
  Value& value(int32_t v) { return values_[static_cast<size_t>(v)]; }
  const Value& value(int32_t v) const { return values_[static_cast<size_t>(v)]; }
  int32_t size() const { return static_cast<int32_t>(values_.size()); }
  // How many distinct sharding_ids values have so far.
  int32_t sharding_count() const { return static_cast<int32_t>(decomposed_.size()); }
  // How value `v` is used, in program order of the users.
  const std::vector<Use>& UsesOf(int32_t v);
  // Pairs of values that are one loop carry (a while's result, its body's and condition's
  // parameter leaves), in program order.
  const std::vector<std::pair<int32_t, int32_t>>& ties() const { return ties_; }

 private:
  struct Slot {
    int32_t position = -1;        // in the post order; -1: not an instruction of the computation
    int32_t array = -2;           // the array's value (-2: not looked up yet)
    std::vector<int32_t> leaves;  // a tuple's element values (-2: not looked up yet)
  };
  struct PlannedComputation {
    const Computation* computation = nullptr;
    std::vector<const Instruction*> post_order;
    std::vector<Slot> slots;  // by unique id
    std::vector<const Instruction*> callers;
    double weight = 1;
  };

  void CollectComputations();
  void TieLoopCarries();
  Slot* SlotOf(const Instruction* instruction);
  int32_t AddValue(const Instruction& instruction, int64_t leaf, const Shape& shape, Value::Order order);
  int64_t LeafCount(const Instruction* instruction) const;
  int32_t LeafId(const Instruction* instruction, int64_t k);
  // Where leaf k of `from` goes when `from` is the same data as `to`, leaf by leaf.
  void AddSame(int64_t k, const Instruction* from, const Instruction* to, std::vector<Use>& uses);

  const Module& module_;
  int64_t num_devices_;
  std::vector<PlannedComputation> computations_;
  std::map<const Computation*, int32_t> index_;
  int32_t last_ = 0;  // the computation SlotOf found last
  std::deque<Value> values_;  // a deque: references stay valid as values are added
  // DecomposeSharding's answers by (sharding identity, rank), numbered; the values hold the
  // shardings.
  struct Decomposed {
    int32_t id = -1;
    std::optional<AxisSharding> axes;
  };
  std::map<std::pair<const void*, int64_t>, Decomposed> decomposed_;
  std::deque<std::vector<Use>> uses_;
  std::vector<char> uses_known_;
  std::vector<std::pair<int32_t, int32_t>> ties_;
};

}  // namespace gspmd::partial_sums
