// The generator behind GenerateRandomProgram (random_program.h): its state and op generators,
// shared by random_program.cpp (mesh, shardings, elementwise and shape ops),
// random_program_ops.cpp (contractions, reductions, indexing, sort, while, the entry) and
// random_program_extra.cpp (the other families).
#pragma once

#include <algorithm>
#include <deque>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "partitioner/random_program.h"

namespace gspmd::random_program::detail {

constexpr ElementType kF32 = ElementType::kF32;
constexpr ElementType kS32 = ElementType::kS32;
constexpr ElementType kPred = ElementType::kPred;

using Dims = std::vector<int64_t>;

// A value of the program being built.
struct Value {
  std::string name;
  ElementType type = kF32;
  Dims dims;
  // Computed without reordered float arithmetic: the partitioned program gives bit-identical
  // values, so comparisons, floor and float->int converts of it are safe to test.
  bool exact = true;
  std::string sharding;
  int64_t uses = 0;
  bool hidden = false;  // not an operand of later generated ops (its uses are fixed)
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
};

// Where instructions go: the entry computation or a while body.
struct Scope {
  std::vector<std::string> lines;
  std::deque<Value> values;  // a deque: references stay valid as values are added
  bool allows_parameters = true;
};

inline int64_t Product(const Dims& dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

inline std::string Join(const Dims& values, const char* separator = ",") {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) out += (i ? separator : "") + std::to_string(values[i]);
  return out;
}

inline std::string TypeName(ElementType type) {
  if (type == kF32) return "f32";
  if (type == kS32) return "s32";
  return "pred";
}

inline std::string ShapeText(ElementType type, const Dims& dims) { return TypeName(type) + "[" + Join(dims) + "]"; }

// The divisors of n greater than 1 and less than n.
inline Dims ProperDivisors(int64_t n) {
  Dims out;
  for (int64_t d = 2; d < n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

inline bool IsNumeric(const Value& v) { return v.type != kPred; }

inline std::string WindowText(const Dims& size, const Dims& stride, const Dims& low, const Dims& high,
                       const Dims& lhs_dilate, const Dims& rhs_dilate, const Dims& reversal = {}) {
  auto not_all = [](const Dims& values, int64_t value) {
    return std::any_of(values.begin(), values.end(), [&](int64_t v) { return v != value; });
  };
  std::string text = "window={size=" + Join(size, "x");
  if (not_all(stride, 1)) text += " stride=" + Join(stride, "x");
  if (not_all(low, 0) || not_all(high, 0)) {
    text += " pad=";
    for (size_t i = 0; i < low.size(); ++i)
      text += (i ? "x" : "") + std::to_string(low[i]) + "_" + std::to_string(high[i]);
  }
  if (not_all(lhs_dilate, 1)) text += " lhs_dilate=" + Join(lhs_dilate, "x");
  if (not_all(rhs_dilate, 1)) text += " rhs_dilate=" + Join(rhs_dilate, "x");
  if (not_all(reversal, 0)) text += " rhs_reversal=" + Join(reversal, "x");
  return text + "}";
}

// Output length of a window along one dim (0 when the window does not fit).
inline int64_t WindowOutput(int64_t size, int64_t window, int64_t stride, int64_t low, int64_t high, int64_t lhs_dilate,
                     int64_t rhs_dilate) {
  int64_t padded = (size - 1) * lhs_dilate + 1 + low + high;
  int64_t extent = (window - 1) * rhs_dilate + 1;
  if (padded < extent) return 0;
  return (padded - extent) / stride + 1;
}

class Generator {
 public:
  Generator(uint64_t seed, const RandomProgramOptions& options) : rng_(seed), options_(options) {
    program_.seed = seed;
  }

  RandomProgram Run();

 private:
  // --- randomness
  int64_t Uniform(int64_t low, int64_t high) { return std::uniform_int_distribution<int64_t>(low, high)(rng_); }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  // Uniform(low, high), but now and then a wider range (windows, pads and strides that
  // span several shards).
  int64_t Spread(int64_t low, int64_t high) {
    int64_t extra = Chance(0.15) ? high - low + 2 : 0;
    return Uniform(low - (low < 0 ? extra : 0), high + extra);
  }
  template <typename T>
  const T& PickOf(const std::vector<T>& items) { return items[Uniform(0, static_cast<int64_t>(items.size()) - 1)]; }
  int64_t RandomDimSize() {
    static const Dims kSizes = {1, 2, 2, 3, 4, 4, 5, 6, 6, 7, 8, 8, 9, 10, 12, 16};
    return PickOf(kSizes);
  }
  // Random dims, shrunk until the value is at most a quarter of the element budget.
  Dims RandomDims(int64_t rank) {
    Dims dims;
    for (int64_t i = 0; i < rank; ++i) dims.push_back(RandomDimSize());
    while (Product(dims) * 4 > options_.max_elements) {
      auto largest = std::max_element(dims.begin(), dims.end());
      *largest = (*largest + 1) / 2;
    }
    return dims;
  }
  Dims RandomPermutation(int64_t n) {
    Dims perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng_);
    return perm;
  }

  // --- mesh and shardings
  void ChooseMesh();
  std::string RandomSharding(int64_t rank);
  // Often the operand's sharding (as propagation would give), else a random one.
  std::string ShardingFor(int64_t rank, const Value* like);

  // --- emission
  Scope& scope() { return *scope_; }
  Value& Emit(const std::string& base, ElementType type, const Dims& dims, const std::string& op,
              bool exact, const std::string& sharding);
  Value EmitTuple(const std::string& base, const std::vector<Value>& elements, const std::string& op,
                  const std::string& sharding);
  std::string Use(Value& value) {
    ++value.uses;
    return "%" + value.name;
  }
  Value& Find(const std::string& name);
  Value& NewParameter(ElementType type, const Dims& dims, int64_t low = -5, int64_t high = 5);
  Value& ScalarConstant(ElementType type, const std::string& literal);
  // A value of exactly this type and dims: an existing one, a new parameter, or a broadcast
  // constant (inside while bodies).
  Value& OperandLike(ElementType type, const Dims& dims, bool need_exact);
  // An existing value (recent ones preferred) satisfying `accept`, or nullptr.
  Value* PickValue(const std::function<bool(const Value&)>& accept);
  Value& PickOrCreate(const std::function<bool(const Value&)>& accept, ElementType type, int64_t min_rank,
                      int64_t max_rank);
  std::string Region(const std::string& kind, ElementType type);
  // --- pieces the op generators share (random_program_ops.cpp)
  // A numeric operand of rank in [min_rank, max_rank] for a gather or scatter to index.
  Value& PickIndexedOperand(int64_t min_rank, int64_t max_rank);
  // The dims of a gather result or scatter update: `lead`, then the operand's dims other than
  // `axis` and `batch` (-1: none); `window_dims` are the positions of those.
  struct Windowed {
    Dims dims;
    Dims window_dims;
  };
  static Windowed AroundIndexed(const Value& operand, Dims lead, int64_t axis, int64_t batch = -1);
  // gather(operand, indices) emitted as `base` with a random sharding; `index_attributes` are the
  // batching dims and index_vector_dim.
  void EmitGather(const std::string& base, Value& operand, Value& indices, const Windowed& result,
                  const Dims& collapsed, const Dims& start_map, const std::string& index_attributes,
                  const Dims& slice_sizes);
  // A stable sort of `x` along `dim` with its positions as values; the keys and the permutation
  // are unpacked.
  struct KeysAndPermutation {
    Value& keys;
    Value& permutation;
  };
  KeysAndPermutation EmitKeyValueSort(Value& x, int64_t dim);
  // scatter(operand, indices, updates) adding the updates in along `axis`, emitted as `base`.
  void EmitAddScatter(const std::string& base, Value& operand, Value& indices, Value& updates,
                      const Dims& window_dims, int64_t axis, const std::string& index_attributes);
  std::string InitFor(const std::string& reducer, ElementType type);
  bool Fits(const Dims& dims) const { return Product(dims) <= options_.max_elements; }

  // --- op generators (false: not applicable, the caller tries another)
  bool GenUnary();
  bool GenBinary();
  bool GenSelect();
  bool GenBroadcast();
  bool GenTranspose();
  bool GenReshape();
  bool GenSlice();
  bool GenPad();
  bool GenConcatenate();
  bool GenReverse();
  bool GenDot();
  bool GenReduce();
  bool GenReduceWindow();
  bool GenIota();
  bool GenDynamicSlice();
  bool GenDynamicUpdateSlice();
  bool GenConvert();
  bool GenGather();
  bool GenScatter();
  bool GenSort();
  bool GenConvolution();
  bool GenWhile();
  // random_program_extra.cpp
  bool GenArgReduce();
  bool GenSelectAndScatter();
  bool GenConditional();
  bool GenTopK();
  bool GenClamp();
  bool GenWindowedGather();
  bool GenBatchedGather();
  bool GenBatchedScatter();
  bool GenConstant();
  bool GenSortPrefix();
  bool GenCall();
  bool GenShardingConstraint();
  bool GenOptimizationBarrier();
  std::string ArgRegion(ElementType type);
  std::string BranchComputation(const std::string& name, ElementType type, const Dims& dims,
                                const std::string& in_sharding, const std::string& out_sharding, int64_t variant);
  std::string DynamicStart(int64_t dim_size, int64_t slice_size);
  std::string WhileBody(const std::string& name, const std::string& state_shape, const std::string& state_sharding,
                        ElementType type, const Dims& dims, const std::string& x_sharding,
                        const std::string& w_sharding, bool* exact);
  // Runs `count` random op generators (weighted) in the current scope.
  void RandomOps(int64_t count);
  void FinishEntry();
  std::string ModuleText() const;

  std::mt19937_64 rng_;
  RandomProgramOptions options_;
  RandomProgram program_;
  std::vector<std::string> regions_;  // region computations, in definition order
  std::vector<std::string> region_names_;
  Scope entry_;
  Scope* scope_ = &entry_;
  int64_t next_id_ = 0;
  int64_t num_parameters_ = 0;
  int64_t depth_ = 0;  // nesting of while bodies being generated
};

}  // namespace gspmd::random_program::detail
