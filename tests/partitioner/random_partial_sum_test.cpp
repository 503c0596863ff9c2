// Randomized differential test of partial sums (issue 14): random chains that start at dots whose
// contracting dim is split over a mesh axis (often unevenly), pass through ops linear in the
// pending sum (adds of other such dots, negate, scaling by replicated values, float converts,
// reshape, transpose, broadcast, slice, zero pad, concatenate, select against zero, dots with a
// replicated operand) and end at a non-linear op or the result. Only the parameters (and
// sometimes the root) are annotated: propagation and the partitioner choose where each sum is
// reduced. Every case must compute the interpreter's numbers, also with garbage in the padding
// of uneven argument shards. CI runs 300 cases; soak runs set GSPMD_RANDPSUM_CASES=20000 and
// GSPMD_RANDPSUM_SEED=<first seed>; a failure prints its seed and module, and
// GSPMD_RANDPSUM_SEED=<seed> GSPMD_RANDPSUM_CASES=1 reproduces it.
#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "partitioner/partitioner.h"
#include "partitioner/random_run.h"
#include "propagation/propagation.h"
#include "runtime/interp/evaluator.h"
#include "runtime/spmd/like_module.h"
#include "runtime/spmd/spmd_executor.h"
#include "support/diagnostic.h"
#include "text/parser.h"
#include "text/printer.h"

namespace gspmd {
namespace {

using random_program::EnvInt;
using random_program::Mismatch;
using random_program::RunWithPoisonedPadding;
using Dims = std::vector<int64_t>;

std::string Join(const Dims& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out;
}

std::string F32(const Dims& dims) { return "f32[" + Join(dims) + "]"; }

int64_t Product(const Dims& dims) { return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>()); }

// A tiled sharding over `mesh` (devices numbered row-major over the mesh): tensor dim d is split
// over mesh axis axis_of_dim[d] (-1: not split); the mesh axes no dim uses replicate.
std::string TiledSharding(const Dims& mesh, const std::vector<int>& axis_of_dim) {
  const int64_t devices = Product(mesh);
  std::vector<bool> used(mesh.size(), false);
  Dims tile;
  for (int axis : axis_of_dim) {
    tile.push_back(axis < 0 ? 1 : mesh[axis]);
    if (axis >= 0) used[axis] = true;
  }
  int64_t replicas = 1;
  for (size_t a = 0; a < mesh.size(); ++a)
    if (!used[a]) replicas *= mesh[a];
  if (replicas == devices) return "{replicated}";
  // Position of each device in the [tile..., replicas] array.
  std::vector<int64_t> slot_device(static_cast<size_t>(devices));
  for (int64_t device = 0; device < devices; ++device) {
    Dims coord(mesh.size());
    int64_t rest = device;
    for (int64_t a = static_cast<int64_t>(mesh.size()) - 1; a >= 0; --a) {
      coord[a] = rest % mesh[a];
      rest /= mesh[a];
    }
    int64_t slot = 0;
    for (size_t d = 0; d < axis_of_dim.size(); ++d) slot = slot * tile[d] + (axis_of_dim[d] < 0 ? 0 : coord[axis_of_dim[d]]);
    int64_t replica = 0;
    for (size_t a = 0; a < mesh.size(); ++a)
      if (!used[a]) replica = replica * mesh[a] + coord[a];
    slot_device[static_cast<size_t>(slot * replicas + replica)] = device;
  }
  Dims shape = tile;
  if (replicas > 1) shape.push_back(replicas);
  std::string text = "{devices=[" + Join(shape) + "]" + Join(slot_device);
  return text + (replicas > 1 ? " last_tile_dim_replicate}" : "}");
}

struct ChainProgram {
  uint64_t seed = 0;
  Dims mesh;
  std::string text;
  std::vector<Shape> parameters;
  std::vector<std::string> ops;
  int64_t dots = 0;  // dots with a split contracting dim
};

class ChainGenerator {
 public:
  explicit ChainGenerator(uint64_t seed) : rng_(seed) { program_.seed = seed; }

  ChainProgram Generate() {
    static const std::vector<Dims> kMeshes = {{2}, {3}, {4}, {2, 2}, {2, 3}, {3, 2}, {4, 2}, {2, 4}, {2, 2, 2}};
    program_.mesh = kMeshes[Pick(kMeshes.size())];
    const int mesh_rank = static_cast<int>(program_.mesh.size());
    contracting_axis_ = static_cast<int>(Pick(static_cast<size_t>(mesh_rank)));
    row_axis_ = -1;
    if (mesh_rank > 1 && Chance(60)) row_axis_ = (contracting_axis_ + 1 + static_cast<int>(Pick(mesh_rank - 1))) % mesh_rank;
    static const Dims kSizes = {3, 4, 5, 6, 7, 8, 10};
    m_ = kSizes[Pick(kSizes.size())];
    k_ = kSizes[Pick(kSizes.size())];
    n_ = kSizes[Pick(kSizes.size())];

    std::string value = PendingDot();
    Dims dims = {m_, n_};
    const int64_t steps = 1 + static_cast<int64_t>(Pick(5));
    for (int64_t s = 0; s < steps; ++s) value = LinearStep(value, dims);
    value = Finish(value, dims);
    std::string root_sharding = "{replicated}";
    if (Chance(30)) {
      std::vector<int> axis_of_dim(dims.size(), -1);
      axis_of_dim[Pick(dims.size())] = contracting_axis_;
      root_sharding = TiledSharding(program_.mesh, axis_of_dim);
    }
    const bool annotate_root = Chance(50);
    body_ += "  ROOT result = " + F32(dims) + " copy(" + value + ")" +
             (annotate_root ? ", sharding=" + root_sharding : std::string()) + "\n";
    program_.text = "HloModule partial_sum_chain, num_partitions=" + std::to_string(Product(program_.mesh)) +
                    "\n\nadd_f32 {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n\n"
                    "ENTRY chain {\n" + body_ + "}\n";
    return program_;
  }

 private:
  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  bool Chance(int percent) { return static_cast<int>(Pick(100)) < percent; }
  std::string Fresh(const std::string& stem) { return stem + std::to_string(next_id_++); }

  std::string Parameter(const Shape& shape, const std::string& sharding) {
    std::string name = Fresh("p");
    body_ += "  " + name + " = " + shape.ToString(false) + " parameter(" + std::to_string(program_.parameters.size()) +
             "), sharding=" + sharding + "\n";
    program_.parameters.push_back(shape);
    return name;
  }

  std::string Emit(const std::string& shape, const std::string& rest) {
    std::string name = Fresh("v");
    body_ += "  " + name + " = " + shape + " " + rest + "\n";
    return name;
  }

  // lhs[m, k] . rhs[k, n], k split over the contracting axis (and m sometimes over another):
  // a sum pending over the contracting axis.
  std::string PendingDot() {
    ++program_.dots;
    std::string lhs = Parameter(Shape(ElementType::kF32, {m_, k_}), TiledSharding(program_.mesh, {row_axis_, contracting_axis_}));
    std::string rhs = Parameter(Shape(ElementType::kF32, {k_, n_}), TiledSharding(program_.mesh, {contracting_axis_, -1}));
    return Emit(F32({m_, n_}), "dot(" + lhs + ", " + rhs + "), lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  }

  std::string Replicated(const Dims& dims) { return Parameter(Shape(ElementType::kF32, dims), "{replicated}"); }

  std::string Zeros(const Dims& dims) {
    std::string zero = Emit("f32[]", "constant(0)");
    return Emit(F32(dims), "broadcast(" + zero + "), dimensions={}");
  }

  // One op linear in the pending sum `value` (dims updated in place).
  std::string LinearStep(const std::string& value, Dims& dims) {
    const int64_t rank = static_cast<int64_t>(dims.size());
    for (int attempt = 0; attempt < 8; ++attempt) {
      switch (Pick(13)) {
        case 0:
        case 1: {  // add or subtract another pending sum of the same shape
          if (dims != Dims{m_, n_}) break;
          std::string other = PendingDot();
          program_.ops.push_back("add-pending");
          return Emit(F32(dims), std::string(Chance(50) ? "add(" : "subtract(") + value + ", " + other + ")");
        }
        case 2:
          program_.ops.push_back("negate");
          return Emit(F32(dims), "negate(" + value + ")");
        case 3: {  // multiply by a replicated value
          std::string scale = Replicated(dims);
          program_.ops.push_back("multiply");
          return Chance(50) ? Emit(F32(dims), "multiply(" + scale + ", " + value + ")")
                            : Emit(F32(dims), "multiply(" + value + ", " + scale + ")");
        }
        case 4: {  // divide by a positive replicated value
          std::string divisor = Emit(F32(dims), "exponential(" + Replicated(dims) + ")");
          program_.ops.push_back("divide");
          return Emit(F32(dims), "divide(" + value + ", " + divisor + ")");
        }
        case 5: {  // f32 -> f64 -> f32 (exact both ways for the sum's terms)
          std::string wide = Emit("f64[" + Join(dims) + "]", "convert(" + value + ")");
          program_.ops.push_back("convert");
          return Emit(F32(dims), "convert(" + wide + ")");
        }
        case 6: {  // reshape: merge the two leading dims, or split a dim
          Dims to = dims;
          if (rank >= 2 && Chance(50)) {
            to.erase(to.begin());
            to[0] *= dims[0];
          } else {
            const int64_t d = static_cast<int64_t>(Pick(dims.size()));
            int64_t factor = 0;
            for (int64_t f : {2, 3, 5})
              if (dims[d] % f == 0 && dims[d] > f) factor = f;
            if (factor == 0 || rank >= 4) break;
            to[d] = dims[d] / factor;
            to.insert(to.begin() + d + 1, factor);
          }
          program_.ops.push_back("reshape");
          dims = to;
          return Emit(F32(dims), "reshape(" + value + ")");
        }
        case 7: {  // transpose (reverse the dims)
          if (rank < 2) break;
          Dims permutation(dims.size()), to(dims.size());
          for (int64_t d = 0; d < rank; ++d) permutation[d] = rank - 1 - d;
          for (int64_t d = 0; d < rank; ++d) to[d] = dims[permutation[d]];
          program_.ops.push_back("transpose");
          dims = to;
          return Emit(F32(dims), "transpose(" + value + "), dimensions={" + Join(permutation) + "}");
        }
        case 8: {  // broadcast: a new dim of size 2 somewhere
          if (rank >= 3) break;
          const int64_t at = static_cast<int64_t>(Pick(dims.size() + 1));
          Dims to = dims, kept;
          to.insert(to.begin() + at, 2);
          for (int64_t d = 0; d <= rank; ++d)
            if (d != at) kept.push_back(d);
          program_.ops.push_back("broadcast");
          dims = to;
          return Emit(F32(dims), "broadcast(" + value + "), dimensions={" + Join(kept) + "}");
        }
        case 9: {  // slice a random range of one dim
          const int64_t d = static_cast<int64_t>(Pick(dims.size()));
          if (dims[d] < 3) break;
          const int64_t start = static_cast<int64_t>(Pick(static_cast<size_t>(dims[d] / 2)));
          const int64_t limit = start + 1 + static_cast<int64_t>(Pick(static_cast<size_t>(dims[d] - start - 1)));
          std::string ranges;
          for (int64_t e = 0; e < rank; ++e)
            ranges += std::string(e ? ", " : "") + "[" + std::to_string(e == d ? start : 0) + ":" +
                      std::to_string(e == d ? limit : dims[e]) + "]";
          program_.ops.push_back("slice");
          dims[d] = limit - start;
          return Emit(F32(dims), "slice(" + value + "), slice={" + ranges + "}");
        }
        case 10: {  // pad with zero, low and high edges on one dim
          const int64_t d = static_cast<int64_t>(Pick(dims.size()));
          const int64_t low = static_cast<int64_t>(Pick(3)), high = static_cast<int64_t>(Pick(3));
          std::string config;
          for (int64_t e = 0; e < rank; ++e)
            config += std::string(e ? "x" : "") + (e == d ? std::to_string(low) + "_" + std::to_string(high) : "0_0");
          std::string zero = Emit("f32[]", "constant(0)");
          program_.ops.push_back("pad");
          dims[d] += low + high;
          return Emit(F32(dims), "pad(" + value + ", " + zero + "), padding=" + config);
        }
        case 11: {  // concatenate with itself or a negated copy along one dim
          if (Product(dims) > 400) break;
          const int64_t d = static_cast<int64_t>(Pick(dims.size()));
          std::string other = Chance(50) ? value : Emit(F32(dims), "negate(" + value + ")");
          program_.ops.push_back("concatenate");
          dims[d] *= 2;
          return Emit(F32(dims), "concatenate(" + value + ", " + other + "), dimensions={" + std::to_string(d) + "}");
        }
        case 12: {  // select with a replicated predicate against zero, or a dot with a replicated operand
          if (Chance(50)) {
            std::string predicate = Parameter(Shape(ElementType::kPred, dims), "{replicated}");
            std::string zeros = Zeros(dims);
            program_.ops.push_back("select");
            return Chance(50) ? Emit(F32(dims), "select(" + predicate + ", " + value + ", " + zeros + ")")
                              : Emit(F32(dims), "select(" + predicate + ", " + zeros + ", " + value + ")");
          }
          const int64_t p = 2 + static_cast<int64_t>(Pick(4));
          std::string weight = Replicated({dims.back(), p});
          program_.ops.push_back("dot-replicated");
          dims.back() = p;
          return Emit(F32(dims), "dot(" + value + ", " + weight + "), lhs_contracting_dims={" + std::to_string(rank - 1) +
                                     "}, rhs_contracting_dims={0}");
        }
      }
    }
    program_.ops.push_back("negate");
    return Emit(F32(dims), "negate(" + value + ")");
  }

  // Where the full value is needed: a non-linear op, a compare, a reduce, or nothing (the result).
  std::string Finish(const std::string& value, Dims& dims) {
    switch (Pick(6)) {
      case 0:
        program_.ops.push_back("tanh");
        return Emit(F32(dims), "tanh(" + value + ")");
      case 1:
        program_.ops.push_back("exponential");
        return Emit(F32(dims), "exponential(" + value + ")");
      case 2: {  // relu through a compare
        std::string zeros = Zeros(dims);
        std::string positive = Emit("pred[" + Join(dims) + "]", "compare(" + value + ", " + zeros + "), direction=GT");
        program_.ops.push_back("relu");
        return Emit(F32(dims), "select(" + positive + ", " + value + ", " + zeros + ")");
      }
      case 3: {  // sum over the last dim, then a non-linear op
        std::string zero = Emit("f32[]", "constant(0)");
        const int64_t last = static_cast<int64_t>(dims.size()) - 1;
        Dims kept(dims.begin(), dims.end() - 1);
        std::string reduced = Emit(F32(kept), "reduce(" + value + ", " + zero + "), dimensions={" +
                                                  std::to_string(last) + "}, to_apply=add_f32");
        if (kept.empty()) {  // a rank-1 value summed to a scalar: back to rank 1
          kept = {1};
          reduced = Emit(F32(kept), "reshape(" + reduced + ")");
        }
        dims = kept;
        program_.ops.push_back("reduce");
        return Emit(F32(dims), "tanh(" + reduced + ")");
      }
      default:
        program_.ops.push_back("result");
        return value;
    }
  }

  std::mt19937_64 rng_;
  ChainProgram program_;
  std::string body_;
  int64_t next_id_ = 0;
  int contracting_axis_ = 0, row_axis_ = -1;
  int64_t m_ = 0, k_ = 0, n_ = 0;
};

std::vector<Literal> ChainArguments(const ChainProgram& program) {
  std::mt19937_64 rng(program.seed * 7919 + 1);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<Literal> arguments;
  for (const Shape& shape : program.parameters) {
    std::vector<double> values(static_cast<size_t>(shape.element_count()));
    for (double& v : values) v = shape.element_type() == ElementType::kPred ? (uniform(rng) > 0) : uniform(rng);
    arguments.push_back(Literal::FromDoubles(shape, values));
  }
  return arguments;
}

int64_t Reductions(const Module& module) {
  int64_t count = 0;
  for (const auto& computation : module.computations())
    for (const auto& instruction : computation->instructions())
      if (instruction->opcode() == Opcode::kAllReduce || instruction->opcode() == Opcode::kReduceScatter) ++count;
  return count;
}

// "" when the case passed; otherwise what went wrong. `deferred` says whether the partitioned
// program reduced fewer times than the chain has split-contracting dots.
std::string RunChain(const ChainProgram& program, bool* deferred) {
  std::vector<Literal> arguments = ChainArguments(program);
  try {
    std::unique_ptr<Module> original = ParseModule(program.text, "chain.hlo");
    std::vector<Literal> expected = FlattenTuple(EvaluateModule(*original, arguments));
    std::unique_ptr<Module> module = ParseModule(program.text, "chain.hlo");
    PropagationOptions options;
    options.num_partitions = Product(program.mesh);
    PropagateShardings(*module, options);
    PartitionResult partitioned = PartitionModule(*module);
    std::unique_ptr<Module> reparsed = ParseModule(PrintModule(*partitioned.module), "partitioned.hlo");
    *deferred = Reductions(*reparsed) < program.dots;
    SpmdRunOptions run_options = OptionsFromLikeModule(*reparsed, module.get());
    std::string failure = Mismatch(RunSpmd(*reparsed, arguments, run_options), expected, "");
    if (!failure.empty()) return failure + "\npartitioned:\n" + PrintModule(*reparsed);
    failure = Mismatch(RunWithPoisonedPadding(*reparsed, arguments, run_options), expected,
                       "with garbage in the padding of uneven argument shards: ");
    if (!failure.empty()) return failure + "\npartitioned:\n" + PrintModule(*reparsed);
  } catch (const UserError& error) {
    return std::string("error: ") + error.what();
  }
  return "";
}

TEST(RandomPartialSumTest, PartialSumChainsMatchTheInterpreter) {
  const int64_t cases = EnvInt("GSPMD_RANDPSUM_CASES", 300);
  const int64_t first_seed = EnvInt("GSPMD_RANDPSUM_SEED", 1);
  int64_t failures = 0, deferred_cases = 0, multi_dot_cases = 0, uneven_cases = 0;
  for (int64_t i = 0; i < cases; ++i) {
    ChainProgram program = ChainGenerator(static_cast<uint64_t>(first_seed + i)).Generate();
    bool deferred = false;
    std::string failure = RunChain(program, &deferred);
    if (program.dots > 1) {
      ++multi_dot_cases;
      deferred_cases += deferred;
    }
    for (const Shape& shape : program.parameters)
      for (int64_t dim : shape.dims())
        for (int64_t axis : program.mesh) uneven_cases += (dim % axis != 0) ? 1 : 0;
    if (failure.empty()) continue;
    if (++failures <= 3) {
      std::string ops;
      for (const std::string& op : program.ops) ops += (ops.empty() ? "" : ",") + op;
      ADD_FAILURE() << "seed " << program.seed << " (ops " << ops << "): " << failure << "\n" << program.text;
    }
  }
  std::cout << "[ partial sums ] " << cases << " chains, " << failures << " mismatches; " << multi_dot_cases
            << " with several split dots, of which " << deferred_cases << " reduced fewer times than they have dots\n";
  EXPECT_EQ(failures, 0);
  EXPECT_GT(uneven_cases, 0);
  // The chains with several pending dots mostly share one reduction (the point of partial sums).
  if (multi_dot_cases >= 20) EXPECT_GE(deferred_cases * 2, multi_dot_cases);
}

}  // namespace
}  // namespace gspmd
